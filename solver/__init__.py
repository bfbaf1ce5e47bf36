"""Pure math of `ladders`, in ranks: a module imports its own rank or below, never above
(``tests/test_layers.py`` holds the ranks; docs/architecture.md draws them).

1. numbers and systems
   - :mod:`.exact`       the one module that imports gmpy2
   - :mod:`.exact_flint` the one module that imports python-flint
   - :mod:`.system`      the sparse integer system ``A x = B`` and its pivot orders
   - :mod:`.forked`      independent pieces of one computation on the cores, by fork
   - :mod:`.extras`      the pip command of an optional extra, for this install
2. :mod:`.chains`        the model: any absorbing chain, its questions, its file formats
3. :mod:`.games`         sources of chains: boards, one player's chain, races as systems,
                         pieces that meet, Another Game
4. :mod:`.engines`       the exact kernels (series, modular, crt, elimination, components)
5. :mod:`.checks`        bounds, simulation, the independent modular check, verification
6. problems, on top
   - :mod:`.problem`     board + players -> the race's system (what every engine solves)
   - :mod:`.chain_problem` a question of any chain, in the same shape
   - :mod:`.answers`     the games' own small questions solved in this process
   - :mod:`.estimate`    sizes and costs of a race before it is solved (``ladders plan``)
   - :mod:`.calibrate`   the series kernel's unit of cost, measured on this machine
   - :mod:`.result`      :class:`~ladders.solver.result.Solution`, what a solve returns
   - :mod:`.report`      one document of a solve's answers, a race's or a chain's
                         (``--json``, ``--output``)

This package never imports dask, zarr or click, so it can run anywhere (a Dask
worker, a notebook, a test).
"""

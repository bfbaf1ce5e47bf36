"""Pure math of `ladders`: games -> chains -> sparse integer systems -> exact kernels.

- :mod:`.games`       boards, one player's chain, races, pieces that meet, Another Game
- :mod:`.chains`      any absorbing chain: the model, its questions, its file formats
- :mod:`.problem`     board + players -> the race's system (what every engine solves)
- :mod:`.system`      the sparse integer system ``A x = B`` and its pivot orders
- :mod:`.engines`     the exact kernels (series, modular, crt, elimination)
- :mod:`.checks`      bounds, simulation, the independent modular check, verification
- :mod:`.estimate`    sizes and costs of a race before it is solved (``ladders plan``)
- :mod:`.calibrate`   the series kernel's unit of cost, measured on this machine
- :mod:`.result`      :class:`~ladders.solver.result.Solution`, what a solve returns
- :mod:`.forked`      independent pieces of one computation on the cores, by fork
- :mod:`.extras`      the pip command of an optional extra, for this install
- :mod:`.exact`       the one module that imports gmpy2
- :mod:`.exact_flint` the one module that imports python-flint

This package never imports dask, zarr or click, so it can run anywhere (a Dask
worker, a notebook, a test).
"""

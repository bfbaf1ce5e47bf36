"""Pure math of `ladders`: games -> chains -> sparse integer systems -> exact kernels.

- :mod:`.games`     boards, one player's chain, races, Another Game
- :mod:`.problem`   board + players -> the race's system (what every engine solves)
- :mod:`.system`    the sparse integer system ``A x = B`` and its pivot orders
- :mod:`.engines`   the exact kernels (modular, crt, elimination, ...)
- :mod:`.checks`    bounds, simulation, the independent modular check, verification
- :mod:`.exact`     the one module that imports gmpy2

This package never imports dask, zarr or click, so it can run anywhere (a Dask
worker, a notebook, a test).
"""

"""Pure math of `ladders`: boards -> chains -> sparse integer systems -> exact kernels.

Bounds, simulation and verification live here too. This package never imports dask,
zarr or click, so it can run anywhere (a Dask worker, a notebook, a test).
"""

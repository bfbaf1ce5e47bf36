"""Importing this module makes the series kernels ready in this process
(:func:`~ladders.solver.engines.series.kernels.warm`).

A local Dask cluster's fork server imports it before it forks the workers of a series
run (:attr:`~ladders.cluster.loops.Work.preload`): every worker then starts with the
compiled kernels loaded, paid for once instead of once per worker (about 0.85 s of CPU
each with the imports, on a 2-core machine beside the run's first batches).
"""

from ladders.solver.engines.series.kernels import warm

warm()

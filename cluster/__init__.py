"""Running solves: the engines' drivers and their registry (:mod:`.engines`), the two
executor loops (:mod:`.loops`: this process, or a Dask cluster), reaching a Dask cluster
(:mod:`.connect`), the run session (:mod:`.session`), solve / resume / status / verify
(:mod:`.runs`), errors and exit codes (:mod:`.errors`), pictures (:mod:`.plots`) and the
click command line (:mod:`.cli`, commands in :mod:`.commands`)."""

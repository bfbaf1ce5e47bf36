"""Running solves: the engines' drivers and their registry (:mod:`.engines`), the two
executor loops and the Dask cluster (:mod:`.executor`), the run session
(:mod:`.session`), solve / resume / status / verify (:mod:`.runs`), pictures
(:mod:`.plots`) and the click command line (:mod:`.cli`, commands in :mod:`.commands`)."""

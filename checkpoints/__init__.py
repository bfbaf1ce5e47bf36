"""The Zarr run store of long exact solves: the store itself (:mod:`.store`: run.json,
manifests, LOCK, COMPLETE.json), write-once segments (:mod:`.segments`), atomic file
writes (:mod:`.files`), and one module per engine for what its runs keep
(:mod:`.elimination`, :mod:`.crt`, :mod:`.modular`)."""

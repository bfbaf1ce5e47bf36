"""The Zarr run store of long exact solves: the store itself (:mod:`.store`: run.json,
committing and surveying the manifests, COMPLETE.json), what a manifest holds
(:mod:`.manifests`) and the store's LOCK (:mod:`.locks`: one driver at a time) over its
file operations (:mod:`.backend`: a folder or object storage), write-once segments (:mod:`.segments`), atomic file writes
(:mod:`.files`), its errors (:mod:`.errors`), the files a solve writes for people
(:mod:`.outputs`: ``--output``, ``--table``), and one module per engine for what its
runs keep (:mod:`.elimination`, :mod:`.crt`, :mod:`.modular`, :mod:`.series`,
:mod:`.components`; the prime-batch engines share :mod:`.batches`)."""

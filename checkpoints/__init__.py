"""The Zarr run store of long exact solves: segments, manifests, lock, resume, status."""

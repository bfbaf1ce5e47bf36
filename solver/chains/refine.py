"""One round of the lumping's signature refinement, compiled
(:func:`~ladders.solver.chains.lumping.bisimulation`).

Each state where the question does not stop gets the signature of its row: its
numerators summed per block they reach, each sum and the row's denominator divided by
their gcd (equal probabilities: equal pairs of integers), each (block, numerator,
denominator) hashed to 64 bits and the hashes added; the states of one block with
different signatures go to different blocks. A round reads the chain's CSR arrays in
place, a row at a time (its few transitions sorted by their blocks in the row's own
scratch), and numbers the new blocks through an open-addressing table of the distinct
(block, signature) pairs, which keeps for each pair the first state that had it.

Why compiled: the same round in NumPy sorted every transition by (row, block) and the
states by (block, signature): crowds 6-20 (10.6 million states, 38 million
transitions, 40 rounds) took 253 s of its 287 s so; compiled, the 40 rounds take 21 s
(2026-11-28, on the shared 2-core machine; docs/benchmarks.md).
"""

from __future__ import annotations

import numpy as np

from ladders.solver.engines.series.jit import nb

#: splitmix64's constants: the hashes' multipliers.
M0, M1, M2 = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9),
              np.uint64(0x94D049BB133111EB))
#: Rows longer than this are sorted by ``np.argsort``; shorter ones by insertion.
SHORT_ROW = 32


def table_size(n: int) -> int:
    """Slots of :func:`refine_round`'s table for ``n`` states: a power of two, at least
    ``2 n`` (at most half full)."""
    size = 1
    while size < 2 * n:
        size *= 2
    return size


@nb.njit(cache=True, nogil=True, inline="always")
def _mix(x: np.uint64) -> np.uint64:
    """splitmix64's finalizer, wrapping."""
    x = x ^ (x >> np.uint64(30))
    x = x * M1
    x = x ^ (x >> np.uint64(27))
    x = x * M2
    return x ^ (x >> np.uint64(31))


@nb.njit(cache=True, nogil=True, inline="always")
def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


@nb.njit(cache=True, nogil=True)
def _signatures(indptr: np.ndarray, indices: np.ndarray, numerators: np.ndarray,
                denominators: np.ndarray, live: np.ndarray, block: np.ndarray,
                signature: np.ndarray) -> None:
    """Every state's signature under ``block`` into ``signature`` (0 where ``live`` is
    False)."""
    n = indptr.shape[0] - 1
    signature[:] = 0
    longest = 0
    for s in range(n):
        longest = max(longest, indptr[s + 1] - indptr[s])
    keys = np.empty(longest, dtype=np.int64)
    values = np.empty(longest, dtype=np.int64)
    for s in range(n):
        if not live[s]:
            continue
        lo, d = indptr[s], indptr[s + 1] - indptr[s]
        if d <= SHORT_ROW:
            for e in range(d):                 # insertion sort by block
                k, v = block[indices[lo + e]], numerators[lo + e]
                t = e
                while t > 0 and keys[t - 1] > k:
                    keys[t], values[t] = keys[t - 1], values[t - 1]
                    t -= 1
                keys[t], values[t] = k, v
        else:
            raw = np.empty(d, dtype=np.int64)
            for e in range(d):
                raw[e] = block[indices[lo + e]]
            order = np.argsort(raw)
            for e in range(d):
                keys[e], values[e] = raw[order[e]], numerators[lo + order[e]]
        den = denominators[s]
        total_hash = np.uint64(0)
        e = 0
        while e < d:
            b, total = keys[e], 0
            while e < d and keys[e] == b:
                total += values[e]
                e += 1
            g = _gcd(total, den)
            total_hash += _mix(np.uint64(b) * M0 + _mix(np.uint64(total // g))
                               + _mix(np.uint64(den // g) ^ M2))
        signature[s] = total_hash


@nb.njit(cache=True, nogil=True)
def refine_round(indptr: np.ndarray, indices: np.ndarray, numerators: np.ndarray,
                 denominators: np.ndarray, live: np.ndarray, block: np.ndarray,
                 new_block: np.ndarray, signature: np.ndarray, first: np.ndarray) -> int:
    """One round (module docstring): ``new_block[s]`` for every state, numbered
    ``0 .. count-1`` in the order of each new block's first state; returns ``count``
    (equal to the blocks before where the round split nothing). ``signature`` (n
    entries, uint64) and ``first`` (the table: a power of two of at least ``2 n``
    entries, the first state of each pair by slot) are the caller's, allocated once
    for every round (:func:`table_size`)."""
    _signatures(indptr, indices, numerators, denominators, live, block, signature)
    n = block.shape[0]
    size = first.shape[0]
    mask = np.uint64(size - 1)
    first[:] = -1
    count = 0
    for s in range(n):
        b, sg = block[s], signature[s]
        slot = np.int64(_mix(np.uint64(b) * M0 ^ sg) & mask)
        while True:
            r = first[slot]
            if r < 0:
                first[slot] = s
                new_block[s] = count
                count += 1
                break
            if block[r] == b and signature[r] == sg:
                new_block[s] = new_block[r]
                break
            slot = (slot + 1) & (size - 1)
    return count

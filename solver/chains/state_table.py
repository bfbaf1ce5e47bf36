"""A hash table of packed states (rows of 64-bit words), compiled with numba: the
explorer's set of states seen, numbering new states in the order they are added.

Open addressing with linear probing over a power-of-two table of state numbers
(``-1``: empty); the states themselves are rows of :attr:`StateTable.states`. The
table is kept at most half full, grown (and rehashed) before a batch is added.
"""

from __future__ import annotations

import numba
import numpy as np

_MIX = np.uint64(0x9E3779B97F4A7C15)


@numba.njit(cache=True, nogil=True)
def _hash(row: np.ndarray) -> np.uint64:
    h = np.uint64(0x243F6A8885A308D3)
    for w in range(row.shape[0]):
        h = (h ^ np.uint64(row[w])) * _MIX
        h ^= h >> np.uint64(29)
    return h


@numba.njit(cache=True, nogil=True)
def _add(table: np.ndarray, states: np.ndarray, count: int, rows: np.ndarray,
         out: np.ndarray) -> int:
    """Look up each of ``rows``; add those not there (numbered from ``count``); their
    numbers into ``out``. Returns the new count."""
    mask = np.uint64(table.shape[0] - 1)
    width = rows.shape[1]
    for r in range(rows.shape[0]):
        i = _hash(rows[r]) & mask
        while True:
            s = table[i]
            if s < 0:
                for w in range(width):
                    states[count, w] = rows[r, w]
                table[i] = count
                out[r] = count
                count += 1
                break
            same = True
            for w in range(width):
                if states[s, w] != rows[r, w]:
                    same = False
                    break
            if same:
                out[r] = s
                break
            i = (i + np.uint64(1)) & mask
    return count


@numba.njit(cache=True, nogil=True)
def _rehash(table: np.ndarray, states: np.ndarray, count: int) -> None:
    mask = np.uint64(table.shape[0] - 1)
    for s in range(count):
        i = _hash(states[s]) & mask
        while table[i] >= 0:
            i = (i + np.uint64(1)) & mask
        table[i] = s


class StateTable:
    """The states seen: ``states[:count]`` in the order added."""

    def __init__(self, words: int, capacity: int = 1024) -> None:
        self.words = words
        self.count = 0
        self.states = np.zeros((capacity, words), dtype=np.int64)
        self.table = np.full(_power_of_two(2 * capacity), -1, dtype=np.int64)

    def add(self, rows: np.ndarray) -> np.ndarray:
        """The numbers of ``rows`` (shape ``(m, words)``), new ones added in order."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        need = self.count + len(rows)
        if need > len(self.states):
            grown = np.zeros((max(need, 2 * len(self.states)), self.words), dtype=np.int64)
            grown[:self.count] = self.states[:self.count]
            self.states = grown
        if 2 * need > len(self.table):
            self.table = np.full(_power_of_two(4 * need), -1, dtype=np.int64)
            _rehash(self.table, self.states, self.count)
        out = np.empty(len(rows), dtype=np.int64)
        self.count = _add(self.table, self.states, self.count, rows, out)
        return out


def _power_of_two(n: int) -> int:
    return 1 << max(10, (int(n) - 1).bit_length())

"""A hash table of packed states (rows of 64-bit words), compiled with numba: the
explorer's set of states seen, numbering new states in the order they are added.

Open addressing with linear probing over a power-of-two table of state numbers
(``-1``: empty); the states themselves are rows of :attr:`StateTable.states`. The
table is kept at most half full, grown (and rehashed) before a batch is added.
"""

from __future__ import annotations

import numpy as np

from ladders.solver.engines.series.jit import nb

_MIX = np.uint64(0x9E3779B97F4A7C15)


@nb.njit(cache=True, nogil=True)
def _hash(row: np.ndarray) -> np.uint64:
    h = np.uint64(0x243F6A8885A308D3)
    for w in range(row.shape[0]):
        h = (h ^ np.uint64(row[w])) * _MIX
        h ^= h >> np.uint64(29)
    return h


@nb.njit(cache=True, nogil=True)
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


@nb.njit(cache=True, nogil=True)
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


@nb.njit(cache=True, nogil=True)
def _digits(x: int) -> int:
    n = 1
    if x < 0:
        n += 1
        x = -x
    while x >= 10:
        x //= 10
        n += 1
    return n


@nb.njit(cache=True, nogil=True)
def _write_names(columns: np.ndarray, boolean: np.ndarray, prefix: np.ndarray,
                 starts: np.ndarray, out: np.ndarray) -> int:
    """Write each row's name (``x=1,b,!c``: ``prefix[k]`` then the value, or ``!`` and
    the name of a false Boolean), each followed by a newline, into ``out`` (None-safe:
    with an empty ``out`` only the length is counted). Returns the bytes used."""
    pos = 0
    n, width = columns.shape
    count_only = out.shape[0] == 0
    for i in range(n):
        for k in range(width):
            if k:
                if not count_only:
                    out[pos] = 44  # ','
                pos += 1
            lo, hi = starts[k], starts[k + 1]
            value = columns[i, k]
            if boolean[k]:
                if value == 0:
                    if not count_only:
                        out[pos] = 33  # '!'
                    pos += 1
                for j in range(lo, hi - 1):  # the prefix of a Boolean ends with '=': drop it
                    if not count_only:
                        out[pos] = prefix[j]
                    pos += 1
            else:
                for j in range(lo, hi):
                    if not count_only:
                        out[pos] = prefix[j]
                    pos += 1
                d = _digits(value)
                if not count_only:
                    x = value
                    if x < 0:
                        out[pos] = 45  # '-'
                        x = -x
                    end = pos + d - 1
                    while True:
                        out[end] = 48 + x % 10
                        x //= 10
                        end -= 1
                        if x == 0:
                            break
                pos += d
        if not count_only:
            out[pos] = 10  # '\n'
        pos += 1
    return pos


def valuation_names(columns: np.ndarray, names: list[str], boolean: list[bool]) -> list[str]:
    """Each row of ``columns`` (a state's values of the variables ``names``) as
    ``x=1,b,!c``, written by compiled code and split once (no Python step a state)."""
    prefixes = [f"{name}=".encode() for name in names]
    starts = np.zeros(len(names) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in prefixes], out=starts[1:])
    prefix = np.frombuffer(b"".join(prefixes), dtype=np.uint8) if names else np.zeros(0, np.uint8)
    columns = np.ascontiguousarray(columns, dtype=np.int64)
    flags = np.array(boolean, dtype=np.bool_)
    size = _write_names(columns, flags, prefix, starts, np.zeros(0, dtype=np.uint8))
    out = np.empty(size, dtype=np.uint8)
    _write_names(columns, flags, prefix, starts, out)
    return out.tobytes().decode("ascii").split("\n")[:-1]

"""The explorer's set of states seen, and the states' names: NumPy only, so that a build
pays for no compiler (numba's import and the load of its cached code cost about half a
second, more than Storm takes for a whole small model).

:class:`StateTable` is a hash table of packed states (rows of 64-bit words), with
open addressing and double hashing over a power-of-two table of state numbers
(``int32``, ``-1``: empty), kept at most an eighth full while small and half full
when large; the states themselves are rows of
:attr:`StateTable.states`, numbered in the order they are first added. A batch of rows
is looked up all at once: each round, every row still unresolved reads its slot; a row
equal to the occupant gets its number, a row meeting another state moves to its next
slot, and one row of those meeting an empty slot claims it (no sort: every claimant
writes, and the one whose mark stayed wins). Rows with equal words follow the same
slots in the same rounds, so one of them claims and the others find it in the next
round; the batch's new states are then renumbered in the order of their first rows.
"""

from __future__ import annotations

import numpy as np

#: A table of fewer slots than this is kept at most 1/_SPARSE full, a larger one at
#: most half: the emptier the table, the fewer rounds a batch takes (each round is a
#: dozen NumPy calls, the cost of a small model's layer), and 4 MB of slots cost little.
_SMALL = 1 << 20
_SPARSE = 8
_SEED = np.uint64(0x243F6A8885A308D3)
_MIX = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xC2B2AE3D27D4EB4F)


def _hashes(rows: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's first slot and its (odd) step, in a table of ``2**bits`` slots."""
    words = rows.view(np.uint64)
    h = np.full(len(rows), _SEED, dtype=np.uint64)
    for w in range(words.shape[1]):
        h ^= words[:, w]
        h *= _MIX
        h ^= h >> np.uint64(29)
    shift = np.uint64(64 - bits)
    first = (h >> shift).astype(np.int64)
    step = (((h * _MIX2) >> shift) | np.uint64(1)).astype(np.int64)
    return first, step


class StateTable:
    """The states seen: ``states[:count]`` in the order added."""

    def __init__(self, words: int, capacity: int = 1024) -> None:
        self.words = words
        self.count = 0
        self.states = np.zeros((capacity, words), dtype=np.int64)
        self.bits = _bits(_SPARSE * capacity)
        self.table = np.full(1 << self.bits, -1, dtype=np.int32)

    def add(self, rows: np.ndarray) -> np.ndarray:
        """The numbers of ``rows`` (shape ``(m, words)``); those not seen before are
        added, numbered in the order of their first row."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        m = len(rows)
        out = np.empty(m, dtype=np.int64)
        if m == 0:
            return out
        need = self.count + m
        if need >= 1 << 31:
            raise ValueError("more than 2**31 states")
        if need > len(self.states):
            grown = np.zeros((max(need, 2 * len(self.states)), self.words), dtype=np.int64)
            grown[:self.count] = self.states[:self.count]
            self.states = grown
        if need * (_SPARSE if len(self.table) < _SMALL else 2) > len(self.table):
            self._rehash(_bits(need * (_SPARSE if need * _SPARSE < _SMALL else 4)))
        slot, step = _hashes(rows, self.bits)
        mask = len(self.table) - 1
        table, states = self.table, self.states
        pending = np.arange(m)
        fresh = self.count
        claimed: list[np.ndarray] = []
        while len(pending):
            s = slot[pending]
            occupant = table[s]
            empty = occupant < 0
            if empty.any():
                # one claimant a slot (whichever the assignment leaves), a new number each
                rows_e, slots_e = pending[empty], s[empty]
                table[slots_e] = -2 - rows_e
                won = table[slots_e] == -2 - rows_e
                winners, slots_w = rows_e[won], slots_e[won]
                numbers = np.arange(fresh, fresh + len(winners))
                table[slots_w] = numbers
                claimed.append(slots_w)
                states[fresh:fresh + len(winners)] = rows[winners]
                fresh += len(winners)
                occupant = table[s]
            same = (states[occupant] == rows[pending]).all(axis=1)
            out[pending[same]] = occupant[same]
            pending = pending[~same]
            slot[pending] = (slot[pending] + step[pending]) & mask
        if fresh > self.count:
            self._renumber(fresh, np.concatenate(claimed), out)
        return out

    def _renumber(self, fresh: int, slots: np.ndarray, out: np.ndarray) -> None:
        """Number the states a batch added (``count`` to ``fresh``, in the order they
        claimed their ``slots``) in the order of their first rows."""
        start = self.count
        new = np.flatnonzero(out >= start)
        # each new state's first row: the rows are in order, so the first of its rows
        claimed, first = np.unique(out[new], return_index=True)
        order = np.argsort(new[first], kind="stable")   # claim numbers, by first row
        final = np.empty(fresh - start, dtype=np.int64)
        final[order] = np.arange(start, fresh)
        moved = self.states[start:fresh].copy()
        self.states[final] = moved
        self.table[slots] = final
        out[new] = final[out[new] - start]
        self.count = fresh

    def _rehash(self, bits: int) -> None:
        """A larger table, every state put back (the states are distinct: each needs
        only an empty slot)."""
        self.bits = bits
        table = np.full(1 << bits, -1, dtype=np.int32)
        mask = len(table) - 1
        slot, step = _hashes(self.states[:self.count], bits)
        pending = np.arange(self.count)
        while len(pending):
            s = slot[pending]
            free = table[s] < 0
            table[s[free]] = pending[free]
            placed = np.zeros(len(pending), dtype=bool)
            placed[free] = table[s[free]] == pending[free]
            pending = pending[~placed]
            slot[pending] = (slot[pending] + step[pending]) & mask
        self.table = table


def _bits(n: int) -> int:
    """Bits of the smallest power of two at least ``n`` (and at least 2**10)."""
    return max(10, (int(n) - 1).bit_length())


def valuation_names(columns: np.ndarray, names: list[str], boolean: list[bool],
                    chunk: int = 1 << 18) -> list[str]:
    """Each row of ``columns`` (a state's values of the variables ``names``) as
    ``x=1,b,!c``. Written as a byte matrix a chunk of rows at a time, one field of
    fixed width a variable with zero bytes as padding, the padding dropped and the
    text split once: no Python step a state."""
    columns = np.asarray(columns, dtype=np.int64)
    out: list[str] = []
    for lo in range(0, len(columns), chunk):
        block = _name_bytes(columns[lo:lo + chunk], names, boolean)
        out += block[block != 0].tobytes().decode("ascii").split("\n")[:-1]
    return out


def _name_bytes(columns: np.ndarray, names: list[str], boolean: list[bool]) -> np.ndarray:
    """The byte matrix of :func:`valuation_names`: one row a state, ending in a
    newline; zero bytes are padding."""
    n = len(columns)
    widths = []
    for k, name in enumerate(names):
        sep = 1 if k else 0
        if boolean[k]:
            widths.append(sep + 1 + len(name))
        else:
            col = columns[:, k]
            big = int(np.abs(col).max()) if n else 0
            widths.append(sep + len(name) + 1 + 1 + len(str(big)))
    out = np.zeros((n, sum(widths) + 1), dtype=np.uint8)
    pos = 0
    for k, name in enumerate(names):
        if k:
            out[:, pos] = ord(",")
            pos += 1
        col = columns[:, k]
        if boolean[k]:
            out[:, pos] = np.where(col == 0, ord("!"), 0)
            out[:, pos + 1:pos + 1 + len(name)] = np.frombuffer(name.encode(), dtype=np.uint8)
            pos += 1 + len(name)
            continue
        text = name.encode() + b"="
        out[:, pos:pos + len(text)] = np.frombuffer(text, dtype=np.uint8)
        pos += len(text)
        out[:, pos] = np.where(col < 0, ord("-"), 0)
        pos += 1
        digits = widths[k] - (pos - sum(widths[:k]))
        value = np.abs(col)
        for j in range(digits - 1, -1, -1):
            # the j-th digit from the right, where the number has one there (0 has its 0)
            shown = value >= 10 ** j if j else np.ones(n, dtype=bool)
            out[:, pos + digits - 1 - j] = np.where(shown, ord("0") + value // 10 ** j % 10, 0)
        pos += digits
    out[:, pos] = ord("\n")
    return out

"""The push of :mod:`ladders.solver.checks.chain_bounds`, compiled: fixed-point mass in
little-endian 32-bit limbs pushed through a chain's states component by component,
sources first (the proof is in that module's docstring). A module of its own so that
numba is imported only where bounds are pushed, not by every command that imports the
checks; a small push (:func:`_small_push`) runs as the Python it is written in."""

from __future__ import annotations

import numpy as np

from ladders.solver.engines.series.jit import nb

#: Limbs of the push's fixed point hold 32 bits each (a limb times a numerator below
#: 2^32, plus a limb and a carry, stays below 2^64).
LIMB = 32


def _small_push(ptr: np.ndarray, code: np.ndarray, numerators: np.ndarray, start: np.ndarray,
                mass: np.ndarray, entered: np.ndarray, work: int) -> int:
    """:func:`push`'s time as Python at most, in microseconds
    (:class:`~ladders.solver.engines.series.jit.Kernel`): a limb step each, of its work
    times its limbs."""
    return int(work) * mass.shape[1]


@nb.njit(cache=True, nogil=True, small=_small_push)
def push(ptr: np.ndarray, code: np.ndarray, numerators: np.ndarray, start: np.ndarray,
          mass: np.ndarray, entered: np.ndarray, work: int) -> int:
    """Push ``mass`` (``[state, limb]``, little-endian 32-bit limbs) through the
    components, states ``start[c]:start[c + 1]`` of the walk's states numbered in that
    order, from the last component to the first (sources first), into
    ``entered[slot, limb]``; state k's transitions are ``ptr[k]:ptr[k + 1]``, entry e
    going to ``code[e]``: a state's number, or ``nu + slot``. Returns the transitions
    read, or -1 where ``work`` ran out (mass is left)."""
    nu, limbs = mass.shape
    mask = np.uint64(0xFFFFFFFF)
    q = np.empty(limbs, dtype=np.uint64)
    done = 0
    for c in range(start.shape[0] - 2, -1, -1):
        lo, hi = start[c], start[c + 1]
        moved = True
        while moved:
            moved = False
            for u in range(lo, hi):
                e_i = np.uint64(0)
                for e in range(ptr[u], ptr[u + 1]):
                    if code[e] != u:
                        e_i += np.uint64(numerators[e])
                top = limbs - 1
                while top > 0 and mass[u, top] == 0:
                    top -= 1
                if top == 0 and mass[u, 0] < e_i:
                    continue                   # less than one push: it stays
                rem = np.uint64(0)
                for l in range(top, -1, -1):
                    cur = (rem << np.uint64(LIMB)) | mass[u, l]
                    q[l] = cur // e_i
                    rem = cur - q[l] * e_i
                moved = hi - lo > 1
                for l in range(top + 1):
                    mass[u, l] = 0
                mass[u, 0] = rem
                for e in range(ptr[u], ptr[u + 1]):
                    t = code[e]
                    if t == u:
                        continue
                    c_e = np.uint64(numerators[e])
                    carry = np.uint64(0)
                    for l in range(limbs):
                        if l > top and carry == 0:
                            break
                        qv = q[l] if l <= top else np.uint64(0)
                        if t < nu:
                            v = mass[t, l] + qv * c_e + carry
                            mass[t, l] = v & mask
                        else:
                            v = entered[t - nu, l] + qv * c_e + carry
                            entered[t - nu, l] = v & mask
                        carry = v >> np.uint64(LIMB)
                done += ptr[u + 1] - ptr[u]
                if done > work:
                    return -1
    return done


def to_limbs(value: int, limbs: int) -> list[int]:
    """``value`` as ``limbs`` little-endian 32-bit limbs."""
    return [(value >> (LIMB * k)) & 0xFFFFFFFF for k in range(limbs)]


def from_limbs(row: np.ndarray) -> int:
    """The integer of a row of little-endian 32-bit limbs."""
    return sum(int(v) << (LIMB * k) for k, v in enumerate(row.tolist()))

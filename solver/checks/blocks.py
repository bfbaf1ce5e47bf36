"""The residue check's block triangular solve, compiled (see
:mod:`ladders.solver.checks.residue_check`): Kosaraju's components of a system's
pattern, then each component solved modulo primes from the sinks up. A module of its
own so that numba is imported only where the check runs, not by every command; a small
system's (:func:`_small_blocks`) runs as the Python it is written in, without numba's
start."""

from __future__ import annotations

import numpy as np

from ladders.solver.engines.series.jit import elements, nb

#: The most unknowns of a system whose block solve may run as Python
#: (:class:`~ladders.solver.engines.series.jit.Kernel`, :func:`_small_blocks`).
SMALL_UNKNOWNS = 1_000


def _linear(*args: object) -> int:
    """Kosaraju's time as Python, in microseconds: about 4 an array element."""
    return 4 * elements(*args)


@nb.njit(cache=True, nogil=True, small=_linear)
def _kosaraju(indptr: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The strongly connected components of the pattern ``i -> j`` (row i names
    unknown j) by Kosaraju's two passes: a depth-first post-order of the pattern, then
    depth-first searches of its transpose (``users``, ``by``: the rows that name
    unknown j) in decreasing post-order, each finding one component, sources of the
    pattern first. Returns the component of each unknown, and the unknowns component
    by component (``members``, in the order found)."""
    n = indptr.shape[0] - 1
    users = np.zeros(n + 1, dtype=np.int64)
    for e in range(indices.shape[0]):
        users[indices[e] + 1] += 1
    for j in range(n):
        users[j + 1] += users[j]
    fill = users[:-1].copy()
    by = np.empty(indices.shape[0], dtype=np.int64)
    for i in range(n):
        for e in range(indptr[i], indptr[i + 1]):
            by[fill[indices[e]]] = i
            fill[indices[e]] += 1
    post = np.empty(n, dtype=np.int64)
    done = 0
    seen = np.zeros(n, dtype=np.bool_)
    path = np.empty(n, dtype=np.int64)
    edge = np.empty(n, dtype=np.int64)
    for root in range(n):
        if seen[root]:
            continue
        seen[root] = True
        depth = 0
        path[0], edge[0] = root, indptr[root]
        while depth >= 0:
            v = path[depth]
            if edge[depth] < indptr[v + 1]:
                w = indices[edge[depth]]
                edge[depth] += 1
                if not seen[w]:
                    seen[w] = True
                    depth += 1
                    path[depth], edge[depth] = w, indptr[w]
            else:
                post[done] = v
                done += 1
                depth -= 1
    component = np.full(n, -1, dtype=np.int64)
    members = np.empty(n, dtype=np.int64)
    placed = 0
    count = 0
    stack = np.empty(n, dtype=np.int64)
    for k in range(n - 1, -1, -1):
        root = post[k]
        if component[root] >= 0:
            continue
        component[root] = count
        top = 1
        stack[0] = root
        while top:
            top -= 1
            v = stack[top]
            members[placed] = v
            placed += 1
            for q in range(users[v], users[v + 1]):
                w = by[q]
                if component[w] < 0:
                    component[w] = count
                    stack[top] = w
                    top += 1
        count += 1
    return component, members


@nb.njit(cache=True, nogil=True)
def _power(base: int, exponent: int, p: int) -> int:
    out = 1
    while exponent:
        if exponent & 1:
            out = out * base % p
        base = base * base % p
        exponent >>= 1
    return out


def _small_blocks(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, rhs: np.ndarray,
                  target: int, primes: np.ndarray, limit: int) -> int | None:
    """:func:`block_solve`'s time as Python, in microseconds, for a system of at most
    :data:`SMALL_UNKNOWNS` unknowns: about 3 a transition, a prime and a right-hand
    side, and the cube of each component's size (its Gauss-Jordan) a prime."""
    n = indptr.shape[0] - 1
    if n > SMALL_UNKNOWNS:
        return None
    component, _members = _kosaraju(indptr, indices)
    sizes = np.bincount(component).astype(np.int64) if n else np.zeros(0, dtype=np.int64)
    per_prime = 3 * (n + indices.shape[0]) * rhs.shape[1] + int((sizes ** 3).sum())
    return per_prime * primes.shape[0]


@nb.njit(cache=True, nogil=True, small=_small_blocks)
def block_solve(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, rhs: np.ndarray,
                 target: int, primes: np.ndarray, limit: int) -> tuple[int, np.ndarray]:
    """``x[target] mod primes[k]`` for every right-hand side (``[k, column]``) by the
    block triangular form (module docstring): status 0 with the residues, 1 where a
    pivot vanishes modulo one of the primes, 2 where a component has more than
    ``limit`` unknowns."""
    n, m, count = indptr.shape[0] - 1, rhs.shape[1], primes.shape[0]
    component, members = _kosaraju(indptr, indices)
    ncomp = component.max() + 1 if n else 0
    first = np.zeros(ncomp + 1, dtype=np.int64)
    for i in range(n):
        first[component[i] + 1] += 1
    for c in range(ncomp):
        first[c + 1] += first[c]
    if n and (first[1:] - first[:-1]).max() > limit:
        return 2, np.zeros((count, m), dtype=np.int64)
    # the inverses of the one-unknown components' diagonals, all at once a prime
    # (Montgomery's trick: three products a row and one power)
    diagonal = np.ones(n, dtype=np.int64)
    for i in range(n):
        if first[component[i] + 1] - first[component[i]] == 1:
            diagonal[i] = 0
            for e in range(indptr[i], indptr[i + 1]):
                if indices[e] == i:
                    diagonal[i] = data[e]
    inverse = np.empty((n, count), dtype=np.int64)
    prefix = np.empty(n, dtype=np.int64)
    for q in range(count):
        p = primes[q]
        running = 1
        for i in range(n):
            running = running * (diagonal[i] % p) % p
            prefix[i] = running
        if n and running == 0:
            return 1, np.zeros((count, m), dtype=np.int64)
        t = _power(running, p - 2, p)
        for i in range(n - 1, 0, -1):
            inverse[i, q] = t * prefix[i - 1] % p
            t = t * (diagonal[i] % p) % p
        if n:
            inverse[0, q] = t
    x = np.zeros((n, count, m), dtype=np.int64)
    local = np.full(n, -1, dtype=np.int64)
    for c in range(ncomp - 1, -1, -1):        # sinks of the pattern first
        rows = members[first[c]:first[c + 1]]
        k = rows.shape[0]
        if k == 1:
            i = rows[0]
            for q in range(count):
                p = primes[q]
                for col in range(m):
                    acc = rhs[i, col] % p
                    for e in range(indptr[i], indptr[i + 1]):
                        j = indices[e]
                        if j != i:
                            acc = (acc + (p - data[e] % p) * x[j, q, col]) % p
                    x[i, q, col] = acc * inverse[i, q] % p
            if i == target:
                return 0, x[target]
            continue
        for t in range(k):
            local[rows[t]] = t
        for q in range(count):
            p = primes[q]
            block = np.zeros((k, k + m), dtype=np.int64)
            for t in range(k):
                i = rows[t]
                for col in range(m):
                    block[t, k + col] = rhs[i, col] % p
                for e in range(indptr[i], indptr[i + 1]):
                    j = indices[e]
                    a = data[e] % p
                    if local[j] >= 0:
                        block[t, local[j]] = (block[t, local[j]] + a) % p
                    else:
                        for col in range(m):
                            block[t, k + col] = (block[t, k + col] + (p - a) * x[j, q, col]) % p
            for d in range(k):                 # Gauss-Jordan, the first nonzero pivot
                r = d
                while r < k and block[r, d] == 0:
                    r += 1
                if r == k:
                    return 1, np.zeros((count, m), dtype=np.int64)
                for t in range(k + m):
                    block[d, t], block[r, t] = block[r, t], block[d, t]
                scale = _power(block[d, d], p - 2, p)
                for t in range(k + m):
                    block[d, t] = block[d, t] * scale % p
                for r in range(k):
                    f = block[r, d]
                    if r != d and f:
                        for t in range(k + m):
                            block[r, t] = (block[r, t] + (p - f) * block[d, t]) % p
            for t in range(k):
                for col in range(m):
                    x[rows[t], q, col] = block[t, k + col]
        for t in range(k):
            local[rows[t]] = -1
        if component[target] == c:
            return 0, x[target]
    return 0, x[target]

"""Strongly connected components of a sparse pattern, in topological order (compiled).

The chains that model checkers produce are nearly acyclic: QVBS's nand 20-2 has no
cycle besides its absorbing self-loops, and crowds 4-10's 30,070 states fall into 19,514
components, the largest of 30. Solving such a chain component by component, in
topological order, is what Storm's default linear-equation solver for DTMCs does
(``TopologicalLinearEquationSolver``); this module finds the components.

Tarjan's algorithm (R. Tarjan, *Depth-first search and linear graph algorithms*, SIAM
J. Computing 1(2), 1972), written without recursion: an explicit stack of ``(vertex,
next edge)`` frames, so that a path of millions of states needs no call stack. Tarjan
completes a component only after every component it reaches, so the numbers it gives
(0, 1, 2, ... in order of completion) are a *reverse* topological order: every edge
``i -> j`` between two components has ``component[j] < component[i]``. Solving ``A x
= b`` row by row in increasing component number therefore meets every unknown after
the unknowns it depends on.

One pass over the pattern, ``O(n + nnz)``; the CSR arrays are read as they are. The
graph searches of :mod:`ladders.solver.chains.questions` are compiled here too
(:func:`reach`, :func:`transposed`); on a small chain all three run as the Python
they are written in, without numba's start (:func:`_linear`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ladders.solver.engines.series.jit import elements, nb


def _linear(*args: object) -> int:
    """A search's time as Python, in microseconds (about 4 an array element), for
    :class:`~ladders.solver.engines.series.jit.Kernel`: a chain of a few hundred
    states is searched in a few milliseconds, where numba's start costs 0.4 s."""
    return 4 * elements(*args)


@nb.njit(cache=True, nogil=True, small=_linear)
def _tarjan(indptr: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Component number of every vertex (reverse topological order), the vertices in
    the order their components were completed (grouped by component), and the count."""
    n = indptr.shape[0] - 1
    index = np.full(n, -1, dtype=np.int64)     # discovery number
    low = np.zeros(n, dtype=np.int64)
    comp = np.full(n, -1, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)        # Tarjan's stack of open vertices
    order = np.empty(n, dtype=np.int64)        # vertices as their components complete
    placed = 0
    frames = np.empty(n, dtype=np.int64)       # the depth-first path: vertices ...
    edges = np.empty(n, dtype=np.int64)        # ... and the next edge of each
    top = 0
    counter = 0
    count = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        depth = 0
        frames[0] = root
        edges[0] = indptr[root]
        index[root] = low[root] = counter
        counter += 1
        stack[top] = root
        top += 1
        while depth >= 0:
            v = frames[depth]
            e = edges[depth]
            if e < indptr[v + 1]:
                edges[depth] = e + 1
                w = indices[e]
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack[top] = w
                    top += 1
                    depth += 1
                    frames[depth] = w
                    edges[depth] = indptr[w]
                elif comp[w] < 0 and index[w] < low[v]:
                    low[v] = index[w]          # w is open: on the stack
                continue
            if low[v] == index[v]:             # v roots a component: pop it
                while True:
                    top -= 1
                    w = stack[top]
                    comp[w] = count
                    order[placed] = w
                    placed += 1
                    if w == v:
                        break
                count += 1
            depth -= 1
            if depth >= 0:
                u = frames[depth]
                if low[v] < low[u]:
                    low[u] = low[v]
    return comp, order, count


@nb.njit(cache=True, nogil=True, small=_linear)
def transposed(indptr: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The transpose of a CSR pattern (a counting sort): each row's list in increasing
    order."""
    n = indptr.shape[0] - 1
    tindptr = np.zeros(n + 1, dtype=np.int64)
    for e in range(indices.shape[0]):
        tindptr[indices[e] + 1] += 1
    for i in range(n):
        tindptr[i + 1] += tindptr[i]
    fill = tindptr[:-1].copy()
    rows = np.empty(indices.shape[0], dtype=np.int64)
    for i in range(n):
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            rows[fill[j]] = i
            fill[j] += 1
    return tindptr, rows


@nb.njit(cache=True, nogil=True, small=_linear)
def reach(indptr: np.ndarray, indices: np.ndarray, seen: np.ndarray,
            through: np.ndarray) -> None:
    """Mark in ``seen`` every state reached from the marked ones (breadth first: a
    model's states are numbered in the order its builder found them, breadth first,
    so a queue reads the arrays nearly in order, where a stack jumps about), expanding
    only states where ``through`` holds."""
    queue = np.flatnonzero(seen)
    tail = queue.shape[0]
    queue = np.concatenate((queue, np.empty(seen.shape[0], dtype=np.int64)))
    head = 0
    while head < tail:
        v = queue[head]
        head += 1
        if not through[v]:
            continue
        for e in range(indptr[v], indptr[v + 1]):
            w = indices[e]
            if not seen[w]:
                seen[w] = True
                queue[tail] = w
                tail += 1


@dataclass(frozen=True)
class Components:
    """The strongly connected components of a pattern on ``n`` vertices: ``of[v]`` is
    v's component, numbered in reverse topological order (edges go to lower numbers);
    ``order`` lists the vertices component by component, component c being
    ``order[start[c]:start[c + 1]]``."""

    of: np.ndarray
    order: np.ndarray
    start: np.ndarray

    @property
    def count(self) -> int:
        """Number of components."""
        return len(self.start) - 1

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.start)

    @property
    def largest(self) -> int:
        """Vertices of the largest component (0 for an empty pattern)."""
        return int(self.sizes.max(initial=0))


def strong_components(indptr: np.ndarray, indices: np.ndarray) -> Components:
    """The strongly connected components of the pattern ``indptr, indices`` (CSR of
    the edges ``i -> indices[indptr[i]:indptr[i + 1]]``), see the module docstring."""
    of, order, count = _tarjan(np.ascontiguousarray(indptr, dtype=np.int64),
                               np.ascontiguousarray(indices, dtype=np.int64))
    start = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.bincount(of, minlength=count), out=start[1:])
    return Components(of, order, start)

"""The denominator multiple of k players from resultants: which exist, and a check.

Every seat's win probability of a k-player race has a denominator dividing
``M_k = k! d^e det(I - Sym^k Q)`` (docs/series.md; three players use it already,
:func:`ladders.solver.engines.series.algebra.multiple_exponent`). The kernel cannot
form ``Sym^k Q`` (at 5 players its characteristic polynomial would have
C(81, 5) = 25 million coefficients), but it has, modulo each prime, the polynomials
of smaller symmetric powers: ``chi_a`` = charpoly(Sym^a Q) and ``D_b(x) =
det(I - x Sym^b Q)``, a, b <= 2 (3 players: b = 2; 4: a = b = 2; 5: a = 2, b = 3;
6: a = b = 3), and ``det(I - x Q^e)`` from the power sums. A resultant

    R(a, c, b, e) = Res(charpoly(Sym^a Q), det(I - x^c Sym^b(Q^e))) = prod (1 - mu^c nu^e)

runs over the pairs of an a-multiset and a b-multiset of eigenvalues, so it is a
product of the factors ``(1 - lambda^T)`` of ``det(I - Sym^k Q)`` (``c a + e b = k``),
each k-multiset T counted as often as it splits that way: by its pattern of
multiplicities. A product of such resultants to integer powers is ``X^N``, ``X =
det(I - Sym^k Q)``, exactly when every pattern gets the same count N: a linear system,
solved here exactly. Modulo p, X^N gives X^2 where ``gcd(N / 2, p - 1) = 1`` (N = 6:
p = 2 mod 3; N = 10: p != 1 mod 5), and the integer X^2 from the Chinese remainder
theorem gives X by an exact square root: a denominator multiple without rational
reconstruction (issue 39's serial tail).

Findings (run: ``python scripts/multiple_recipe.py``): k = 3: N = 3 (the engine's
cube); k = 4: N = 6 from five resultants, one of degree 3,007 on both sides
(``Res(chi_Sym2, D_Sym2)``) and four with a polynomial of degree 81 or less on one
side; k = 5: N = 10 from seven, ``Res(chi_Sym3, D_Sym2)`` (the kernel's ``Res(chi_a,
D_b mod chi_a)``, degree 3,007), ``Res(chi_Sym3, det(I - x Q^2))`` (a reduction of
degree 79,083 by 77) and five small ones; **k = 6: none**, from any family of size up to
3, symmetric or alternating: the patterns with five distinct eigenvalues (2,1,1,1,1)
and six (1,1,1,1,1,1) are split only by ``Res(chi_Sym3, D_Sym3)`` (14 and 20 times),
and evening them needs a 4-multiset family (degree C(80, 4) = 1.58 million). Each
recipe found is checked exactly on random chains of 4 states with python-flint:
``det(I - Sym^k Q)^N`` equals the product of the resultants, ``==``.

Run: ``python scripts/multiple_recipe.py [--players 3,4,5,6] [--chains 3]``. Prints each
k's recipe (or that there is none) and the checks, then one JSON line.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
from collections import Counter, defaultdict

from flint import fmpq, fmpq_mat, fmpq_poly, fmpz_mat

#: A family of eigenvalue products: (size, alternating); alternating families (the
#: exterior powers) take each eigenvalue at most once. Size 3 is the largest the kernel
#: has at 5 and 6 players; size 1 alternating is size 1 symmetric.
FAMILIES = [(1, False), (2, False), (2, True), (3, False), (3, True)]


def patterns(k: int, top: int | None = None):
    """The partitions of k: the patterns of multiplicities of a k-multiset."""
    top = k if top is None else top
    if k == 0:
        yield ()
        return
    for first in range(min(k, top), 0, -1):
        for rest in patterns(k - first, first):
            yield (first,) + rest


def splits(pattern: tuple[int, ...], a: int, alt_a: bool, c: int, b: int, alt_b: bool,
           e: int) -> int:
    """How many pairs (A, B), A of size a and B of size b (multisets, or sets where
    alternating), have ``c A + e B`` equal to a multiset of this pattern."""
    count = 0

    def walk(i: int, left_a: int, left_b: int) -> None:
        nonlocal count
        if i == len(pattern):
            count += left_a == 0 and left_b == 0
            return
        for m1 in range(min(left_a, pattern[i] // c, 1 if alt_a else left_a) + 1):
            rest = pattern[i] - c * m1
            m2, odd = divmod(rest, e)
            if not odd and m2 <= left_b and (not alt_b or m2 <= 1):
                walk(i + 1, left_a - m1, left_b - m2)

    walk(0, a, b)
    return count


def candidates(k: int, alternating: bool = True) -> list[tuple]:
    """The resultants the kernel can afford at k players: ``(a, alt_a, c, b, alt_b, e)``
    with ``c a + e b = k`` (b = 0: ``1 - x^c``); families of size 3 (polynomials of
    degree 73,150 to 79,079 on hasbro: the kernel's own work at 5 and 6 players) only
    from 5 players on, at power 1, and two of them only as the kernel's own pair
    ``Res(chi_Sym3, D_Sym3)``; ``alternating``: with the exterior powers too."""
    largest = 3 if k >= 5 else 2
    families = [f for f in FAMILIES if f[0] <= largest and (alternating or not f[1])]
    out = []
    for (a, alt_a) in families:
        for (b, alt_b) in families + [(0, False)]:
            for c in range(1, k + 1):
                for e in range(1, k + 1):
                    if c * a + e * b != k or (b == 0 and e != 1):
                        continue
                    if (a == 3 and c != 1) or (b == 3 and e != 1):
                        continue
                    if a == 3 and b == 3 and (alt_a or alt_b):
                        continue
                    out.append((a, alt_a, c, b, alt_b, e))
    return out


def cost(cand: tuple) -> int:
    """A resultant's rough cost in the kernel: a family the kernel does not form already
    needs an exponential of its own (alternating ones; of size 3 about 20 ms a prime at
    5 players), a resultant against a family of size 3 reduces a polynomial of degree
    about 79,000, one of size 2 on both sides is of degree 3,007; the rest (degree 81 on
    one side) is small."""
    a, alt_a, _, b, alt_b, _ = cand
    extra = sum(1000 if size == 3 else 5 for size, alt in ((a, alt_a), (b, alt_b))
                if alt and size > 1)
    return extra + (100 if max(a, b) == 3 else 10 if min(a, b) == 2 else 1)


def solve(rows: list[list[int]], cands: list[tuple]) -> list[int] | None:
    """Integer exponents x and the smallest N > 0 with ``sum_j x_j rows[j] = N (1, ...,
    1)``, as ``x + [N]``, or None: the integer kernel of ``[rows | -1]`` by a Hermite
    normal form of ``[rows^T | I]`` (its rows with a zero left part), the kernel's N's
    combined to their gcd, then the vectors with N = 0 (LLL-reduced) added or subtracted
    while that makes the recipe cheaper (:func:`cost` of the resultants used, then the
    sum of the exponents' sizes)."""
    n, width = len(rows), len(rows[0])
    size = n + 1                        # the exponents and N
    table = []
    for j in range(size):
        left = rows[j] if j < n else [-1] * width
        table.append(list(left) + [int(i == j) for i in range(size)])
    hnf = fmpz_mat(table).hnf()
    basis = [[int(hnf[i, width + j]) for j in range(size)] for i in range(size)
             if all(hnf[i, t] == 0 for t in range(width))]
    # combine to one vector of N = gcd (Euclid on the N coordinate), the rest N = 0
    zero = [v for v in basis if v[-1] == 0]
    live = [v if v[-1] > 0 else [-x for x in v] for v in basis if v[-1] != 0]
    if not live:
        return None
    while len(live) > 1:
        live.sort(key=lambda v: v[-1])
        first, rest = live[0], live[1:]
        live = [first]
        for v in rest:
            q = v[-1] // first[-1]
            w = [x - q * y for x, y in zip(v, first)]
            (live if w[-1] else zero).append(w)
    best = live[0]
    if zero:
        zero = [[int(x) for x in row] for row in fmpz_mat(zero).lll().tolist()]
        weight = [cost(c) for c in cands] + [0]
        score = lambda v: (sum(w for w, x in zip(weight, v) if x), sum(abs(x) for x in v))
        improved = True
        while improved:
            improved = False
            for z in zero:
                for sign in (1, -1):
                    trial = [x + sign * y for x, y in zip(best, z)]
                    if score(trial) < score(best):
                        best, improved = trial, True
    return best


def recipe(k: int) -> tuple[int, list[tuple[tuple, int]]] | None:
    """``(N, [(candidate, exponent), ...])`` for k players, or None: from the symmetric
    powers alone where they have one (the kernel forms those already), else with the
    exterior powers too."""
    pats = list(patterns(k))
    for alternating in (False, True):
        cands = candidates(k, alternating)
        x = solve([[splits(p, *cand) for p in pats] for cand in cands], cands)
        if x is not None:
            *exps, n = x
            return n, [(cand, v) for cand, v in zip(cands, exps) if v != 0]
    return None


# ------------------------------------------------------------------ the exact check

def power_matrix(q: fmpq_mat, size: int, alternating: bool) -> fmpq_mat:
    """Q acting on the symmetric (or alternating) tensors of the given size: a matrix
    whose eigenvalues are the products over the multisets (sets) of Q's."""
    n = q.nrows()
    basis = list(itertools.combinations(range(n), size) if alternating
                 else itertools.combinations_with_replacement(range(n), size))
    index = {b: i for i, b in enumerate(basis)}
    m = fmpq_mat(len(basis), len(basis))
    for col, mono in enumerate(basis):
        poly: dict[tuple, fmpq] = {(): fmpq(1)}
        for j in mono:                  # x_j -> sum_i Q[i, j] y_i, then sort (with sign)
            new: dict[tuple, fmpq] = defaultdict(fmpq)
            for key, v in poly.items():
                for i in range(n):
                    if q[i, j] != 0:
                        new[key + (i,)] += v * q[i, j]
            poly = new
        for key, v in poly.items():
            if alternating:
                if len(set(key)) < len(key):
                    continue
                inversions = sum(x > y for x, y in itertools.combinations(key, 2))
                v = -v if inversions % 2 else v
            m[index[tuple(sorted(key))], col] += v
    return m


def det_one_minus(m: fmpq_mat) -> fmpq_poly:
    """``det(I - x m)`` as a polynomial."""
    return fmpq_poly(list(reversed(m.charpoly().coeffs())))


def resultant(q: fmpq_mat, cand: tuple) -> fmpq:
    """``prod (1 - mu^c nu^e)`` of a candidate, as the kernel would form it mod p."""
    a, alt_a, c, b, alt_b, e = cand
    chi = power_matrix(q, a, alt_a).charpoly()
    if b == 0:
        g = fmpq_poly([1] + [0] * (c - 1) + [-1])
    else:
        qe = q
        for _ in range(e - 1):
            qe = qe * q
        coeffs = det_one_minus(power_matrix(qe, b, alt_b)).coeffs()
        spread = [fmpq(0)] * (c * (len(coeffs) - 1) + 1)
        spread[::c] = coeffs
        g = fmpq_poly(spread)
    return chi.resultant(g)


def check(k: int, n_power: int, factors: list[tuple[tuple, int]], seed: int) -> bool:
    """``det(I - Sym^k Q)^N`` against the product of the resultants on a random chain of
    4 transient states over the die 6."""
    rng = random.Random(seed)
    rows = []
    for _ in range(4):
        weights = [rng.randrange(3) for _ in range(4)]
        while sum(weights) >= 6:
            weights = [max(0, w - 1) for w in weights]
        rows += [fmpq(w, 6) for w in weights]
    q = fmpq_mat(4, 4, rows)
    sym = power_matrix(q, k, False)
    size = sym.nrows()
    x = (fmpq_mat(size, size, [int(i == j) for i in range(size) for j in range(size)])
         - sym).det()
    product = fmpq(1)
    for cand, power in factors:
        r = resultant(q, cand)
        product *= r ** power if power > 0 else 1 / r ** -power
    return x ** n_power == product


def describe(cand: tuple) -> str:
    a, alt_a, c, b, alt_b, e = cand
    fam = lambda s, alt: "Q" if s == 1 else f"{'Alt' if alt else 'Sym'}^{s} Q"
    inner = "1 - x" if b == 0 else f"det(I - x {fam(b, alt_b)}{'' if e == 1 else f'^{e}'})"
    if c > 1:
        inner += f" at x^{c}"
    return f"Res(charpoly({fam(a, alt_a)}), {inner})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", default="3,4,5,6")
    parser.add_argument("--chains", type=int, default=3, help="random chains checked a k")
    args = parser.parse_args()
    report = {}
    for k in (int(v) for v in args.players.split(",")):
        found = recipe(k)
        if found is None:
            print(f"{k} players: no power of det(I - Sym^{k} Q) from the {len(candidates(k))} "
                  f"resultants of families up to size {3 if k >= 5 else 2}")
            report[k] = None
            continue
        n_power, factors = found
        print(f"{k} players: det(I - Sym^{k} Q)^{n_power} =")
        for cand, power in factors:
            print(f"    {describe(cand)}^{power}")
        checks = [check(k, n_power, factors, seed) for seed in range(args.chains)]
        print(f"  exact on {len(checks)} random chains: {checks}")
        assert all(checks), f"the recipe of {k} players fails"
        report[k] = {"N": n_power, "factors": [[list(c), p] for c, p in factors],
                     "checked": len(checks)}
    print(json.dumps(report))


if __name__ == "__main__":
    main()

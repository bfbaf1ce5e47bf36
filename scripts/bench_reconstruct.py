"""Benchmark: the series engine's Chinese remaindering and rational reconstruction at
the sizes of a big run, on random fractions (one denominator, several numerators).

``python scripts/bench_reconstruct.py BITS SEATS``: numerators and a denominator of
BITS bits, reduced modulo enough transform primes (a remainder tree builds the
residues), then ``crt_tree`` and ``rational_reconstruct`` timed; the result must be
the fraction (``==``). A 4-player run on hasbro needs BITS ~ 15.5 million.
"""

import sys, time, random
import numpy as np
from ladders.solver.exact import mpz, mpq
from ladders.solver.engines.series.reconstruct import ntt_primes, crt_tree, rational_reconstruct
sys.set_int_max_str_digits(0)
bits_each = int(sys.argv[1])     # bits of num and den
seats = int(sys.argv[2])
rng = random.Random(1)
den = mpz(rng.getrandbits(bits_each)) | 1
nums = [mpz(rng.getrandbits(bits_each - 2)) for _ in range(seats)]
need = int(2 * bits_each * 1.02) + 200
it = ntt_primes(3); primes = []; b = 0
t = time.perf_counter()
while b < need:
    q = next(it); primes.append(q); b += q.bit_length()
print(len(primes), "primes", round(time.perf_counter()-t, 1), "s to draw", flush=True)
t = time.perf_counter()
res = np.zeros((len(primes), seats), dtype=np.uint64)
# product-tree remainder: reduce num and den by subproducts
def rem_tree(x, ps):
    if len(ps) <= 64:
        return [int(x % q) for q in ps]
    h = len(ps)//2
    ml = mpz(1)
    for q in ps[:h]: ml *= q
    mr = mpz(1)
    for q in ps[h:]: mr *= q
    return rem_tree(x % ml, ps[:h]) + rem_tree(x % mr, ps[h:])
dr = rem_tree(den, primes)
for j in range(seats):
    nr = rem_tree(nums[j], primes)
    for i, q in enumerate(primes):
        res[i, j] = nr[i] * pow(dr[i], -1, q) % q
print("setup", round(time.perf_counter()-t,1), "s", flush=True)
t = time.perf_counter()
xs, m = crt_tree(res, primes)
t1 = time.perf_counter(); print("crt_tree", round(t1-t, 2), "s", flush=True)
v = rational_reconstruct(xs[0], m)
t2 = time.perf_counter(); print("rational_reconstruct", round(t2-t1, 2), "s", flush=True)
assert v == mpq(nums[0], den), "reconstruction failed"

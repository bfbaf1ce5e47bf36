"""The per-prime kernel of the series engine (:mod:`ladders.solver.engines.series.kernels`):
it keeps its arrays between primes, even in a process started with
MALLOC_TRIM_THRESHOLD_ set (as Dask's nannies start every worker), and the table's
numerators from its residues are the exact ones."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest

from ladders.solver.engines import series
from ladders.solver.engines.series.kernels import keep_kernel_memory
from ladders.solver.exact import invert, mpq, mpz, next_prime

#: In a thread, as a Dask worker runs its tasks: 3 players on hasbro, page faults a prime.
WORKER = """import resource, sys, threading
from ladders.solver.engines import series
from ladders.solver.games.board import preset_board
from ladders.solver.games.chain import build_chain
plan = series.plan_series(build_chain(preset_board("hasbro")), 3)
primes = series.prime_sequence(5, 129, plan.two_adicity)
plan.residues(primes[:1])                       # load the kernel, size the heap
def work():
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    plan.residues(primes[1:])
    print((resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before) / 128)
threading.Thread(target=work).start()
"""


@pytest.mark.skipif(not keep_kernel_memory(), reason="needs glibc's mallopt")
def test_the_kernel_does_not_fault_its_arrays_in_again_at_every_prime() -> None:
    env = {**os.environ, "MALLOC_TRIM_THRESHOLD_": "65536"}
    out = subprocess.run([sys.executable, "-c", WORKER], env=env, capture_output=True,
                         text=True, timeout=300, check=True).stdout
    # measured: 65 a prime before keep_kernel_memory, under 1 with it
    assert float(out) < 10


@pytest.mark.parametrize("seed", [1, 7, 66])
def test_table_numerators_equal_the_exact_ones(seed: int) -> None:
    """The division-free CRT of the table == the exact numerators over a common
    denominator (also at the ends of [0, 1]); a denominator that is not common to all
    entries is refused, not rounded into a wrong table."""
    import numpy as np

    from ladders.solver.engines.series.kernels import table_numerators
    rng = random.Random(seed)
    den = mpz(rng.getrandbits(300) | 1) * 6 ** 5
    values = [mpq(rng.randrange(0, int(den) + 1), den) for _ in range(40)]
    values += [mpq(0), mpq(1), mpq(1, 2 * 3)]                # the ends of [0, 1]
    primes, m = [], mpz(1)
    for q in series.random_primes(seed):
        if m.bit_length() > den.bit_length() + 90:
            break
        primes.append(q)
        m *= q

    def residues(vals):
        return np.asarray([[int(v.numerator * invert(v.denominator, q) % q) for v in vals]
                           for q in primes], dtype=np.uint64)

    assert [mpq(n, den) for n in table_numerators(residues(values), primes, m, den)] == values
    with pytest.raises(ArithmeticError):
        table_numerators(residues(values + [mpq(1, int(next_prime(mpz(2) ** 70)))]), primes, m, den)

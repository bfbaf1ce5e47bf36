"""The series kernel keeps its arrays between primes, even in a process started with
MALLOC_TRIM_THRESHOLD_ set (as Dask's nannies start every worker)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ladders.solver.engines.series.kernels import keep_kernel_memory

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

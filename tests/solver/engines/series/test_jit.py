"""numba's cache across modules: a cached caller must not keep an old callee's code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ladders.solver.engines.series import jit

CALLER = """from numba import njit
from pkg.callee import g


@njit(cache=True)
def f(x):
    return g(x) * 2
"""

CALLEE = """from numba import njit


@njit(cache=True)
def g(x):
    return x + {step}
"""

RUN = """import sys
sys.path.insert(0, {root!r})
from ladders.solver.engines.series.jit import refresh_cache
dropped = refresh_cache({folder!r}) if {refresh} else None
from pkg.caller import f
print(f(1), dropped)
"""


def _run(root: Path, refresh: bool) -> tuple[int, str]:
    """f(1) and what refresh_cache returned, in a fresh process (numba's cache in the
    package's own __pycache__, as for an installed ladders)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    code = RUN.format(root=str(root), folder=str(root / "pkg"), refresh=refresh)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=300, check=True).stdout.split()
    return int(out[0]), out[1]


def test_a_changed_callee_in_another_module_is_compiled_again(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "caller.py").write_text(CALLER)
    (pkg / "callee.py").write_text(CALLEE.format(step=1))
    assert _run(tmp_path, refresh=True) == (4, "False")      # compiled and cached
    assert (pkg / "__pycache__" / jit.STAMP).read_text().strip() == jit.sources_digest(str(pkg))
    assert any(p.suffix == ".nbi" for p in (pkg / "__pycache__").iterdir())
    assert _run(tmp_path, refresh=True) == (4, "False")      # the cache is current: kept
    (pkg / "callee.py").write_text(CALLEE.format(step=2))     # an upgrade in place
    # numba alone keeps the caller's cached code, old callee and all (numba issue 6845):
    # g(1) = 3 now, yet f(1) is still 4
    assert _run(tmp_path, refresh=False) == (4, "None")
    assert _run(tmp_path, refresh=True) == (6, "True")       # dropped, compiled again
    assert _run(tmp_path, refresh=True) == (6, "False")


def test_numba_is_imported_through_jit_only():
    # jit.py chooses numba's cache folder before numba is imported (a read-only install
    # has none otherwise); a module importing numba itself bypassed it (issue 39: modp.py)
    import re

    import ladders
    root = Path(ladders.__file__).parent
    pattern = re.compile(r"^\s*(from numba\b|import numba\b)", re.MULTILINE)
    offenders = [str(path.relative_to(root)) for folder in ("solver", "checkpoints", "cluster")
                 for path in sorted((root / folder).rglob("*.py"))
                 if path.name != "jit.py" and pattern.search(path.read_text())]
    assert offenders == []


DIE = Path(__file__).parents[2] / "chains" / "formats" / "fixtures" / "die.prism"
DIE_ASKED = ('"six": P=? [ F s=7 & d=6 ];\n"flips": R{"coin_flips"}=? [ F "done" ];\n'
             '"u": P=? [ !"one" U "done" ];\n"all": P>=1 [ F "done" ];\n')
SOLVE = """import os, sys
{before}
from ladders.cluster import cli
leave = os._exit


def report(code):
    print("numba" in sys.modules, file=sys.stderr, flush=True)
    leave(code)


os._exit = report  # the command leaves by os._exit: say first whether numba was imported
sys.argv = ["ladders", "solve", {model!r}, "--properties", {props!r}, "--json"]
cli.main()
"""


def _solve_die(tmp_path: Path, before: str) -> tuple[dict, bool]:
    """``ladders solve --json`` of the die's properties in a fresh process, after
    ``before``: its document, and whether numba was imported by its end."""
    import json
    props = tmp_path / "die.props"
    props.write_text(DIE_ASKED)
    code = SOLVE.format(before=before, model=str(DIE), props=str(props))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, check=True)
    return json.loads(proc.stdout), proc.stderr.strip().splitlines()[-1] == "True"


def test_a_small_solve_runs_its_kernels_as_python_and_equals_numba(tmp_path: Path) -> None:
    """A small chain's searches, component solve, bounds push and residue check run as
    the Python they are written in (numba never imported), and ``ladders solve --json``
    gives what it gives with the compiled kernels (numba loaded first: its dispatchers,
    a kernel calling another included), the checks' reports too."""
    interpreted, numba_then = _solve_die(tmp_path, "")
    compiled, numba_now = _solve_die(
        tmp_path, "from ladders.solver.engines.series.jit import _load_numba\n_load_numba()")
    assert (numba_then, numba_now) == (False, True)

    def answers(doc: dict) -> list:
        return [(r["answers"], r["verified"]["passed"]) for r in doc["results"]]
    assert answers(interpreted) == answers(compiled)
    assert [passed for _, passed in answers(interpreted)] == [True] * 4
    assert interpreted["results"][0]["answers"]["six"]["exact"] == "1/6"


def test_a_kernel_pickles_by_name() -> None:
    import pickle

    from ladders.solver.chains import components
    assert pickle.loads(pickle.dumps(components.reach)) is components.reach

"""``ladders solve --lump``: the output says it lumped, from how many states to how many,
the answers are those of the unlumped solve, and --lump is refused for a race."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

#: Three pieces on squares 0..4 moving together (each not home moves up with
#: probability 1/2); the expected steps until all are home do not tell the pieces
#: apart: 35 multisets of three squares out of five, of the 125 states.
PIECES = """dtmc
const int S = 4;
module piece1
  x1 : [0..S];
  [step] x1 < S -> 1/2 : (x1'=x1+1) + 1/2 : true;
  [step] x1 = S -> true;
endmodule
module piece2 = piece1 [ x1=x2 ] endmodule
module piece3 = piece1 [ x1=x3 ] endmodule
label "home" = x1=S & x2=S & x3=S;
"""


def ladders(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ladders.cluster.cli", *args],
                          capture_output=True, text=True, timeout=300)


def test_solve_says_it_lumped_and_answers_as_unlumped(tmp_path: Path) -> None:
    model = tmp_path / "pieces.prism"
    model.write_text(PIECES)
    on = ladders("solve", str(model), "--target", "home", "--lump", "on", "--json")
    assert on.returncode == 0, on.stderr[-2000:]
    result = json.loads(on.stdout)["results"][0]
    assert json.loads(on.stdout)["states"] == 125
    assert (result["lumped"]["states"], result["lumped"]["blocks"]) == (125, 35)
    assert result["verified"]["lumping"]["passed"] and result["verified"]["passed"]
    off = ladders("solve", str(model), "--target", "home", "--lump", "off", "--json")
    assert "lumped" not in json.loads(off.stdout)["results"][0]
    assert json.loads(off.stdout)["results"][0]["answers"] == result["answers"]
    text = ladders("solve", str(model), "--target", "home", "--lump", "on")
    assert "lumped 125 states into 35" in text.stdout and "lumped into 35" in text.stderr
    assert "lumping      the quotient's 35 states against the chain's 125" in text.stdout


def test_lump_is_refused_for_a_race() -> None:
    proc = ladders("solve", "tiny10", "--lump", "on")
    assert proc.returncode == 2
    assert "--lump is for chain questions" in proc.stderr
    assert "Traceback" not in proc.stderr

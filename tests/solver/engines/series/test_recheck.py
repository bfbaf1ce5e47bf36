"""The series engine's own re-check at fresh primes
(:mod:`ladders.solver.engines.series.recheck`): it confirms the answer and refuses a
wrong one."""

from __future__ import annotations

from ladders.solver.engines import series
from ladders.solver.exact import mpq
from ladders.solver.games.board import make_board, preset_board
from ladders.solver.games.chain import build_chain


def test_fresh_primes_confirm_the_answer_and_refuse_a_wrong_one():
    from ladders.solver.engines.series.recheck import check_series_residues
    chain = build_chain(preset_board("tiny10"))
    seats = series.k_player_exact(chain, 3, 5)
    good = check_series_residues(chain, 3, seats, primes=3, seed=1)
    assert good["passed"] and [x["agree"] for x in good["primes"]] == [True] * 3
    assert good["error_probability_below"] < 1e-40
    # the seats of another race, and a fraction one part in 10^40 off
    other = series.k_player_exact(build_chain(make_board("t", 0, 10, 6, "bounce", [(4, 7)])), 3, 5)
    off = [seats[0] + mpq(1, 10 ** 40), seats[1] - mpq(1, 10 ** 40), seats[2]]
    for wrong in (other, off):
        bad = check_series_residues(chain, 3, wrong, primes=2, seed=1)
        assert not bad["passed"] and not any(x["agree"] for x in bad["primes"])

"""Checks of exact race results that do not trust the engine that produced them.

Tier 1 (bounds): every seat's exact probability must lie inside the Markov bounds of
:mod:`solver.bounds`, and its decimal digits must agree with theirs. Exact arithmetic
throughout, so a pass is a proof of those digits, not a tolerance.
"""

from __future__ import annotations

from solver.bounds import bounds_to_digits
from solver.chain import AbsorbingChain
from solver.exact import fraction_to_decimal, mpq


def check_against_bounds(chain: AbsorbingChain, players: int, seats: list[mpq],
                         digits: int = 16) -> dict[str, object]:
    """Compare exact seat probabilities with bounds that agree to ``digits`` decimals.

    Returns a JSON-ready report: the moves used, each seat's bracket and whether
    ``lower <= exact <= upper`` with matching truncated decimals held for every seat.
    """
    bounds = bounds_to_digits(chain, players, digits)
    report = []
    passed = True
    for j, value in enumerate(seats):
        lo, up = bounds.lower[j], bounds.upper[j]
        inside = lo <= value <= up
        same = fraction_to_decimal(value, digits) == fraction_to_decimal(lo, digits)
        passed &= inside and same
        report.append({"seat": j + 1, "lower_decimal": fraction_to_decimal(lo, digits + 2),
                       "upper_decimal": fraction_to_decimal(up, digits + 2),
                       "inside": inside, "digits_agree": same})
    return {"check": "bounds", "moves": bounds.moves, "digits": digits, "seats": report,
            "passed": passed}

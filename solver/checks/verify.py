"""Checks of exact race results that do not trust the engine that produced them.

Tier 1 (bounds): every seat's exact probability must lie inside the Markov bounds of
:mod:`ladders.solver.checks.bounds`, and its decimal digits must agree with theirs. Exact
arithmetic throughout, so a pass is a proof of those digits, not a tolerance.
Tier 2 (residues): :mod:`ladders.solver.checks.residue_check`. Tier 3: an engine's own
certificate, and the answer of another engine (cross). :func:`verify_answer` runs the
tiers asked for and reports each.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from ladders.solver.checks.bounds import PIN_DIGITS, Bounds, bounds_within
from ladders.solver.checks.residue_check import CHAIN_UPDATES, check_residues
from ladders.solver.exact import fraction_to_decimal, mpq
from ladders.solver.games.chain import AbsorbingChain
from ladders.solver.system import LinearSystem


class Problem(Protocol):
    """What the checks ask of a problem (a race, :class:`ladders.solver.problem.Problem`,
    or a chain question, :class:`ladders.solver.chain_problem.ChainProblem`): its
    system, and tier 1 against its own Markov bounds."""

    @property
    def system(self) -> LinearSystem: ...

    @property
    def reference_system(self) -> LinearSystem | str: ...

    def check_bounds(self, seats: list[mpq], digits: int, bounds: Any = None) -> dict[str, Any]: ...


#: Seconds the bounds tier may spend on bounds it computes itself: where the bounds
#: converge slowly it reports the digits they reached by then.
VERIFY_SECONDS = 5.0


def check_against_bounds(chain: AbsorbingChain, players: int, seats: list[mpq],
                         digits: int = 16, bounds: Bounds | None = None) -> dict[str, object]:
    """Compare exact seat probabilities with bounds that agree to ``digits`` decimals
    (``bounds``: those bounds, computed beforehand, e.g. while an engine ran; else
    computed here for at most :data:`VERIFY_SECONDS`).

    Returns a JSON-ready report: the moves used, the digits the bounds agree to
    (``digits``; ``digits_asked`` and ``stopped`` when the time ran out first: why,
    a busy machine or bounds that converge slowly, :meth:`Bounds.busy`), each
    seat's bracket, and whether ``lower <= exact <= upper`` with the exact value's
    truncated decimals equal to the bounds' held for every seat: a proof of those digits.
    A seat whose bounds pin a decimal of at most ``digits`` places (3/5 = 0.6: lower
    0.5999..., upper 0.6000..., :meth:`Bounds.pinned_seats`) passes by lying inside
    them; ``pinned`` says which.
    """
    bounds = bounds or bounds_within(chain, players, digits, VERIFY_SECONDS)
    agreed = digits if bounds.settled(digits) else bounds.agreeing_digits(digits)
    pinned = set(bounds.pinned_seats(agreed)) if agreed == digits else set()
    report = []
    passed = True
    for j, value in enumerate(seats):
        lo, up = bounds.lower[j], bounds.upper[j]
        inside = lo <= value <= up
        # a pinned seat's bounds straddle a short decimal: inside them is the whole check
        same = j in pinned or fraction_to_decimal(value, agreed) == fraction_to_decimal(lo, agreed)
        passed &= inside and same
        report.append({"seat": j + 1, "lower_decimal": fraction_to_decimal(lo, digits + 2),
                       "upper_decimal": fraction_to_decimal(up, digits + 2),
                       "inside": inside, "digits_agree": same})
        if j in pinned:
            report[-1]["pinned"] = fraction_to_decimal(up, agreed).rstrip("0").rstrip(".")
    out: dict[str, object] = {"check": "bounds", "moves": bounds.moves, "digits": agreed,
                              "seats": report, "passed": passed}
    if pinned:
        out["pinned"] = (", ".join(f"seat {j + 1} within 1e-{digits + PIN_DIGITS} of "
                                   f"{report[j]['pinned']}" for j in sorted(pinned))
                         + ": the bounds straddle these decimals, so their digits cannot agree")
    if agreed < digits:
        spent = "" if bounds.budget is None else f"{bounds.budget:g} s and "
        if bounds.budget is not None and bounds.cpu is not None:
            spent = f"{bounds.budget:g} s ({bounds.cpu:.1f} s of CPU) and "
        why = "the machine was busy" if bounds.busy() else "the bounds converge slowly"
        out.update(digits_asked=digits,
                   stopped=f"{why}: after {spent}{bounds.moves:,} moves they agree to "
                           f"{agreed} of the {digits} digits asked")
    return out


def verify_answer(problem: Problem, seats: list[mpq], primes: int = 1, seed: int | None = None,
                  certificate: dict[str, Any] | None = None,
                  cross: dict[str, Any] | None = None, digits: int = 16,
                  bounds: Bounds | None = None) -> dict[str, Any]:
    """Every check of a race answer that ran, and whether all passed.

    Tier 1 ``bounds`` always; tier 2 ``residues`` (independent solves of the race system
    modulo ``primes`` random 61-bit primes) when ``primes > 0``, and for a chain question
    always where it has a system of its own (``reference_system``: built without the
    solver's plan, at most :data:`~ladders.solver.checks.reference.REFERENCE_UNKNOWNS`
    unknowns); tier 3 ``certificate``
    (an engine's exact certificate, e.g. ``A x = b`` checked in integers) and ``cross``
    (another engine's answer, see :func:`cross_check`) when given. The bounds agree to
    ``digits`` decimals (``bounds``: computed beforehand). A chain question solved on
    a quotient (its ``lumping``) is checked on the quotient, and ``lumping`` reports
    the exact check that the quotient answers as the chain does
    (:mod:`ladders.solver.checks.lumping`).
    """
    report: dict[str, Any] = {"bounds": problem.check_bounds(list(seats), digits, bounds)}
    reference = problem.reference_system
    targets = seats[:problem.system.columns]  # the seats the system solves for
    if isinstance(reference, LinearSystem):
        # a chain question's own system: every time, a certificate or a cross-check
        # included, since both read the answers' meaning from the solver's plan
        report["residues"] = {**check_residues(reference, targets, primes=max(primes, 1),
                                               seed=seed, budget=CHAIN_UPDATES),
                              "system": "independent"}
    elif primes > 0:
        report["residues"] = check_residues(problem.system, targets, primes=primes, seed=seed)
    lumping = problem.lumping
    if lumping is not None:
        # the tiers above checked the quotient; this exact check makes them the chain's
        report["lumping"] = lumping.check
    if certificate is not None:
        report["certificate"] = certificate
    if cross is not None:
        report["cross"] = cross
    tiers = [r for r in report.values() if not r.get("skipped")]
    return {"passed": all(bool(r["passed"]) for r in tiers), **report}


def cross_check(problem: Problem, seats: list[mpq], engine: str,
                seats_of: Callable[[Problem], list[mpq]],
                skip: str | None = None) -> dict[str, Any]:
    """Another engine's answer, compared with ``==``: ``seats_of(problem)`` is that
    engine's in-memory solve; ``skip`` (a reason) records that it was not run."""
    if skip is not None:
        return {"check": "cross", "engine": engine, "skipped": True, "passed": True,
                "reason": skip}
    t0 = time.perf_counter()
    agree = seats_of(problem) == list(seats)
    return {"check": "cross", "engine": engine, "passed": agree,
            "seconds": round(time.perf_counter() - t0, 3)}


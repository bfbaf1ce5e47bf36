"""The check of a stepped question (``X``, ``U<=k``, ``F<=k``, ``C<=k``, ``I=k``:
:mod:`ladders.solver.chains.steps`): its answer, found by stepping the values backward
from the target (``x_t`` from ``x_{t-1}``, every state's at once), is found again by
stepping the distribution forward from the start (``pi_t = pi_0 P^t``), the other
association of the same product, and the two must be equal (``==``). For the least
or greatest over several initial states, each start state's value is stepped forward
alone, up to :data:`~ladders.solver.checks.chain_bounds.EXTREME_STARTS` of them.
"""

from __future__ import annotations

import time
from typing import Any

from ladders.solver.chains.model import Chain
from ladders.solver.chains.questions import Plan, Question, stepping_of
from ladders.solver.checks.chain_bounds import EXTREME_STARTS
from ladders.solver.exact import mpq


def check_stepped(chain: Chain, question: Question, plan: Plan) -> dict[str, Any]:
    """The report of the check (module docstring): ``check``, ``what``, ``passed``,
    ``seconds``, and the value found forward (``forward``)."""
    from ladders.solver.chains.steps import stepped_forward
    t0 = time.perf_counter()
    stepping = stepping_of(chain, question)
    name = plan.names[0]
    value = plan.known[name]
    several = question.extreme and len(chain.start) > 1
    if not several:
        forward = stepped_forward(chain, stepping)
        what = "the value stepped backward from the target equals the start's distribution " \
            f"stepped forward ({stepping.k:,} step{'s' if stepping.k != 1 else ''})"
    elif len(chain.start) <= EXTREME_STARTS:
        each = [stepped_forward(chain, stepping, ((i, mpq(1)),)) for i, _ in chain.start]
        forward = (min if question.over == "min" else max)(each)
        what = (f"the {question.over} over {len(each)} start states stepped backward equals the "
                "one of each start state stepped forward")
    else:
        return {"check": "stepped", "passed": True, "skipped": True,
                "what": f"{len(chain.start):,} start states, more than the {EXTREME_STARTS} "
                        "stepped forward one by one",
                "seconds": round(time.perf_counter() - t0, 3)}
    return {"check": "stepped", "what": what, "passed": forward == value,
            "forward": str(forward), "seconds": round(time.perf_counter() - t0, 3)}

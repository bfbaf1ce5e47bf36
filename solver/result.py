"""What an exact solve gives back: :class:`Solution`, the result of ``ladders.solve``
and ``ladders.resume``, built once when the run ends and never changed afterwards.

It is pure data (no Dask, no store), so that every layer can hand it up and the
command line only formats it. The seats are exact ``mpq``; ``verified`` is the report of
:func:`ladders.solver.checks.verify.verify_answer` (a dict of the checks that ran and
``passed``, a bool): whether to trust the digits, and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ladders.solver.exact import FractionTable, mpq
    from ladders.solver.problem import Problem


@dataclass(frozen=True)
class Solution:
    """The exact win probability of every seat, and how it was found and checked.

    - ``seats``: seat j's probability, an exact ``mpq`` (empty when ``interrupted``);
      they sum to 1.
    - ``verified``: a dict of the checks that ran (``bounds``, ``residues``,
      ``certificate``, ``cross``), each with its own ``passed``, and ``passed`` for all;
      :attr:`passed` is the short way to ask.
    - ``engine``, ``executor``: which exact engine ran, and where (``serial``: this
      process; ``dask``: a Dask cluster).
    - ``seconds``: wall time of the whole call, verification and store included;
      ``startup_seconds``: of that, starting or reaching the cluster.
    - ``interrupted``: stopped by Ctrl-C, SIGTERM or ``should_stop``; ``store`` then
      says where to resume from (``ladders resume STORE``).
    - ``store``: the run store (a folder or URL), or None for a run kept in memory;
      ``store_bytes``, ``tasks_run`` (in this call) and ``tasks_total``.
    - ``table``: two players with ``table=True``: every ``P(a, b)``.
    - ``details``: the engine's own figures (primes, stages, ...).
    """

    problem: Problem
    seats: tuple[mpq, ...]
    verified: dict[str, Any]
    engine: str
    executor: str
    seconds: float
    interrupted: bool = False
    store: str | None = None
    store_bytes: int = 0
    tasks_run: int = 0
    tasks_total: int = 0
    startup_seconds: float = 0.0
    table: FractionTable | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "seats", tuple(self.seats))

    @property
    def answers(self) -> dict[str, mpq | str]:
        """Every answer by name: ``seat 1``, ... for a race; for a chain question the
        names of its answers, with ``"Infinity"`` where the expectation diverges."""
        return self.problem.named(self.seats)

    @property
    def passed(self) -> bool:
        """Whether every check of the answer passed (False for an interrupted run)."""
        return bool(self.verified.get("passed")) and not self.interrupted

"""The games: boards (:mod:`.board`), one player's absorbing chain and its exact answers
(:mod:`.chain`), k-player races as sparse integer systems (:mod:`.race`), pieces that
meet as one joint chain (:mod:`.bump`), and Another Game (:mod:`.coins`).

The rules for pieces that meet are named here (:data:`MEETS`), where the command line
reads them without loading the games: a rule ``R`` is this name and the module ``R``
with ``R_chain(board, players)``."""

#: What happens when pieces meet: ``none`` (they never do: a race), or the name of the
#: module of this package that builds their joint chain.
MEETS = ("none", "bump")

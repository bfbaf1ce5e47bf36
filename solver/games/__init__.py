"""The games: boards (:mod:`.board`), one player's absorbing chain and its exact answers
(:mod:`.chain`), k-player races as sparse integer systems (:mod:`.race`), pieces that
meet as one joint chain (:mod:`.bump`), and Another Game (:mod:`.coins`).

The rules for pieces that meet are named here (:data:`MEETS`), where the command line
reads them without loading the games: a rule ``R`` is its name and one line here and
the module ``R`` with ``R_chain(board, players)`` (two files;
``tests/cluster/commands/test_registries.py`` adds one)."""

#: What happens when pieces meet, each rule's name and the line ``--meet``'s help
#: gives it: ``none`` (they never do: a race), or the name of the module of this
#: package that builds their joint chain.
MEETS = {
    "none": "pieces never meet: a race of independent pieces",
    "bump": "a piece that lands on others sends them back to the start",
}

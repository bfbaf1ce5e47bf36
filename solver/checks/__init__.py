"""Checks that do not trust an engine: exact Markov bounds of races (:mod:`.bounds`)
and of any chain question (:mod:`.chain_bounds`; its compiled push :mod:`.push`),
Monte Carlo of races
(:mod:`.simulate`) and of chains (:mod:`.simulate_chain`), the independent solve modulo
random primes (:mod:`.residue_check`; its compiled block solve :mod:`.blocks`) and a
chain question's own system for it
(:mod:`.reference`), the exact check that a quotient chain answers as its chain does
(:mod:`.lumping`), the check of a question over a fixed number of steps, stepped the
other way (:mod:`.stepped`), and the verification tiers (:mod:`.verify`)."""

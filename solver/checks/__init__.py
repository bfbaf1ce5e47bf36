"""Checks and estimates that do not trust an engine: exact Markov bounds
(:mod:`.bounds`), Monte Carlo (:mod:`.simulate`), the independent solve modulo random
primes (:mod:`.residue_check`), the verification tiers (:mod:`.verify`), and the sizes
and costs a plan predicts (:mod:`.estimate`)."""

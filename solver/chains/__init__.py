"""Any finite absorbing Markov chain with exact probabilities: the chain
(:mod:`.model`: ``Chain``, checked once by ``ChainBuilder``), what is asked of it and the
system that answers it (:mod:`.questions`), the questions over a fixed number of steps,
answered by stepping the chain exactly (:mod:`.steps`), the long run made a reach
question of a chain with its bottom components collapsed (:mod:`.long_run`), the files it
is read from (:mod:`.formats`), the
model checkers' languages built into a chain: a program of typed expressions
(:mod:`.symbolic`), explored a frontier at a time (:mod:`.explore`, its NumPy code
written once a model by :mod:`.vector_code`) with its states in a hash table
(:mod:`.state_table`); :mod:`.components`: the strongly
connected components of a pattern in topological order (Tarjan, compiled); and
:mod:`.lumping`: the coarsest lumping (bisimulation) that keeps a question's answers,
and the quotient chain solved in the chain's place (a round of its refinement compiled:
:mod:`.refine`)."""

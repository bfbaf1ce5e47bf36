"""Any finite absorbing Markov chain with exact probabilities: the chain
(:mod:`.model`: ``Chain``, checked once by ``ChainBuilder``), what is asked of it and the
system that answers it (:mod:`.questions`), a question in the shape the engines take
(:mod:`.problem`: ``ChainProblem``), and the files it is read from (:mod:`.formats`);
:mod:`.components`: the strongly connected components of a pattern in topological
order (Tarjan, compiled)."""

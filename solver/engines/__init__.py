"""The exact kernels, one module per engine (the same names as their drivers in
``ladders.cluster.engines`` and their stores in ``ladders.checkpoints``):

- :mod:`.series`       one player's generating functions, every seat modulo word-size
                       primes, CRT and rational reconstruction (a package of its own);
- :mod:`.modular`      Dixon p-adic lifting of a sparse LU mod p, certified;
- :mod:`.crt`          solves modulo many primes, Chinese remaindering;
- :mod:`.elimination`  fraction-free sparse elimination in column blocks, the target
                       last (the published method), planned by :mod:`.elimination_plan`;
- :mod:`.modp`         the sparse LU mod p that modular and crt share (numba);
- :mod:`.components`   one strongly connected component at a time in topological
                       order, modulo word primes (numba), reconstruction of the
                       wanted unknowns only.
"""

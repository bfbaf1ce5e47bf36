"""The games: boards (:mod:`.board`), one player's absorbing chain and its exact answers
(:mod:`.chain`), k-player races as sparse integer systems (:mod:`.race`), pieces that
meet as one joint chain (:mod:`.bump`), and Another Game (:mod:`.coins`)."""

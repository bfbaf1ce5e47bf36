"""The board's ``meet`` field: TOML, its errors with file:line, run stores (old ones
too) and the overrides; presets keep pieces that never meet."""

from __future__ import annotations

import pytest

from ladders.solver.games.board import (BoardError, board_from_json, board_to_json, load_board,
                                        preset_board, preset_names, with_overrides)


def test_presets_never_meet() -> None:
    assert {preset_board(name).meet for name in preset_names()} == {"none"}


def test_toml_meet(tmp_path) -> None:
    path = tmp_path / "b.toml"
    path.write_text('end = 10\nmeet = "bump"\njumps = [[4, 7]]\n')
    board = load_board(str(path))
    assert board.meet == "bump" and board.jump_map == {4: 7}
    assert "meet     bump" in board.describe()
    path.write_text("end = 10\n")
    assert load_board(str(path)).meet == "none"


@pytest.mark.parametrize("text,message", [
    ('end = 10\n\nmeet = "swap"\n', ":3: unknown meet rule 'swap'; use one of none, bump"),
    ("end = 10\nmeet = 1\n", ":2: meet = 1 is not text; use one of none, bump"),
    ('end = 10\nmeet = "\\u0007"\n', ":2: unknown meet rule '?'"),
])
def test_bad_meet(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(BoardError) as err:
        load_board(str(path))
    assert str(err.value).startswith(str(path) + message)


def test_stores_and_overrides() -> None:
    hasbro = preset_board("hasbro")
    bump = with_overrides(hasbro, meet="bump")
    assert (bump.meet, bump.name, bump.jumps) == ("bump", "hasbro meet=bump", hasbro.jumps)
    assert board_from_json(board_to_json(bump)) == bump
    old = board_to_json(hasbro)
    del old["meet"]                      # a store written before the field
    assert board_from_json(old) == hasbro
    assert with_overrides(bump, rule="pass").meet == "bump"
    with pytest.raises(BoardError, match="unknown meet rule 'meets'"):
        with_overrides(hasbro, meet="meets")

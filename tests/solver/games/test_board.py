"""Boards: presets, both file formats, overrides, and every error class of SPEC 1.1."""

from __future__ import annotations

import pytest

from ladders.solver.games.board import BoardError, load_board, make_board, preset_board, preset_names, with_overrides

HASBRO_TEXT = "0\n100\n6\n" + "\n".join(f"{a} {b}" for a, b in preset_board("hasbro").jumps) + "\n"


def test_presets_have_the_spec_jumps() -> None:
    hasbro = preset_board("hasbro").jump_map
    assert hasbro[36] == 44 and hasbro[48] == 26 and hasbro[62] == 19 and len(hasbro) == 19
    mb = preset_board("milton-bradley").jump_map
    assert 47 in mb and 48 not in mb and mb[47] == 26
    s16 = preset_board("snakes-2016").jump_map
    assert s16[36] == 45 and 62 not in s16 and s16[47] == 26 and len(s16) == 18
    assert preset_board("tiny10").jump_map == {4: 7, 9: 2}
    assert set(preset_names()) == {"hasbro", "milton-bradley", "snakes-2016", "tiny10"}


def test_text_and_toml_give_the_preset(tmp_path) -> None:
    text = tmp_path / "h.txt"
    text.write_text(HASBRO_TEXT)
    toml = tmp_path / "h.toml"
    pairs = ", ".join(f"[{a}, {b}]" for a, b in preset_board("hasbro").jumps)
    toml.write_text(f'name = "h"\nstart = 0\nend = 100\ndie = 6\nrule = "stay"\njumps = [{pairs}]\n')
    ref = preset_board("hasbro")
    for path in (text, toml):
        b = load_board(str(path))
        assert (b.start, b.end, b.die, b.rule, b.jumps) == (ref.start, ref.end, ref.die, ref.rule, ref.jumps)


@pytest.mark.parametrize("rule,pos,roll,expected", [
    ("stay", 97, 5, 97),      # 102 is past the end: stay
    ("bounce", 97, 5, 78),    # 102 bounces back to 98, a chute to 78
    ("pass", 97, 5, 100),     # passing the end finishes
    ("bounce", 99, 2, 99),    # 101 bounces back to 99
    ("stay", 79, 1, 100),     # 80 is the ladder to the end
    ("stay", 15, 1, 6),       # chute 16 -> 6
])
def test_moves_follow_the_overshoot_rule(rule: str, pos: int, roll: int, expected: int) -> None:
    board = with_overrides(preset_board("hasbro"), rule=rule)
    assert board.move(pos, roll) == expected


def test_bounce_with_a_huge_die_stays_on_the_board() -> None:
    board = make_board("big", 0, 5, 30, "bounce", [])
    assert all(0 <= board.move(s, r) <= 5 for s in range(5) for r in range(1, 31))


BAD_BOARDS = [
    ("0\n10\n6\n4 7\n4 8\n", ":5: square 4 has two jumps"),
    ("0\n10\n6\n4 7\n7 2\n", ":4: chained jumps"),
    ("0\n10\n6\n4 12\n", ":4: jump 4 -> 12 leaves the board"),
    ("0\n10\n6\n0 5\n", ":4: jump 0 -> 5 starts on the start square"),
    ("0\n10\n6\n10 5\n", ":4: jump 10 -> 5 starts on the end square"),
    ("0\n10\nsix\n", ":3: 'six' is not an integer"),
    ("0\n10\n6\n4 x\n", ":4: 'x' is not an integer"),
    ("0\n10\n0\n", ":3: die size 0 is less than 1"),
    ("5\n5\n6\n", ":2: end square 5 is not after start square 5"),
    ("0\n10\n1\n9 2\n", "the game can last forever"),
    ("0\n10\n", "the file ends before the die size"),
    ("0\n10\n6\n4 7 9\n", ":4: a jump is two integers"),
]


@pytest.mark.parametrize("text,message", BAD_BOARDS)
def test_bad_text_boards_name_file_line_and_problem(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(BoardError) as err:
        load_board(str(path))
    assert str(err.value).startswith(str(path))
    assert message in str(err.value)


def test_bad_toml_boards(tmp_path) -> None:
    cases = [
        ('start = 0\nend = 10\ndie = 6\njumps = [\n  [4, 7],\n  [9, 2],\n  [9, 3],\n]\n', ":7: square 9 has two jumps"),
        ('start = 0\nend = 10\nrule = "sideways"\n', ":3: unknown overshoot rule"),
        ('start = 0\nend = \n', ":2: not valid TOML"),
        ('start = 0\nend = 10\ndie = "six"\n', ":3: die = 'six' is not an integer"),
        ('start = 0\nend = 10\ncolour = "red"\n', ":3: unknown field 'colour'"),
        ('start = 0\nend = 10\njumps = [[1, 2, 3]]\n', "not a pair of integers"),
        # the same pair twice: the second is at its own line, not the first's
        ('end = 20\njumps = [\n  [3, 9],\n  [5, 12],\n  [3, 9],\n]\n',
         r":5: square 3 has two jumps \(first at line 3\)"),
        # tomllib recurses per '[' and Python refuses ints of more than 4,300 digits
        ("end = 10\njumps = " + "[" * 10_000 + "]" * 10_000 + "\n", "nested too deeply"),
        ("start = 0\nend = " + "9" * 5_000 + "\n", ":2: an integer of 5,000 digits"),
    ]
    for text, message in cases:
        path = tmp_path / "bad.toml"
        path.write_text(text)
        with pytest.raises(BoardError, match=message.replace("[", r"\[")):
            load_board(str(path))


def test_overrides_revalidate() -> None:
    with pytest.raises(BoardError, match="can last forever"):
        with_overrides(preset_board("tiny10"), die=1)
    assert with_overrides(preset_board("tiny10"), rule="pass").rule == "pass"


def test_a_board_looks_its_jumps_up_in_one_dict() -> None:
    """``move`` runs for every square and roll: a jump map built per call made checking
    a board of n squares and n/2 jumps quadratic (5,000 squares: 11 s; 20,000: minutes)."""
    board = make_board("big", 0, 2000, 6, "stay", [(a, a + 1) for a in range(1, 1999, 2)])
    assert board.jump_map is board.jump_map and len(board.jump_map) == 999
    assert board.move(0, 1) == 2 and board.move(1998, 6) == 1998


def _reach_by_throws(board) -> set[int]:
    """Reachable squares one throw at a time (what the range search must equal)."""
    from collections import deque
    seen, todo = {board.start}, deque([board.start])
    while todo:
        s = todo.popleft()
        if s != board.end:
            for t in {board.move(s, r) for r in range(1, board.die + 1)} - seen:
                seen.add(t)
                todo.append(t)
    return seen


def _stuck_by_throws(board) -> set[int]:
    """Reachable squares from which the end cannot be reached, one throw at a time."""
    reach = _reach_by_throws(board)
    finish = {board.end} & reach
    grew = True
    while grew:
        grew = False
        for s in reach - finish:
            if any(board.move(s, r) in finish for r in range(1, board.die + 1)):
                finish.add(s)
                grew = True
    return reach - finish


def test_the_range_search_finds_what_single_throws_find() -> None:
    # issue 40: the reachable squares and the check that every one can finish search
    # over ranges of squares (ladders show of end 20,000 with a die of 1,000: 47-60 s one
    # throw at a time); on random boards, playable or not, they must agree with it
    import random
    from ladders.solver.games.board import Board, check_finishes, reachable_squares
    rng = random.Random(40)
    for _ in range(3000):
        end = rng.randint(1, 30)
        die = rng.choice([1, 2, 3, 6, rng.randint(1, 80)])
        starts = rng.sample(range(1, end), min(end - 1, rng.randint(0, 6))) if end > 1 else []
        targets = [t for t in range(end + 1) if t not in starts]
        jumps = tuple(sorted((a, rng.choice([t for t in targets if t != a])) for a in starts))
        board = Board("r", 0, end, die, rng.choice(["stay", "bounce", "pass"]), jumps)
        assert reachable_squares(board) == _reach_by_throws(board), board
        stuck = _stuck_by_throws(board)
        try:
            check_finishes(board, "r")
        except BoardError as exc:
            assert stuck and f"square(s) {min(stuck)}" in str(exc), (board, stuck)
        else:
            assert not stuck, (board, stuck)


def test_show_of_a_big_board_inside_the_limits_is_quick(tmp_path) -> None:
    # end 20,000 and a die of 1,000: 14 s of CPU (47-60 s on a busy machine); a limit
    # of 8 s of CPU, not of the wall clock, ends the command if it is slow again
    import json
    import resource
    import subprocess
    import sys
    board = tmp_path / "big.txt"
    board.write_text("0\n20000\n1000\n")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (8, 8))
    for rule in ("stay", "bounce"):
        proc = subprocess.run([sys.executable, "-m", "ladders.cluster.cli", "show", str(board),
                               "--rule", rule, "--json"], capture_output=True, text=True,
                              preexec_fn=limit, timeout=600)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["transient_squares"] == 20000


def test_a_board_name_is_limited(tmp_path) -> None:
    # a 900 KB name was accepted and printed in every report
    path = tmp_path / "named.toml"
    path.write_text(f'name = "{"x" * 900_000}"\nstart = 0\nend = 10\ndie = 6\n')
    with pytest.raises(BoardError, match=r"named.toml:1: the name 'x{60}\.\.\.' has 900,000 "
                       r"characters, more than 200; give it a name of at most 200$"):
        load_board(str(path))
    path.write_text(f'name = "{"y" * 200}"\nstart = 0\nend = 10\ndie = 6\n')
    assert load_board(str(path)).name == "y" * 200

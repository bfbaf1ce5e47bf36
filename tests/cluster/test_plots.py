"""`ladders plot` and ladders.cluster.plots: files are written, sized, and draw the computed data.

No pixel comparisons: every check reads the data back from the matplotlib artists (bar
heights, image arrays, patch sizes, line data) and compares it with the solver's answers.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("matplotlib")

from ladders.cluster import plots  # noqa: E402
from ladders.cluster.cli import cli  # noqa: E402
from ladders.cluster.commands.plot import PLOT_KINDS  # noqa: E402
from ladders.solver.games.board import preset_board  # noqa: E402
from ladders.solver.checks.bounds import bounds_sequence, markov_bounds  # noqa: E402
from ladders.solver.answers import one_player_stats, solve_coins  # noqa: E402
from ladders.solver.games.chain import build_chain, length_distribution  # noqa: E402
from ladders.solver.games.coins import CoinGame  # noqa: E402
from ladders.solver.exact import mpq  # noqa: E402
from ladders.solver.checks.simulate import simulate_lengths  # noqa: E402

HASBRO = preset_board("hasbro")
TINY = preset_board("tiny10")


def run_plot(*args: str) -> dict:
    result = CliRunner().invoke(cli, ["plot", *args, "--json"])
    assert result.exit_code == 0, result.output + (result.stderr or "")
    return json.loads(result.stdout)


def fail_plot(*args: str) -> str:
    result = CliRunner().invoke(cli, ["plot", *args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ladders: error: ")
    return lines[0]


def check_png(path: Path, info: dict, min_bytes: int = 5000) -> None:
    data = path.read_bytes()
    assert info["format"] == "png" and info["bytes"] == len(data) > min_bytes
    assert plots.png_size(data) == (info["width"], info["height"])
    assert info["width"] >= 500 and info["height"] >= 400


@pytest.mark.parametrize("kind", ["board", "lengths", "diagonal", "convergence"])
def test_cli_writes_each_board_kind(tmp_path: Path, kind: str) -> None:
    out = tmp_path / f"{kind}.png"
    extra = ["--games", "2000"] if kind in ("lengths", "convergence") else []
    info = run_plot(kind, "tiny10", "-o", str(out), *extra)
    assert info["kind"] == kind and info["board"] == "tiny10" and info["output"] == str(out)
    check_png(out, info)


def test_cli_coins_svg(tmp_path: Path) -> None:
    out = tmp_path / "coins.svg"
    info = run_plot("coins", "--a", "3", "--b", "2", "--pot", "1", "-o", str(out))
    text = out.read_text()
    assert info["format"] == "svg" and info["board"] is None and info["bytes"] > 5000
    size = re.search(r'<svg[^>]* width="([0-9.]+)pt" height="([0-9.]+)pt"', text)
    assert size and (float(size[1]), float(size[2])) == (info["width"], info["height"])


def test_cli_text_output_and_dpi(tmp_path: Path) -> None:
    out = tmp_path / "b.png"
    result = CliRunner().invoke(cli, ["plot", "board", "tiny10", "-o", str(out), "--dpi", "50"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"wrote board picture of tiny10 to {out}")
    assert plots.png_size(out.read_bytes()) == (400, 275)  # 8 x 5.5 inches at 50 dpi


def test_palette_png_is_smaller(tmp_path: Path) -> None:
    full = run_plot("coins", "-o", str(tmp_path / "full.png"))
    small = run_plot("coins", "-o", str(tmp_path / "small.png"), "--palette")
    assert (small["width"], small["height"]) == (full["width"], full["height"])
    assert 5000 < small["bytes"] < full["bytes"]


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    assert "unknown picture format '.gif'" in fail_plot("board", "tiny10", "-o",
                                                        str(tmp_path / "x.gif"))
    assert "takes no BOARD" in fail_plot("coins", "tiny10", "-o", str(tmp_path / "x.png"))
    assert "needs a BOARD" in fail_plot("lengths", "-o", str(tmp_path / "x.png"))
    assert "does not take --games" in fail_plot("board", "tiny10", "--games", "9", "-o",
                                                str(tmp_path / "x.png"))
    assert "does not take --a" in fail_plot("board", "tiny10", "--a", "3", "-o",
                                            str(tmp_path / "x.png"))
    assert "does not exist" in fail_plot("board", "tiny10", "-o", str(tmp_path / "no" / "x.png"))
    assert "--palette" in fail_plot("coins", "--palette", "-o", str(tmp_path / "x.svg"))
    assert not list(tmp_path.iterdir())


def test_missing_matplotlib_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    line = fail_plot("board", "tiny10", "-o", str(tmp_path / "x.png"))
    # this ladders, from where pip installed it: this checkout (PyPI's "ladders" is
    # another project)
    checkout = Path(__file__).resolve().parents[2]
    assert line == f"ladders: error: matplotlib is not installed: pip install '{checkout}[plot]'"


def test_every_kind_has_its_plot_and_imports_stay_lazy() -> None:
    assert all(callable(getattr(plots, f"plot_{kind}", None)) for kind in PLOT_KINDS)
    code = ("import sys, ladders.cluster.cli, ladders.cluster.plots; "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_board_shades_expected_remaining() -> None:
    fig = plots.plot_board(HASBRO)
    grid = fig.axes[0].images[0].get_array()
    assert grid.shape == (10, 10)
    stats = one_player_stats(build_chain(HASBRO))
    jumps = HASBRO.jump_map
    for s in range(1, 101):
        r, c = plots.square_cell(HASBRO, s)
        if s in jumps:
            assert grid.mask[r, c]
        else:
            expected = 0.0 if s == 100 else float(stats.expected_remaining[s])
            assert grid[r, c] == pytest.approx(expected, rel=1e-12)
    # Serpentine: 1 bottom left, 10 bottom right, 11 above 10, 100 top left.
    cells = [plots.square_cell(HASBRO, s) for s in (1, 10, 11, 100)]
    assert cells == [(0, 0), (0, 9), (1, 9), (9, 0)]
    gids = [p.get_gid() or "" for p in fig.axes[0].patches]
    arrows = sorted(g for g in gids if g.startswith(("ladder", "chute")))
    assert len(arrows) == len(HASBRO.jumps) == 19
    assert "ladder 28->84" in arrows and "chute 87->24" in arrows


def test_lengths_bars_equal_exact_and_simulated() -> None:
    fig = plots.plot_lengths(HASBRO, throws=30, games=3000, seed=5)
    ax = fig.axes[0]
    bars = {c.get_label(): [p.get_height() for p in c] for c in ax.containers}
    dist = length_distribution(build_chain(HASBRO), 30)
    assert bars["exact f(t)"] == [float(f) for f, _ in dist]
    assert bars["exact f(t)"][6] == float(mpq(73, 46656))  # SPEC 3: f(7)
    lengths = simulate_lengths(build_chain(HASBRO), 3000, np.random.default_rng(5))
    expected = np.bincount(lengths, minlength=31)[1:31] / 3000
    assert np.array_equal(bars["simulated"], expected)
    cum = next(line for a in fig.axes for line in a.get_lines() if line.get_label().startswith("F(t)"))
    assert list(cum.get_ydata()) == [float(F) for _, F in dist]
    mean = next(line for line in ax.get_lines() if line.get_label().startswith("mean"))
    assert mean.get_xdata()[0] == pytest.approx(39.5983656402, abs=1e-9)


def test_lengths_default_throws_cover_99_percent() -> None:
    chain = build_chain(HASBRO)
    t = plots.covering_throws(chain)
    dist = length_distribution(chain, t)
    assert dist[-1][1] >= mpq(99, 100) > dist[-2][1]


def test_diagonal_squares_are_f_and_add_to_the_bound() -> None:
    fig = plots.plot_diagonal(HASBRO, throws=40)
    left, right = fig.axes[0], fig.axes[1]
    diag = [p for p in left.patches if p.get_gid() == "diagonal"]
    dist = length_distribution(build_chain(HASBRO), 40)
    assert [p.get_width() for p in diag] == pytest.approx([float(f) for f, _ in dist], rel=1e-12)
    assert all(p.get_width() == pytest.approx(p.get_height()) for p in diag)
    assert all(p.get_x() == pytest.approx(p.get_y()) for p in diag)  # on the diagonal
    half_area = 0.5 * sum(p.get_width() ** 2 for p in diag)
    assert 0.5 + half_area == pytest.approx(float(markov_bounds(build_chain(HASBRO), 2, 40).lower[0]),
                                            rel=1e-13)
    heights = [p.get_height() for p in right.containers[0]]
    assert heights == pytest.approx([0.5 * float(f) ** 2 for f, _ in dist], rel=1e-12)
    undecided = next(p for p in left.patches if p.get_gid() == "undecided")
    assert undecided.get_width() == pytest.approx(1 - float(dist[-1][1]))


def test_bounds_sequence_matches_markov_bounds() -> None:
    chain = build_chain(HASBRO)
    seq = bounds_sequence(chain, 2, 100)
    assert [b.moves for b in seq] == list(range(1, 101))
    for n in (1, 9, 100):
        assert seq[n - 1] == markov_bounds(chain, 2, n)
    assert bounds_sequence(chain, 3, 12)[-1] == markov_bounds(chain, 3, 12)
    with pytest.raises(ValueError):
        bounds_sequence(chain, 2, 0)


def test_convergence_plots_the_exact_gap() -> None:
    chain = build_chain(TINY)
    fig = plots.plot_convergence(TINY, players=3, moves=60, games=2000, seed=3)
    left = fig.axes[0]
    gap = next(line for line in left.get_lines() if line.get_label().startswith("upper(n) − lower"))
    assert list(gap.get_xdata()) == list(range(1, 61))
    b30 = markov_bounds(chain, 3, 30)
    assert gap.get_ydata()[29] == float(b30.upper[0] - b30.lower[0])
    assert np.all(np.diff(gap.get_ydata()) <= 0)  # the bounds only close in
    right = fig.axes[1]
    labels = [line.get_label() for line in right.get_lines()]
    assert "races won by seat 1" in labels and not any("diagonal" in s for s in labels)


def test_coins_heatmap_is_expected_cycles() -> None:
    game = CoinGame(4, 4, 2)
    fig = plots.plot_coins(game)
    grid = fig.axes[0].images[0].get_array()
    ans = solve_coins(game, cycles=1)
    assert grid.shape == (11, 11)
    for a in range(11):
        for b in range(11):
            if (a, b) in ans.expected_cycles:
                assert grid[a, b] == float(ans.expected_cycles[(a, b)])
            else:
                assert grid.mask[a, b]
    assert grid[4, 4] == pytest.approx(17.540922306905323)


def test_plot_help_has_examples() -> None:
    result = CliRunner().invoke(cli, ["plot", "--help"])
    assert result.exit_code == 0
    assert "Example" in result.output and "--json" in result.output
    assert all(kind in result.output for kind in PLOT_KINDS)


def test_seats_plot_reads_solve_outputs(tmp_path: Path) -> None:
    files = []
    for k in (2, 3):
        path = tmp_path / f"r{k}.json{'.gz' if k == 3 else ''}"
        solved = CliRunner().invoke(cli, ["solve", "tiny10", "-k", str(k), "--output", str(path)])
        assert solved.exit_code == 0, solved.output
        files += ["--result", str(path)]
    out = tmp_path / "seats.png"
    result = CliRunner().invoke(cli, ["plot", "seats", *files, "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["kind"] == "seats" and out.stat().st_size > 1000
    fig = plots.plot_seats([json.loads(Path(tmp_path / "r2.json").read_text())])
    heights = [bar.get_height() for bar in fig.axes[0].patches]
    assert heights == [float(mpq(30799, 57720)), float(1 - mpq(30799, 57720))]
    # every value written over a bar lies inside the axes (the highest ran off the top)
    # and the legend covers none of them
    both = plots.plot_seats([json.loads((tmp_path / "r2.json").read_text()),
                             json.loads(gzip.decompress((tmp_path / "r3.json.gz").read_bytes()))])
    renderer = both.canvas.get_renderer()
    axes = both.axes[0]
    frame, legend = axes.get_window_extent(renderer), axes.get_legend().get_window_extent(renderer)
    written = [t.get_window_extent(renderer) for t in axes.texts]
    assert len(written) == 5 and all(box.y1 <= frame.y1 for box in written)
    assert not any(legend.overlaps(box) for box in written)
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    line = fail_plot("seats", "--result", str(bad), "-o", str(out))
    assert "not a file of 'ladders solve --output'" in line

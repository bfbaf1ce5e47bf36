"""Pictures of the answers: one ``plot_*`` function per ``ladders plot KIND``.

Every function computes its data with the exact :mod:`solver` functions and draws it on
a new :class:`matplotlib.figure.Figure`, which it returns; :func:`save_figure` writes it
as PNG or SVG. From Python::

    from ladders.cluster.plots import plot_board, save_figure
    save_figure(plot_board("hasbro"), "board.png")

matplotlib is an optional extra (``pip install '.[plot]'`` from the checkout). It is imported inside
the functions, so importing this module, and ``ladders --help``, never loads it. Figures
are built without pyplot and rendered by the Agg canvas: no window, no global backend
switch, so the functions are safe in scripts, servers and notebooks alike.

Colours are chosen for colour-blind readers: values use ``cividis``/``viridis`` (ordered
by lightness), categories the Okabe-Ito palette, and a second cue (line style, marker,
hatching, light/dark) separates anything that colour alone would.
"""

from __future__ import annotations

import math
import struct
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ladders.checkpoints.files import write_atomically
from ladders.solver.games.board import Board, load_board
from ladders.solver.checks.bounds import bounds_sequence, bounds_to_digits
from ladders.solver.answers import one_player_stats, solve_coins
from ladders.solver.games.chain import AbsorbingChain, build_chain, iter_throws, length_distribution
from ladders.solver.games.coins import CoinGame
from ladders.solver.exact import fraction_to_decimal, mpq
from ladders.solver.checks.simulate import diagonal_estimate, estimate_errors, simulate_lengths

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FORMATS = ("png", "svg")

# Okabe-Ito: distinguishable under the common colour-vision deficiencies.
BLUE = "#0072B2"
ORANGE = "#E69F00"
VERMILLION = "#D55E00"
SKY = "#56B4E9"
GREY = "#999999"


class MatplotlibMissing(ImportError):
    """matplotlib is not installed; the message says how to install it."""


def require_matplotlib() -> None:
    """Raise :class:`MatplotlibMissing` (with the install command) unless matplotlib
    can be imported; the CLI asks before it computes anything."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        from ladders.solver.extras import install_hint
        raise MatplotlibMissing(f"matplotlib is not installed: {install_hint('plot')}") from exc


def _new_figure(width: float, height: float) -> Figure:
    """A pyplot-free figure with the Agg canvas and constrained layout (no overlaps)."""
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _chain(board: Board | str) -> AbsorbingChain:
    """A board object, a preset name or a board file, as one player's chain."""
    return build_chain(load_board(board) if isinstance(board, str) else board)


def _readable_on(rgba: tuple[float, ...]) -> str:
    """Black or white text, whichever contrasts with a cell of colour ``rgba``."""
    r, g, b = rgba[:3]
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


def board_layout(board: Board) -> tuple[int, int]:
    """``(rows, cols)`` of the drawn grid: 10 x 10 for 100 squares, else about square."""
    n = board.end - board.start
    cols = 10 if n == 100 else max(1, math.ceil(math.sqrt(n)))
    return math.ceil(n / cols), cols


def square_cell(board: Board, square: int) -> tuple[int, int]:
    """``(row, col)`` of a square on the serpentine grid: square start+1 bottom left,
    rows run left to right, then right to left, as on the printed board."""
    _rows, cols = board_layout(board)
    row, col = divmod(square - board.start - 1, cols)
    return row, (cols - 1 - col if row % 2 else col)


def plot_board(board: Board | str, *, title: str | None = None) -> Figure:
    """The board as a serpentine grid, each square shaded by E(s), the expected throws
    still to come from it, with E(s) and D(s) (fewest throws to finish) written in it.

    Ladders are solid white arrows, chutes dashed black arrows. Squares that start a
    jump are never occupied (the piece moves on at once) and are left white.
    The start square (usually 0) is off the board; its values are in the title.
    The shaded values are the image's array: ``fig.axes[0].images[0].get_array()``.
    """
    from matplotlib.colors import Normalize
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch, Rectangle
    from matplotlib.patheffects import withStroke

    chain = _chain(board)
    b = chain.board
    st = one_player_stats(chain)
    rows, cols = board_layout(b)
    values: dict[int, float] = {s: float(e) for s, e in st.expected_remaining.items()}
    values[b.end] = 0.0
    fewest = dict(st.min_throws)
    fewest[b.end] = 0
    grid = np.full((rows, cols), np.nan)
    for s, e in values.items():
        if b.start < s <= b.end:
            grid[square_cell(b, s)] = e

    cell = 0.78 if cols >= 8 else 1.0
    # At least 8 inches wide: the titles and the legend need that much on small boards.
    fig = _new_figure(max(8.0, cols * cell + 1.6), max(5.5, rows * cell + 1.6))
    ax = fig.add_subplot()
    cmap = _cmap("cividis").with_extremes(bad="white")
    norm = Normalize(0, float(np.nanmax(grid)) if np.isfinite(grid).any() else 1.0)
    img = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, norm=norm, origin="lower",
                    extent=(0, cols, 0, rows), interpolation="nearest")
    fig.colorbar(img, ax=ax, shrink=0.8, pad=0.02,
                 label="E(s): expected throws still to come from square s")
    jumps = b.jump_map
    small = 6.5 if cols >= 8 else 8
    for s in range(b.start + 1, b.end + 1):
        r, c = square_cell(b, s)
        fill = cmap(norm(values[s])) if s in values else (1.0, 1.0, 1.0, 1.0)
        # Never-occupied squares (jump starts, squares no roll reaches) stay white, a
        # colour the colormap does not use, with grey numbers.
        ink = _readable_on(fill) if s in values else GREY
        # Labels sit in the corners, above the arrows (which run between cell centres)
        # on a patch of their cell's colour, so an arrow never hides one.
        box = {"facecolor": fill, "edgecolor": "none", "pad": 0.6}
        ax.text(c + 0.05, r + 0.95, str(s), ha="left", va="top", fontsize=small, color=ink,
                fontweight="bold", zorder=4, bbox=box)
        if s in values:
            ax.text(c + 0.05, r + 0.05, f"{values[s]:.1f}", ha="left", va="bottom",
                    fontsize=small + 1.5, color=ink, zorder=4, bbox=box)
            ax.text(c + 0.95, r + 0.95, f"D{fewest[s]}", ha="right", va="top",
                    fontsize=small, color=ink, zorder=4, bbox=box)
    # Cell borders drawn after the colours so every square, white ones too, reads as one.
    for x in range(cols + 1):
        ax.axvline(x, color=GREY, linewidth=0.6)
    for y in range(rows + 1):
        ax.axhline(y, color=GREY, linewidth=0.6)
    for src, dst in sorted(jumps.items()):
        if not (b.start < src <= b.end and b.start < dst <= b.end):
            continue
        (r0, c0), (r1, c1) = square_cell(b, src), square_cell(b, dst)
        ladder = dst > src
        face, edge = ("white", "black") if ladder else ("black", "white")
        arrow = FancyArrowPatch((c0 + 0.5, r0 + 0.5), (c1 + 0.5, r1 + 0.5),
                                arrowstyle="-|>,head_length=6,head_width=3.5",
                                connectionstyle=f"arc3,rad={0.12 if ladder else -0.12}",
                                color=face, linewidth=2.2, linestyle="-" if ladder else "--",
                                mutation_scale=1.6, shrinkA=2, shrinkB=4, zorder=3, alpha=0.95,
                                gid=f"{'ladder' if ladder else 'chute'} {src}->{dst}")
        arrow.set_path_effects([withStroke(linewidth=4, foreground=edge)])
        ax.add_patch(arrow)
    ax.set_xlim(0, cols)
    ax.set_ylim(0, rows)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    handles: list[Any] = [Line2D([], [], color="white", linewidth=2.2, path_effects=[
                   withStroke(linewidth=4, foreground="black")], label="ladder (up)"),
               Line2D([], [], color="black", linewidth=2.2, linestyle="--", path_effects=[
                   withStroke(linewidth=4, foreground="white")], label="chute (down)")]
    handles.append(Rectangle((0, 0), 1, 1, facecolor="white", edgecolor=GREY,
                             label="white: starts a jump, never occupied"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.01), ncol=3,
              frameon=False, fontsize=9)
    start_e = float(st.expected_length)
    fig.suptitle(title or f"{b.name}: expected throws still to come from each square, E(s)",
                 fontsize=12)
    ax.set_title(f"top left: square;  bottom left: E(s);  top right: D(s), fewest throws "
                 f"to finish\nfrom the start ({b.start}, off the board): E = {start_e:.2f}, "
                 f"D = {st.min_throws[b.start]}", fontsize=9)
    return fig


def _cmap(name: str) -> Any:
    from matplotlib import colormaps
    return colormaps[name]


def covering_throws(chain: AbsorbingChain, share: float = 0.99, cap: int = 2000) -> int:
    """Smallest t with F(t) >= ``share`` (at most ``cap``): how far a length plot runs."""
    d = chain.die
    scale = 1
    left = round((1 - share) * 10**6)
    for t, (_a, s) in enumerate(iter_throws(chain), start=1):
        scale *= d
        # 1 - F(t) = s / d^t, compared in integers: d^t overflows a float on long games.
        if s * 10**6 <= left * scale or t >= cap:
            return t
    raise AssertionError("unreachable: iter_throws never ends")


def plot_lengths(board: Board | str, *, throws: int | None = None, games: int | None = None,
                 seed: int = 1960) -> Figure:
    """Distribution of one player's game length: f(t) as bars, F(t) on a second axis,
    the mean L and L +- sd marked. With ``games``, simulated frequencies stand beside
    the exact bars (same seed, same games as ``ladders simulate``).

    ``throws`` defaults to the first t with F(t) >= 0.99. The bars are the axes'
    containers labelled ``"exact f(t)"`` and ``"simulated"``.
    """
    chain = _chain(board)
    b = chain.board
    st = one_player_stats(chain)
    throws = throws or covering_throws(chain)
    dist = length_distribution(chain, throws)
    t = np.arange(1, throws + 1)
    f = np.array([float(x) for x, _ in dist])
    cum = np.array([float(x) for _, x in dist])
    mean = float(st.expected_length)
    sd = math.sqrt(float(st.variance))

    fig = _new_figure(10, 5.2)
    ax = fig.add_subplot()
    ax.axvspan(mean - sd, mean + sd, color=GREY, alpha=0.18, linewidth=0,
               label=f"L ± sd = {mean:.2f} ± {sd:.2f}")
    width = 0.8 if games is None else 0.42
    shift = 0 if games is None else width / 2
    ax.bar(t - shift, f, width=width, color=BLUE, label="exact f(t)")
    sim_note = ""
    top = float(f.max())
    if games is not None:
        lengths = simulate_lengths(chain, games, np.random.default_rng(seed))
        counts = np.bincount(lengths, minlength=throws + 1)[1:throws + 1]
        ax.bar(t + shift, counts / games, width=width, color=ORANGE, label="simulated")
        top = max(top, float((counts / games).max()))
        sem = lengths.std(ddof=1) / math.sqrt(games)
        sim_note = f"; simulated mean {lengths.mean():.2f} ± {sem:.2f} ({games:,} games, seed {seed})"
    ax.axvline(mean, color="black", linewidth=1.5, label=f"mean L = {mean:.2f}", zorder=3)
    ax.set_xlabel("t, number of throws")
    ax.set_ylabel("f(t): game ends on throw t")
    ax.set_xlim(0.3, throws + 0.7)
    ax.set_ylim(0, top * 1.12)
    ax2 = ax.twinx()
    ax2.plot(t, cum, color=VERMILLION, linewidth=2, linestyle="-.", label="F(t): finished by t")
    ax2.set_ylim(0, 1.02)
    ax2.set_ylabel("F(t): finished within t throws", color=VERMILLION)
    ax2.tick_params(axis="y", colors=VERMILLION)
    handles = ax.get_legend_handles_labels()
    handles2 = ax2.get_legend_handles_labels()
    ax.legend(handles[0] + handles2[0], handles[1] + handles2[1], loc="center right",
              fontsize=9)
    ax.set_title(f"How long does a one-player game on {b.name} last? Exact f(t) and F(t) "
                 f"for t ≤ {throws}\nF({throws}) = {cum[-1]:.4f}{sim_note}", fontsize=10)
    return fig


def plot_diagonal(board: Board | str, *, throws: int = 40) -> Figure:
    """The diagonal-squares picture of the first player's advantage (two players).

    The square [0, 1]^2 holds every pair (T1, T2) of one-player game lengths, each axis
    cut at F(t) into strips of width f(t). The first player wins when T1 <= T2: the
    cells above the diagonal and the diagonal cells themselves (a tie goes to whoever
    throws first). Without the diagonal the two sides are mirror images, so
    P(first wins) = 1/2 + 1/2 sum_t f(t)^2: the advantage is half the diagonal area.
    The corner beyond F(``throws``) is undecided after ``throws`` throws; its half-area
    is the gap between the Markov bounds. The right panel adds up the half-areas.
    The diagonal cells are the patches with gid ``"diagonal"``.
    """
    from matplotlib.patches import Patch, Rectangle

    chain = _chain(board)
    b = chain.board
    dist = length_distribution(chain, throws)
    f = [float(x) for x, _ in dist]
    edges = [0.0] + [float(x) for _, x in dist]
    exact = bounds_to_digits(chain, 2, 30).lower[0]
    advantage = float(exact - mpq(1, 2))

    fig = _new_figure(13, 6.4)
    left, right = fig.subplots(1, 2, width_ratios=[1.05, 1])
    for t in range(1, throws + 1):
        x0, x1 = edges[t - 1], edges[t]
        left.add_patch(Rectangle((x0, x1), x1 - x0, 1 - x1, facecolor=SKY, alpha=0.45,
                                 edgecolor="white", linewidth=0.3))
        left.add_patch(Rectangle((x1, x0), 1 - x1, x1 - x0, facecolor=ORANGE, alpha=0.35,
                                 edgecolor="white", linewidth=0.3))
        left.add_patch(Rectangle((x0, x0), x1 - x0, x1 - x0, facecolor=BLUE, edgecolor="black",
                                 linewidth=0.4, gid="diagonal"))
    fn = edges[-1]
    left.add_patch(Rectangle((fn, fn), 1 - fn, 1 - fn, facecolor="white", edgecolor=GREY,
                             hatch="..", linewidth=0.8, gid="undecided"))
    left.plot([0, 1], [0, 1], color="black", linewidth=0.6, linestyle=":")
    # Well inside each decided triangle, whatever share F(throws) of the axis is drawn.
    near, far = 0.4 * fn, 0.4 * fn + 0.6 * (1 - 0.4 * fn)
    left.text(near, far, "first player wins\nT1 < T2", ha="center", va="center", fontsize=10)
    left.text(far, near, "second player wins\nT2 < T1", ha="center", va="center", fontsize=10)
    undecided = (1 - fn) ** 2
    if 1 - fn > 0.25:
        left.text((1 + fn) / 2, (1 + fn) / 2,
                  f"both need more than\n{throws} throws: area\n"
                  f"(1 − F({throws}))² = {undecided:.3f}",
                  ha="center", va="center", fontsize=9,
                  bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85})
    peak = int(np.argmax(f)) + 1
    px = (edges[peak - 1] + edges[peak]) / 2
    left.annotate(f"tie T1 = T2 = {peak}: a square of side f({peak}) = {f[peak - 1]:.4f};\n"
                  "ties go to the first player", xy=(px, px), xytext=(0.36, 0.1),
                  fontsize=9, arrowprops={"arrowstyle": "->", "color": "black"},
                  bbox={"facecolor": "white", "edgecolor": GREY, "alpha": 0.9})
    ticks: list[int] = []
    centres: list[float] = []
    first = _first_positive(f)
    for t in range(first, throws + 1):
        centre = (edges[t - 1] + edges[t]) / 2
        # Label wide strips, and every fifth t among the thin ones, but never two
        # labels so close that they touch.
        wanted = t == first or f[t - 1] >= 0.04 or t % 5 == 0
        if wanted and (not centres or centre - centres[-1] >= 0.05):
            ticks.append(t)
            centres.append(centre)
    for axis in (left.xaxis, left.yaxis):
        axis.set_ticks(centres, [str(t) for t in ticks])
    left.set_xlim(0, 1)
    left.set_ylim(0, 1)
    left.set_aspect("equal")
    left.set_xlabel("first player's game length T1 (strip width f(t))")
    left.set_ylabel("second player's game length T2 (strip height f(t))")
    left.legend(handles=[Patch(facecolor=SKY, alpha=0.45, label="first player wins"),
                         Patch(facecolor=ORANGE, alpha=0.35, label="second player wins"),
                         Patch(facecolor=BLUE, edgecolor="black", label="diagonal: tie, first wins"),
                         Patch(facecolor="white", edgecolor=GREY, hatch="..",
                               label=f"undecided after {throws} throws: {undecided:.2g}")],
                loc="upper left", bbox_to_anchor=(0.0, -0.09), ncol=2, fontsize=8.5, frameon=False)
    left.set_title("The square of one-player outcomes, cut at F(t)", fontsize=10)

    t = np.arange(1, throws + 1)
    half = np.array([0.5 * x * x for x in f])
    right.bar(t, half, color=BLUE, label="½ f(t)²: half a diagonal square")
    right.set_xlabel("t, number of throws")
    right.set_ylabel("½ f(t)²")
    right.set_xlim(0.3, throws + 0.7)
    cum = right.twinx()
    cum.plot(t, np.cumsum(half), color=VERMILLION, linewidth=2, linestyle="-.",
             label="running sum ½ Σ f(t)²")
    cum.axhline(advantage, color="black", linewidth=1, linestyle="--",
                label=f"all t: advantage = {advantage:.6f}")
    cum.set_ylim(0, advantage * 1.1)
    cum.set_ylabel("running sum", color=VERMILLION)
    cum.tick_params(axis="y", colors=VERMILLION)
    h1, l1 = right.get_legend_handles_labels()
    h2, l2 = cum.get_legend_handles_labels()
    right.legend(h1 + h2, l1 + l2, loc="upper center", bbox_to_anchor=(0.5, -0.11), ncol=2,
                 fontsize=8.5, frameon=False)
    right.set_title(f"Half the diagonal squares add up to the advantage "
                    f"({float(np.sum(half)):.6f} from t ≤ {throws})", fontsize=10)
    fig.suptitle(f"Why going first on {b.name} is worth {100 * advantage:.2f}%: "
                 f"P(first wins) = ½ + ½ Σ f(t)² = {fraction_to_decimal(exact, 10)}...",
                 fontsize=12)
    return fig


def _first_positive(f: list[float]) -> int:
    """First t with f(t) > 0 (D from the start), a natural first tick."""
    return next((t for t, x in enumerate(f, start=1) if x > 0), 1)


def _finish_log_panel(ax: Any, xlabel: str, ylabel: str, title: str, ncol: int) -> None:
    """Labels, title, the legend below the axes and a light grid: the convergence panels."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=ncol, fontsize=8.5,
              frameon=False)
    ax.grid(True, which="major", alpha=0.3)


def plot_convergence(board: Board | str, *, players: int = 2, moves: int | None = None,
                     games: int = 100_000, seed: int = 1960) -> Figure:
    """How the approximations close in on seat 1's exact win probability.

    Left: the exact Markov bounds after n moves, upper - lower and their distances to
    the exact value, on a log scale (``moves`` defaults to where 16 digits agree).
    Right: the Monte Carlo error against the number of games N, with the N^-1/2
    standard-error lines; for two players also the diagonal-squares estimator. The
    exact value is taken from bounds that agree to 30 digits.
    """
    chain = _chain(board)
    b = chain.board
    exact = bounds_to_digits(chain, players, 30).lower[0]
    sixteen = bounds_to_digits(chain, players, 16).moves
    moves = moves or sixteen
    seq = bounds_sequence(chain, players, moves)
    n = np.arange(1, moves + 1)
    gap = np.array([float(x.upper[0] - x.lower[0]) for x in seq])
    below = np.array([float(exact - x.lower[0]) for x in seq])
    above = np.array([float(x.upper[0] - exact) for x in seq])
    p = float(exact)

    fig = _new_figure(13, 5.4)
    left, right = fig.subplots(1, 2)
    left.semilogy(n, gap, color=BLUE, linewidth=3.5, label="upper(n) − lower(n)")
    left.semilogy(n, above, color=ORANGE, linewidth=1.5, linestyle="--", label="upper(n) − exact")
    left.semilogy(n, below, color=VERMILLION, linewidth=1.5, linestyle="-.",
                  label="exact − lower(n)")
    if sixteen <= moves:
        left.axvline(sixteen, color=GREY, linewidth=1, linestyle=":")
        left.annotate(f"16 digits agree\nat n = {sixteen}", xy=(sixteen, gap[sixteen - 1]),
                      xytext=(0.62, 0.72), textcoords="axes fraction", fontsize=9,
                      arrowprops={"arrowstyle": "->", "color": GREY})
    _finish_log_panel(left, "n, throws per player", "distance (log scale)",
                      f"Markov bounds on seat 1 after n throws ({players} players)", ncol=3)

    rng = np.random.default_rng(seed)
    lengths = simulate_lengths(chain, games * players, rng)
    sizes = np.unique(np.geomspace(min(100, games), games, 14).astype(int))
    rows = estimate_errors(lengths, players, p, sizes.tolist())
    race_err = np.array([r["error"] for r in rows])
    floor = 1e-12  # an error that happens to be exactly 0 would vanish from a log plot
    right.loglog(sizes, np.maximum(race_err, floor), "o", color=BLUE, label="races won by seat 1")
    right.loglog(sizes, np.sqrt(p * (1 - p) / sizes), color=BLUE, linewidth=1.2,
                 label="its standard error √(p(1−p)/N)")
    if players == 2:
        diag_err = np.array([r["diagonal_error"] for r in rows])
        spread = diagonal_estimate(lengths).stderr * math.sqrt(lengths.size)
        right.loglog(sizes, np.maximum(diag_err, floor), "s", color=VERMILLION,
                     label="diagonal squares from 2N one-player games")
        right.loglog(sizes, spread / np.sqrt(2 * sizes), color=VERMILLION, linewidth=1.2,
                     linestyle="--", label=r"its standard error $\propto N^{-1/2}$")
    _finish_log_panel(right, "N, simulated races", "|estimate − exact| (log scale)",
                      f"Monte Carlo error against N ({games:,} races, seed {seed})", ncol=2)
    fig.suptitle(f"Closing in on P(seat 1 wins) = {fraction_to_decimal(exact, 16)}... on "
                 f"{b.name}, {players} players", fontsize=12)
    return fig


def plot_coins(game: CoinGame | None = None) -> Figure:
    """Another Game: expected cycles from every start (A to move) as a heatmap over
    (A's coins, B's coins); the pot holds the rest of ``game.total`` coins. The start
    of ``game`` is outlined. The image's array holds the values (NaN where a + b
    exceeds the total).
    """
    from matplotlib.patches import Rectangle
    from matplotlib.patheffects import withStroke

    game = game or CoinGame()
    ans = solve_coins(game, cycles=1)
    total = game.total
    grid = np.full((total + 1, total + 1), np.nan)
    for (a, b), e in ans.expected_cycles.items():
        grid[a, b] = float(e)
    size = max(5.0, 0.55 * (total + 1) + 2.2)
    fig = _new_figure(size + 1.0, size)
    ax = fig.add_subplot()
    cmap = _cmap("viridis").with_extremes(bad="white")
    img = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, origin="lower",
                    interpolation="nearest")
    fig.colorbar(img, ax=ax, shrink=0.85, pad=0.02, label="expected cycles (A to move)")
    norm = img.norm
    font = 9 if total <= 12 else 6
    for (a, b), e in ans.expected_cycles.items():
        ax.text(b, a, f"{float(e):.1f}", ha="center", va="center", fontsize=font,
                color=_readable_on(cmap(norm(float(e)))))
    # Black outline inside a white one: visible on dark and light cells alike.
    outline = Rectangle((game.b - 0.5, game.a - 0.5), 1, 1, fill=False, edgecolor="black",
                        linewidth=2, gid="start")
    outline.set_path_effects([withStroke(linewidth=5, foreground="white")])
    ax.add_patch(outline)
    ax.set_xticks(range(total + 1))
    ax.set_yticks(range(total + 1))
    ax.set_xlabel("B's coins")
    ax.set_ylabel("A's coins")
    e = ans.expected_cycles[ans.start]
    ax.set_title(f"Another Game: expected cycles from each start, A to move\n{total} coins, "
                 f"the pot holds the rest; outlined A{game.a}B{game.b} (pot {game.pot}): "
                 f"{fraction_to_decimal(e, 4)} cycles, A wins {float(ans.win_a[ans.start]):.4f}",
                 fontsize=10)
    return fig


def plot_seats(results: list[dict[str, Any]]) -> Figure:
    """Each seat's exact win probability for 2, 3, 4... players, and the first mover's
    edge (seat 1 minus the fair share 1/k), from ``ladders solve --output`` documents
    (one per player count; each holds the seats' exact fractions and their boards)."""
    from ladders.solver.exact import str_to_fraction
    results = sorted(results, key=lambda r: r["players"])
    fig = _new_figure(11, 5.2)
    left, right = fig.subplots(1, 2, width_ratios=[2.2, 1])
    colors = [BLUE, ORANGE, VERMILLION, SKY, GREY, "#009E73"]
    width = 0.8 / max(r["players"] for r in results)
    labels = []
    highest = 0.0
    for i, r in enumerate(results):
        k = r["players"]
        values = [float(str_to_fraction(s["exact"])) for s in r["seats"]]
        highest = max(highest, *values)
        for j, v in enumerate(values):
            x = i + (j - (k - 1) / 2) * width
            left.bar(x, v, width * 0.92, color=colors[j])
            left.text(x, v, f"{v:.4f}", ha="center", va="bottom", fontsize=7, rotation=90)
        left.hlines(1 / k, i - 0.45, i + 0.45, colors=GREY, linestyles=":", linewidth=1)
        digits = r["seats"][0]["digits"]["denominator"]
        labels.append(f"{k} players\n{r['board']['name']}\n{digits:,} digits")
    left.set_xticks(range(len(results)), labels, fontsize=8)
    left.set_ylabel("exact win probability (dotted: the fair share 1/k)")
    from matplotlib.patches import Patch
    most = max(r["players"] for r in results)
    # headroom above the bars and their rotated values, where the legend sits in one row
    left.set_ylim(0, highest * 1.5)
    left.legend([Patch(color=colors[j]) for j in range(most)], [f"seat {j + 1}" for j in range(most)],
                fontsize=8, ncol=most, loc="upper center")
    left.set_title("Each seat's chance to win", fontsize=11)
    edges = [float(str_to_fraction(r["seats"][0]["exact"])) - 1 / r["players"] for r in results]
    right.bar(range(len(results)), [100 * e for e in edges], color=BLUE)
    for i, e in enumerate(edges):
        right.text(i, 100 * e, f"+{100 * e:.3f}%", ha="center", va="bottom", fontsize=8)
    right.set_xticks(range(len(results)), [f"{r['players']} players" for r in results], fontsize=8)
    right.set_ylabel("seat 1 minus 1/k (percentage points)")
    right.set_title("The first mover's edge", fontsize=11)
    return fig


def render(fig: Figure, fmt: str, dpi: int = 100, palette: bool = False) -> bytes:
    """The figure as PNG or SVG bytes; ``palette`` (PNG only) quantizes to 256 colours.

    Plots are flat colours plus anti-aliased edges, so a 256-colour palette looks the
    same and takes about a third of the bytes (what a README or web page wants).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown picture format {fmt!r}: use png or svg")
    if palette and fmt != "png":
        raise ValueError("a 256-colour palette is for PNG pictures, not SVG")
    buf = BytesIO()
    # Fixed metadata keeps the same picture byte-for-byte the same from run to run.
    meta = {"Software": None} if fmt == "png" else {"Date": None}
    fig.savefig(buf, format=fmt, dpi=dpi, metadata=meta)
    if not palette:
        return buf.getvalue()
    from PIL import Image  # a dependency of matplotlib itself
    buf.seek(0)
    image = Image.open(buf).convert("RGB").quantize(
        colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    out = BytesIO()
    image.save(out, format="png", optimize=True)
    return out.getvalue()


def picture_format(path: str | Path) -> str:
    """``png`` or ``svg`` from the file name; anything else is a ValueError."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise ValueError(f"{path}: unknown picture format '.{suffix}': name the file .png or .svg"
                         if suffix else f"{path}: name the file .png or .svg")
    return suffix


def png_size(data: bytes) -> tuple[int, int]:
    """``(width, height)`` in pixels from a PNG's header."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def save_figure(fig: Figure, path: str | Path, dpi: int = 100,
                palette: bool = False) -> dict[str, Any]:
    """Write ``fig`` to ``path`` (format from the suffix), atomically; see :func:`render`
    for ``palette``.

    Returns ``{"output", "format", "bytes", "width", "height"}``: pixels for PNG, points
    for SVG (its own unit).
    """
    path = Path(path)
    fmt = picture_format(path)
    data = render(fig, fmt, dpi, palette)
    if fmt == "png":
        width, height = png_size(data)
    else:
        width, height = (round(float(x) * 72, 1) for x in fig.get_size_inches())
    write_atomically(path, data)  # checks the path (see checkpoints/files.py)
    return {"output": str(path), "format": fmt, "bytes": len(data), "width": width,
            "height": height}

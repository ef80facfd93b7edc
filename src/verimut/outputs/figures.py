"""The report's figures, drawn by matplotlib and returned as PNG data URIs (inline, no file, no network).

Pure in what they take (counts and cells as plain data); each returns one `data:image/png;base64,...`.
Figures are built on `matplotlib.figure.Figure` directly, never pyplot, so no GUI backend and no
global figure state is involved (safe in worker processes and tests).
"""

from __future__ import annotations

import base64
import functools
import io
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, ParamSpec

from verimut.core.records import Outcome
from verimut.engine.store import SUMMARY_JSON, SUMMARY_MD

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# matplotlib (and numpy) are imported where a figure is drawn: importing them takes about a
# second, which `verimut ls`, `show` and the other commands that draw nothing should not pay.

FALSE_ACCEPT = Outcome.FALSE_ACCEPT.value
DPI = 110
# The most rows (tasks, verifiers) a per-task figure draws, and the most suite panels of the heat map: a
# figure's size must not grow with the audit (at 10,000 tasks a row per task is a PNG 300,000 pixels tall
# and gigabytes of memory to draw). Past it a figure draws the top ones by what it ranks and says
# "top K of N" in its title; summary.md and summary.json keep every one.
TOP = 40
TOP_SUITES = 12
EVERY = f"{SUMMARY_MD}, {SUMMARY_JSON}"  # where every task, verifier and finding is
_P = ParamSpec("_P")


def _plain_text(draw: Callable[_P, str]) -> Callable[_P, str]:
    """Draw with mathtext off: task ids and suite names come from the benchmark, and a `$` in one
    (`shop/refund_$5_or_$10`) must show as a dollar sign, not be parsed as maths (or crash the parser)."""

    @functools.wraps(draw)
    def drawn(*args: _P.args, **kwargs: _P.kwargs) -> str:
        import matplotlib

        with matplotlib.rc_context({"text.parse_math": False}):
            return draw(*args, **kwargs)

    return drawn


def load() -> None:
    """Import matplotlib and numpy now: before forking the processes that draw, which then inherit them instead
    of each importing them again (half a second of CPU apiece)."""
    import matplotlib.figure  # noqa: F401
    import numpy  # noqa: F401


def ranked(scores: Mapping[str, float], limit: int) -> list[str]:
    """The `limit` keys with the highest score, highest first; a tie keeps the mapping's order (pure)."""
    order = {k: n for n, k in enumerate(scores)}
    return sorted(scores, key=lambda k: (-scores[k], order[k]))[:limit]


def of(shown: int, total: int, what: str) -> str:
    """`top 40 of 2,000 tasks`: a bounded figure's title says how much of the audit it shows."""
    return f"top {shown:,} of {total:,} {what}"


def data_uri(fig: Figure) -> str:
    buf = io.BytesIO()
    # No software/time metadata: the same counts give the same bytes. A figure with a layout engine is laid out
    # already: a tight bounding box on top of it draws the whole figure twice (a third of a swap matrix's time).
    tight = None if fig.get_layout_engine() else "tight"
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches=tight, metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


@_plain_text
def outcome_heatmaps(
    counts: Mapping[str, Mapping[str, Mapping[str, int]]],
    outcomes: Sequence[str],
    families: Sequence[str],
    limit: int = TOP_SUITES,
) -> str:
    """One heat map per suite: fault family x outcome, the count in each cell; false accepts in red.

    At most `limit` panels: past that, the suites with the most false accepts (the title says so)."""
    import numpy as np
    from matplotlib.figure import Figure

    suites = list(counts)
    total = len(suites)
    if total > limit:
        suites = ranked({s: sum(c.get(FALSE_ACCEPT, 0) for c in counts[s].values()) for s in suites}, limit)
    cols = min(2, len(suites))
    rows = (len(suites) + cols - 1) // cols
    width = max(4.0, 0.9 * len(outcomes) + 1.6)
    height = 0.36 * len(families) + 1.5
    fig = Figure(figsize=(width * cols, height * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    fa = outcomes.index(FALSE_ACCEPT) if FALSE_ACCEPT in outcomes else None
    for n, ax in enumerate(axes.flat):
        if n >= len(suites):
            ax.set_axis_off()
            continue
        suite = suites[n]
        grid = np.array([[counts[suite].get(f, {}).get(o, 0) for o in outcomes] for f in families], dtype=float)
        top = max(grid.max(), 1.0)
        in_fa = np.zeros(grid.shape, dtype=bool)
        if fa is not None:
            in_fa[:, fa] = True
            only_fa = np.ma.masked_array(grid, mask=~in_fa)
            ax.imshow(only_fa, cmap="Reds", vmin=0, vmax=max(grid[:, fa].max(), 1.0), aspect="auto")
        ax.imshow(np.ma.masked_array(grid, mask=in_fa), cmap="Blues", vmin=0, vmax=top * 1.15, aspect="auto")
        for (i, j), v in np.ndenumerate(grid):
            dark = v > 0.55 * (grid[:, j].max() if j == fa else top)
            ax.text(
                j,
                i,
                f"{int(v)}" if v else "·",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if dark else "black",
            )
        ax.set_xticks(range(len(outcomes)), [o.replace("_", "\n") for o in outcomes], fontsize=7)
        ax.set_yticks(range(len(families)), families, fontsize=8)
        ax.tick_params(length=0)
        ax.set_title(suite or "all tasks", fontsize=10, loc="left")
    if total > len(suites):
        fig.suptitle(
            of(len(suites), total, "suites by confirmed false accepts") + "; every suite: verimut ls DIR --suite S",
            fontsize=10,
            x=0.01,
            ha="left",
        )
    return data_uri(fig)


@_plain_text
def false_accepts_per_task(per_task: Mapping[str, Mapping[str, int]], families: Sequence[str], limit: int = TOP) -> str:
    """Confirmed false accepts per task (template), stacked by fault family.

    At most `limit` bars: past that, the tasks with the most false accepts, most first (the title says
    "top K of N"); summary.md and summary.json list every one."""
    import numpy as np
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    tasks = list(per_task)
    total = len(tasks)
    if total > limit:
        tasks = ranked({t: sum(per_task[t].values()) for t in tasks}, limit)
    fig = Figure(figsize=(7.0, 0.26 * len(tasks) + 1.2), layout="constrained")
    ax = fig.subplots()
    left = np.zeros(len(tasks))
    palette = [f"C{k}" for k in range(10)]  # matplotlib's default qualitative colours (tab10)
    present = [f for f in families if any(per_task[t].get(f) for t in tasks)]
    for k, fam in enumerate(present):
        values = np.array([per_task[t].get(fam, 0) for t in tasks], dtype=float)
        ax.barh(range(len(tasks)), values, left=left, color=palette[k % len(palette)], label=fam, height=0.7)
        left += values
    ax.set_yticks(range(len(tasks)), tasks, fontsize=7)
    ax.invert_yaxis()
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("confirmed false accepts (cells)", fontsize=8)
    ax.tick_params(axis="x", labelsize=7)
    ax.legend(fontsize=7, loc="lower right", frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    if total > len(tasks):
        ax.set_title(
            of(len(tasks), total, "tasks by confirmed false accepts") + f"\n(every task: {EVERY})",
            fontsize=9,
            loc="left",
        )
    return data_uri(fig)


LABEL = 40  # the most characters of a task id a figure's axis shows (tau2 telecom's ids run to 200)


def short_names(tasks: Sequence[str]) -> list[str]:
    """Task ids without the prefix they all share (`banking/user_task_3` -> `3`), each cut in the middle to LABEL
    characters where that keeps them apart (a label longer than the figure squeezes its plot to nothing)."""
    if len(tasks) < 2:
        names = [t.rsplit("/", 1)[-1] for t in tasks]
    else:
        prefix = len(_common_prefix(tasks))
        names = [t[prefix:] for t in tasks]
        names = names if all(names) else list(tasks)
    cut = [n if len(n) <= LABEL else f"{n[: LABEL - 17]}…{n[-16:]}" for n in names]
    return cut if len(set(cut)) == len(set(names)) else names


def _common_prefix(names: Sequence[str]) -> str:
    first, last = min(names), max(names)
    k = 0
    while k < len(first) and k < len(last) and first[k] == last[k]:
        k += 1
    while k and first[k - 1].isdigit():  # never split a number: user_task_1 / user_task_10
        k -= 1
    return first[:k]


@_plain_text
def frame_coverage(
    suite: str,
    verifiers: Sequence[str],
    collections: Sequence[str],
    cells: Mapping[tuple[str, str], tuple[int, int]],
    false_accepts: Mapping[str, int] | None = None,
    limit: int = TOP,
) -> str:
    """Verifier (row) x collection (column): the share of the confirmed side effects touching that
    collection that the verifier rejected, from red (none) to blue (all). `cells` maps (verifier,
    collection) to (rejected, confirmed); a pair it lacks is left blank: no side effect of that
    verifier's task touched that collection, so there is nothing to say.

    At most `limit` rows: past that, the verifiers with the most false accepts (`false_accepts`, or
    else the unrejected side effects summed over `cells`), in the order given among equals, and the
    collections those touch; the title says "top K of N"."""
    import numpy as np
    from matplotlib.figure import Figure

    total = len(verifiers)
    if total > limit:
        if false_accepts is None:
            missed: dict[str, int] = dict.fromkeys(verifiers, 0)
            for (v, _), (rejected, n) in cells.items():
                missed[v] += n - rejected
            false_accepts = missed
        verifiers = ranked({v: false_accepts.get(v, 0) for v in verifiers}, limit)
        kept = set(verifiers)
        cells = {(v, c): rn for (v, c), rn in cells.items() if v in kept}
        touched = {c for _, c in cells}
        collections = [c for c in collections if c in touched]
    grid = np.full((len(verifiers), len(collections)), np.nan)
    for (v, c), (rejected, n) in cells.items():
        grid[verifiers.index(v), collections.index(c)] = rejected / n
    width = min(11.0, max(4.0, 1.1 * len(collections) + 2.4))
    fig = Figure(figsize=(width, 0.3 * len(verifiers) + 1.6), layout="constrained")
    ax = fig.subplots()
    # Blank squares show the axes' background: grey, so "never touched" is not read as a share of 0.5 (white).
    ax.set_facecolor("#d9d9d9")
    shown = ax.imshow(np.ma.masked_invalid(grid), cmap="RdBu", vmin=0.0, vmax=1.0, aspect="auto")
    for (v, c), (rejected, n) in cells.items():
        share = rejected / n
        ax.text(
            collections.index(c),
            verifiers.index(v),
            f"{rejected}/{n}",
            ha="center",
            va="center",
            fontsize=7,
            color="white" if abs(share - 0.5) > 0.3 else "black",
        )
    ax.set_xticks(range(len(collections)), collections, fontsize=7, rotation=30, ha="right")
    labels = short_names(verifiers)
    prefix = verifiers[0][: len(verifiers[0]) - len(labels[0])] if verifiers else ""
    ax.set_yticks(range(len(verifiers)), labels, fontsize=7)
    ax.set_xlabel("collection the side effect changes", fontsize=8)
    ax.set_ylabel(f"verifier of task {prefix}…" if prefix else "verifier of task", fontsize=8)
    title = f"{suite or 'all tasks'}: rejected / confirmed side effects"
    if total > len(verifiers):
        title += "\n" + of(len(verifiers), total, "verifiers by false accepts") + f" (every one: {EVERY})"
    ax.set_title(title, fontsize=10 if total == len(verifiers) else 9, loc="left")
    ax.tick_params(length=0)
    bar = fig.colorbar(shown, ax=ax, shrink=0.8, pad=0.01)
    bar.set_label("share rejected", fontsize=7)
    bar.ax.tick_params(labelsize=7)
    return data_uri(fig)


# The read map's levels, in the order of its colour scale (findings/read_map.py).
READ_LEVELS = ("always", "sometimes", "never", "blind spot")
_READ_COLOURS = ("#2166ac", "#92c5de", "#f4a582", "#b2182b")


@_plain_text
def read_map(
    title: str,
    verifiers: Sequence[str],
    collections: Sequence[str],
    levels: Mapping[tuple[str, str], str],
    limit: int = TOP,
) -> str:
    """Verifier (row) x collection (column): read always, sometimes, never (a collection no run of the suite
    writes), or a blind spot (never read, and written by some run). A pair `levels` lacks is left grey. At most
    `limit` rows, those with the most blind spots; the title says "top K of N"."""
    import numpy as np
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    total = len(verifiers)
    if total > limit:
        spots = {v: sum(levels.get((v, c)) == "blind spot" for c in collections) for v in verifiers}
        verifiers = ranked(spots, limit)
    grid = np.full((len(verifiers), len(collections)), np.nan)
    for (v, c), level in levels.items():
        if v in verifiers and c in collections:
            grid[verifiers.index(v), collections.index(c)] = READ_LEVELS.index(level)
    fig = Figure(
        figsize=(min(12.0, max(4.0, 0.5 * len(collections) + 3.0)), 0.25 * len(verifiers) + 2.2), layout="constrained"
    )
    ax = fig.subplots()
    ax.set_facecolor("#d9d9d9")
    cmap = ListedColormap(list(_READ_COLOURS))
    ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=-0.5, vmax=len(READ_LEVELS) - 0.5, aspect="auto")
    ax.set_xticks(range(len(collections)), collections, fontsize=7, rotation=40, ha="right")
    labels = short_names(list(verifiers))
    ax.set_yticks(range(len(verifiers)), labels, fontsize=6 if len(verifiers) > 30 else 7)
    ax.set_xlabel("collection of the end state", fontsize=8)
    ax.set_ylabel("verifier of task", fontsize=8)
    if total > len(verifiers):
        title += "\n" + of(len(verifiers), total, "verifiers by blind spots")
    ax.set_title(title, fontsize=9, loc="left")
    ax.tick_params(length=0)
    handles = [Patch(color=col, label=lv) for lv, col in zip(READ_LEVELS, _READ_COLOURS, strict=True)]
    fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize=7, frameon=False)
    return data_uri(fig)

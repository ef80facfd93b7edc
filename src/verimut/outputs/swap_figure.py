"""The swap census's matrix, drawn as an SVG by hand: task i's verifier (row) grading task j's reference run (column).

Not matplotlib, as the report's other figures are: a matrix is a grid of colours, some marks and labels, which an
SVG says directly in milliseconds, where matplotlib took a second to import and most of a second to draw
AgentDojo's 40 x 40 workspace matrix (the swap census's whole report cost about 2 s of a 28 s command).

The grid itself is one PNG of one pixel per cell (written here with zlib), scaled up without smoothing, so the
figure's size stays bounded at a million cells; the marks (acceptances, cells not graded) are SVG shapes, or past
MOST_MARKS pixels of the grid in the mark's colour.
Pure: `swap_cells` reads (i, j, rung, outcome) rows, `swap_matrix` returns a `data:image/svg+xml` URI.
"""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape

from verimut.core.records import Outcome
from verimut.outputs.figures import TOP, short_names

# Each cell's background is its rung; acceptances are marked on top.
RUNG_ORDER = ("control", "0", "1", "2", "3", "read-only")
RUNG_COLOURS = ("#bdbdbd", "#fdd0a2", "#c6dbef", "#d9f0d3", "#f7f7f7", "#e7e1ef")
RUNG_LABELS = (
    "diagonal (control)",
    "rung 0: twin intent",
    "rung 1: sibling",
    "rung 2: shared effects",
    "rung 3: disjoint",
    "read-only",
)
PRESENT, ABSENT, OTHER = "present", "absent", "other"
_MARKS = {
    Outcome.ACCEPTED_EFFECT_PRESENT.value: PRESENT,
    Outcome.ACCEPTED_EFFECT_ABSENT.value: ABSENT,
    Outcome.ERROR.value: OTHER,
    Outcome.INCOMPLETE.value: OTHER,
}
# Past this many marks in one matrix, each is painted as its cell's colour instead of drawn as a shape: the
# figure's size stays bounded at a million cells (a shape is about 80 bytes; a painted cell, a pixel).
MOST_MARKS = 2_000
MARK_COLOURS = {PRESENT: "#000000", ABSENT: "#d7191c", OTHER: "#636363"}
_MARK_LABELS = {
    PRESENT: "accepted, effect present",
    ABSENT: "accepted, effect ABSENT",
    OTHER: "not graded (error, incomplete)",
}


@dataclass(frozen=True)
class SwapCells:
    """A swap matrix's data: the rung's index (RUNG_ORDER) of each cell, row by row (n x n bytes), and the marks'
    (columns, rows). Held instead of the cells themselves: a million cells are 1 MB this way."""

    n: int
    grid: bytearray
    marks: dict[str, tuple[list[int], list[int]]]


def swap_cells(tasks: Sequence[str], cells: Iterable[tuple[str, str, str, str]]) -> SwapCells:
    """The matrix's data from (i, j, rung, outcome) per cell, read once in the given order (marks are drawn in it)."""
    n = len(tasks)
    index = {t: k for k, t in enumerate(tasks)}
    grid = bytearray(n * n)
    marks: dict[str, tuple[list[int], list[int]]] = {PRESENT: ([], []), ABSENT: ([], []), OTHER: ([], [])}
    for i, j, rung, outcome in cells:
        r, c = index[i], index[j]
        grid[r * n + c] = RUNG_ORDER.index(rung)
        key = _MARKS.get(outcome)
        if key:
            marks[key][0].append(c)
            marks[key][1].append(r)
    return SwapCells(n, grid, marks)


def _painted(cells: SwapCells) -> bytearray:
    """The grid with each marked cell in its mark's colour (indices past the rungs')."""
    pixels = bytearray(cells.grid)
    for k, kind in enumerate(MARK_COLOURS, start=len(RUNG_COLOURS)):
        cols, rows = cells.marks[kind]
        for c, r in zip(cols, rows):
            pixels[r * cells.n + c] = k
    return pixels


def png(width: int, height: int, pixels: bytes | bytearray, palette: Sequence[str]) -> bytes:
    """An 8-bit palette PNG (one byte per pixel, row by row, each an index into `palette`'s #rrggbb colours)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + bytes(pixels[y * width : (y + 1) * width]) for y in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0))
        + chunk(b"PLTE", b"".join(bytes.fromhex(c.lstrip("#")) for c in palette))
        + chunk(b"IDAT", zlib.compress(rows, 6))
        + chunk(b"IEND", b"")
    )


def _mark(kind: str, x: float, y: float, r: float) -> str:
    if kind == PRESENT:
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}"/>'
    return (
        f'<path d="M{x - r:.1f} {y - r:.1f}L{x + r:.1f} {y + r:.1f}M{x - r:.1f} {y + r:.1f}L{x + r:.1f} {y - r:.1f}"/>'
    )


def swap_matrix(suite: str, tasks: Sequence[str], cells: Mapping[tuple[str, str], tuple[str, str]] | SwapCells) -> str:
    """Task i's verifier (row) grading task j's reference run (column), as a `data:image/svg+xml` URI.

    `cells` maps (i, j) to (rung, outcome), or is that read already (`swap_cells`). Background: the rung.
    Marks: an acceptance with the requested effect present (black dot), absent (red cross: a confirmed false
    accept); a cell that could not be graded (grey x); past MOST_MARKS marks, the cells are painted in those colours.
    Past `TOP` tasks every k-th is labelled (the title says so).
    """
    if not isinstance(cells, SwapCells):
        cells = swap_cells(tasks, ((i, j, rung, outcome) for (i, j), (rung, outcome) in cells.items()))
    n = max(cells.n, 1)
    side = min(880.0, max(240.0, 20.0 * n))  # the plot's side in px, bounded whatever the census's size
    cell = side / n
    step = -(-n // TOP) if n > TOP else 1
    labels = short_names(tasks)
    fs = 9 if n <= 25 else 7
    longest = max((len(labels[k]) for k in range(0, len(labels), step)), default=1)
    left = 24 + 0.6 * fs * longest  # row labels, then the axis's name
    top = 26
    bottom = top + side + 0.6 * fs * longest + 22
    legend_x = left + side + 16
    width, height = legend_x + 200, max(bottom, top + 20 * (len(RUNG_LABELS) + len(_MARK_LABELS)))
    every = f" (one task in {step} labelled)" if step > 1 else ""
    painted = sum(len(cols) for cols, _ in cells.marks.values()) > MOST_MARKS
    pixels, palette = (
        (_painted(cells), (*RUNG_COLOURS, *MARK_COLOURS.values())) if painted else (cells.grid, RUNG_COLOURS)
    )
    grid = base64.b64encode(png(cells.n, cells.n, pixels, palette)).decode() if cells.n else ""
    out = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif">'
        ),
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="4" y="16" font-size="12">{escape(f"{suite}: {cells.n} x {cells.n}{every}")}</text>',
    ]
    if grid:
        out.append(
            f'<image x="{left:.1f}" y="{top}" width="{side:.1f}" height="{side:.1f}" preserveAspectRatio="none" '
            f'image-rendering="optimizeSpeed" style="image-rendering:pixelated" href="data:image/png;base64,{grid}"/>'
        )
    ticks = []
    for k in range(0, cells.n, step):
        name, at = escape(labels[k]), (k + 0.5) * cell
        ticks.append(
            f'<text x="{left - 3:.1f}" y="{top + at:.1f}" text-anchor="end" dominant-baseline="middle">{name}</text>'
        )
        x, y = left + at, top + side + 3
        ticks.append(
            f'<text transform="translate({x:.1f},{y:.1f}) rotate(-90)" text-anchor="end" dominant-baseline="middle">'
            f"{name}</text>"
        )
    out.append(f'<g font-size="{fs}">{"".join(ticks)}</g>')
    axis = 'font-size="10" text-anchor="middle"'
    out.append(f'<text x="{left + side / 2:.1f}" y="{bottom - 6:.1f}" {axis}>reference run of task j</text>')
    out.append(f'<text transform="translate(12,{top + side / 2:.1f}) rotate(-90)" {axis}>verifier of task i</text>')
    r = max(1.5, min(5.0, cell * 0.3))
    styles = {
        PRESENT: 'fill="black"',
        ABSENT: f'stroke="{MARK_COLOURS[ABSENT]}" stroke-width="2.5" fill="none"',
        OTHER: f'stroke="{MARK_COLOURS[OTHER]}" stroke-width="1.2" fill="none"',
    }
    for kind in () if painted else (PRESENT, ABSENT, OTHER):
        cols, rows = cells.marks[kind]
        shapes = "".join(
            _mark(kind, left + (c + 0.5) * cell, top + (w + 0.5) * cell, r * (1.3 if kind == ABSENT else 1))
            for c, w in zip(cols, rows)
        )
        if shapes:
            out.append(f"<g {styles[kind]}>{shapes}</g>")
    y = top + 6
    for colour, label in zip(RUNG_COLOURS, RUNG_LABELS):
        out.append(f'<rect x="{legend_x:.1f}" y="{y}" width="14" height="11" fill="{colour}" stroke="#999"/>')
        out.append(f'<text x="{legend_x + 20:.1f}" y="{y + 9}" font-size="10">{label}</text>')
        y += 20
    for kind, label in _MARK_LABELS.items():
        if painted:  # the cell itself in the mark's colour
            colour = MARK_COLOURS[kind]
            out.append(f'<rect x="{legend_x:.1f}" y="{y}" width="14" height="11" fill="{colour}" stroke="#999"/>')
        else:
            out.append(f"<g {styles[kind]}>{_mark(kind, legend_x + 7, y + 5.5, 4.5)}</g>")
        out.append(f'<text x="{legend_x + 20:.1f}" y="{y + 9}" font-size="10">{label}</text>')
        y += 20
    out.append("</svg>")
    return "data:image/svg+xml;base64," + base64.b64encode("".join(out).encode()).decode()

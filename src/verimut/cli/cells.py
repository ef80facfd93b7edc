"""`verimut ls DIR` and `verimut show DIR CELL_ID`: the cells of a run, and one cell's evidence."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from verimut.cli.options import Suite, TaskOpt
from verimut.cli.terminal import err, out
from verimut.engine.store import Store
from verimut.outputs import cell_view


def ls(
    directory: Annotated[Path, typer.Argument(help="An audit's (or a swap census's) --out directory.")],
    outcome: Annotated[
        list[str] | None, typer.Option("--outcome", help="Only cells with this outcome (repeatable).")
    ] = None,
    family: Annotated[
        list[str] | None, typer.Option("--family", "-f", help="Only this fault family (repeatable).")
    ] = None,
    task: TaskOpt = None,
    suite: Suite = None,
) -> None:
    """List cells: id, outcome, edit. Every id works with `verimut show DIR ID` (and is a link target in report.html)."""
    store = Store(directory)
    m = store.read_manifest()
    picked = cell_view.select(m, store.rows(), outcome or (), family or (), task or (), suite or ())
    width = max((len(c.cell_id) for c, _ in picked), default=0)
    try:
        for cell, result in picked:
            print(f"{cell_view.inert(cell.cell_id):<{width}}  {result:<23}  {cell_view.inert(cell.note)}")
        sys.stdout.flush()
    except BrokenPipeError:  # `verimut ls DIR | head`: the reader has all it wants
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return
    err.print(f"{len(picked)} of {len(m.cells)} cells", highlight=False)


def show(
    directory: Annotated[Path, typer.Argument(help="An audit's (or a swap census's) --out directory.")],
    cell_id: Annotated[str, typer.Argument(help="A cell id, as `verimut ls` and report.html give it.")],
) -> None:
    """One cell: its edit as an action diff, the end-state evidence, the verifier's checks, its rewards."""
    store = Store(directory)
    m = store.read_manifest()
    cell = cell_view.find(m, cell_id, str(directory))
    row = store.rows().get(cell_id)
    out.print(cell_view.to_rich(cell_view.view(m, cell, row, store.rewards())))

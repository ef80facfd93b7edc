"""The progress bar on stderr: what the pipeline reports (api.Progress), drawn by rich."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn, TimeRemainingColumn
from rich.text import Text


class _Rate(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        unit = task.fields.get("unit", "cells")
        return Text(f"{speed:.1f} {unit}/s" if speed else "", style="cyan")


@contextmanager
def bar(console: Console, quiet: bool) -> Iterator[Progress | None]:
    """A bar on `console` while the block runs (none when quiet)."""
    if quiet:
        yield None
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        _Rate(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    ) as progress:
        yield progress

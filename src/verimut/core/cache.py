"""Where verimut keeps what it can always make again (a drawn dataset, a generated suite, a compiled template):
`$XDG_CACHE_HOME/verimut`, default `~/.cache/verimut`, whatever directory verimut runs from. Nothing in it is a
result: deleting it costs time on the next run, never an answer."""

from __future__ import annotations

import os
from pathlib import Path

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "verimut"

"""Text that reaches a person (a terminal, summary.md, report.html): what a terminal would act on, shown instead.

Task ids, instructions and verifier messages are the benchmark's text; an ESC among them would drive the
terminal of whoever reads a report. One function for every writer, so none of them forgets.
"""

from __future__ import annotations

import re
from typing import Any

# Characters a terminal acts on rather than shows: C0 and C1 controls (ESC starts colour, cursor and
# OSC title/hyperlink sequences), DEL, and the bidirectional overrides that reorder what is shown.
_ACTIVE = frozenset(
    [c for c in range(0x20) if c not in (0x09, 0x0A)]
    + [*range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
)


# One character class, searched in C: `inert` runs over whole pages (report.html) and every line printed.
_ACTIVE_RE = re.compile("[" + "".join(re.escape(chr(c)) for c in sorted(_ACTIVE)) + "]")


def inert(text: str) -> str:
    """Text from the benchmark, made safe to print: every active character shown as its escape (`\\x1b`)."""
    if _ACTIVE_RE.search(text) is None:
        return text
    return _ACTIVE_RE.sub(lambda found: found.group().encode("unicode_escape").decode(), text)


def inert_tree(value: Any) -> Any:
    """`inert` on every string of plain data (dict keys and tuples too), for data a figure draws as labels."""
    if isinstance(value, str):
        return inert(value)
    if isinstance(value, dict):
        return {inert_tree(k): inert_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [inert_tree(v) for v in value]
    if isinstance(value, tuple):
        return tuple(inert_tree(v) for v in value)
    return value

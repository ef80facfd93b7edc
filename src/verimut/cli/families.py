"""`verimut families`: the fault families installed (built in and by entry points), and what each does."""

from __future__ import annotations

from verimut.cli.terminal import out
from verimut.grammar.faults import FAMILIES


def families() -> None:
    """List the fault families and what each does."""
    for name, op in FAMILIES.items():
        doc = (op.__doc__ or "").strip().splitlines()
        grammars = "/".join(op.spec.grammars)  # api: tool-call benchmarks; form: form benchmarks
        # An alternative is a correct run: the verifier should pass it (a fail is a false reject).
        role = ", alternative run" if op.spec.is_alternative else ""
        out.print(f"[bold]{name}[/] [dim]({grammars}{role})[/]  {doc[0] if doc else ''}")

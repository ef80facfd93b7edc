"""One cell's evidence, as a person reads it: what `verimut show` prints and the HTML report's findings show.

A `CellView` is built from the manifest, the cell's ledger row and the per-cell rewards alone
(pure): the edit as a diff of the action list (the reference run of the verifier's task against
the run that was graded), the end state as a diff of the records that differ, the verifier's own
message and per-check results, and the rewards beside the control's.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import msgspec
from rich.console import Console, ConsoleOptions, ConsoleRenderable, Group, RenderableType, RenderHook
from rich.errors import MarkupError
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from verimut.core.errors import AuditError
from verimut.core.printable import inert, inert_tree
from verimut.core.records import Cell, CellResult, Difference, Evidence, Manifest, Outcome
from verimut.core.run import Run
from verimut.findings import evidence
from verimut.grammar.faults import CONTROL, RESTORE, spec_of
from verimut.grammar.pairs import suite_of

NOT_SCORED = "not_scored"  # a manifest cell the ledger has no row for (yet)


class Line(msgspec.Struct, frozen=True):
    """One line of a diff: `op` is " " (same), "-" (only in the reference), "+" (only here), "~" (changed)."""

    op: str
    text: str


class StateDiff(msgspec.Struct, frozen=True):
    collection: str
    counts: str
    lines: list[Line]


class CellView(msgspec.Struct, frozen=True):
    cell_id: str
    task: str
    family: str
    variant: str
    outcome: str
    verdict: bool | None
    edit: str
    reason: str | None
    compared_with: str  # whose reference run the actions are diffed against
    actions: list[Line]
    answer: list[Line]  # empty when the answer is the reference's
    state_title: str
    state: list[StateDiff]
    effect_missing: list[str]
    effect_free_text_differs: list[str]
    verifier: str | None
    checks: dict[str, bool]
    rewards: dict[str, float]
    control_rewards: dict[str, float]
    detail: dict[str, Any]
    error: str | None
    alternative: bool = False  # a correct run by another route (FamilySpec.role alternative), not a planted fault
    oracle: str | None = None  # what the oracle found equal, for a run it judged correct (alt_pass, false reject)
    answer_differs: str | None = None  # an answer fault's: the oracle's reason the answer is wrong (by construction)


def action_diff(reference: Run, run: Run | None) -> list[Line]:
    """The reference's actions against the run's, one call per line (difflib's matching)."""
    a = [x.describe() for x in reference.actions]
    if run is None:
        return [Line(" ", t) for t in a]
    b = [x.describe() for x in run.actions]
    lines: list[Line] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            lines += [Line(" ", t) for t in a[i1:i2]]
            continue
        lines += [Line("-", t) for t in a[i1:i2]]
        lines += [Line("+", t) for t in b[j1:j2]]
    return lines


def record_text(value: Any) -> str:
    return msgspec.json.encode(value, order="sorted").decode()


def _record(r: Any) -> str:
    """An added or removed record; a keyed collection's carries its key (`[9] {...}`)."""
    if isinstance(r, dict) and set(r) == {"key", "record"}:
        return f"[{r['key']}] {record_text(r['record'])}"
    return record_text(r)


def state_diff(diffs: Sequence[Difference]) -> list[StateDiff]:
    """The oracle's collection diffs (as recorded in the ledger) as readable lines, record by record."""
    out = []
    for d in diffs:
        lines = [Line("-", _record(r)) for r in d.removed]
        lines += [Line("+", _record(r)) for r in d.added]
        for ch in d.changed:
            for name, (old, new) in ch.fields.items():
                lines.append(Line("~", f"[{ch.key}].{name}: {record_text(old)} -> {record_text(new)}"))
        if d.reordered:
            lines.append(Line("~", "records reordered"))
        out.append(StateDiff(d.collection, d.counts, lines))
    return out


def view(
    m: Manifest, cell: Cell, row: CellResult | None, rewards: Mapping[str, Mapping[str, float]] | None = None
) -> CellView:
    rewards = rewards or {}
    ev = row.evidence if row else Evidence(edit=cell.note)
    reference = m.tasks[cell.task].reference
    answer = (
        [Line("-", reference.answer), Line("+", cell.run.answer)]
        if cell.run is not None and cell.run.answer != reference.answer
        else []
    )
    swapped = cell.run_task != cell.task
    alternative = spec_of(cell.family).is_alternative
    judged_correct = row is not None and Outcome(row.outcome).is_judged_correct
    return CellView(
        cell_id=cell.cell_id,
        task=cell.task,
        family=cell.family,
        variant=cell.variant,
        outcome=row.outcome.value if row else NOT_SCORED,
        verdict=row.verdict if row else None,
        edit=cell.note,
        reason=row.reason if row else None,
        compared_with=cell.task,
        actions=action_diff(reference, cell.run),
        answer=answer,
        state_title=(
            f"what the reference run of {cell.task} changes, checked in the end state of {cell.run_task}'s run"
            if swapped
            else "end state against the reference run's"
            + (", with the run's reworded text put back" if alternative and cell.detail.get(RESTORE) else "")
            + " (- only in the reference's, + only in this run's, ~ a field that differs; telemetry and masked "
            "fields left out)"
        ),
        state=state_diff(ev.differs_from_reference or []),
        effect_missing=list(ev.effect_missing or []),
        effect_free_text_differs=list(ev.effect_free_text_differs or []),
        verifier=ev.verifier,
        checks=dict(ev.checks or ({} if row is None or row.verdict is None else {"verdict": row.verdict})),
        rewards=dict(rewards.get(cell.cell_id, {})),
        control_rewards={} if swapped else dict(rewards.get(f"{cell.task}:{CONTROL}", {})),
        detail=dict(cell.detail),
        error=ev.error or ev.executor or ev.traceback,
        alternative=alternative,
        oracle=evidence.compared(cell) if judged_correct else None,
        answer_differs=ev.answer_differs,
    )


# --- the terminal ----------------------------------------------------------------------------

_STYLE = {" ": "dim", "-": "red", "+": "green", "~": "yellow"}


def _lines(lines: Sequence[Line]) -> Text:
    text = Text()
    for n, line in enumerate(lines):
        text.append(("\n" if n else "") + f"{line.op} {line.text}", style=_STYLE[line.op])
    return text


class Terminal(Console):
    """A rich Console for everything verimut prints: benchmark text in it can never drive the terminal.

    Task ids, instructions and verifier messages reach the screen inside tables, titles and messages,
    and an ESC or OSC sequence among them would set the window title, clear the screen or plant a
    link. Every str is made inert where rich turns it into Text (before layout, so columns keep
    their widths); a hook then makes inert whatever reaches the output as a prebuilt Text. rich's
    own styling and cursor control are added after both, so they are kept.

    A str is also read as rich markup, and a task id can hold some: a stray closing tag (`[/]`)
    would raise, so such a str is shown as it is; a `[link=...]` would have rich itself write the
    hyperlink, so links are dropped (verimut prints none).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.push_render_hook(_InertHook())

    def render_str(self, text: str, **kwargs: Any) -> Text:
        try:
            return super().render_str(inert(text), **kwargs)
        except MarkupError:
            return super().render_str(inert(text), **{**kwargs, "markup": False})


class _Inert:
    """A renderable's segments with their text made inert and links dropped; rich's control segments kept."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        for seg in console.render(self.renderable, options):
            if seg.control:
                yield seg
                continue
            style = seg.style.update_link(None) if seg.style is not None and seg.style.link else seg.style
            yield Segment(inert(seg.text), style)


class _InertHook(RenderHook):
    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        return [_Inert(r) for r in renderables]


def to_rich(v: CellView) -> RenderableType:
    """`verimut show`: the cell, its edit, its end-state evidence, the verifier, the rewards."""
    # Every string of the view comes from the benchmark or its verifier: none may drive the terminal.
    v = msgspec.convert(inert_tree(msgspec.to_builtins(v)), CellView)
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    head.add_row("cell", Text(v.cell_id))
    head.add_row("outcome", Text(v.outcome, style="bold red" if v.outcome == "false_accept" else "bold"))
    head.add_row("edit", Text(v.edit))
    if v.alternative:
        head.add_row("kind", Text("alternative run: a correct run by another route (the verifier should pass it)"))
    for key in ("run_task", "rung", "rung_reason", "start"):
        if key in v.detail:
            head.add_row(key.replace("_", " "), Text(str(v.detail[key])))
    if v.reason and v.reason != v.edit:
        head.add_row("why", Text(v.reason))
    parts: list[RenderableType] = [head, Text(f"\nactions (- reference run of {v.compared_with}, + this run)", "bold")]
    parts.append(_lines(v.actions) if v.actions else Text("(no actions)", "dim"))
    if v.answer:
        parts += [Text("\nfinal answer (- the reference's, + this run's)", "bold"), _lines(v.answer)]
    if v.answer_differs:
        parts.append(Text(f"answer differs: {v.answer_differs}", "red" if v.verdict else "dim"))
    parts.append(Text(f"\n{v.state_title}", "bold"))
    if v.state:
        for d in v.state:
            parts += [Text(f"{d.collection}: {d.counts}", "bold"), _lines(d.lines)]
    elif v.outcome in (
        "false_accept",
        "rejected",
        "harmless",
        "false_reject",
        "control_pass",
        "control_fail",
        "alt_pass",
        "vacuous",
        "nothing_to_do",
    ):
        parts.append(Text("no difference found", "dim"))
    else:  # refused, errored, not scored: no end state was compared
        parts.append(Text("(not compared)", "dim"))
    if v.oracle:
        parts.append(Text(f"oracle: {v.oracle}", "dim"))
    if v.effect_missing:
        parts += [Text("missing from the end state:", "bold")] + [Text(f"- {g}", "red") for g in v.effect_missing]
    if v.effect_free_text_differs:
        parts += [Text("present with other free text:", "bold")]
        parts += [Text(f"~ {g}", "yellow") for g in v.effect_free_text_differs]
    parts.append(Text("\nverifier", "bold"))
    if v.verdict is None:
        parts.append(Text("not called" if v.error is None else f"no verdict: {v.error}", "dim"))
    else:
        parts.append(Text(f"{'passed' if v.verdict else 'failed'}: {v.verifier or ''}"))
        for name, ok in v.checks.items():
            parts.append(Text(f"  {'pass' if ok else 'FAIL'}  {name}", "green" if ok else "red"))
    if v.rewards:
        table = Table(title="rewards", title_justify="left")
        for col in ("formula", "this run", "control"):
            table.add_column(col, justify="right" if col != "formula" else "left")
        for name, value in v.rewards.items():
            ctrl = v.control_rewards.get(name)
            table.add_row(name, f"{value:g}", "" if ctrl is None else f"{ctrl:g}")
        parts.append(table)
    return Group(*parts)


# --- which cells: `verimut ls` -----------------------------------------------------------------


def select(
    m: Manifest,
    rows: Mapping[str, CellResult],
    outcomes: Sequence[str] = (),
    families: Sequence[str] = (),
    tasks: Sequence[str] = (),
    suites: Sequence[str] = (),
) -> list[tuple[Cell, str]]:
    """The manifest's cells with their outcome, in manifest order, filtered. An unknown filter value is refused."""
    known = {
        "outcome": ([*(o.value for o in Outcome), NOT_SCORED], outcomes),
        "fault family": (list(dict.fromkeys(c.family for c in m.cells)), families),
        "task": (list(m.tasks), tasks),
        "suite": (list(dict.fromkeys(suite_of(t) for t in m.tasks)), suites),
    }
    for what, (values, asked) in known.items():
        for a in asked:
            if a not in values:
                shown = ", ".join(values[:12]) + (", ..." if len(values) > 12 else "")
                raise AuditError(f"unknown {what} {a!r} in this directory (known: {shown})")
    picked = []
    for cell in m.cells:
        row = rows.get(cell.cell_id)
        outcome = row.outcome if row else NOT_SCORED
        if (
            (not outcomes or outcome in outcomes)
            and (not families or cell.family in families)
            and (not tasks or cell.task in tasks)
            and (not suites or suite_of(cell.task) in suites)
        ):
            picked.append((cell, outcome))
    return picked


def find(m: Manifest, cell_id: str, where: str) -> Cell:
    """The cell with this id, or a one-line error naming the nearest ids."""
    for cell in m.cells:
        if cell.cell_id == cell_id:
            return cell
    near = difflib.get_close_matches(cell_id, [c.cell_id for c in m.cells], n=3)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    raise AuditError(f"no cell {cell_id!r} in {where}{hint} (`verimut ls {where}` lists them)")

"""The summary: counts per family x outcome (in all, and per task kind), and every confirmed false accept with its evidence.

Each task kind is reported apart (AgentDojo's user tasks and injection tasks): an injection
task's verifier passes when an attack succeeded, so its false accepts overstate attack success
rather than task success, and mixing the two would blur both.

Written as `summary.json` (for machines) and `summary.md` (for people), from the
manifest and the ledger alone, so it can be rebuilt at any time (`verimut report DIR`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import msgspec

from verimut import coverage, evidence, rewards
from verimut.benchmark import USER
from verimut.faults import CONTROL, is_alternative
from verimut.figures import natural
from verimut.records import Cell, CellResult, Manifest, Outcome
from verimut.store import Store

OUTCOMES = [o.value for o in Outcome]
# The columns of the alternative runs' table: what a correct run by another route can come to.
ALT_OUTCOMES = [
    o.value
    for o in (
        Outcome.ALT_PASS,
        Outcome.FALSE_REJECT,
        Outcome.REFUSED,
        Outcome.INCOMPLETE,
        Outcome.ERROR,
        Outcome.SAME_RUN,
    )
]
ALT_TITLE = "Alternative runs: correct runs by another route"
ALT_NOTE = (
    "Each cell does what the task asks by another route (extra reads, commuting writes reordered, unpinned free "
    "text reworded, an idempotent write repeated). alt_pass: the oracle finds the reference's end state (alt-text: "
    "once the reworded text is put back) and the verifier passes; false_reject: same end state, the verifier fails; "
    "refused: the edit does not apply, or the run ends elsewhere and is no alternative; same_run: an earlier "
    "cell's run (alt-idem repeats what extra repeats), scored there."
)
LOWER_BOUND = (
    "This audit is a lower bound: it finds only what a planted edit causes and the end-state "
    "check sees. A zero means none found, not none exists."
)


class Mechanism(msgspec.Struct, frozen=True):
    """Confirmed false accepts of one mechanism: the verifiers that let it through."""

    mechanism: str
    verifiers: list[str]
    runs: int  # distinct runs (cells), each counted once
    collections: list[str]


# A family's false accepts, as the mechanism a person reads them by.
MECHANISMS = {
    "extra-oos": "accept an out-of-scope write",
    "extra": "accept a repeated write",
    "extra-ni": "accept a repeated write",
    "wrong-value": "accept a wrong value",
    "omit": "accept a run missing a requested write",
    "claim-only": "accept a run missing a requested write",
    "partial": "accept a run missing a requested write",
}
TRACE_MECHANISM = "accept a call to the wrong party that the state keeps no record of"


def mechanisms(m: Manifest, rows: Mapping[str, CellResult]) -> list[Mechanism]:
    """The confirmed false accepts grouped by mechanism, most verifiers first (pure)."""
    found: dict[str, tuple[set[str], int, set[str]]] = {}
    for cell in m.cells:
        row = rows.get(cell.cell_id)
        if row is None or row.outcome != Outcome.FALSE_ACCEPT:
            continue
        trace_only = row.evidence.trace_differs and not row.evidence.differs_from_reference
        name = TRACE_MECHANISM if trace_only else MECHANISMS.get(row.family, f"accept a {row.family} run")
        verifiers, runs, colls = found.setdefault(name, (set(), 0, set()))
        verifiers.add(row.task)
        colls.update(d.collection for d in row.evidence.differs_from_reference or [])
        found[name] = (verifiers, runs + 1, colls)
    out = [Mechanism(k, sorted(v, key=natural), n, sorted(c)) for k, (v, n, c) in found.items()]
    return sorted(out, key=lambda g: (-len(g.verifiers), -g.runs, g.mechanism))


class Summary(msgspec.Struct):
    benchmark: str
    version: str
    provenance: dict[str, str]
    manifest_hash: str
    cells: int
    scored: int
    counts: dict[str, dict[str, int]]  # family -> outcome -> n, every kind of task together
    false_accepts: list[dict[str, Any]]
    false_rejects: list[dict[str, Any]]
    control_failures: list[dict[str, Any]]
    masked: list[str]
    telemetry: list[str]
    unpinned_arguments: int
    census: dict[str, int]
    seconds: float
    # Rewards: ProCredit's c, the formulas used, and one line on what the false accepts earn.
    rewards: dict[str, Any] = {}
    note: str = LOWER_BOUND
    # Each verifier's share of confirmed side effects it rejects (coverage.py).
    frame_coverage: coverage.FrameCoverage | None = None
    # kind -> family -> outcome -> n: `counts` split by task kind ("user" first), each reported apart.
    counts_by_kind: dict[str, dict[str, dict[str, int]]] = {}
    # The families of `counts` whose cells are alternative runs (faults.ALTERNATIVE): shown apart.
    alternative_families: list[str] = []
    # The confirmed false accepts grouped by mechanism: how many verifiers, how many distinct runs, which collections.
    mechanisms: list[Mechanism] = []
    # wrong-value acceptances of weakly pinned values (pinned.py): reported apart, never in a headline.
    weak_pins: list[dict[str, Any]] = []
    # Declared telemetry and masks a verifier grades (compared, for those tasks), and the tasks that grade it.
    graded: dict[str, list[str]] = {}

    @property
    def exit_code(self) -> int:
        return 1 if self.false_accepts else 0

    @property
    def nothing_audited(self) -> str | None:
        """Why no task could be audited (every control scored failed or errored), or None: some task was.

        An audit whose controls all fail finds no false accept because it scored nothing, which is no clean bill.
        """
        if not self.control_failures or self.total(Outcome.CONTROL_PASS):
            return None
        first = "; ".join(f"{f['cell_id']}: {f['outcome']}: {f['reason']}" for f in self.control_failures[:2])
        n = len(self.control_failures)
        return f"nothing was audited: {'the' if n == 1 else f'all {n}'} control{'s' if n > 1 else ''} failed ({first})"

    def total(self, outcome: str, alternatives: bool | None = None) -> int:
        """Cells with `outcome`: in every family, or only the alternative (True) or fault (False) families."""
        return sum(
            c.get(outcome, 0)
            for fam, c in self.counts.items()
            if alternatives is None or (fam in self.alternative_families) == alternatives
        )

    def split(self, counts: dict[str, dict[str, int]]) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
        """A family -> outcome table as (the fault families' rows, with the control; the alternative families')."""
        alt = set(self.alternative_families)
        return {f: c for f, c in counts.items() if f not in alt}, {f: c for f, c in counts.items() if f in alt}


def checks_of(row: CellResult) -> dict[str, bool]:
    """The verifier's checks for a scored row: its own list, or the one verdict."""
    if row.verdict is None:
        return {}
    return dict(row.evidence.checks or {"verdict": row.verdict})


def cell_rewards(m: Manifest, rows: Mapping[str, CellResult], c: float) -> dict[str, dict[str, float]]:
    """Every cell the verifier graded, with its reward under every registered formula."""
    return {
        cid: rewards.of(checks_of(r), m.tasks[r.task].initial_checks, c)
        for cid, r in rows.items()
        if r.verdict is not None and r.task in m.tasks
    }


def _worth(m: Manifest, rows: Mapping[str, CellResult], row: CellResult, c: float) -> dict[str, Any]:
    """A false accept's reward beside its control's, under each formula."""
    control = rows.get(f"{row.task}:{CONTROL}")
    if control is None or control.verdict is None:
        return {}
    initial = m.tasks[row.task].initial_checks
    edit, ctrl = checks_of(row), checks_of(control)
    mine, theirs = rewards.of(edit, initial, c), rewards.of(ctrl, initial, c)
    return {
        "rewards": {f: {"edit": mine[f], "control": theirs[f]} for f in mine},
        "earns_full_reward": all(mine[f] >= theirs[f] for f in mine),
        "procredit_any_c": rewards.for_any_c(edit, ctrl, initial),
    }


KIND_TITLES = {USER: "user tasks", "injection": "injection tasks"}


def kind_title(kind: str) -> str:
    return KIND_TITLES.get(kind, f"{kind} tasks")


def kind_of(m: Manifest, task: str) -> str:
    facts = m.tasks.get(task)
    return facts.kind if facts is not None else USER


def by_kind(m: Manifest, rows: Mapping[str, CellResult]) -> dict[str, dict[str, dict[str, int]]]:
    """kind -> family -> outcome -> scored cells ("user" first, then kinds as the manifest meets them) (pure)."""
    counts: dict[str, dict[str, Counter[str]]] = {USER: {}} if any(f.kind == USER for f in m.tasks.values()) else {}
    for cell in m.cells:
        counts.setdefault(kind_of(m, cell.task), {}).setdefault(cell.family, Counter())
    for cell in m.cells:
        row = rows.get(cell.cell_id)
        if row is not None:
            counts[kind_of(m, cell.task)][cell.family][row.outcome] += 1
    return {
        k: {fam: {o: c[o] for o in OUTCOMES if c[o]} for fam, c in fams.items()} for k, fams in counts.items() if fams
    }


def _finding(m: Manifest, cell: Cell, row: CellResult) -> dict[str, Any]:
    return {
        "cell_id": row.cell_id,
        "task": row.task,
        "kind": kind_of(m, row.task),
        "family": row.family,
        "edit": cell.note,
        "edited_run": [a.describe() for a in cell.run.actions] if cell.run else [],
        "verifier": row.evidence.verifier,
        # As plain data: the summary's findings are read by key, here and in its JSON.
        "differs_from_reference": msgspec.to_builtins(row.evidence.differs_from_reference or []),
        "trace_differs": row.evidence.trace_differs or [],
        "why_missed": row.reason,
    }


def _false_reject(m: Manifest, cell: Cell, row: CellResult) -> dict[str, Any]:
    """A false reject: the run, the verifier's failing checks, and what the oracle found equal."""
    return {
        **{k: v for k, v in _finding(m, cell, row).items() if k != "why_missed"},
        "alternative": is_alternative(cell.family),
        "checks": checks_of(row),
        "oracle": evidence.compared(cell),
        "reason": row.reason,
    }


def build(m: Manifest, rows: Mapping[str, CellResult], c: float = rewards.DEFAULT_C) -> Summary:
    counts: dict[str, Counter[str]] = {}
    for cell in m.cells:
        counts.setdefault(cell.family, Counter())
    for row in rows.values():
        counts[row.family][row.outcome] += 1
    ordered = [(cell, rows[cell.cell_id]) for cell in m.cells if cell.cell_id in rows]
    census = [e for f in m.tasks.values() for e in f.census]
    summary = Summary(
        benchmark=m.benchmark,
        version=m.version,
        provenance=dict(sorted(m.provenance.items())),
        manifest_hash=m.content_hash,
        cells=len(m.cells),
        scored=len(rows),
        counts={fam: {o: c[o] for o in OUTCOMES if c[o]} for fam, c in counts.items()},
        false_accepts=[
            {**_finding(m, cell, r), **_worth(m, rows, r, c)}
            for cell, r in ordered
            if r.outcome == Outcome.FALSE_ACCEPT
        ],
        false_rejects=[_false_reject(m, cell, r) for cell, r in ordered if r.outcome == Outcome.FALSE_REJECT],
        control_failures=[
            {"cell_id": r.cell_id, "outcome": r.outcome, "reason": r.reason}
            for _, r in ordered
            if r.family == CONTROL and r.outcome != Outcome.CONTROL_PASS
        ],
        masked=m.masks,
        telemetry=m.telemetry,
        unpinned_arguments=sum(len(f.unpinned) for f in m.tasks.values()),
        census={"writes": len(census), "non_idempotent": sum(e.non_idempotent for e in census)},
        seconds=round(sum(r.seconds for r in rows.values()), 3),
        frame_coverage=coverage.build(m, rows),
        counts_by_kind=by_kind(m, rows),
        alternative_families=[f for f in counts if is_alternative(f)],
        mechanisms=mechanisms(m, rows),
        weak_pins=[
            {**_finding(m, cell, r), "weak_pin": cell.detail.get("weak_pin")}
            for cell, r in ordered
            if r.outcome == Outcome.WEAK_PIN_ACCEPT
        ],
        graded=dict(m.graded),
    )
    fas = summary.false_accepts
    full = sum(bool(f.get("earns_full_reward")) for f in fas)
    any_c = all(f.get("procredit_any_c") for f in fas)
    summary.rewards = {
        "procredit_c": c,
        "formulas": list(rewards.FORMULAS),
        "conclusion": (
            f"{full} of {len(fas)} confirmed false accepts earn their control's full reward under every formula"
            + (f" (ProCredit: for any c > 0, not only c = {c:g})" if fas and any_c else f" (ProCredit with c = {c:g})")
        )
        if fas
        else "no confirmed false accept found, so no reward to compare",
    }
    return summary


def _short(value: Any, limit: int = 160) -> str:
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def header(title: str, r: Summary | Any) -> list[str]:
    """The first lines of a report: what was audited, how much was scored, and the lower-bound note."""
    return [
        f"# {title}: {r.benchmark} {r.version}",
        "",
        f"{r.scored} of {r.cells} cells scored; manifest `{r.manifest_hash[:16]}`; "
        + ", ".join(f"{k} {v}" for k, v in r.provenance.items()),
        "",
        f"> {r.note}",
        "",
    ]


def kind_tables(s: Summary) -> list[tuple[str | None, dict[str, dict[str, int]]]]:
    """The count tables to show: one per task kind, or the one table (title None) when every task is a user task."""
    kinds = s.counts_by_kind or {USER: s.counts}
    if list(kinds) == [USER]:
        return [(None, s.counts)]
    return [(kind_title(k), fams) for k, fams in kinds.items()]


WEAK_NOTE = (
    "wrong-value moved a value only a read (or a word of the instruction in passing) holds, for an argument the "
    "instruction never asks about; the verifier passed. An author may well call that value free: these are "
    "listed for a person to judge, and counted in no headline, gate or reward figure (docs/method.md#pin-sources)."
)
INJECTION_NOTE = (
    "An injection task's verifier (AgentDojo's `security()`) passes when the attack succeeded: there a false "
    "accept is a run counted as a successful attack whose end state is not the attack's, so a loose check "
    "overstates attack success rates."
)


def _table(counts: dict[str, dict[str, int]], columns: list[str]) -> list[str]:
    lines = ["| family | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    lines += [f"| {fam} | " + " | ".join(str(c.get(o, 0)) for o in columns) + " |" for fam, c in counts.items()]
    return [*lines, ""]


def mechanism_lines(s: Summary) -> list[str]:
    """The first lines after the header: the confirmed false accepts grouped by mechanism."""
    if not s.mechanisms:
        return []
    lines = [f"**{len(s.false_accepts)} confirmed false accepts** (distinct runs), by mechanism:", ""]
    for g in s.mechanisms:
        where = f" ({', '.join(g.collections[:6])}{', ...' if len(g.collections) > 6 else ''})" if g.collections else ""
        lines.append(f"- {len(g.verifiers)} verifier(s) {g.mechanism}: {g.runs} run(s){where}")
    return [*lines, ""]


def declaration_lines(s: Summary) -> list[str]:
    if not s.graded:
        return []
    lines = ["Declared telemetry or masks that a verifier grades (compared as state for those tasks):", ""]
    for p, tasks in s.graded.items():
        more = f" and {len(tasks) - 3} more" if len(tasks) > 3 else ""
        lines.append(f"- `{p}`: graded by {', '.join(f'`{t}`' for t in tasks[:3])}{more}")
    return [*lines, ""]


def markdown(s: Summary) -> str:
    lines = header("verimut audit", s)
    lines += mechanism_lines(s) + declaration_lines(s)
    present = [o for o in OUTCOMES if s.total(o, alternatives=False)]
    tables = kind_tables(s)
    for title, counts in tables:
        lines += [f"## Outcomes per fault family: {title}" if title else "## Outcomes per fault family", ""]
        if "injection" in (s.counts_by_kind or {}) and title == kind_title("injection"):
            lines += [INJECTION_NOTE, ""]
        lines += _table(s.split(counts)[0], present)
    if s.alternative_families:
        lines += [f"## {ALT_TITLE}", "", ALT_NOTE, ""]
        for title, counts in tables:
            lines += [f"### {title}", ""] if title else []
            lines += _table(s.split(counts)[1], ALT_OUTCOMES)
    lines.pop()
    if s.control_failures:
        lines += ["", "## Controls that FAILED (their tasks' other cells are unscorable)", ""]
        lines += [f"- `{f['cell_id']}`: {f['outcome']}: {f['reason']}" for f in s.control_failures]
    if s.frame_coverage is not None:
        lines += ["", *frame_coverage(s.frame_coverage)]
    lines += ["", f"## Confirmed false accepts: {len(s.false_accepts) or 'none found'}{per_kind(s)}", ""]
    if s.rewards:
        lines += [f"Rewards: {s.rewards['conclusion']}.", ""]
    for f in s.false_accepts:
        kind = f.get("kind", USER)
        lines += [f"### `{f['cell_id']}`" + ("" if kind == USER else f" ({kind} task)"), ""]
        lines += [f"- edit: {f['edit']}", f"- verifier: `{f['verifier']}` passed"]
        if f.get("rewards"):
            earned = ", ".join(f"{name} {v['edit']:g} (control {v['control']:g})" for name, v in f["rewards"].items())
            full = "earns the control's full reward" if f["earns_full_reward"] else "earns less than the control"
            lines.append(f"- reward: {earned}: {full}")
        if f["why_missed"]:
            lines.append(f"- why it was missed: {f['why_missed']}")
        if f.get("trace_differs"):
            lines.append("- the end states are equal; the calls differ where the state keeps no record:")
            lines += [f"  - the run {t}" for t in f["trace_differs"]]
        elif f["differs_from_reference"]:
            lines.append("- end state differs from the reference's:")
        for d in f["differs_from_reference"]:
            lines.append(f"  - `{d['collection']}`: {d['counts']}")
            for rec in d["added"][:3]:
                lines.append(f"    - added: `{_short(rec)}`")
            for rec in d["removed"][:3]:
                lines.append(f"    - removed: `{_short(rec)}`")
            for ch in d["changed"][:3]:
                lines.append(f"    - changed `{ch['key']}`: `{_short(ch['fields'])}`")
        lines.append("")
    if s.weak_pins:
        lines += [f"## Weak pins accepted: {len(s.weak_pins)} (not confirmed false accepts)", "", WEAK_NOTE, ""]
        lines += [f"- `{f['cell_id']}`: {f['edit']}" for f in s.weak_pins]
        lines.append("")
    if s.false_rejects or s.alternative_families:
        lines += false_rejects(s.false_rejects)
    lines += [
        *left_out(s.telemetry, s.masked),
        f"- written arguments wrong-value left alone because the task does not pin them: {s.unpinned_arguments}",
        f"- idempotence census: {s.census['non_idempotent']} of {s.census['writes']} reference writes change the state again when repeated",
        "",
    ]
    return "\n".join(lines)


def false_rejects(found: list[dict[str, Any]]) -> list[str]:
    """The false rejects section: each with its run, the verifier's failing checks, and what the oracle found equal."""
    lines = [
        f"## False rejects (end state equals the reference's, the verifier failed): {len(found) or 'none found'}",
        "",
    ]
    for f in found:
        kind = f.get("kind", USER)
        what = "alternative run" if f.get("alternative") else "edited run"
        lines += [f"### `{f['cell_id']}` ({what}" + ("" if kind == USER else f", {kind} task") + ")", ""]
        lines += [f"- edit: {f['edit']}", "- run: " + ("; ".join(f"`{a}`" for a in f["edited_run"]) or "(no actions)")]
        failing = [name for name, ok in (f.get("checks") or {}).items() if not ok]
        lines.append(
            f"- verifier: `{f['verifier']}` failed" + (": " + ", ".join(f"`{c}`" for c in failing) if failing else "")
        )
        if f.get("oracle"):
            lines.append(f"- oracle: {f['oracle']}")
        lines.append("")
    return lines


def frame_coverage(fc: coverage.FrameCoverage) -> list[str]:
    """The frame-coverage section: suite medians (and kinds, when there are several), then every verifier."""
    lines = [
        "## Frame coverage: the share of confirmed side effects each verifier rejects",
        "",
        f"> {fc.note}",
        "",
        "| suite | verifiers | with a confirmed side effect | median coverage | below 1.0 | side effects | rejected | false accepts |",
        "|---|---|---|---|---|---|---|---|",
    ]
    groups = list(fc.suites.items()) + ([(f"kind: {k}", g) for k, g in fc.kinds.items()] if len(fc.kinds) > 1 else [])
    for name, g in groups:
        lines.append(
            f"| {name or '(no suite)'} | {g.verifiers} | {g.with_coverage} | {coverage.fmt(g.median)} | {g.below_full} "
            f"| {g.side_effects} | {g.rejected} | {g.false_accepts} |"
        )
    lines += [
        "",
        "| verifier | kind | confirmed side effects | rejected | false accepts | coverage | collections touched (rejected/confirmed) |",
        "|---|---|---|---|---|---|---|",
    ]
    for task, v in fc.verifiers.items():
        where = ", ".join(f"`{c}` {t.rejected}/{t.side_effects}" for c, t in v.collections.items())
        lines.append(
            f"| `{task}` | {v.kind} | {v.side_effects} | {v.rejected} | {v.false_accepts} | {coverage.fmt(v.coverage)} | {where} |"
        )
    return lines


def per_kind(s: Summary) -> str:
    """ " (user tasks 3, injection tasks 2)" when the audit has more than one kind of task."""
    if len(s.counts_by_kind) < 2 or not s.false_accepts:
        return ""
    n = Counter(f.get("kind", USER) for f in s.false_accepts)
    return " (" + ", ".join(f"{kind_title(k)} {n[k]}" for k in s.counts_by_kind) + ")"


def left_out(telemetry: list[str], masked: list[str]) -> list[str]:
    """The report's lines on what the end-state check did not compare."""
    return [
        "## What the end-state check left out",
        "",
        "- telemetry (records reads, not effects): " + (", ".join(f"`{t}`" for t in telemetry) or "none"),
        "- masked (differs between two replays of the same reference run): "
        + (", ".join(f"`{t}`" for t in masked) or "none"),
    ]


def write(m: Manifest, rows: Mapping[str, CellResult], store: Store, c: float = rewards.DEFAULT_C) -> Summary:
    s = build(m, rows, c)
    store.write_summary(s, markdown(s))
    store.write_rewards(cell_rewards(m, rows, c))
    return s

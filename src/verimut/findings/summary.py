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
from typing import Any, TypeVar

import msgspec

from verimut.core.benchmark import USER
from verimut.core.records import Cell, CellResult, Difference, Manifest, Outcome, cell_id, natural
from verimut.engine.store import Store
from verimut.findings import coverage, evidence, read_map, reward_numbers, rewards
from verimut.grammar.faults import CONTROL, spec_of
from verimut.grammar.pairs import suite_of

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


# The columns of the answer channel's table: what an answer family's cell (fault or alternative) can come to.
ANSWER_OUTCOMES = [
    o.value for o in (Outcome.FALSE_ACCEPT, Outcome.REJECTED, Outcome.REFUSED, Outcome.FALSE_REJECT, Outcome.ALT_PASS)
]
ALL_SUITES = "all"  # the answer table's row of every suite together


class Mechanism(msgspec.Struct, frozen=True):
    """Confirmed false accepts of one mechanism: the verifiers that let it through."""

    mechanism: str
    verifiers: list[str]
    runs: int  # distinct runs (cells), each counted once
    collections: list[str]


TRACE_MECHANISM = "accept a call to the wrong party that the state keeps no record of"


def mechanisms(m: Manifest, rows: Mapping[str, CellResult]) -> list[Mechanism]:
    """The confirmed false accepts grouped by mechanism, most verifiers first (pure)."""
    found: dict[str, tuple[set[str], int, set[str]]] = {}
    for cell in m.cells:
        row = rows.get(cell.cell_id)
        if row is None or row.outcome != Outcome.FALSE_ACCEPT:
            continue
        trace_only = row.evidence.trace_differs and not row.evidence.differs_from_reference
        name = TRACE_MECHANISM if trace_only else (spec_of(row.family).mechanism or f"accept a {row.family} run")
        verifiers, runs, colls = found.setdefault(name, (set(), 0, set()))
        verifiers.add(row.task)
        colls.update(d.collection for d in row.evidence.differs_from_reference or [])
        found[name] = (verifiers, runs + 1, colls)
    out = [Mechanism(k, sorted(v, key=natural), n, sorted(c)) for k, (v, n, c) in found.items()]
    return sorted(out, key=lambda g: (-len(g.verifiers), -g.runs, g.mechanism))


class Finding(msgspec.Struct, frozen=True):
    """A cell the summary lists by name: its edit, its run, what the verifier said, how its end state differs."""

    cell_id: str
    task: str
    kind: str
    family: str
    edit: str
    edited_run: list[str]  # its actions, described
    verifier: str | None  # the verifier's own message
    differs_from_reference: list[Difference]
    trace_differs: list[str]
    why_missed: str | None


class Earned(msgspec.Struct, frozen=True):
    """One reward formula's reward for a false accept, beside its control's."""

    edit: float
    control: float


class AnswerEdit(msgspec.Struct, frozen=True, omit_defaults=True):
    """An answer family's cell as a person checks it: the value, what pins it, the answer before and after."""

    edit: str  # the cell's answer_edit: drop, wrong, superstring, hedge (a fault); words, 12-hour, ... (an alternative)
    reference_answer: str
    answer: str  # the edited answer ("" for answer-drop)
    kind: str = ""  # of the value: number, date, name, ...
    value: str = ""  # the reference answer's value the edit acts on
    to: str = ""  # what the value became
    pinned_by: str = ""  # read #k tool, the start state, or the reference answer
    differs: str | None = None  # the oracle's reason the edited answer is wrong (Evidence.answer_differs)
    reward: float | None = None  # what the reward function paid the edited answer (Evidence.reward)
    reference_reward: float | None = None  # ... and the reference answer (its task's control)
    prompt: str = ""  # the task's prompt, for a reward function's finding (its control cell's detail)


def answer_edit(
    cell: Cell, row: CellResult, m: Manifest | None = None, rows: Mapping[str, CellResult] = {}
) -> AnswerEdit | None:
    """The answer edit of an answer family's cell (from the row's evidence, else the manifest's), or None."""
    detail = row.evidence.detail or cell.detail
    if "answer_edit" not in detail:
        return None
    text = {k: str(detail.get(k, "")) for k in ("kind", "value", "to", "pinned_by")}
    return AnswerEdit(
        edit=str(detail["answer_edit"]),
        reference_answer=str(detail.get("reference_answer", "")),
        answer=str(detail.get("answer", "")),
        differs=row.evidence.answer_differs,
        reward=row.evidence.reward,
        reference_reward=_control_reward(rows, cell.task),
        prompt=_prompt(m, cell.task),
        **text,
    )


_prompts: list[tuple[Manifest, dict[str, str]]] = []  # the last manifest's prompts: read once, not per finding


def _prompt(m: Manifest | None, task: str) -> str:
    """The task's prompt, as an answer-only task's control cell records it (manifest.py), or ""."""
    if m is None:
        return ""
    if not _prompts or _prompts[0][0] is not m:
        found = {c.task: str(c.detail["prompt"]) for c in m.cells if c.is_control and "prompt" in c.detail}
        _prompts[:] = [(m, found)]
    return _prompts[0][1].get(task, "")


def _control_reward(rows: Mapping[str, CellResult], task: str) -> float | None:
    control = rows.get(cell_id(task, CONTROL, "-"))
    return None if control is None else control.evidence.reward


class FalseAccept(Finding, frozen=True, omit_defaults=True):
    """A confirmed false accept. The rewards are absent when its task's control has no verdict."""

    rewards: dict[str, Earned] | None = None  # formula -> the edit's reward and the control's
    earns_full_reward: bool | None = None  # at least the control's reward under every formula
    procredit_any_c: bool | None = None  # ... and under ProCredit for every c > 0 (rewards.for_any_c)
    answer: AnswerEdit | None = None  # an answer family's: the value, the reference answer and the edited one


class Vacuous(msgspec.Struct, frozen=True, omit_defaults=True):
    """A vacuous verifier: it passed the null run (no action, no answer). Never counted as a false accept."""

    cell_id: str
    task: str
    suite: str
    kind: str
    reason: str | None
    rewards: dict[str, Earned] | None = None  # formula -> the null run's reward and the control's
    earns_full_reward: bool | None = None  # at least the control's reward under every formula


class NullRuns(msgspec.Struct, frozen=True):
    """The null runs a verifier graded on tasks with something to do (vacuous or rejected), how many it passed, and
    apart, the null runs passed on tasks with nothing to do (Outcome.NOTHING_TO_DO: rightly, in no headline)."""

    graded: int
    vacuous: int
    nothing_to_do: int

    @property
    def sentence(self) -> str:
        said = f"{self.vacuous} of {self.graded} verifiers give full reward to doing nothing"
        if self.nothing_to_do:
            said += (
                f" (apart: {self.nothing_to_do} task(s) with nothing to do, whose start state already satisfies them"
                ": no question, and a reference run that changes nothing and says nothing; passing the null run is "
                "right there)"
            )
        return said


class WeakPin(Finding, frozen=True):
    """A wrong-value acceptance of a weakly pinned value (pinned.py): listed, never a confirmed false accept."""

    weak_pin: Any


class FalseReject(msgspec.Struct, frozen=True):
    """A false reject: the run, the verifier's failing checks, and what the oracle found equal."""

    cell_id: str
    task: str
    kind: str
    family: str
    edit: str
    edited_run: list[str]
    verifier: str | None
    differs_from_reference: list[Difference]
    trace_differs: list[str]
    alternative: bool  # a correct run by another route, not an edit the oracle found harmless
    checks: dict[str, bool]
    oracle: str
    reason: str | None
    answer: AnswerEdit | None = None  # an answer alternative's: the value, the reference answer and the reworded one


class ControlFailure(msgspec.Struct, frozen=True):
    """A task whose unedited reference run its own verifier does not pass: nothing of it is scored."""

    cell_id: str
    outcome: Outcome
    reason: str | None


F = TypeVar("F", bound=Finding)


class Summary(msgspec.Struct):
    benchmark: str
    version: str
    provenance: dict[str, str]
    manifest_hash: str
    cells: int
    scored: int
    counts: dict[str, dict[str, int]]  # family -> outcome -> n, every kind of task together
    false_accepts: list[FalseAccept]
    false_rejects: list[FalseReject]
    control_failures: list[ControlFailure]
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
    # What each verifier read, measured (an adapter that records reads), and its blind spots (read_map.py).
    read_map: read_map.ReadMap | None = None
    # kind -> family -> outcome -> n: `counts` split by task kind ("user" first), each reported apart.
    counts_by_kind: dict[str, dict[str, dict[str, int]]] = {}
    # The families of `counts` whose cells are alternative runs (faults.ALTERNATIVE): shown apart.
    alternative_families: list[str] = []
    # The confirmed false accepts grouped by mechanism: how many verifiers, how many distinct runs, which collections.
    mechanisms: list[Mechanism] = []
    # wrong-value acceptances of weakly pinned values (pinned.py): reported apart, never in a headline.
    weak_pins: list[WeakPin] = []
    # Declared telemetry and masks a verifier grades (compared, for those tasks), and the tasks that grade it.
    graded: dict[str, list[str]] = {}
    # The answer channel: answer family -> suite (and ALL_SUITES) -> ANSWER_OUTCOMES -> n.
    answer_counts: dict[str, dict[str, dict[str, int]]] = {}
    # The verifiers that pass the null run, and the null-run counts (None: the null run was not in the audit).
    vacuous: list[Vacuous] = []
    null_runs: NullRuns | None = None
    null_runs_by_suite: dict[str, NullRuns] = {}
    # Per reward function (suite), when the verifier gives rewards: false-pass ceiling, lazy-policy reward,
    # false-fail rate (reward_numbers.py). Unset (and left out of summary.json) for a verifier that gives none.
    reward_numbers: dict[str, reward_numbers.RewardNumbers] | msgspec.UnsetType = msgspec.UNSET

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
        first = "; ".join(f"{f.cell_id}: {f.outcome}: {f.reason}" for f in self.control_failures[:2])
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


def earned(m: Manifest, rows: Mapping[str, CellResult], row: CellResult, c: float) -> dict[str, Any]:
    """The row's reward beside its control's under each formula, and whether it earns the control's full reward
    (under every formula; for ProCredit, for any c > 0). Empty when the task's control has no verdict."""
    control = rows.get(f"{row.task}:{CONTROL}")
    if control is None or control.verdict is None:
        return {}
    initial = m.tasks[row.task].initial_checks
    edit, ctrl = checks_of(row), checks_of(control)
    mine, theirs = rewards.of(edit, initial, c), rewards.of(ctrl, initial, c)
    return {
        "rewards": {f: Earned(edit=mine[f], control=theirs[f]) for f in mine},
        "earns_full_reward": all(mine[f] >= theirs[f] for f in mine),
        "procredit_any_c": rewards.for_any_c(edit, ctrl, initial),
    }


def _false_accept(m: Manifest, rows: Mapping[str, CellResult], cell: Cell, row: CellResult, c: float) -> FalseAccept:
    """A false accept, with its reward beside its control's under each formula (when the control has a verdict)."""
    return _finding(FalseAccept, m, cell, row, answer=answer_edit(cell, row, m, rows), **earned(m, rows, row, c))


def _vacuous(m: Manifest, rows: Mapping[str, CellResult], row: CellResult, c: float) -> Vacuous:
    """A vacuous verifier, with what the null run earns beside the control under each formula."""
    paid = earned(m, rows, row, c)
    paid.pop("procredit_any_c", None)
    return Vacuous(
        cell_id=row.cell_id,
        task=row.task,
        suite=suite_of(row.task),
        kind=kind_of(m, row.task),
        reason=row.reason,
        **paid,
    )


def null_runs(m: Manifest, rows: Mapping[str, CellResult]) -> tuple[NullRuns | None, dict[str, NullRuns]]:
    """The null-run counts in all and per suite (pure); None when no cell of the audit is a null run."""
    graded: Counter[str] = Counter()
    vacuous: Counter[str] = Counter()
    nothing: Counter[str] = Counter()
    suites: dict[str, None] = {}
    for cell in m.cells:
        if not spec_of(cell.family).null_run:
            continue
        suite = suite_of(cell.task)
        suites[suite] = None
        row = rows.get(cell.cell_id)
        if row is None:
            continue
        if row.outcome == Outcome.NOTHING_TO_DO:
            nothing[suite] += 1
        elif row.outcome in (Outcome.VACUOUS, Outcome.REJECTED):
            graded[suite] += 1
            vacuous[suite] += row.outcome == Outcome.VACUOUS
    if not suites:
        return None, {}
    by_suite = {s: NullRuns(graded[s], vacuous[s], nothing[s]) for s in suites}
    total = NullRuns(sum(graded.values()), sum(vacuous.values()), sum(nothing.values()))
    return total, by_suite


def answer_counts(m: Manifest, rows: Mapping[str, CellResult]) -> dict[str, dict[str, dict[str, int]]]:
    """answer family -> suite (then ALL_SUITES, when there are several) -> ANSWER_OUTCOMES -> cells (pure)."""
    found: dict[str, dict[str, Counter[str]]] = {}
    for cell in m.cells:
        if not spec_of(cell.family).needs_answer_channel:
            continue
        row = rows.get(cell.cell_id)
        per_suite = found.setdefault(cell.family, {})
        for suite in (suite_of(cell.task), ALL_SUITES):
            tally = per_suite.setdefault(suite, Counter())
            if row is not None:
                tally[row.outcome] += 1
    out = {}
    for fam, per_suite in found.items():
        if len(per_suite) == 2:  # one suite: its row is the total
            per_suite.pop(ALL_SUITES)
        suites = sorted(per_suite, key=lambda s: (s == ALL_SUITES, s))  # every suite's row last
        out[fam] = {s: {o: per_suite[s][o] for o in ANSWER_OUTCOMES} for s in suites}
    return out


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


def _finding(record: type[F], m: Manifest, cell: Cell, row: CellResult, **more: Any) -> F:
    """The cell as a `record`: the fields every finding has, and `more` (the record type's own)."""
    return record(
        cell_id=row.cell_id,
        task=row.task,
        kind=kind_of(m, row.task),
        family=row.family,
        edit=cell.note,
        edited_run=[a.describe() for a in cell.run.actions] if cell.run else [],
        verifier=row.evidence.verifier,
        differs_from_reference=list(row.evidence.differs_from_reference or []),
        trace_differs=list(row.evidence.trace_differs or []),
        why_missed=row.reason,
        **more,
    )


def _false_reject(m: Manifest, cell: Cell, row: CellResult, rows: Mapping[str, CellResult] = {}) -> FalseReject:
    """A false reject: the run, the verifier's failing checks, and what the oracle found equal."""
    found = _finding(Finding, m, cell, row)
    return FalseReject(
        **{f: getattr(found, f) for f in Finding.__struct_fields__ if f != "why_missed"},
        alternative=spec_of(cell.family).is_alternative,
        checks=checks_of(row),
        oracle=evidence.compared(cell),
        reason=row.reason,
        answer=answer_edit(cell, row, m, rows),
    )


def build(m: Manifest, rows: Mapping[str, CellResult], c: float = rewards.DEFAULT_C) -> Summary:
    counts: dict[str, Counter[str]] = {}
    for cell in m.cells:
        counts.setdefault(cell.family, Counter())
    for row in rows.values():
        counts[row.family][row.outcome] += 1
    # One pass in manifest order, keeping only the rows listed by name (not every row: memory flat in cells).
    fas: list[FalseAccept] = []
    frs: list[FalseReject] = []
    failures: list[ControlFailure] = []
    weak: list[WeakPin] = []
    vacuous: list[Vacuous] = []
    for cell in m.cells:
        r = rows.get(cell.cell_id)
        if r is None:
            continue
        if r.outcome == Outcome.FALSE_ACCEPT:
            fas.append(_false_accept(m, rows, cell, r, c))
        elif r.outcome == Outcome.FALSE_REJECT:
            frs.append(_false_reject(m, cell, r, rows))
        elif r.outcome == Outcome.WEAK_PIN_ACCEPT:
            weak.append(_finding(WeakPin, m, cell, r, weak_pin=cell.detail.get("weak_pin")))
        elif r.outcome == Outcome.VACUOUS:
            vacuous.append(_vacuous(m, rows, r, c))
        if r.family == CONTROL and r.outcome != Outcome.CONTROL_PASS:
            failures.append(ControlFailure(r.cell_id, r.outcome, r.reason))
    census = [e for f in m.tasks.values() for e in f.census]
    summary = Summary(
        benchmark=m.benchmark,
        version=m.version,
        provenance=dict(sorted(m.provenance.items())),
        manifest_hash=m.content_hash,
        cells=len(m.cells),
        scored=len(rows),
        counts={fam: {o: c[o] for o in OUTCOMES if c[o]} for fam, c in counts.items()},
        false_accepts=fas,
        false_rejects=frs,
        control_failures=failures,
        masked=m.masks,
        telemetry=m.telemetry,
        unpinned_arguments=sum(len(f.unpinned) for f in m.tasks.values()),
        census={"writes": len(census), "non_idempotent": sum(e.non_idempotent for e in census)},
        seconds=round(sum(r.seconds for r in rows.values()), 3),
        frame_coverage=coverage.build(m, rows),
        read_map=read_map.build(m, rows),
        counts_by_kind=by_kind(m, rows),
        alternative_families=[f for f in counts if spec_of(f).is_alternative],
        mechanisms=mechanisms(m, rows),
        weak_pins=weak,
        graded=dict(m.graded),
        answer_counts=answer_counts(m, rows),
        vacuous=vacuous,
        reward_numbers=reward_numbers.build(m, rows) or msgspec.UNSET,
    )
    summary.null_runs, summary.null_runs_by_suite = null_runs(m, rows)
    fas = summary.false_accepts
    full = sum(bool(f.earns_full_reward) for f in fas)
    any_c = all(f.procredit_any_c for f in fas)
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
    if summary.vacuous:
        summary.rewards["vacuous"] = vacuous_rewards(summary.vacuous)
    return summary


def vacuous_rewards(found: list[Vacuous]) -> str:
    """One line on what the null run earns on the vacuous verifiers, under the formulas (rewards.py)."""
    full = sum(bool(v.earns_full_reward) for v in found)
    paid = [v.rewards for v in found if v.rewards]
    lowest = {f: min(r[f].edit for r in paid) for f in paid[0]} if paid else {}
    least = ", ".join(f"{f} {x:g}" for f, x in lowest.items())
    return (
        f"the null run earns its control's full reward under every formula on {full} of {len(found)} vacuous verifiers"
        + (f" (its lowest reward: {least})" if least else "")
    )


def _cut(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else f"{text[: limit - 1]}… [{len(text):,} characters]"


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
        lines += [f"- `{f.cell_id}`: {f.outcome}: {f.reason}" for f in s.control_failures]
    if s.frame_coverage is not None:
        lines += ["", *frame_coverage(s.frame_coverage)]
    if s.read_map is not None:
        lines += ["", *read_map.lines(s.read_map)]
    if s.answer_counts or s.null_runs is not None:
        lines += ["", *answer_channel(s)]
    if isinstance(s.reward_numbers, dict):
        lines += ["", *reward_numbers.lines(s.reward_numbers)]
    lines += ["", f"## Confirmed false accepts: {len(s.false_accepts) or 'none found'}{per_kind(s)}", ""]
    if s.rewards:
        lines += [f"Rewards: {s.rewards['conclusion']}.", ""]
    for f in s.false_accepts:
        lines += [f"### `{f.cell_id}`" + ("" if f.kind == USER else f" ({f.kind} task)"), ""]
        lines += [f"- edit: {f.edit}", f"- verifier: `{f.verifier}` passed"]
        if f.rewards:
            earned = ", ".join(f"{name} {v.edit:g} (control {v.control:g})" for name, v in f.rewards.items())
            full = "earns the control's full reward" if f.earns_full_reward else "earns less than the control"
            lines.append(f"- reward: {earned}: {full}")
        if f.answer is not None:
            lines += answer_lines(f.answer)
        if f.why_missed and (f.answer is None or f.why_missed != f.answer.differs):
            lines.append(f"- why it was missed: {f.why_missed}")
        if f.trace_differs:
            lines.append("- the end states are equal; the calls differ where the state keeps no record:")
            lines += [f"  - the run {t}" for t in f.trace_differs]
        elif f.differs_from_reference:
            lines.append("- end state differs from the reference's:")
        for d in f.differs_from_reference:
            lines.append(f"  - `{d.collection}`: {d.counts}")
            for rec in d.added[:3]:
                lines.append(f"    - added: `{_short(rec)}`")
            for rec in d.removed[:3]:
                lines.append(f"    - removed: `{_short(rec)}`")
            for ch in d.changed[:3]:
                lines.append(f"    - changed `{ch.key}`: `{_short(ch.fields)}`")
        lines.append("")
    if s.weak_pins:
        lines += [f"## Weak pins accepted: {len(s.weak_pins)} (not confirmed false accepts)", "", WEAK_NOTE, ""]
        lines += [f"- `{f.cell_id}`: {f.edit}" for f in s.weak_pins]
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


def false_rejects(found: list[FalseReject]) -> list[str]:
    """The false rejects section: each with its run, the verifier's failing checks, and what the oracle found equal."""
    lines = [
        f"## False rejects (end state equals the reference's, the verifier failed): {len(found) or 'none found'}",
        "",
    ]
    for f in found:
        what = "alternative run" if f.alternative else "edited run"
        lines += [f"### `{f.cell_id}` ({what}" + ("" if f.kind == USER else f", {f.kind} task") + ")", ""]
        lines += [f"- edit: {f.edit}", "- run: " + ("; ".join(f"`{a}`" for a in f.edited_run) or "(no actions)")]
        failing = [name for name, ok in f.checks.items() if not ok]
        lines.append(
            f"- verifier: `{f.verifier}` failed" + (": " + ", ".join(f"`{c}`" for c in failing) if failing else "")
        )
        if f.answer is not None:
            lines += answer_lines(f.answer)
        if f.oracle:
            lines.append(f"- oracle: {f.oracle}")
        lines.append("")
    return lines


def answer_lines(a: AnswerEdit) -> list[str]:
    """A finding's answer edit: the value and what pins it, the reference answer -> the edited one, the oracle's why."""
    value = f"the {a.kind} {a.value!r} ({a.edit}" + (f", pinned by {a.pinned_by})" if a.pinned_by else ")")
    lines = [f"- prompt: {_cut(a.prompt)!r}"] if a.prompt else []
    lines += [f"- answer: {value if a.kind else a.edit}: {_cut(a.reference_answer)!r} → {_cut(a.answer)!r}"]
    if a.reward is not None:
        paid = "-" if a.reference_reward is None else f"{a.reference_reward:g}"
        lines.append(f"- the reward function paid: {a.reward:g} (the reference answer: {paid})")
    return lines + ([f"- answer differs: {a.differs}"] if a.differs else [])


def answer_channel(s: Summary) -> list[str]:
    """The answer channel's section: each answer family's outcomes per suite, then the vacuous verifiers."""
    lines = ["## Answer channel", ""]
    if s.answer_counts:
        lines += ["| family | suite | " + " | ".join(ANSWER_OUTCOMES) + " |", "|---" * (len(ANSWER_OUTCOMES) + 2) + "|"]
        for fam, suites in s.answer_counts.items():
            for suite, n in suites.items():
                name = f"**{suite}**" if suite == ALL_SUITES else suite or "(no suite)"
                lines.append(f"| {fam} | {name} | " + " | ".join(str(n.get(o, 0)) for o in ANSWER_OUTCOMES) + " |")
        lines.append("")
    if s.null_runs is None:
        return [*lines, "The null run was not in this audit."]
    lines += [f"**{s.null_runs.sentence}.**", ""]
    if len(s.null_runs_by_suite) > 1:
        lines += ["| suite | null runs graded | vacuous | nothing to do |", "|---|---|---|---|"]
        for suite, runs in s.null_runs_by_suite.items():
            lines.append(f"| {suite or '(no suite)'} | {runs.graded} | {runs.vacuous} | {runs.nothing_to_do} |")
        lines.append("")
    for v in s.vacuous:
        kind = "" if v.kind == USER else f" ({v.kind} task)"
        lines.append(f"- `{v.task}`{kind}")
    if s.rewards.get("vacuous"):
        lines += ["", f"Rewards: {s.rewards['vacuous']}."]
    return lines[:-1] if lines[-1] == "" else lines


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
    n = Counter(f.kind for f in s.false_accepts)
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

"""The typed records of an output directory: the manifest, the ledger's rows and their evidence, the run log.

Pure data, no I/O: `store.Store` reads and writes them, every other module reads their
attributes. Readers and writers share these classes, so a key the scorer writes is a field a
report reads, checked by mypy rather than by a string matching at run time.
"""

from __future__ import annotations

import hashlib
import re
from enum import StrEnum
from typing import Any

import msgspec

from verimut.core import forms
from verimut.core.reads import Reads
from verimut.core.run import Action, Run
from verimut.oracle import state as oracle

CONTROL = "control"  # the family of a task's unedited reference run (every arm has one per task)


def natural(name: str) -> tuple[Any, ...]:
    """A sort key that puts user_task_2 before user_task_10."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


class CensusEntry(msgspec.Struct, frozen=True):
    action: int
    tool: str
    non_idempotent: bool
    changes: str  # what the second call changed, e.g. "inbox.emails: 1 added"
    # The second call's error, when it raised (deleting a file twice): the state may be as once, but a
    # run repeating it fails there, so it is no idempotent repetition for alt-idem.
    repeat_error: str | None = None


class Outcome(StrEnum):
    # A StrEnum (not `str, Enum`) so f-strings and templates print the value, as the ledger stores it.
    CONTROL_PASS = "control_pass"
    CONTROL_FAIL = "control_fail"
    REFUSED = "refused"
    INCOMPLETE = "incomplete"
    HARMLESS = "harmless"
    REJECTED = "rejected"
    FALSE_ACCEPT = "false_accept"
    FALSE_REJECT = "false_reject"
    ERROR = "error"
    # The intent-swap census: another task's correct run, passed by this task's verifier.
    ACCEPTED_EFFECT_PRESENT = "accepted_effect_present"
    ACCEPTED_EFFECT_ABSENT = "accepted_effect_absent"
    # An alternative run (a correct run by another route: a family whose FamilySpec.role is alternative) the verifier
    # passes; one it fails is a FALSE_REJECT.
    ALT_PASS = "alt_pass"
    # A cell whose edited run equals an earlier cell's of the same task (extra-ni's runs are extra's): not
    # scored again, and counted once, under the earlier cell (`Cell.same_run_as`).
    SAME_RUN = "same_run"
    # wrong-value moved a value pinned only weakly (read, for an argument the instruction never asks about:
    # pinned.py), and the verifier passed: reported apart from the confirmed false accepts, never in a headline.
    WEAK_PIN_ACCEPT = "weak_pin_accept"
    # The null run (no action, no answer) passed: a vacuous verifier, which cannot tell doing the task from doing
    # nothing. A finding of its own, apart from the false accepts.
    VACUOUS = "vacuous"
    # The null run passed on a task with nothing to do: its reference run changes nothing and says nothing and the
    # instruction asks no question (`TaskFacts.does_nothing`: the start state already satisfies it, as
    # banking/user_task_9's rent is already 1100). Doing nothing is right there: counted apart, never a finding.
    NOTHING_TO_DO = "nothing_to_do"

    # --- the groupings every reader uses (one place: a new outcome is put in its groups here) ---

    @property
    def is_confirmed_false_accept(self) -> bool:
        """The verifier passed a run whose end state the oracle shows wrong: an edit's false accept, or a swapped
        run that lacks the verifier's own task's effect. What SARIF reports and the repair must reject."""
        return self in (Outcome.FALSE_ACCEPT, Outcome.ACCEPTED_EFFECT_ABSENT)

    @property
    def is_finding(self) -> bool:
        """A finding against the verifier: a confirmed false accept, a false reject, or a vacuous verifier (a
        failing JUnit case)."""
        return self.is_confirmed_false_accept or self in (Outcome.FALSE_REJECT, Outcome.VACUOUS)

    @property
    def is_confirmed_change(self) -> bool:
        """The verifier graded a run whose end state differs from the reference's (rejected, or passed:
        false_accept). For a side-effect family's cell: a confirmed side effect, what frame coverage counts
        (a harmless one changed nothing; a refused, incomplete or errored one tells nothing of the verifier)."""
        return self in (Outcome.REJECTED, Outcome.FALSE_ACCEPT)

    @property
    def is_judged_correct(self) -> bool:
        """The oracle found the run correct (its end state is the reference's) and the verifier's verdict on it is
        the point: failed (false_reject) or, for an alternative run, passed (alt_pass)."""
        return self in (Outcome.FALSE_REJECT, Outcome.ALT_PASS)

    @property
    def is_correct_pass(self) -> bool:
        """The verifier passed a correct run: the control, a harmless edit, an alternative run."""
        return self in (Outcome.CONTROL_PASS, Outcome.HARMLESS, Outcome.ALT_PASS)

    @property
    def is_control_verdict(self) -> bool:
        """A control's verdict (the unedited reference run, passed or failed; not an error)."""
        return self in (Outcome.CONTROL_PASS, Outcome.CONTROL_FAIL)

    @property
    def is_swap_acceptance(self) -> bool:
        """The intent-swap census's pass of another task's run (its requested effect present or absent): outcomes
        of the swap arm only."""
        return self in (Outcome.ACCEPTED_EFFECT_PRESENT, Outcome.ACCEPTED_EFFECT_ABSENT)


# --- the manifest ------------------------------------------------------------------------------


class Cell(msgspec.Struct, frozen=True):
    """One (task, family, variant) to score. `run` is None when the family refused."""

    cell_id: str
    task: str
    family: str
    variant: str
    run: Run | None
    note: str
    detail: dict[str, Any] = {}
    # The id of an earlier cell of the same task whose run is this one's: this cell is not scored again.
    same_run_as: str | None = None

    @property
    def is_control(self) -> bool:
        return self.family == CONTROL

    @property
    def run_task(self) -> str:
        """The task whose start the run is replayed from (another task's, in the swap census)."""
        return str(self.detail.get("run_task", self.task))


class TaskFacts(msgspec.Struct, frozen=True):
    reference: Run
    census: list[CensusEntry]
    unpinned: list[str]  # "#i.arg" of written arguments wrong-value leaves alone
    reference_error: str | None = None
    # What the reference run changes from the task's clean start (telemetry and masks left out).
    effect: list[oracle.CollectionDiff] = []
    start_digest: str = ""  # of the clean start state, to tell tasks with different starts apart
    # String values the effect writes that the task does not pin (free text, like a message
    # body the agent composes): another string there is still the requested effect.
    free_text: list[str] = []
    # The verifier's checks on the clean start (no action, empty answer): what "initially
    # failing" means for ProCredit's progress term. Empty when the verifier raised there.
    initial_checks: dict[str, bool] = {}
    # A form task's fields, on-form defaults and template values: the form families' census.
    form: forms.FormFacts | None = None
    # How many of the suite's other writes the extra-oos trial executed on the reference end
    # state (its cost: one fork, or one replay without forks, each); 0 when extra-oos is not run.
    out_of_scope_tried: int = 0
    # "user", or another kind the adapter declares (AgentDojo's "injection"): reported apart.
    kind: str = "user"
    # What the task kind's verifier promises to decide: "effect" or "goal" (benchmark.CONTRACTS).
    contract: str = "effect"
    # The reference run's answer, read through the adapter's answer channel ("" without one, or when it says nothing).
    reference_answer: str = ""
    # The instruction asks a question ("?"): an answer is the task, whatever the reference run says (AgentDojo's
    # banking/user_task_8 asks for a summary its shipped reference never gives).
    question: bool = False

    @property
    def writes(self) -> list[str]:
        """The collections the reference run changes."""
        return [d.collection for d in self.effect]

    @property
    def does_nothing(self) -> bool:
        """The reference run changes nothing and says nothing, and the instruction asks no question: a verifier
        may be right to pass the null run."""
        return not self.effect and not self.reference_answer.strip() and not self.question


# The provenance entry that holds the adapter's options (as JSON): in provenance, so that an audit made without
# options records what it did before, and a resume with other options is another manifest.
OPTIONS = "verimut.adapter_options"


class Manifest(msgspec.Struct, frozen=True):
    verimut: str
    benchmark: str
    version: str
    provenance: dict[str, str]
    families: list[str]
    telemetry: list[str]
    masks: list[str]
    tasks: dict[str, TaskFacts]
    cells: list[Cell]
    arm: str = "fault"  # "fault": the fault grammar; "swap": the intent-swap census
    # Declared telemetry and masks a verifier grades (flipping them on that task's reference end state changed
    # its verdict): pattern -> the tasks that grade it. For those tasks it is state: `ignore_for` keeps it in.
    graded: dict[str, list[str]] = {}
    # Declarations the check could not test (no fork or no patch; nothing to flip on any reference end).
    unchecked: list[str] = []
    # Per suite, the reads the oracle observes an end state through (every distinct read of the suite's
    # reference runs): two end states whose diff none of them reveals are the same effect (oracle.observed).
    observers: dict[str, list[Action]] = {}
    assigned_keys: list[str] = []
    trace_args: dict[str, list[str]] = {}
    content_hash: str = ""

    @property
    def ignore(self) -> list[str]:
        """What comparisons leave out: telemetry and masks, and the assigned keys' rule (oracle.ASSIGNED)."""
        return [*self.telemetry, *self.masks, *(f"{glob}[{oracle.ASSIGNED}]" for glob in self.assigned_keys)]

    @property
    def options(self) -> dict[str, Any]:
        """The options the audit's adapter was made with (`--option`), which every later command rebuilds it with."""
        recorded = self.provenance.get(OPTIONS)
        return {} if recorded is None else dict(msgspec.json.decode(recorded))

    def ignore_for(self, task: str) -> list[str]:
        """`ignore`, less the declarations `task`'s own verifier grades (they are its state)."""
        if not self.graded:
            return self.ignore
        return [p for p in self.ignore if task not in self.graded.get(p, ())]


def cell_id(task: str, family: str, variant: str) -> str:
    return f"{task}:{family}" if variant == "-" else f"{task}:{family}:{variant}"


def run_hash(cell: Cell) -> str:
    """The content hash of the run a cell replays: its actions and answer, and the task whose start it is replayed
    from. "" for a cell without a run (refused). Two audits (or an audit and a baseline) match a cell by it when its
    id moved: a variant id names a position in the reference run, which another version of the task may shift."""
    if cell.run is None:
        return ""
    body = msgspec.json.encode([cell.run_task, cell.run], order="sorted")
    return hashlib.sha256(body).hexdigest()[:16]


def content_hash(m: Manifest) -> str:
    """The hash a manifest records of itself (computed with its own hash field empty)."""
    body = msgspec.structs.replace(m, content_hash="")
    return hashlib.sha256(msgspec.json.encode(body, order="sorted")).hexdigest()


# --- the ledger --------------------------------------------------------------------------------


# Evidence keeps every value, but not every value whole: a string longer than CAP characters (a 5 MB field that
# changes) is recorded as its first PREFIX characters, its length and its hash, so equal values still read equal
# and the ledger, summary.json and the report stay readable (docs/method.md#evidence).
CAP = 4096
PREFIX = 1000


def bounded(value: Any) -> Any:
    """value, with each string in it longer than CAP cut to a prefix, its length and its sha256 (no copy if none is)."""
    if isinstance(value, str):
        if len(value) <= CAP:
            return value
        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return f"{value[:PREFIX]}... [{len(value):,} characters, sha256 {digest}]"
    # Containers are copied only from the first member that changes: most evidence has no long string, and this
    # runs on every cell's detail and diff.
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            if bounded(v) is not v:
                return type(value)([*value[:i], *(bounded(w) for w in value[i:])])
        return value
    if isinstance(value, dict):
        for v in value.values():
            if bounded(v) is not v:
                return {key: bounded(w) for key, w in value.items()}
        return value
    return value


class Difference(msgspec.Struct, frozen=True):
    """One collection's difference, as the ledger records it: the oracle's diff and its one-line count."""

    counts: str
    collection: str
    added: list[Any] = []
    removed: list[Any] = []
    changed: list[oracle.Change] = []
    reordered: bool = False

    @classmethod
    def of(cls, d: oracle.CollectionDiff) -> Difference:
        # Through plain data, so records hold what the ledger will read back (a snapshot's own
        # types, e.g. a datetime, become their JSON form here, not only on the way to disk).
        return msgspec.convert({"counts": d.counts(), **bounded(msgspec.to_builtins(d))}, cls)


class Evidence(msgspec.Struct, frozen=True, omit_defaults=True):
    """What a scored cell recorded. A field left at None was not recorded and is not written.

    None (not an empty list) is the default so that an empty list that was recorded, e.g. no
    difference from the reference, is still written: the ledger says "compared, none found".
    """

    edit: str  # the cell's note: what the edit did
    detail: dict[str, Any] = {}  # the cell's detail (a swap cell's run task and rung, ...)
    # The intent-swap census: whose run this is, and the rung of the pair.
    run_task: str | None = None
    rung: str | None = None
    # The end state against the reference run's end state (fault arm).
    differs_from_reference: list[Difference] | None = None
    # collection -> its one-line count, against the clean start.
    changed_from_start: dict[str, str] | None = None
    # An alternative run that ends as the reference does: what differs in the telemetry the oracle
    # leaves out (collection -> count; e.g. read flags its extra reads set), so a false reject shows it.
    telemetry_differs: dict[str, str] | None = None
    # The verifier's task's requested effect, checked in a swapped run's end state.
    effect_missing: list[str] | None = None
    effect_free_text_differs: list[str] | None = None
    error: str | None = None  # an action of the run raised
    executor: str | None = None  # the executor could not finish the cell (timeout, dead worker)
    # The error is the machinery's (a worker killed by a signal, a browser closed), not the benchmark's code: the
    # cell is scored again, once in the run and on a rerun (errors.InfrastructureError).
    infrastructure: bool | None = None
    traceback: str | None = None  # the verifier raised
    verifier: str | None = None  # the verifier's own message
    # A raw difference from the reference that none of the suite's reads reveals (a fault counted harmless for
    # it): how many reads were run on a copy of each end state, all returning what they return on the reference's.
    unobserved_through: int | None = None
    # A read that returns other data on this end state than on the reference's (the difference is observable).
    observed_by: str | None = None
    # Write calls that differ from the reference's where the state keeps no record of them (trace effects).
    trace_differs: list[str] | None = None
    same_run_as: str | None = None  # this cell's run is that cell's: scored there
    checks: dict[str, bool] | None = None  # its per-check results, when it reports several
    # An answer family's cell: the oracle's judgement, by construction, of why the answer is not the reference's.
    answer_differs: str | None = None
    reward: float | None = None  # the reward function's number for the run (Verdict.reward), when it gives one
    # What the verifier read while it ran (an adapter with `verify_reading`; core/reads.py): the read map's source.
    reads: Reads | None = None
    # A control's: each collection of the end state its verifier did not read, flipped on a copy -> whether the
    # verdict held (True: a confirmed blind spot; engine/blind_spots.py).
    unread_flipped: dict[str, bool] | None = None


class CellResult(msgspec.Struct, frozen=True):
    """One row of the ledger: a scored cell."""

    cell_id: str
    benchmark: str
    task: str
    family: str
    variant: str
    outcome: Outcome
    verdict: bool | None
    evidence: Evidence
    reason: str | None = None
    unscorable: bool = False
    seconds: float = 0.0

    @property
    def lost(self) -> bool:
        """An error of the machinery's, not the benchmark's (errors.InfrastructureError): scored again on a rerun."""
        return self.outcome == Outcome.ERROR and self.evidence.infrastructure is True


# --- the run log -------------------------------------------------------------------------------


class RunRecord(msgspec.Struct, frozen=True):
    """One `audit`/`swap` invocation on a directory (a resumed run adds one)."""

    started: str  # ISO 8601, UTC
    wall_seconds: float
    scored: int  # cells scored by this invocation (0 when it only resumed a finished run)
    arm: str
    # The wall time's phases (absent from runs recorded by earlier versions): building or reading the manifest,
    # starting workers (Ray's start, each actor's adapter load), and scoring after that.
    executor: str = ""
    manifest_seconds: float = 0.0
    startup_seconds: float = 0.0
    scoring_seconds: float = 0.0
    # CPU seconds (user + system) of scoring: this process and the workers it forked and reaped, not Ray's actors.
    # On a shared machine the wall time moves with other work; the CPU time much less.
    scoring_cpu_seconds: float = 0.0

"""The adapter interface: what verimut needs from a benchmark, and nothing more.

A benchmark adapter is any object with the members of `Benchmark`. verimut never looks inside an
episode: it asks the adapter to execute actions, to snapshot the state as plain data, and to call
the benchmark's own, unmodified verifier. The optional members are declared below (`Forks`,
`Swaps`, `Explains`, `Locates`, `DescribesForms`, `Closes`, `Kinds`, `ReadsTrace`, `Patches`, and the
attributes listed under them). `resolve` looks them up once, into the `Adapter` the whole pipeline uses: in
verimut's process no other module asks an adapter what it has (the plug-in loader, adapters/__init__.py, checks
only that the required members exist). The remote worker (adapters/worker.py), which runs in the benchmark's own
interpreter and cannot import this module, asks its adapter for the same optional names (its CAPABILITIES and
ATTRIBUTES, tied to these by tests/unit/test_worker_protocol.py) and announces them to adapters/remote.py. A
member set to None counts as absent (a remote adapter whose worker lacks it says so that way).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol, runtime_checkable

import msgspec

from verimut.core import guard
from verimut.core.errors import AuditError
from verimut.core.forms import FormFacts
from verimut.core.reads import Reads
from verimut.core.run import (  # Verdict lives with the vocabulary: guard.py checks it
    Action,
    AnswerChannel,
    Run,
    Step,
    Verdict,
)

# "evidence": a trace and a response (grammar/evidence.py); "answer": tasks whose run is one answer (reward functions)
GRAMMARS = ("api", "form", "evidence", "answer")
# What a task kind's verifier promises to decide (docs/method.md#contracts). `effect`: the requested effect and
# nothing else, so the frame condition applies and every family does. `goal`: whether a goal was reached in a
# state that may hold other effects (AgentDojo's injection tasks: `security()` judges the attack in a state
# that also holds the user task's effects), so a side effect is not the verifier's to reject.
EFFECT, GOAL = "effect", "goal"
CONTRACTS = (EFFECT, GOAL)


@runtime_checkable
class Benchmark(Protocol):
    """One benchmark, at one version, as verimut sees it."""

    # Read-only here: a plain class attribute (`name = "mybench"`) is what adapters write.
    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def telemetry(self) -> Sequence[str]:
        """Glob patterns over state paths that record reads rather than effects (a request log, a read flag).

        The oracle leaves them out of every comparison and says so. A pattern matches a collection
        ("web.web_requests") or a field of its records ("inbox.emails[*].read").
        """
        ...

    def provenance(self) -> Mapping[str, str]:
        """Package and data versions to record in the manifest."""
        ...

    def tasks(self) -> Sequence[str]:
        """Every task id, in a stable order."""
        ...

    def instruction(self, task: str) -> str:
        """The task's instruction text, as an agent would read it."""
        ...

    def reset(self, task: str) -> Any:
        """A fresh episode at the task's clean start state (the adapter's own object)."""
        ...

    def reference(self, task: str, episode: Any) -> Run:
        """The task's correct reference run, read from a fresh episode."""
        ...

    def execute(self, episode: Any, action: Action) -> Step:
        """Execute one action in the episode."""
        ...

    def is_write(self, action: Action) -> bool:
        """Whether an action is meant to change state (not counting telemetry)."""
        ...

    def snapshot(self, episode: Any) -> Any:
        """The episode's current state as plain JSON data (dicts, lists, scalars)."""
        ...

    def verify(self, episode: Any, run: Run) -> Verdict:
        """Call the benchmark's unmodified verifier on the episode's end state."""
        ...


class Forks(Protocol):
    """Optional: an adapter that can copy a live episode.

    With it, verimut replays a shared prefix once and forks the episode for every run that
    starts with that prefix (and grades one end state with many verifiers in the swap
    census). The copy must be independent: executing actions in it, or verifying it, must
    not change the original. Without it, every run is replayed from `reset`.
    """

    def fork(self, episode: Any) -> Any: ...


class Swaps(Protocol):
    """Optional, needed by the intent-swap census: grade an episode with another task's verifier.

    `episode` was reset for, and has run, some other task's run; call `task`'s own,
    unmodified verifier on it, giving it that episode's start and end states.
    """

    def verify_as(self, task: str, episode: Any, run: Run) -> Verdict: ...


class Explains(Protocol):
    """Optional: an adapter that can say in one line why its verifier missed a difference."""

    def explain(self, task: str, collections: Sequence[str]) -> str | None: ...


class RecordsReads(Protocol):
    """Optional: call the unmodified verifier as `verify` does, and measure what it read while it ran.

    The reads' paths start with `state` (the end state, as its snapshot's paths name it) and, for a verifier that
    grades the run's calls, `trace` (the calls by position) (core/reads.py). A finding's reason then says what
    the verifier read and never read of what differs, and the read map and its blind spots come from these.
    An adapter that cannot record (a browser's JavaScript reward) leaves it out, and its `explain` is reported as
    a guess from the verifier's source text.
    """

    def verify_reading(self, episode: Any, run: Run) -> tuple[Verdict, Reads]: ...


# A map that runs independent work on the executor's cores: fn over the items, results in the items' order.
Mapper = Callable[[Callable[[Any], Any], Sequence[Any]], Iterable[Any]]


class Prepares(Protocol):
    """Optional: work the adapter does once, when a manifest is built, given a map that runs it on the executor's
    cores (`each(fn, items)`, results in order; fn may close over anything: the workers are forked). What it finds
    goes into `provenance()`, which is called next. A reward's ten-call stability check (adapters/answer_tasks.py)
    is such work: thousands of reward calls, some of them seconds each.
    """

    def prepare(self, each: Mapper) -> None: ...


class Locates(Protocol):
    """Optional: where a task's verifier is defined, so SARIF results can point at it.

    Returns (source file, first line, qualified name), or None when it cannot tell.
    """

    def verifier_source(self, task: str) -> tuple[str, int, str] | None: ...


class DescribesForms(Protocol):
    """Optional, for form benchmarks: a form task's fields, defaults and template values (see forms.py)."""

    def form(self, task: str) -> FormFacts: ...


class Kinds(Protocol):
    """Optional: the kind of each task, when a benchmark ships verifiers of more than one kind.

    AgentDojo's user tasks (`utility`) are "user"; its injection tasks (`security`, which decides
    whether an attack succeeded) are "injection". Each kind is reported apart, and the intent-swap
    census pairs "user" tasks only. Without it, every task is "user".
    """

    def kind(self, task: str) -> str: ...


class ReadsTrace(Protocol):
    """Optional: whether a task's verifier grades the run's calls (AgentDojo's `*_from_traces`), not only the state.

    Two runs whose writes differ are then never the same effect for it, even when their end states are equal.
    """

    def reads_trace(self, task: str) -> bool: ...


class IdleWrites(Protocol):
    """Optional, beside `reads_trace`: the reference writes of a task that change nothing where the reference
    makes them (a login on a session already authenticated, a stock added to a watchlist that holds it), by their
    index in the reference run. What such a call returns is a status or the state as it already was, so a run
    that leaves it out is not told apart from the reference's by the trace rule: only its state decides.
    """

    def idle_writes(self, task: str) -> Sequence[int]: ...


class PageWrites(Protocol):
    """Optional: writes on a task's own page that neither its instruction nor its run names (another email's star,
    a checkbox outside the requested set, another field), read off the page at the task's start.

    Where a task is one page (MiniWoB++), another task's writes name elements that page does not have; these are
    the out-of-scope writes the `extra-oos` family tries instead (grammar/oos.py `page_trial`), before and after the
    task's own interactions.
    """

    def page_writes(self, task: str, run: Run) -> Sequence[Action]: ...


class Pristine(Protocol):
    """Optional: a task's world before the breakage its own setup makes on purpose (tau2 telecom's device, put in
    airplane mode or given a broken APN), as a snapshot. A write that sets a value back to this one undoes the
    task's setup, which is the task's fix: the out-of-scope trial never plants it as a side effect
    (grammar/oos.py `restored`).
    """

    def pristine(self, task: str) -> Any: ...


class Sanctions(Protocol):
    """Optional: the tools a task's own instruction says the user accepts being used on them (tau2 telecom: "If
    the agent asks you to pay a bill, you accept": a payment request and the payment). A write of one of these is
    within what the task anticipates: the out-of-scope trial never plants it as a side effect of that task.
    """

    def sanctioned(self, task: str) -> Sequence[str]: ...


class Patches(Protocol):
    """Optional: set one value of a live episode, at a path of its snapshot (dict keys and list indices).

    verimut flips each declared telemetry field and mask this way on a fork of every reference end state
    and calls the verifier: a declaration that changes a verdict is graded state, and is dropped.
    """

    def patch(self, episode: Any, path: Sequence[str], value: Any) -> None: ...


class Closes(Protocol):
    """Optional: release an episode verimut no longer holds (a remote worker calls it when a handle is dropped)."""

    def close(self, episode: Any) -> None: ...


# Optional attributes, read once by `resolve`:
#   grammar: str = "api"        the fault grammar the benchmark is audited with by default ("api" or "form")
#   concurrency: int | None     at most this many cells at once (a live instance is shared state); None: no limit
#   markers: frozenset[str]     names of structural actions, neither read nor write (BFCL's turn boundary):
#                               alternative runs never move, repeat or borrow them
#   swap_suites: tuple[str,...] the suites `verimut swap` pairs when none is named (all when empty)
#   grades_in_place: bool       its `verify_as` only reads the episode (and leaves it live): the swap census
#                               may grade one replay of a run with every verifier of its column, in the episode
#                               itself, where the state cannot be forked (a browser session on a live instance).
#                               verimut snapshots the episode after each such verdict and errs the cell if it
#                               changed; kept episodes are released through `close` when dropped
#   replays_vary: bool          two replays of one run can end differently (a browser's timing: a click that slips):
#                               the reference end every cell of a task is compared with is one whose verifier
#                               passes, replayed again (at most REPLAY_TRIES times) until it does (core/replay.py)
#   contracts: Mapping[str, str] task kind -> EFFECT or GOAL (a kind not named is EFFECT)
#   assigned_keys: Sequence[str] collection globs whose new records get keys the benchmark assigns in creation
#                               order (a new email's id): the oracle matches new records there by content
#   trace_args: Mapping[str, Sequence[str]]  tool -> its arguments that leave no trace in the state (an
#                               invitation's address): two runs that differ there differ in effect
#   target_args: Sequence[str]  argument names that say whom or what a write acts on (besides the built-in
#                               ones: recipient, user, channel, id, ...): a value read for one is pinned
#   answer_channel: AnswerChannel | None  where a run's final answer lives, when the verifier grades what a run
#                               says (a mapping of its fields from a remote worker). None: the answer families
#                               are refused on every task (no answer to edit)


@dataclass(frozen=True)
class Adapter:
    """A benchmark with its optional capabilities resolved: each is a callable, or None when absent.

    It is itself a `Benchmark` (the required members are the wrapped adapter's), so code that only
    drives episodes takes either; code that asks for a capability takes this.
    """

    bench: Benchmark
    fork: Callable[[Any], Any] | None = None
    verify_as: Callable[[str, Any, Run], Verdict] | None = None
    explain: Callable[[str, Sequence[str]], str | None] | None = None
    verifier_source: Callable[[str], tuple[str, int, str] | None] | None = None
    form: Callable[[str], FormFacts] | None = None
    close: Callable[[Any], None] | None = None
    kind: Callable[[str], str] | None = None
    reads_trace: Callable[[str], bool] | None = None
    idle_writes: Callable[[str], Sequence[int]] | None = None
    patch: Callable[[Any, Sequence[str], Any], None] | None = None
    page_writes: Callable[[str, Run], Sequence[Action]] | None = None
    verify_reading: Callable[[Any, Run], tuple[Verdict, Reads]] | None = None
    prepare: Callable[[Mapper], None] | None = None
    pristine: Callable[[str], Any] | None = None
    sanctioned: Callable[[str], Sequence[str]] | None = None
    grammar: str = "api"
    concurrency: int | None = None
    markers: frozenset[str] = frozenset()
    swap_suites: tuple[str, ...] = ()
    grades_in_place: bool = False
    replays_vary: bool = False
    contracts: Mapping[str, str] = field(default_factory=dict)
    assigned_keys: tuple[str, ...] = ()
    trace_args: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    target_args: frozenset[str] = frozenset()
    answer_channel: AnswerChannel | None = None
    # The options its factory was given (`adapters.load`): the manifest records them, so every later command
    # (repair, report's SARIF) rebuilds this adapter, not the one the factory makes without them.
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.bench.name

    @property
    def version(self) -> str:
        return self.bench.version

    @property
    def telemetry(self) -> Sequence[str]:
        return self.bench.telemetry

    def provenance(self) -> Mapping[str, str]:
        return self.bench.provenance()

    def tasks(self) -> Sequence[str]:
        listed = list(self.bench.tasks())
        if len(set(listed)) != len(listed):  # a cell id names a task: two tasks of one id would be scored as one
            seen: set[str] = set()
            twice = next(t for t in listed if t in seen or seen.add(t))  # type: ignore[func-returns-value]
            raise AuditError(f"{self.bench.name} lists the task {twice!r} twice: task ids must be unique")
        return listed

    def instruction(self, task: str) -> str:
        return self.bench.instruction(task)

    # The calls below run benchmark code on episodes: each goes through guard.py (sys.exit, verdicts, plain data).
    def reset(self, task: str) -> Any:
        return guard.call(self.bench.reset, task)

    def reference(self, task: str, episode: Any) -> Run:
        return guard.reference_run(guard.call(self.bench.reference, task, episode), self.bench.name, task)

    def execute(self, episode: Any, action: Action) -> Step:
        # A copy: an adapter that consumes its arguments (pops them) must not change the run verimut recorded.
        given = Action(action.name, copy.deepcopy(action.args)) if action.args else action
        return guard.call(self.bench.execute, episode, given)

    def is_write(self, action: Action) -> bool:
        return self.bench.is_write(action)

    def is_read(self, action: Action) -> bool:
        """Neither a write nor a structural marker."""
        return action.name not in self.markers and not self.bench.is_write(action)

    def snapshot(self, episode: Any) -> Any:
        return guard.plain(guard.call(self.bench.snapshot, episode), self.bench.name)

    def verify(self, episode: Any, run: Run) -> Verdict:
        return guard.verdict(guard.call(self.bench.verify, episode, run))


CAPABILITIES = (
    "fork",
    "verify_as",
    "explain",
    "verifier_source",
    "form",
    "close",
    "kind",
    "reads_trace",
    "idle_writes",
    "patch",
    "page_writes",
    "verify_reading",
    "prepare",
    "pristine",
    "sanctioned",
)
USER = "user"  # the kind of every task of an adapter without `kind`


def kind_of(bench: Adapter, task: str) -> str:
    """The task's kind: the adapter's answer, or "user" when it declares no kinds."""
    return bench.kind(task) if bench.kind is not None else USER


def contract_of(bench: Adapter, kind: str) -> str:
    """The contract of a task kind: what the adapter declares for it, EFFECT when it declares none."""
    return bench.contracts.get(kind, EFFECT)


def _contracts(bench: Any) -> dict[str, str]:
    found = dict(getattr(bench, "contracts", None) or {})
    for kind, contract in found.items():
        if contract not in CONTRACTS:
            raise AuditError(
                f"{bench.name}: contract {contract!r} of kind {kind!r} is not one of {', '.join(CONTRACTS)}"
            )
    return found


def _checked(verify_as: Callable[[str, Any, Run], Any], task: str, episode: Any, run: Run) -> Verdict:
    return guard.verdict(verify_as(task, episode, run))


def _checked_reading(verify_reading: Callable[[Any, Run], Any], episode: Any, run: Run) -> tuple[Verdict, Reads]:
    verdict, reads = verify_reading(episode, run)
    if not isinstance(reads, Reads):
        raise AuditError(f"verify_reading returned {type(reads).__name__} for the reads, not a core.reads.Reads")
    return guard.verdict(verdict), reads


def _plain_pristine(pristine: Callable[[str], Any], name: str, task: str) -> Any:
    return guard.plain(pristine(task), name)


def _answer_channel(bench: Any) -> AnswerChannel | None:
    declared = getattr(bench, "answer_channel", None)
    if declared is None or isinstance(declared, AnswerChannel):
        return declared
    try:
        return msgspec.convert(declared, AnswerChannel)
    except (msgspec.ValidationError, TypeError) as e:
        raise AuditError(f"{bench.name}: answer_channel is not an AnswerChannel (where, tool, arg): {e}") from None


def resolve(bench: Benchmark | Adapter) -> Adapter:
    """The adapter with its optional capabilities looked up, once (an `Adapter` is returned as it is)."""
    if isinstance(bench, Adapter):
        return bench
    found: dict[str, Any] = {}
    for name in CAPABILITIES:
        member = getattr(bench, name, None)
        found[name] = partial(guard.call, member) if callable(member) else None
    if found["verify_as"] is not None:
        found["verify_as"] = partial(_checked, found["verify_as"])
    if found["verify_reading"] is not None:
        found["verify_reading"] = partial(_checked_reading, found["verify_reading"])
    if found["pristine"] is not None:  # a snapshot: plain data, as `snapshot`'s
        found["pristine"] = partial(_plain_pristine, found["pristine"], bench.name)
    grammar = getattr(bench, "grammar", None) or "api"
    if grammar not in GRAMMARS:
        raise AuditError(f"{bench.name}: grammar {grammar!r} is not one of {', '.join(GRAMMARS)}")
    concurrency = getattr(bench, "concurrency", None)
    markers = frozenset(getattr(bench, "markers", None) or ())
    swap_suites = tuple(getattr(bench, "swap_suites", None) or ())
    grades_in_place = getattr(bench, "grades_in_place", False) is True
    replays_vary = getattr(bench, "replays_vary", False) is True
    trace_args = getattr(bench, "trace_args", None) or {}
    return Adapter(
        bench,
        grammar=grammar,
        concurrency=int(concurrency) if concurrency else None,
        markers=markers,
        swap_suites=swap_suites,
        grades_in_place=grades_in_place,
        replays_vary=replays_vary,
        contracts=_contracts(bench),
        assigned_keys=tuple(getattr(bench, "assigned_keys", None) or ()),
        trace_args={str(tool): tuple(args) for tool, args in trace_args.items()},
        target_args=frozenset(getattr(bench, "target_args", None) or ()),
        answer_channel=_answer_channel(bench),
        **found,
    )


__all__ = [
    "CAPABILITIES",
    "CONTRACTS",
    "EFFECT",
    "GOAL",
    "GRAMMARS",
    "USER",
    "Action",
    "Adapter",
    "AnswerChannel",
    "Benchmark",
    "Closes",
    "DescribesForms",
    "Explains",
    "Forks",
    "FormFacts",
    "Kinds",
    "Locates",
    "PageWrites",
    "Patches",
    "Pristine",
    "ReadsTrace",
    "RecordsReads",
    "Run",
    "Sanctions",
    "Step",
    "Swaps",
    "Verdict",
    "contract_of",
    "kind_of",
    "resolve",
]

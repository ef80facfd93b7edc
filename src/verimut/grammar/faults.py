"""The fault grammar: each family is a pure function from a reference run to edited runs.

An operator gets the reference run and a `FaultContext` (what the reference replay
showed: which actions write, what each returned, the instruction, the start state's
values, the idempotence census) and returns its edits, or a `Refusal` saying why it
does not apply. Adding a family is one decorated function, with the `FamilySpec` that says what it is
(its grammars, its role, whether it tests the frame condition) and what it needs built first (the
idempotence census, the suite's reads, the out-of-scope library):

    @family("repeat-first", FamilySpec(tests_frame=True, side_effect=True))
    def repeat_first(run, ctx):
        ...

An installed package adds one through the entry-point group `verimut.families`, naming an operator
made with `declare(FamilySpec(...))` (registered under the entry point's name).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol, cast

import msgspec

from verimut.core import forms
from verimut.core.benchmark import GRAMMARS
from verimut.core.errors import AuditError
from verimut.core.records import CONTROL
from verimut.core.registry import Registry
from verimut.core.run import Action, AnswerChannel, Run
from verimut.grammar import answers
from verimut.grammar.alternatives import RESTORE, SAME_READS, reads_kept
from verimut.grammar.pinned import ValueIndex, is_target, other_subject, pins, vary
from verimut.oracle.state import NEW


class Edit(msgspec.Struct, frozen=True):
    """One edited run. `variant` names it within its family; `note` says what changed."""

    variant: str
    run: Run
    note: str
    detail: dict[str, Any] = {}


class Refusal(msgspec.Struct, frozen=True):
    reason: str


class Unplanted(msgspec.Struct, frozen=True):
    """An out-of-scope write the aimed search did not plant (`oos.aimed`): it lands only in confirmed blind spots of
    the task's verifier, which one planted write already shows unchecked, so the read map proves it unchecked too."""

    tool: str
    collection: str  # where it lands (its first collection, as the variant names it)
    source_task: str
    source_action: int


class OutOfScope(msgspec.Struct, frozen=True):
    """Another task's write, tried on this task's reference end state: what it changed there."""

    source_task: str
    source_action: int  # its index in the source task's reference run
    action: Action
    touches: tuple[str, ...]  # the collections it changes, sorted
    changes: str  # per collection, e.g. "bank_account.transactions: 1 added"
    # Aimed search only: the writes this one stands for, proven unchecked by the read map rather than planted.
    covers: tuple[Unplanted, ...] = ()


# The detail key of an aimed write's cell: the writes it stands for (`Unplanted`), read by findings/read_map.py.
PROVEN_UNCHECKED = "proven_unchecked"

# The source_action of a write read off the task's own page (`page_writes`), not taken from a run.
ON_PAGE = -1


def before(writes: Sequence[bool]) -> int:
    """Where a page write goes before the task's interactions: before its first write (0 when it has none)."""
    return next((i for i, w in enumerate(writes) if w), 0)


def after(writes: Sequence[bool]) -> int | None:
    """Where it goes after them: right after the last write, when something (the claim) follows it; None when the
    run ends at a write (an email deleted: the page's episode ends there, and nothing after it is done)."""
    last = max((i for i, w in enumerate(writes) if w), default=None)
    return None if last is None or last == len(writes) - 1 else last + 1


class Borrowed(msgspec.Struct, frozen=True):
    """A read of another task of the suite, to insert into this task's run (alt-reads)."""

    source_task: str
    source_action: int
    action: Action


class FaultContext(msgspec.Struct, frozen=True):
    writes: tuple[bool, ...]
    outputs: tuple[str, ...]
    instruction: str
    values: ValueIndex
    # Per action: True/False for writes the census replayed twice, None for reads.
    non_idempotent: tuple[bool | None, ...]
    # A form task's fields, defaults and template values (form benchmarks only; see forms.py).
    form: forms.FormFacts | None = None
    # Writes of the suite's other tasks that, appended to this run, change something outside its
    # effect (found by the manifest builder on the reference end state; see oos.py), and how many
    # candidates it tried: 0 when no other task of the suite has a write (or extra-oos is not run).
    out_of_scope: tuple[OutOfScope, ...] = ()
    out_of_scope_tried: int = 0
    # The out-of-scope writes were read off the task's own page (the adapter's `page_writes`), not other tasks' runs.
    on_page: bool = False
    # Per action: True for a write whose second call raised in the census (it cannot be repeated).
    repeat_raises: tuple[bool, ...] = ()
    # Per action: True for a read (not a write, not a structural marker such as BFCL's turn
    # boundary). Empty: every action that is not a write is a read.
    reads: tuple[bool, ...] = ()
    # Reads of the suite's other tasks this run does not make, one per tool, argument-free first.
    other_reads: tuple[Borrowed, ...] = ()
    # The task kind's contract (benchmark.EFFECT or GOAL): a goal's wrong-value varies only what its text fixes.
    contract: str = "effect"
    # The adapter's own target argument names (pinned.TARGET_WORDS has the common ones).
    targets: frozenset[str] = frozenset()
    # Where the run's final answer lives (the adapter's `answer_channel`); None: the verifier grades no answer.
    channel: AnswerChannel | None = None
    # The answers (each its format's slot) of the suite's other audited tasks, the next tasks first: a wrong answer
    # of the same kind, in the same format (the answer probes' `answer-other`, grammar/probes.py).
    other_answers: tuple[str, ...] = ()

    def write_positions(self) -> list[int]:
        return [i for i, w in enumerate(self.writes) if w]

    def read_positions(self) -> list[int]:
        if not self.reads:
            return [i for i, w in enumerate(self.writes) if not w]
        return [i for i, r in enumerate(self.reads) if r]

    def is_marker(self, i: int) -> bool:
        return bool(self.reads) and not self.reads[i] and not self.writes[i]


# --- a family: its operator, and the spec it declares -----------------------------------------

# A family's role: a fault plants a wrong run (the verifier should fail it); an alternative is a correct
# run by another route (the verifier should pass it: a fail is a false reject).
FAULT, ALTERNATIVE = "fault", "alternative"
ROLES = (FAULT, ALTERNATIVE)


class FamilySpec(msgspec.Struct, frozen=True, kw_only=True):
    """What a family is, and what the manifest builder must find for it, declared beside its operator.

    Every reader asks the spec (`spec_of(name)`), never a list of names: a new family, built in or
    installed, declares these and needs no other module to know of it.
    """

    # The grammars it belongs to: "api" (tool-call benchmarks) or "form" (form benchmarks, whose adapters
    # say `grammar = "form"`). An audit runs its benchmark's grammar unless told otherwise (`of_grammar`).
    grammars: tuple[str, ...] = ("api",)
    role: str = FAULT  # FAULT or ALTERNATIVE
    # It plants a change the task never asked for: it tests the frame condition, which a goal-contract
    # verifier does not promise (benchmark.GOAL), so it is refused on such a task's runs.
    tests_frame: bool = False
    # It adds a write the task never asked for, and frame coverage (findings/coverage.py) counts its
    # confirmed cells as the side effects a verifier's coverage is the share rejected of. extra-field tests
    # the frame condition of a form but is not counted: frame coverage is read from the tool-call families.
    side_effect: bool = False
    # What it needs built before its operator runs (each costs replays, so it is built only when wanted):
    needs_census: bool = False  # the idempotence census (every write replayed twice): FaultContext.non_idempotent
    needs_suite_reads: bool = False  # reads of the suite's other tasks: FaultContext.other_reads
    needs_out_of_scope: bool = False  # the out-of-scope trial (oos.py): FaultContext.out_of_scope
    # It edits what the run says (its final answer, read and written through the adapter's answer channel),
    # leaving the actions as they were: the oracle confirms it by construction (answers.confirm), not by a diff.
    needs_answer_channel: bool = False
    # Its one cell is the empty run (no action, no answer): a verifier that passes it is vacuous, a finding of
    # its own (Outcome.VACUOUS), not a false accept. Scored even when the reference run is itself empty.
    null_run: bool = False
    # Its confirmed false accepts as the mechanism a person reads them by ("accept a repeated write"), or "".
    mechanism: str = ""

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"a family's role is one of {', '.join(ROLES)}, not {self.role!r}")
        if not self.grammars or any(g not in GRAMMARS for g in self.grammars):
            raise ValueError(f"a family's grammars are some of {', '.join(GRAMMARS)}, not {self.grammars!r}")
        if self.side_effect and not self.tests_frame:
            raise ValueError("a side-effect family tests the frame condition (tests_frame=True)")
        if self.role == ALTERNATIVE and self.tests_frame:
            raise ValueError("an alternative run is a correct run: it plants no change the task never asked for")
        if self.null_run and (self.role == ALTERNATIVE or self.needs_answer_channel):
            raise ValueError("the null run is a fault that drops everything, not an answer edit or an alternative")

    @property
    def is_alternative(self) -> bool:
        """Whether its cells are correct runs by another route (role ALTERNATIVE), not planted faults."""
        return self.role == ALTERNATIVE


Edits = Callable[[Run, "FaultContext"], "list[Edit] | Refusal"]


class Operator(Protocol):
    """A family's pure function from a reference run to its edits (or a refusal), with the spec it declares."""

    spec: FamilySpec

    def __call__(self, run: Run, ctx: FaultContext, /) -> list[Edit] | Refusal: ...


class Families(Registry[Operator]):
    """The fault families: built-in ones, and those an installed package names in the entry-point group
    `verimut.families` (`name = "module:operator"`, an operator made with `declare`)."""

    def get(self, name: str) -> Operator:
        op = super().get(name)
        if not isinstance(getattr(op, "spec", None), FamilySpec):
            raise AuditError(
                f"fault family {name!r} declares no FamilySpec: make its operator with"
                " `verimut.grammar.faults.declare(FamilySpec(...))`"
            )
        return op


FAMILIES = Families("fault family", entry_points="verimut.families")
UNDECLARED = FamilySpec()  # what a cell's family that is no registered family (the control, `swap`) declares
GOAL_REFUSAL = Refusal(
    "a goal-contract verifier decides whether a goal was reached in a state that may hold other effects:"
    " a side effect is not its to reject"
)


def declare(spec: FamilySpec = UNDECLARED) -> Callable[[Edits], Operator]:
    """Attach `spec` to an operator, without registering it (what an entry point of `verimut.families` names)."""

    def attach(op: Edits) -> Operator:
        op.spec = spec  # type: ignore[attr-defined]
        return cast(Operator, op)

    return attach


def family(name: str, spec: FamilySpec = UNDECLARED) -> Callable[[Edits], Operator]:
    """Register an operator under a family name, with the spec it declares."""

    def register(op: Edits) -> Operator:
        if name == CONTROL:
            raise ValueError(f"fault family {name!r} is already registered")
        FAMILIES.register(name, cast(Operator, op))  # first: a name taken leaves its operator's spec alone
        return declare(spec)(op)

    return register


def spec_of(name: str) -> FamilySpec:
    """What the family `name` declares. A cell's family that is none (the control, the swap census's `swap`, a
    plug-in family not installed here) declares nothing: `UNDECLARED`, an api fault that needs nothing."""
    return FAMILIES[name].spec if name in FAMILIES else UNDECLARED


def of_grammar(grammar: str) -> list[str]:
    """The families a benchmark of this grammar is audited with by default, in registry order."""
    return [name for name, op in FAMILIES.items() if grammar in op.spec.grammars]


def _without(run: Run, drop: Sequence[int]) -> Run:
    gone = set(drop)
    return run.replace_actions([a for i, a in enumerate(run.actions) if i not in gone])


def _duplicate(run: Run, at: int) -> Run:
    actions = list(run.actions)
    actions.insert(at + 1, actions[at])
    return run.replace_actions(actions)


_NO_WRITE = Refusal("the reference run has no write")


@family(
    "claim-only", FamilySpec(grammars=("api", "form", "evidence"), mechanism="accept a run missing a requested write")
)
def claim_only(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """Drop every write; keep the reads and the completion claim."""
    writes = ctx.write_positions()
    if not writes:
        return _NO_WRITE
    return [Edit("-", _without(run, writes), f"dropped all {len(writes)} write(s); reads and answer kept")]


@family("omit", FamilySpec(grammars=("api", "evidence"), mechanism="accept a run missing a requested write"))
def omit(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """Drop one write: the last (variant `-`), and every other write k (variant `at-k`)."""
    writes = ctx.write_positions()
    if not writes:
        return _NO_WRITE
    last = writes[-1]
    return _every_position(
        writes,
        lambda k: _without(run, [k]),
        Edit("-", _without(run, [last]), f"dropped the last write, #{last} {run.actions[last].name}"),
        lambda k: f"dropped write #{k} {run.actions[k].name}",
        lambda k: {"position": k, "tool": run.actions[k].name},
    )


@family("partial", FamilySpec(mechanism="accept a run missing a requested write"))
def partial(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """Keep only the first of a repeated write sequence (one variant per repeated tool)."""
    seen: dict[str, list[int]] = {}
    for i in ctx.write_positions():
        seen.setdefault(run.actions[i].name, []).append(i)
    repeated = {name: ix for name, ix in seen.items() if len(ix) > 1}
    if not repeated:
        return Refusal("no write is repeated in the reference run")
    return [
        Edit(name, _without(run, ix[1:]), f"kept only the first of {len(ix)} {name} writes (#{ix[0]})")
        for name, ix in repeated.items()
    ]


@family("wrong-value", FamilySpec(grammars=("api", "form"), mechanism="accept a wrong value"))
def wrong_value(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """Move one pinned written argument to another legal value of its kind (one variant per argument).

    A value from the start state comes first; a string the state has no other of gets a synthesized
    one of the same shape, and the edit says so (`detail["synthesized"]`). Unpinned arguments are left alone.
    A form task: a requested field to the other legal value its adapter names (`form_wrong_value`).
    """
    if ctx.form is not None:
        return form_wrong_value(run, ctx)
    goal = ctx.contract == "goal"
    found = pins(run, ctx.writes, ctx.outputs, ctx.instruction, goal=goal, targets=ctx.targets)
    if not found:
        return _NO_WRITE
    edits: list[Edit] = []
    unmoved: list[str] = []
    used = frozenset(v for a in run.actions for v in a.args.values() if isinstance(v, (str, int, float)))
    for pin in found:
        if pin.source is None:
            continue
        varied = vary(pin.value, pin.arg, ctx.values, used)
        if varied is None:
            unmoved.append(f"#{pin.action}.{pin.arg}")
            continue
        moved = varied.value
        actions = list(run.actions)
        old = actions[pin.action]
        actions[pin.action] = msgspec.structs.replace(old, args={**old.args, pin.arg: moved})
        why = f"pinned by {pin.source}"
        detail = {"action": pin.action, "arg": pin.arg, "from": pin.value, "to": moved, "pinned_by": pin.source}
        if varied.synthesized:
            why = f"synthesized: no other value of its kind in the start state; {why}"
            detail["synthesized"] = True
        other = None if pin.weak is None else other_subject(ctx.instruction, pin.value, moved)
        if other is not None:
            why = f"{why}; not a weak pin: {other}"
            detail["other_subject"] = other
        elif pin.weak is not None:
            why = f"{why}; a weak pin: {pin.weak}"
            detail["weak_pin"] = pin.weak
        edits.append(
            Edit(
                f"{pin.action}.{pin.arg}",
                run.replace_actions(actions),
                f"#{pin.action} {old.name}: {pin.arg} {pin.value!r} -> {moved!r} ({why})",
                detail,
            )
        )
    if edits:
        return edits
    unpinned = sum(1 for p in found if p.source is None)
    reason = f"no pinned written value ({unpinned} unpinned argument(s) left alone)"
    if goal:
        reason = f"the goal's text fixes no written value ({unpinned} argument(s) it leaves open)"
    if unmoved:
        reason = f"no other legal value for the pinned argument(s) {', '.join(unmoved)}"
    return Refusal(reason)


def _every_position(
    positions: Sequence[int],
    edit_at: Callable[[int], Run],
    last: Edit,
    note: Callable[[int], str],
    detail: Callable[[int], dict[str, Any]],
) -> list[Edit]:
    """`last` for the last position (today's cell, id `-`, so old ledgers stay comparable), `at-k` for the others."""
    others = [Edit(f"at-{k}", edit_at(k), note(k), detail(k)) for k in positions[:-1]]
    return [*others, last]


@family(
    "extra",
    FamilySpec(grammars=("api", "evidence"), tests_frame=True, side_effect=True, mechanism="accept a repeated write"),
)
def extra(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """Repeat a write right after it: the last (variant `-`), and every other write k (variant `at-k`)."""
    writes = ctx.write_positions()
    if not writes:
        return _NO_WRITE
    last = writes[-1]
    return _every_position(
        writes,
        lambda k: _duplicate(run, k),
        Edit("-", _duplicate(run, last), f"repeated the last write, #{last} {run.actions[last].name}"),
        lambda k: f"repeated write #{k} {run.actions[k].name}",
        lambda k: {"position": k, "tool": run.actions[k].name},
    )


@family(
    "extra-ni",
    FamilySpec(
        grammars=("api", "evidence"),
        tests_frame=True,
        side_effect=True,
        needs_census=True,
        mechanism="accept a repeated write",
    ),
)
def extra_ni(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """Repeat a write the idempotence census marks non-idempotent: the last such (`-`), and every other (`at-k`)."""
    candidates = [i for i, ni in enumerate(ctx.non_idempotent) if ni]
    if not ctx.write_positions():
        return _NO_WRITE
    if not candidates:
        return Refusal("the idempotence census marks no write of the reference run non-idempotent")
    last = candidates[-1]
    census = {"census": "replaying it twice changes the state"}
    return _every_position(
        candidates,
        lambda k: _duplicate(run, k),
        Edit(
            "-",
            _duplicate(run, last),
            f"repeated the last non-idempotent write, #{last} {run.actions[last].name}",
            census,
        ),
        lambda k: f"repeated non-idempotent write #{k} {run.actions[k].name}",
        lambda k: {**census, "position": k, "tool": run.actions[k].name},
    )


@family(
    "extra-oos",
    FamilySpec(
        grammars=("api", "evidence"),
        tests_frame=True,
        side_effect=True,
        needs_out_of_scope=True,
        mechanism="accept an out-of-scope write",
    ),
)
def extra_oos(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """Append another task's write that changes something outside this task's effect.

    One variant per (tool, first collection it changes), the first candidate in the builder's
    order winning, so the count stays bounded whatever the size of the suite. A write read off the task's own page
    (`page_writes`: an element the task never mentions) is made before the task's first interaction (variant
    `.../before`) and after its last, before its claim (`.../after`; none when the run ends at a write).
    """
    if not ctx.out_of_scope and ctx.on_page:
        if not ctx.out_of_scope_tried:
            return Refusal("the page has no element the task never mentions that the adapter can write")
        return Refusal(
            f"no element of the page the task never mentions changes anything outside this task's effect, with the"
            f" effect still done ({ctx.out_of_scope_tried} tried)"
        )
    if not ctx.out_of_scope:
        if not ctx.out_of_scope_tried:
            return Refusal("no other task in the suite has a write (other than this run's own)")
        return Refusal(
            f"no write of another task in the suite changes anything outside this task's effect"
            f" ({ctx.out_of_scope_tried} tried)"
        )
    edits: dict[str, Edit] = {}
    for c in ctx.out_of_scope:
        # The collection as the state names it (an assigned-key collection's new records are apart in diffs).
        variant = f"{c.action.name}@{c.touches[0].removesuffix(NEW)}"
        if c.source_action == ON_PAGE:
            edits.update(_on_page(run, ctx, c, variant, edits))
            continue
        if variant in edits:
            continue
        edits[variant] = Edit(
            variant,
            run.replace_actions([*run.actions, c.action]),
            f"appended {c.source_task}'s #{c.source_action} {c.action.describe()}: changes {c.changes}"
            + _stands_for(c),
            _oos_detail(c, ctx),
        )
    return list(edits.values())


def _stands_for(c: OutOfScope) -> str:
    """What an aimed write says of the writes it stands for (none: nothing, as without the aim)."""
    if not c.covers:
        return ""
    named = ", ".join(f"{u.tool}@{u.collection}" for u in c.covers)
    return f" (aimed: it stands for {len(c.covers)} more proven unchecked by the read map, not planted: {named})"


def _oos_detail(c: OutOfScope, ctx: FaultContext) -> dict[str, Any]:
    found: dict[str, Any] = {
        "source_task": c.source_task,
        "source_action": c.source_action,
        "tool": c.action.name,
        "collection": c.touches[0],
        "touches": list(c.touches),
        "tried": ctx.out_of_scope_tried,
    }
    if c.covers:  # only an aimed search's: a default audit's detail stays as it was
        found[PROVEN_UNCHECKED] = [msgspec.structs.asdict(u) for u in c.covers]
    return found


def _on_page(run: Run, ctx: FaultContext, c: OutOfScope, variant: str, made: dict[str, Edit]) -> dict[str, Edit]:
    """A page write the task never mentions, before the task's interactions and after them (extra_oos)."""
    found: dict[str, Edit] = {}
    for where, at in (("before", before(ctx.writes)), ("after", after(ctx.writes))):
        name = f"{variant}/{where}"
        if at is None or name in made:
            continue
        actions = list(run.actions)
        actions.insert(at, c.action)
        found[name] = Edit(
            name,
            run.replace_actions(actions),
            f"inserted {c.action.describe()} (an element of the page the task never mentions) {where} the task's "
            f"interactions, at #{at}: changes {c.changes}",
            {**_oos_detail(c, ctx), "position": at, "on_page": where},
        )
    return found


# --- alternative runs: correct runs by another route (role ALTERNATIVE) ------------------------
#
# Each is checked by the oracle when scored: its end state must equal the reference's (up to the
# texts in detail["restore"]), or it is no alternative and is refused. A verifier that fails one
# that is has a false reject.

# Reads of other tasks inserted per cell, and alternative texts per argument: bounded, so the cost
# grows with the run, not with the suite.
BORROWED_READS = 2
REWORDED = " (reworded)"  # appended to free text: the content the task asks for stays, the text differs


_WORD = re.compile(r"[^\W\d_]+")  # a run of letters


def composed(value: str, sources: Sequence[str]) -> bool:
    """Whether `value` reads as prose the agent wrote: two or more words apart, one of them in none of `sources`.

    Case-insensitive: "Grandma's house" read from an email that says "grandma's house" is found text.
    """
    words = [w.lower() for w in _WORD.findall(value)]
    if len(words) < 2 or not any(c.isspace() for c in value.strip()):
        return False  # one word, or one token ("gift_card_1642017"): a name or an identifier, not prose
    known = {w.lower() for text in sources for w in _WORD.findall(text)}
    return any(w not in known for w in words)


def _reads_after_insert(ctx: FaultContext, at: int) -> dict[str, Any]:
    """The detail that says where the reference's reads sit once an action is inserted at `at`."""
    reads = ctx.read_positions()
    return {SAME_READS: reads_kept(reads, {i: i + 1 for i in reads if i >= at})}


def _insert(run: Run, at: int, action: Action) -> Run:
    actions = list(run.actions)
    actions.insert(at, action)
    return run.replace_actions(actions)


@family("alt-reads", FamilySpec(grammars=("api", "evidence"), role=ALTERNATIVE, needs_suite_reads=True))
def alt_reads(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """Extra reads: the run's first read again right after it (`again-k`), and reads of other tasks
    of the suite inserted before the first write (one variant per tool). Reads change telemetry only."""
    writes = ctx.write_positions()
    if not writes:
        return _NO_WRITE
    edits: list[Edit] = []
    own = ctx.read_positions()
    if own:
        k = own[0]
        edits.append(
            Edit(
                f"again-{k}",
                _duplicate(run, k),
                f"repeated read #{k} {run.actions[k].name} right after it",
                {"position": k, "tool": run.actions[k].name, **_reads_after_insert(ctx, k + 1)},
            )
        )
    for b in ctx.other_reads[:BORROWED_READS]:
        edits.append(
            Edit(
                b.action.name,
                _insert(run, writes[0], b.action),
                f"inserted {b.source_task}'s read #{b.source_action} {b.action.describe()} before the first write",
                {
                    "position": writes[0],
                    "tool": b.action.name,
                    "source_task": b.source_task,
                    **_reads_after_insert(ctx, writes[0]),
                },
            )
        )
    return edits or Refusal("no read to add: the run has none and no other task of the suite has one")


@family("alt-order", FamilySpec(grammars=("api", "evidence"), role=ALTERNATIVE))
def alt_order(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """Two consecutive writes swapped (one variant per pair, `k-l`), reads and markers left in place.

    They commute when they touch different records; the oracle confirms the same end state, and a
    pair that does not commute is refused when scored.
    """
    writes = ctx.write_positions()
    if not writes:
        return _NO_WRITE
    if len(writes) < 2:
        return Refusal("one write only: nothing to reorder")
    edits: list[Edit] = []
    for k, next_ in itertools.pairwise(writes):
        a, b = run.actions[k], run.actions[next_]
        if a == b:
            continue  # the same call twice: swapping changes nothing
        if any(ctx.is_marker(i) for i in range(k, next_)):
            continue  # a turn boundary between them: each write belongs to its turn
        actions = list(run.actions)
        actions[k], actions[next_] = b, a
        edits.append(
            Edit(
                f"{k}-{next_}",
                run.replace_actions(actions),
                f"swapped write #{k} {a.name} and write #{next_} {b.name}",
                {"positions": [k, next_], "tools": [a.name, b.name], SAME_READS: reads_kept(ctx.read_positions(), {})},
            )
        )
    return edits or Refusal("no two consecutive writes differ within one turn")


@family("alt-text", FamilySpec(role=ALTERNATIVE))
def alt_text(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """Free text the task does not pin (a message body, a subject it never names) reworded, one
    variant per argument: its text kept and " (reworded)" appended, so what it says is still there.

    Only prose the agent composed counts as free text (`composed`), and never a target argument: a single word is more often a
    name or an identifier the run found, and a string made only of words the instruction or the
    run's reads hold is more often filled from a template the instruction gives ("use the title
    'Hotel: {hotel_name}'"), which the task does pin.
    """
    found = pins(run, ctx.writes, ctx.outputs, ctx.instruction)
    if not found:
        return _NO_WRITE
    edits: list[Edit] = []
    for pin in found:
        # A target names whom or what the write acts on (a recipient, an element's selector): another wording of
        # it is another target, never the same text said otherwise.
        if pin.source is not None or not isinstance(pin.value, str) or is_target(pin.arg, ctx.targets):
            continue
        reads = [ctx.outputs[j] for j in range(pin.action) if not ctx.writes[j]]
        if not composed(pin.value, [ctx.instruction, *reads]):
            continue
        new = pin.value + REWORDED
        actions = list(run.actions)
        old = actions[pin.action]
        actions[pin.action] = msgspec.structs.replace(old, args={**old.args, pin.arg: new})
        edits.append(
            Edit(
                f"{pin.action}.{pin.arg}",
                run.replace_actions(actions),
                f"#{pin.action} {old.name}: {pin.arg} reworded (unpinned free text): {pin.value!r} -> {new!r}",
                {
                    "action": pin.action,
                    "arg": pin.arg,
                    "from": pin.value,
                    "to": new,
                    RESTORE: {new: pin.value},
                    SAME_READS: reads_kept(ctx.read_positions(), {}),
                },
            )
        )
    return edits or Refusal("no free text the agent composes (prose with a word the instruction and reads lack)")


@family("alt-idem", FamilySpec(role=ALTERNATIVE, needs_census=True))
def alt_idem(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """A write the idempotence census marks idempotent, repeated right after it (`-` the last, `at-k` others)."""
    if not ctx.write_positions():
        return _NO_WRITE
    raises = {i for i, r in enumerate(ctx.repeat_raises) if r}
    idem = [i for i, ni in enumerate(ctx.non_idempotent) if ni is False and i not in raises]
    if not idem:
        if raises:
            return Refusal("every write the census marks idempotent raises when called again")
        return Refusal("the idempotence census marks no write of the reference run idempotent")
    census = {"census": "replaying it twice leaves the state as once"}
    last = idem[-1]
    return _every_position(
        idem,
        lambda k: _duplicate(run, k),
        Edit(
            "-", _duplicate(run, last), f"repeated the last idempotent write, #{last} {run.actions[last].name}", census
        ),
        lambda k: f"repeated idempotent write #{k} {run.actions[k].name}",
        lambda k: {**census, "position": k, "tool": run.actions[k].name},
    )


# --- the answer channel: what the run says, edited with its actions left as they were -------------
#
# Each acts on the reference answer's values (answers.values) that the run states of its own: a value the
# instruction already gives is an echo of the question, not its answer, and is left alone; a name counts only
# when the start state holds it whole, or the run read it and it has two words or more (a capitalized word of
# prose is no value). At most ANSWER_VALUES values per task, in the answer's order, bound the cost; at most
# ANSWER_LOOKED distinct values are looked at (each is looked up in the start state), and an answer longer than
# answers.PARSED characters is not parsed at all: an answer family refuses it (as evidence is capped, records.CAP).

ANSWER_VALUES = 8
ANSWER_LOOKED = 64
_WITH_ANSWERS = ("api", "answer")  # the answer families run on tool-call benchmarks and on answer-only tasks
_NO_CHANNEL = Refusal("the benchmark declares no answer channel (its verifier grades no answer)")
_NO_ANSWER = Refusal("the reference run gives no answer")


class _Said(msgspec.Struct, frozen=True):
    """A value of the reference answer an answer family may act on, and what fixes it."""

    value: answers.Value
    ordinal: int  # its place among the answer's values (the variant's number)
    pinned_by: str


def _reference_answer(run: Run, ctx: FaultContext) -> str | Refusal:
    if ctx.channel is None:
        return _NO_CHANNEL
    said = ctx.channel.read(run)
    if len(said) > answers.PARSED:
        return Refusal(
            f"the reference answer is {len(said):,} characters: the answer families parse at most {answers.PARSED:,}"
        )
    return said if said.strip() else _NO_ANSWER


def _reads(ctx: FaultContext) -> list[str]:
    """The reads' outputs by position ("" at a write): where a value of the answer may have been read."""
    return [out if not w else "" for out, w in zip(ctx.outputs, ctx.writes, strict=False)]


class _Looked(msgspec.Struct):
    """The reference answer's values, as the answer families read them: those they act on, the echoes of the
    instruction, and those the instruction never asks for."""

    found: list[_Said]
    echoes: list[str]
    unasked: list[str]

    def refusal(self, answer: str) -> Refusal:
        if self.echoes or self.unasked:
            left = [
                *(f"{e} (repeats the instruction)" for e in self.echoes[:3]),
                *(f"{u} (not asked for)" for u in self.unasked[:3]),
            ]
            return Refusal(f"no value of the reference answer is one the instruction asks for: {', '.join(left)}")
        return Refusal(
            f"the reference answer {answer[:60]!r} states no value the task asks for (a number, date, time, address, "
            "id, or a name the start state or a read gives)"
        )


def _said(run: Run, ctx: FaultContext, answer: str) -> list[_Said] | Refusal:
    looked = _look(run, ctx, answer)
    return looked.found[:ANSWER_VALUES] if looked.found else looked.refusal(answer)


def _look(run: Run, ctx: FaultContext, answer: str) -> _Looked:
    reads = _reads(ctx)
    found: list[_Said] = []
    echoes: list[str] = []
    unasked: list[str] = []  # values the gold answer volunteers: the instruction never asks for them
    seen: dict[tuple[str, str], list[str] | None] = {}  # a value looked at: the list it went to (None: none)
    for k, v in enumerate(answers.values(answer)):
        if len(found) == ANSWER_VALUES:
            break
        key = (v.kind, v.text)
        if key in seen:  # the same value twice: one cell edits every occurrence
            went = seen[key]
            if went is not None:
                went.append(v.text)
            continue
        if len(seen) == ANSWER_LOOKED:
            break
        seen[key] = None
        if answers.echoed(v, ctx.instruction):
            echoes.append(v.text)
            seen[key] = echoes
            continue
        if not answers.asked(v, ctx.instruction, ctx.values):
            unasked.append(v.text)
            seen[key] = unasked
            continue
        at = answers.read_from(v, reads)
        whole = bool(ctx.values.places_of.get(f"str:{v.text}"))
        if v.kind == answers.NAME and not (whole or (at is not None and len(v.text.split()) >= 2)):
            continue
        source = (
            f"read #{at} {run.actions[at].name}" if at is not None else "the reference answer (computed from the reads)"
        )
        if whole and at is None and v.kind != answers.NUMBER:  # a number the state holds as some id is no pin
            source = "the start state"
        found.append(_Said(v, k, source))
    return _Looked(found, echoes, unasked)


def _answer_edits(
    run: Run, ctx: FaultContext, how: str, make: Callable[..., answers.Moved | None]
) -> list[Edit] | Refusal:
    answer = _reference_answer(run, ctx)
    if isinstance(answer, Refusal):
        return answer
    said = _said(run, ctx, answer)
    if isinstance(said, Refusal):
        return said
    assert ctx.channel is not None
    edits: list[Edit] = []
    for s in said:
        moved = make(s.value, ctx.values, answer)
        if moved is None:
            continue
        edited = answers.replace(answer, s.value, moved.text)
        detail: dict[str, Any] = {
            "answer_edit": how,
            "kind": s.value.kind,
            "value": s.value.text,
            "to": moved.text,
            "pinned_by": s.pinned_by,
            "reference_answer": answer,
            "answer": edited,
        }
        if moved.synthesized:
            detail["synthesized"] = True
        if answers.confirm(detail, answer, edited) is None:
            continue  # the edit would leave the reference's value standing: no wrong answer
        what = {"wrong": "moved to", "superstring": "inside", "hedge": "hedged as"}[how]
        edits.append(
            Edit(
                f"{s.ordinal}.{s.value.kind}",
                ctx.channel.write(run, edited),
                f"answer: the {s.value.kind} {s.value.text!r} {what} {moved.text!r} (pinned by {s.pinned_by})",
                detail,
            )
        )
    if edits:
        return edits
    return Refusal(
        f"no value of the reference answer has a legal {how} edit ({', '.join(s.value.text for s in said[:3])})"
    )


@family(
    "answer-drop",
    FamilySpec(grammars=_WITH_ANSWERS, needs_answer_channel=True, mechanism="accept a run that gives no answer"),
)
def answer_drop(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """The run's actions, and no answer. Only where the reference answer states a value the task asks for (the
    values the other answer families edit), or repeats one the instruction gives ("Say that I should visit
    Riverside View Hotel" asks for those words): a reply that states neither ("Done." after an edit no one asked
    to be told of, a capitalised word of prose, a numbered frame "1.  2." with nothing in it) is no answer to drop."""
    answer = _reference_answer(run, ctx)
    if isinstance(answer, Refusal):
        return answer
    assert ctx.channel is not None
    looked = _look(run, ctx, answer)
    if not (looked.found or looked.echoes):
        return looked.refusal(answer)
    detail = {"answer_edit": "drop", "reference_answer": answer, "answer": ""}
    return [Edit("-", ctx.channel.write(run, ""), f"dropped the answer {answer[:80]!r}; actions kept", detail)]


@family(
    "answer-wrong", FamilySpec(grammars=_WITH_ANSWERS, needs_answer_channel=True, mechanism="accept a wrong answer")
)
def answer_wrong(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """One value of the reference answer moved to another legal value of its kind (one variant per value)."""
    return _answer_edits(run, ctx, "wrong", answers.wrong)


@family(
    "answer-superstring",
    FamilySpec(
        grammars=_WITH_ANSWERS,
        needs_answer_channel=True,
        mechanism="accept an answer whose value only contains the right one",
    ),
)
def answer_superstring(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """One value of the reference answer replaced by a different value that contains it ("3" -> "13")."""
    return _answer_edits(run, ctx, "superstring", answers.superstring)


@family(
    "answer-hedge",
    FamilySpec(
        grammars=_WITH_ANSWERS, needs_answer_channel=True, mechanism="accept an answer that names two candidates"
    ),
)
def answer_hedge(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """One value of the reference answer given with a second candidate ("3 or 4")."""
    return _answer_edits(run, ctx, "hedge", answers.hedge)


@family("null-run", FamilySpec(grammars=("api", "form", "evidence", "answer"), null_run=True))
def null_run(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """The empty run: no action, no answer. A verifier that passes it cannot tell doing the task from doing nothing."""
    return [Edit("-", Run(()), "the empty run: no action and no answer", {"null_run": True})]


@family("alt-answer", FamilySpec(role=ALTERNATIVE, needs_answer_channel=True))
def alt_answer(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """The reference answer's values in another form the instruction does not fix (a count in words, an amount
    with or without thousands separators, a date spelled out, a time on the 12-hour clock), or its sentences in
    another order. The actions are unchanged, so the oracle's end state is the reference's."""
    answer = _reference_answer(run, ctx)
    if isinstance(answer, Refusal):
        return answer
    assert ctx.channel is not None
    edits: list[Edit] = []
    seen: set[tuple[str, str]] = set()
    for k, v in enumerate(answers.values(answer)):
        if (v.kind, v.text) in seen or answers.echoed(v, ctx.instruction):
            continue
        seen.add((v.kind, v.text))
        for form in answers.alternative_forms(v, ctx.instruction, computed=answers.read_from(v, _reads(ctx)) is None):
            edited = answers.replace(answer, v, form.text)
            detail = {
                "answer_edit": form.variant,
                "kind": v.kind,
                "value": v.text,
                "to": form.text,
                "reference_answer": answer,
                "answer": edited,
                RESTORE: {edited: answer},
            }
            edits.append(
                Edit(
                    f"{k}.{form.variant}",
                    ctx.channel.write(run, edited),
                    f"answer: the {v.kind} {v.text!r} written {form.text!r} ({form.variant}); the same value",
                    detail,
                )
            )
    parts = answers.sentences(answer)
    if parts and "order" not in ctx.instruction.lower():
        edited = " ".join(reversed(parts))
        detail = {
            "answer_edit": "sentence-order",
            "reference_answer": answer,
            "answer": edited,
            RESTORE: {edited: answer},
        }
        edits.append(
            Edit(
                "sentences",
                ctx.channel.write(run, edited),
                f"answer: its {len(parts)} sentences in reverse order",
                detail,
            )
        )
    return edits or Refusal("the reference answer has no value with another form the instruction leaves open")


# The answer probes (grammar/probes.py): the answer channel's other loopholes, for reward functions (grammar
# "answer"). Registered by name, imported when first asked for, so this module does not import them.
for _name, _op in (
    ("answer-blank", "answer_blank"),
    ("answer-echo", "answer_echo"),
    ("answer-spray", "answer_spray"),
    ("answer-other", "answer_other"),
    ("answer-shotgun", "answer_shotgun"),
    ("answer-retract", "answer_retract"),
    ("answer-denied", "answer_denied"),
    ("answer-malformed", "answer_malformed"),
    ("answer-special-number", "answer_special_number"),
    ("alt-format", "alt_format"),
    ("alt-tag-prose", "alt_tag_prose"),
):
    FAMILIES.register(_name, f"verimut.grammar.probes:{_op}")


# --- the form grammar (forms.py): a run is field writes, one per step, then a submit -------------


def _form_facts(ctx: FaultContext) -> forms.FormFacts | Refusal:
    if not ctx.write_positions():
        return _NO_WRITE
    if ctx.form is None:
        return Refusal("not a form task (no form facts from the adapter)")
    return ctx.form


def _sets(run: Run) -> list[int]:
    return [i for i, a in enumerate(run.actions) if a.name == forms.SET_FIELD]


def _submit_at(run: Run) -> int | None:
    return next((i for i, a in enumerate(run.actions) if a.name == forms.SUBMIT), None)


@family("omit-field", FamilySpec(grammars=("form",)))
def omit_field(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """Submit the form without one requested field (the last one the run sets)."""
    facts = _form_facts(ctx)
    if isinstance(facts, Refusal):
        return facts
    sets = _sets(run)
    if not sets:
        return Refusal("the reference run sets no field")
    name = str(run.actions[sets[-1]].args.get("field"))
    return [Edit(name, _without(run, [sets[-1]]), f"left out the requested field {name!r}", {"field": name})]


@family("omit-divergent", FamilySpec(grammars=("form",)))
def omit_divergent(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """Leave out a requested field whose requested value differs from its on-form default (per the census)."""
    facts = _form_facts(ctx)
    if isinstance(facts, Refusal):
        return facts
    divergent = set(forms.divergent_fields(facts))
    sets = [i for i in _sets(run) if run.actions[i].args.get("field") in divergent]
    if not sets:
        return Refusal("every requested value equals its field's on-form default: omitting one changes nothing")
    name = str(run.actions[sets[-1]].args["field"])
    f = facts.field(name)
    detail = {"field": name, "default": f.default if f else None, "requested": run.actions[sets[-1]].args.get("value")}
    return [
        Edit(name, _without(run, [sets[-1]]), f"left out {name!r}, whose requested value is not its default", detail)
    ]


@family("no-submit", FamilySpec(grammars=("form",)))
def no_submit(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """Fill every requested field and leave the form unsubmitted."""
    facts = _form_facts(ctx)
    if isinstance(facts, Refusal):
        return facts
    at = _submit_at(run)
    if at is None:
        return Refusal("the reference run has no submit step")
    return [Edit("-", _without(run, [at]), "left the form unsubmitted (every field set, no submit)")]


@family("extra-field", FamilySpec(grammars=("form",), tests_frame=True))
def extra_field(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """Also write one out-of-scope field whose template value differs from its default (the census's first).

    Two variants, for validators run after every step: the extra write in its own step before the
    submit (`FIELD`), and the extra write and the submit in one step (`FIELD+submit`).
    """
    facts = _form_facts(ctx)
    if isinstance(facts, Refusal):
        return facts
    at = _submit_at(run)
    if at is None:
        return Refusal("the reference run has no submit step")
    candidates = forms.extra_field_candidates(facts)
    if not candidates:
        return Refusal("no out-of-scope field's template value differs from its on-form default")
    c = candidates[0]
    args = {"field": c.field, "value": c.value}
    detail = {"field": c.field, "type": c.type, "default": c.default, "value": c.value, "candidates": len(candidates)}
    apart = [*run.actions[:at], Action(forms.SET_FIELD, args), *run.actions[at:]]
    together = [*run.actions[:at], Action(forms.SET_FIELD_THEN_SUBMIT, args), *run.actions[at + 1 :]]
    what = f"also set out-of-scope {c.field!r} from {c.default!r} to {c.value!r}"
    return [
        Edit(
            c.field,
            run.replace_actions(apart),
            f"{what}, in its own step before the submit",
            {**detail, "step_split": "separate steps"},
        ),
        Edit(
            f"{c.field}+submit",
            run.replace_actions(together),
            f"{what}, in the submit's step",
            {**detail, "step_split": "one step"},
        ),
    ]


def form_wrong_value(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """wrong-value on a form task: one requested field set to another legal value (one variant per field).

    Every requested value is pinned (the instruction names it). The other legal value comes from the
    adapter (`FormField.other`): WorkArena's catalog tasks name one for the quantity and each variable.
    """
    facts = _form_facts(ctx)
    if isinstance(facts, Refusal):
        return facts
    movable = {f.name: f for f in forms.wrong_values(facts)}
    at = [i for i in _sets(run) if run.actions[i].args.get("field") in movable]
    if not at:
        return Refusal("the adapter names no other legal value for any requested field")
    edits: list[Edit] = []
    for i in at:
        f = movable[str(run.actions[i].args["field"])]
        actions = list(run.actions)
        actions[i] = Action(forms.SET_FIELD, {**run.actions[i].args, "value": f.other})
        what = f"set {f.name!r} to {f.other!r}, not the requested {f.template!r}"
        edits.append(
            Edit(
                f.name, run.replace_actions(actions), what, {"field": f.name, "requested": f.template, "value": f.other}
            )
        )
    return edits


# The evidence grammar's own families (grammar/evidence.py), imported when first named or listed: that module
# builds on this one, so it is named here rather than imported.
for _name in (
    "data-wrong",
    "data-superstring",
    "data-hedge",
    "data-near-miss",
    "data-extra-item",
    "answer-status",
    "wrong-post",
    "wrong-first",
    "oos-before",
    "alt-listed",
    "alt-query",
):
    FAMILIES.register(_name, f"verimut.grammar.evidence:{_name.replace('-', '_')}")

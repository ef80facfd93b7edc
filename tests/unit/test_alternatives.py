"""Alternative runs: every operator keeps what the task asks for, on every generated run and context.

A run's skeleton is its writes and structural markers in order, reads left out: an alternative
run may add reads anywhere, but its skeleton is the reference's, except that alt-idem adds one
copy of an idempotent write right after it, alt-order swaps two writes within one turn, and
alt-text appends the reworded suffix to one unpinned prose argument.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from verimut.core.run import Action, Run
from verimut.findings import coverage
from verimut.grammar import faults
from verimut.grammar.faults import REWORDED, Borrowed, FaultContext, Refusal, composed
from verimut.grammar.pinned import ValueIndex, is_target, pins
from verimut.outputs import reproduce

MARKER = "turn"
WRITES = ("send", "update", "create")
READS = ("get_a", "read_b")
ALTERNATIVES = ("alt-reads", "alt-order", "alt-text", "alt-idem", "alt-answer")

values = st.one_of(st.integers(0, 9), st.sampled_from(["x", "yz", "hello there", "x y", "see yz soon"]))
actions = st.builds(
    Action,
    st.sampled_from([*WRITES, *READS, MARKER]),
    st.dictionaries(st.sampled_from(["to", "n", "body"]), values, max_size=3),
)


def is_write(a: Action) -> bool:
    return a.name in WRITES


def is_marker(a: Action) -> bool:
    return a.name == MARKER


@st.composite
def runs_and_contexts(draw: st.DrawFn) -> tuple[Run, FaultContext]:
    acts = draw(st.lists(actions, max_size=7))
    writes = tuple(is_write(a) for a in acts)
    # Half the contexts name their reads (markers are then neither); the others leave `reads` empty,
    # as a benchmark without markers does, and then have no marker action at all.
    with_markers = draw(st.booleans())
    if not with_markers:
        acts = [Action("get_a", a.args) if is_marker(a) else a for a in acts]
    reads = tuple(not is_write(a) and not is_marker(a) for a in acts) if with_markers else ()
    borrowed = draw(st.lists(st.builds(Action, st.sampled_from(["get_c", "list_d"])), max_size=3))
    ctx = FaultContext(
        writes=writes,
        outputs=tuple(draw(st.sampled_from(["", "x", "hello there"])) for _ in acts),
        instruction=draw(st.sampled_from(["", "say x y", "send hello there"])),
        values=ValueIndex({}, {}),
        non_idempotent=tuple(draw(st.booleans()) if w else None for w in writes),
        reads=reads,
        other_reads=tuple(Borrowed(f"other/task_{i}", 0, a) for i, a in enumerate(borrowed)),
    )
    return Run(tuple(acts), "done"), ctx


def key(a: Action) -> str:
    """An action as a hashable value, equal when the actions are: its arguments in sorted order (two equal
    dicts may list their keys in another order, which `describe` keeps)."""
    return Action(a.name, dict(sorted(a.args.items()))).describe()


def bag(acts: tuple[Action, ...] | list[Action]) -> Counter[str]:
    """A multiset of actions (an Action's arguments are a dict: unhashable)."""
    return Counter(key(a) for a in acts)


def skeleton(run: Run) -> list[Action]:
    return [a for a in run.actions if is_write(a) or is_marker(a)]


def edits(fam: str, run: Run, ctx: FaultContext) -> list[faults.Edit]:
    got = faults.FAMILIES[fam](run, ctx)
    return [] if isinstance(got, Refusal) else got


@given(runs_and_contexts())
def test_alt_reads_only_adds_reads_and_keeps_the_skeleton(rc):
    run, ctx = rc
    for e in edits("alt-reads", run, ctx):
        assert skeleton(e.run) == skeleton(run)
        assert len(e.run.actions) == len(run.actions) + 1
        # One action inserted, a read: taking it out again gives the reference run.
        at = [i for i in range(len(e.run.actions)) if e.run.actions[:i] + e.run.actions[i + 1 :] == run.actions]
        assert at and not any(is_write(e.run.actions[i]) or is_marker(e.run.actions[i]) for i in at)
    assert len(edits("alt-reads", run, ctx)) <= 1 + faults.BORROWED_READS


@given(runs_and_contexts())
def test_alt_order_swaps_two_consecutive_writes_within_a_turn(rc):
    run, ctx = rc
    for e in edits("alt-order", run, ctx):
        assert bag(e.run.actions) == bag(run.actions)
        moved = [i for i, (a, b) in enumerate(zip(run.actions, e.run.actions)) if a != b]
        assert len(moved) == 2
        k, n = moved
        assert is_write(run.actions[k]) and is_write(run.actions[n])
        assert (e.run.actions[k], e.run.actions[n]) == (run.actions[n], run.actions[k])
        assert not any(is_write(a) or is_marker(a) for a in run.actions[k + 1 : n])
        assert [a for a in e.run.actions if is_marker(a)] == [a for a in run.actions if is_marker(a)]


@given(runs_and_contexts())
def test_alt_idem_adds_one_copy_of_an_idempotent_write_right_after_it(rc):
    run, ctx = rc
    for e in edits("alt-idem", run, ctx):
        added = bag(e.run.actions) - bag(run.actions)
        assert sum(added.values()) == 1 and not bag(run.actions) - bag(e.run.actions)
        # The copy sits right after an idempotent write it equals; the rest of the run is unchanged.
        at = [
            i
            for i in range(len(run.actions))
            if ctx.non_idempotent[i] is False
            and list(e.run.actions) == [*run.actions[: i + 1], run.actions[i], *run.actions[i + 1 :]]
        ]
        assert at and key(run.actions[at[0]]) in added


@given(runs_and_contexts())
def test_alt_text_appends_to_one_unpinned_prose_argument(rc):
    run, ctx = rc
    unpinned = {(p.action, p.arg) for p in pins(run, ctx.writes, ctx.outputs, ctx.instruction) if p.source is None}
    for e in edits("alt-text", run, ctx):
        assert len(e.run.actions) == len(run.actions)
        changed = [i for i, (a, b) in enumerate(zip(run.actions, e.run.actions)) if a != b]
        assert len(changed) == 1
        [i] = changed
        old, new = run.actions[i], e.run.actions[i]
        assert is_write(old) and old.name == new.name and old.args.keys() == new.args.keys()
        [arg] = [k for k in old.args if old.args[k] != new.args[k]]
        assert (i, arg) in unpinned and isinstance(old.args[arg], str) and " " in old.args[arg].strip()
        assert not is_target(arg, ctx.targets)  # "to" names whom the write acts on: never reworded
        assert new.args[arg] == old.args[arg] + REWORDED
        assert e.detail[faults.RESTORE] == {new.args[arg]: old.args[arg]}  # what the oracle puts back


@given(runs_and_contexts())
def test_no_alternative_moves_repeats_or_borrows_a_marker(rc):
    run, ctx = rc
    for fam in ALTERNATIVES:
        for e in edits(fam, run, ctx):
            assert [a for a in e.run.actions if is_marker(a)] == [a for a in run.actions if is_marker(a)]
            # Each write stays in its turn: the writes between two markers are the reference's (alt-idem: one more).
            turns, ref_turns = _turns(e.run), _turns(run)
            assert len(turns) == len(ref_turns)
            extra = sum(sum((t - r).values()) for t, r in zip(turns, ref_turns))
            missing = sum(sum((r - t).values()) for t, r in zip(turns, ref_turns))
            assert (extra, missing) == ({"alt-idem": 1, "alt-text": 1}.get(fam, 0), int(fam == "alt-text"))


def _turns(run: Run) -> list[Counter[str]]:
    out: list[Counter[str]] = [Counter()]
    for a in run.actions:
        if is_marker(a):
            out.append(Counter())
        elif is_write(a):
            out[-1][key(a)] += 1
    return out


@given(runs_and_contexts())
def test_every_alternative_keeps_the_answer_and_refuses_without_a_write(rc):
    run, ctx = rc
    for fam in ALTERNATIVES:
        got = faults.FAMILIES[fam](run, ctx)
        assert faults.spec_of(fam).is_alternative
        if not any(ctx.writes):
            assert isinstance(got, Refusal)
        if isinstance(got, list):
            assert all(e.run.answer == run.answer and e.run != run for e in got)


def test_alternatives_are_no_side_effects_for_frame_coverage():
    # alt-idem repeats a write, but one the census found idempotent: never a side effect.
    alternatives = {f for f in faults.FAMILIES if faults.spec_of(f).is_alternative}
    # the tool-call grammar's; the answer grammar's (alt-format, alt-tag-prose) edit the answer alone: test_probes.py
    assert {f for f in alternatives if "api" in faults.spec_of(f).grammars} == set(ALTERNATIVES)
    # the evidence grammar's own (test_evidence_grammar.py)
    assert {f for f in alternatives if faults.spec_of(f).grammars == ("evidence",)} == {"alt-listed", "alt-query"}
    assert not alternatives & set(coverage.side_effect_families())
    assert coverage.side_effect_families() == reproduce.SIDE_EFFECT_FAMILIES


def test_composed_prose_is_words_apart_one_of_them_new():
    assert composed("Catch up over lunch, then coffee", ["lunch with Sarah"])
    assert not composed("gift_card_1642017", [])  # one token: an identifier
    assert not composed("2024-05-19 12:00", [])  # no word at all
    assert not composed("Hotel: Luxury Palace", ["use the title 'Hotel: {hotel_name}'", "Luxury Palace, 5.0"])
    assert not composed("Grandma's house", ["the reunion is at grandma's house"])  # case aside


def test_alt_text_never_rewords_a_target():
    """A selector or a recipient is whom the write acts on: reworded, it is another target, not the same text."""
    run = Run((Action("click", {"css": "div.field:nth-child(1) input", "note": "thanks a lot for that"}),), "")
    ctx = FaultContext(
        writes=(True,),
        outputs=("",),
        instruction="",
        values=ValueIndex({}, {}),
        non_idempotent=(True,),
        targets=frozenset({"css"}),
    )
    reworded = [e.detail["arg"] for e in edits("alt-text", run, ctx)]
    assert reworded == ["note"]

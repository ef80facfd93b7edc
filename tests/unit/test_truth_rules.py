"""The rules that make a finding one a benchmark's author would sign (issue 26), each on a plug-in benchmark
built to trip it: a goal-contract task, a duplicate no read reveals, declared telemetry a verifier grades, an
effect only the trace holds, records created in another order under assigned keys, and identical runs.

The plug-in is a small club: members join channels (a list that may hold a channel twice, though every read
shows it once), get invitations (whose address the state never stores), and get mail (numbered in creation
order, with a `seen` flag the adapter declares telemetry).
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import ClassVar

from hypothesis import given
from hypothesis import strategies as st

from verimut import api as audit
from verimut.core.benchmark import GOAL, Adapter, Verdict, resolve
from verimut.core.records import Outcome
from verimut.core.run import Action, Run, Step
from verimut.engine.store import Store
from verimut.executors.inprocess import InProcess
from verimut.findings import summary
from verimut.oracle import state as oracle

TASKS = {
    "club/join": "Add ann to the 'chess' channel.",
    "club/invite": "Invite bob (bob@club.org) to the club.",
    "club/mail": "Send 'hi' to ann, then 'yo' to cy.",
    "club/inbox": "Show me my unseen mail.",
    "club/attack": "Get cy into the 'secret' channel.",
    "club/twice": "Add ann to the 'go' channel.",
}


class Club:
    name, version = "club", "1"
    telemetry = ("mail[*].seen",)
    contracts: ClassVar[dict[str, str]] = {"user": "effect", "attack": GOAL}
    assigned_keys = ("mail",)
    trace_args: ClassVar[dict[str, tuple[str, ...]]] = {"invite": ("email",)}

    def provenance(self):
        return {"club": "1"}

    def tasks(self):
        return list(TASKS)

    def kind(self, task):
        return "attack" if task == "club/attack" else "user"

    def instruction(self, task):
        return TASKS[task]

    def reset(self, task):
        mail = {"0": {"id": "0", "to": "me", "text": "welcome", "seen": False}}
        return {"task": task, "members": {"ann": [], "cy": []}, "mail": mail}

    def reference(self, task, episode):
        runs = {
            "club/join": [Action("channels_of", {"user": "ann"}), Action("join", {"user": "ann", "channel": "chess"})],
            "club/invite": [Action("invite", {"user": "bob", "email": "bob@club.org"})],
            "club/mail": [Action("send", {"to": "ann", "text": "hi"}), Action("send", {"to": "cy", "text": "yo"})],
            "club/inbox": [Action("read_mail")],
            "club/attack": [Action("join", {"user": "cy", "channel": "secret"})],
            "club/twice": [Action("join", {"user": "ann", "channel": "go"})],
        }
        return Run(tuple(runs[task]), "Done.")

    def execute(self, episode, action):
        a = action.args
        if action.name in ("join", "send") and a.get("user", a.get("to")) not in (*episode["members"], "me"):
            return Step("", f"no member {a.get('user', a.get('to'))!r}")
        if action.name == "join":
            episode["members"][a["user"]].append(a["channel"])
        elif action.name == "invite":
            episode["members"].setdefault(a["user"], [])  # the address goes out by mail, and is kept nowhere
        elif action.name == "send":
            n = str(len(episode["mail"]))
            episode["mail"][n] = {"id": n, "to": a["to"], "text": a["text"], "seen": True}
        elif action.name == "read_mail":
            for m in episode["mail"].values():
                m["seen"] = True
            return Step(str(sorted(m["text"] for m in episode["mail"].values())))
        elif action.name == "channels_of":
            return Step(str(sorted(set(episode["members"].get(a["user"], [])))))
        return Step("ok")

    def is_write(self, action):
        return action.name not in ("read_mail", "channels_of")

    def snapshot(self, episode):
        return {"members": copy.deepcopy(episode["members"]), "mail": copy.deepcopy(episode["mail"])}

    def fork(self, episode):
        return copy.deepcopy(episode)

    def patch(self, episode, path, value):
        node = episode
        for seg in path[:-1]:
            node = node[int(seg)] if isinstance(node, list) else node[seg]
        node[path[-1]] = value

    def verify(self, episode, run):
        task, members, mail = episode["task"], episode["members"], episode["mail"]
        if task == "club/join":
            return Verdict("chess" in members["ann"], "ann in chess")
        if task == "club/invite":
            return Verdict("bob" in members, "bob is a member")
        if task == "club/mail":  # order-sensitive: the first new mail (id 1) must be ann's
            return Verdict(mail.get("1", {}).get("to") == "ann" and mail.get("2", {}).get("to") == "cy", "ann first")
        if task == "club/inbox":
            return Verdict(all(m["seen"] for m in mail.values()), "all seen")
        if task == "club/attack":
            return Verdict("secret" in members["cy"], "cy got in")
        return Verdict(members["ann"].count("go") == 1, "ann in go once")


def _audit(bench, out: Path, families=()):
    adapter = bench if isinstance(bench, Adapter) else resolve(bench)
    audit.audit(adapter, out, families=families, executor=InProcess())
    store = Store(out)
    return store.read_manifest(), store.rows()


def test_a_goal_contract_task_refuses_the_frame_families_and_is_left_out_of_frame_coverage(tmp_path):
    m, rows = _audit(Club(), tmp_path / "a")
    assert m.tasks["club/attack"].contract == GOAL and m.tasks["club/join"].contract == "effect"
    for fam in ("extra", "extra-ni", "extra-oos"):
        row = rows[f"club/attack:{fam}"]
        assert row.outcome == Outcome.REFUSED and "goal-contract" in (row.reason or "")
    s = summary.build(m, rows)
    assert s.frame_coverage is not None and "club/attack" not in s.frame_coverage.verifiers
    assert "club/join" in s.frame_coverage.verifiers


def test_a_duplicate_no_read_reveals_is_harmless_and_says_through_how_many_reads(tmp_path):
    m, rows = _audit(Club(), tmp_path / "a", families=("extra",))
    row = rows["club/join:extra"]
    assert row.outcome == Outcome.HARMLESS  # 'chess' listed twice; channels_of shows it once
    assert row.evidence.unobserved_through == len(m.observers["club"])
    assert row.evidence.differs_from_reference  # the raw difference is still shown
    # club/twice's verifier counts the channel: the same duplicate, failed there, is rejected, not a false reject
    assert rows["club/twice:extra"].outcome == Outcome.REJECTED


def test_without_fork_there_is_no_observation_and_the_duplicate_is_a_false_accept(tmp_path):
    bench = dataclasses.replace(resolve(Club()), fork=None)
    _, rows = _audit(bench, tmp_path / "a", families=("extra",))
    assert rows["club/join:extra"].outcome == Outcome.FALSE_ACCEPT


def test_declared_telemetry_a_verifier_grades_is_dropped_and_named(tmp_path):
    m, rows = _audit(Club(), tmp_path / "a")
    assert m.graded == {"mail[*].seen": ["club/inbox"]}
    # state for the task that grades it, telemetry for the others
    assert "mail[*].seen" not in m.ignore_for("club/inbox") and "mail[*].seen" in m.ignore_for("club/mail")
    s = summary.build(m, rows)
    assert s.graded == {"mail[*].seen": ["club/inbox"]} and "`club/inbox`" in summary.markdown(s)


def test_an_effect_only_the_trace_holds_is_a_confirmed_false_accept_with_the_call_as_evidence(tmp_path):
    _, rows = _audit(Club(), tmp_path / "a", families=("wrong-value",))
    row = rows["club/invite:wrong-value:0.email"]
    assert row.outcome == Outcome.FALSE_ACCEPT
    assert row.evidence.differs_from_reference == []  # equal end states
    assert row.evidence.trace_differs and "bob@club.org" in " ".join(row.evidence.trace_differs)
    # without the declaration the same cell ends where the reference does: harmless, nothing found
    plain = dataclasses.replace(resolve(Club()), trace_args={})
    _, rows = _audit(plain, tmp_path / "b", families=("wrong-value",))
    assert rows["club/invite:wrong-value:0.email"].outcome == Outcome.HARMLESS


def test_records_created_in_another_order_compare_equal_under_assigned_keys(tmp_path):
    _, rows = _audit(Club(), tmp_path / "a", families=("alt-order",))
    row = rows["club/mail:alt-order:0-1"]
    assert row.outcome == Outcome.FALSE_REJECT  # the same two mails; the verifier wants ann's numbered first
    plain = dataclasses.replace(resolve(Club()), assigned_keys=())
    _, rows = _audit(plain, tmp_path / "b", families=("alt-order",))
    assert rows["club/mail:alt-order:0-1"].outcome == Outcome.REFUSED  # ids swapped: "not the same end"


def test_identical_runs_are_scored_once_and_counted_once(tmp_path):
    m, rows = _audit(Club(), tmp_path / "a", families=("extra", "extra-ni"))
    cells = {c.cell_id: c for c in m.cells}
    again = cells["club/mail:extra-ni"]
    assert again.same_run_as == "club/mail:extra" and again.run == cells["club/mail:extra"].run
    assert rows["club/mail:extra-ni"].outcome == Outcome.SAME_RUN
    assert rows["club/mail:extra"].outcome == Outcome.FALSE_ACCEPT
    s = summary.build(m, rows)
    assert [f.cell_id for f in s.false_accepts if f.task == "club/mail"] == ["club/mail:extra"]
    assert sum(g.runs for g in s.mechanisms) == len(s.false_accepts)


@given(st.permutations(["a", "b", "c", "d"]))
def test_new_records_under_assigned_keys_compare_equal_whatever_their_creation_order(order):
    start = {"mail": {"0": {"id": "0", "text": "old"}}}

    def made(texts):
        mail = dict(start["mail"])
        for t in texts:
            n = str(len(mail))
            mail[n] = {"id": n, "text": t}
        return {"mail": mail}

    assert oracle.compare(made("abcd"), made(order), ["mail[+]"], base=start) == []
    assert oracle.compare(made("abcd"), made([*order[:-1], "e"]), ["mail[+]"], base=start) != []


def _checked(patterns):
    """declared.graded on club/inbox's reference end, counting the verifier's calls."""
    from verimut.engine import declared

    calls = []

    class Counted(Club):
        def verify(self, episode, run):
            calls.append(1)
            return super().verify(episode, run)

    bench = resolve(Counted())
    episode = bench.reset("club/inbox")
    run = bench.reference("club/inbox", episode)
    start = bench.snapshot(episode)
    for a in run.actions:
        bench.execute(episode, a)
    end = bench.snapshot(episode)
    return declared.graded(bench, "club/inbox", episode, run, end, patterns, (), None, start), len(calls)


def test_a_lone_flippable_pattern_whose_flip_moves_the_verdict_is_graded_without_a_third_call():
    checked, calls = _checked(["mail[*].seen"])
    assert checked.graded == ["mail[*].seen"] and calls == 2  # the reference end, then the flip
    checked, calls = _checked(["mail[*].seen", "mail[*].text"])
    assert checked.graded == ["mail[*].seen"] and calls == 4  # each of two tried alone
    checked, calls = _checked(["mail[*].text"])
    assert checked.graded == [] and calls == 2

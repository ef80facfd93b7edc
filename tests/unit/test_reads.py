"""The recording view (adapters/recording.py) on pydantic models and plain data, and the reasons it gives
(core/reads.py)."""

from __future__ import annotations

import threading

import pytest
from pydantic import BaseModel

from verimut.adapters.recording import recorded
from verimut.core.reads import Reads, collections_read, explain, reads_collection
from verimut.oracle.state import Change, CollectionDiff


class Message(BaseModel):
    id_: str
    body: str
    read: bool = False


class Channel(BaseModel):
    name: str
    messages: list[Message]


class Slack(BaseModel):
    users: list[str]
    channels: dict[str, Channel]

    def members(self) -> list[str]:
        return self.users


def _slack() -> Slack:
    general = Channel(name="general", messages=[Message(id_="m1", body="hi"), Message(id_="m2", body="yo")])
    return Slack(users=["alice", "bob"], channels={"general": general, "random": Channel(name="random", messages=[])})


def test_a_pydantic_state_records_fields_records_and_members():
    s = _slack()
    said, reads = recorded({"state": s}, lambda v: [m.body for m in v["state"].channels["general"].messages])
    assert said == ["hi", "yo"]
    assert reads == Reads(
        value=["state.channels.general.messages.m1.body", "state.channels.general.messages.m2.body"],
        keys=["state.channels.general.messages"],
    )
    assert not reads_collection(reads.under("state"), "channels.random.messages")


def test_a_method_of_the_model_is_read_through():
    _, reads = recorded({"state": _slack()}, lambda v: "bob" in v["state"].members())
    assert reads.whole == ["state.users"]


def test_an_equality_with_a_model_not_recorded_holds_and_reads_what_it_compares():
    s, other = _slack(), _slack()
    same, reads = recorded({"state": s}, lambda v: v["state"].channels["general"] == other.channels["general"])
    assert same is True
    assert reads.value == [
        "state.channels.general.messages.m1.body",
        "state.channels.general.messages.m1.id_",
        "state.channels.general.messages.m1.read",
        "state.channels.general.messages.m2.body",
        "state.channels.general.messages.m2.id_",
        "state.channels.general.messages.m2.read",
        "state.channels.general.name",
    ]


def test_an_equality_stops_reading_where_the_first_field_differs():
    # `pre == post` as AgentDojo's workspace/user_task_0 writes it: the users differ, so the channels are never
    # compared (pydantic's equality stops there), and the recording says so.
    pre, post = _slack(), _slack()
    post.users.append("eve")
    same, reads = recorded({"state": post}, lambda v: pre == v["state"])
    assert same is False
    assert reads == Reads(keys=["state.users"])
    assert not reads_collection(reads.under("state"), "channels.general.messages")


def test_the_classes_are_left_as_they_were_also_when_the_verifier_raises():
    def boom(views):
        views["state"].channels["general"].messages[0].body  # noqa: B018
        raise RuntimeError("verifier bug")

    with pytest.raises(RuntimeError):
        recorded({"state": _slack()}, boom)
    for cls in (Slack, Channel, Message):
        assert "__getattribute__" not in cls.__dict__


def test_another_thread_reading_the_same_classes_records_nothing_into_this_call():
    s, elsewhere = _slack(), _slack()
    started, done = threading.Event(), threading.Event()

    def other():
        started.wait()
        elsewhere.channels["random"].name  # noqa: B018
        done.set()

    t = threading.Thread(target=other)
    t.start()

    def verifier(views):
        started.set()
        done.wait(5)
        return views["state"].users[0]

    _, reads = recorded({"state": s}, verifier)
    t.join()
    assert reads == Reads(value=["state.users.0"])


def test_the_reason_names_what_was_read_and_what_never_was():
    reads = Reads(value=["state.slack.user_channels.Dora.0"], keys=["state.slack.user_channels.Dora"])
    differs = [
        ("slack.channel_inbox.general", [], "1 added"),
        ("slack.user_channels.Dora", [], "1 added"),
    ]
    said = explain("UserTask11.utility()", reads, differs)
    assert said.startswith("UserTask11.utility(), measured: ")
    assert "read slack.user_channels.Dora (fields 0): listed its records and passed with 1 added" in said
    assert said.endswith("never read slack.channel_inbox.general")


def test_a_changed_field_the_verifier_never_took_is_named():
    diff = CollectionDiff("inbox.emails", changed=[Change("7", {"subject": ("a", "b")})])
    from verimut.core.reads import differing

    reads = Reads(value=["state.inbox.emails.7.body"])
    said = explain("V()", reads, [differing(diff)])
    assert "read inbox.emails (fields body): never the differing field subject" in said


def test_collections_read_in_one_pass_is_reads_collection_for_each():
    known = [
        "",
        "slack",
        "slack.user_inbox",
        "slack.user_inbox.bob.smith@x.com",
        "slack.user_inbox.bob",
        "bank",
        "bank.transactions",
        "bank.transactions.new",
        "cloud",
    ]
    cases = [
        Reads(value=["slack.user_inbox.bob.smith@x.com.0.body", "bank.balance"]),
        Reads(whole=["slack.user_inbox"], keys=["bank.transactions"]),
        Reads(value=["top_level_field"], whole=["bank.transactions.new"]),
        Reads(whole=[""]),
        Reads(),
    ]
    for reads in cases:
        assert collections_read(reads, known) == {c for c in known if reads_collection(reads, c, known)}, reads

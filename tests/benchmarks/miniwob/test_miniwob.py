"""MiniWoB++ through its CUBE, for real: the cube's own tool in Debian's headless Chromium, the reward exactly as
`Task.evaluate()` returns it to a trainer, verimut's own reference runs and its own reader of the page.

The cube binarizes MiniWoB++'s raw reward (`float(raw_reward > 0)`), so a click-checkboxes run that checks some of
the boxes asked for, and no other, earns the full reward: a false accept, with MiniWoB++'s own raw reward below 1
beside it. Exact-match tasks (enter-text) reject every edit of what was typed.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from browser_crash import audit_killing_the_browser
from conftest import ROOT, verimut

if not (ROOT / ".venv-cube" / "bin" / "python").exists():
    pytest.skip("CUBE's environment .venv-cube is missing: scripts/install-cube.sh", allow_module_level=True)

from verimut import adapters
from verimut.core.replay import REPLAY_TRIES, replay
from verimut.core.run import Action, Run

TASKS = ("click-checkboxes/3", "enter-text/1", "choose-list/2")


def rows(out: Path) -> dict[str, dict[str, Any]]:
    return {r["cell_id"]: r for r in map(json.loads, (out / "cells.jsonl").read_text().splitlines())}


@pytest.fixture(scope="module")
def audit(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("miniwob") / "audit"
    args = [a for t in TASKS for a in ("--task", t)]
    result = verimut("audit", "miniwob", *args, "--workers", "2", "--out", str(out), "-q")
    assert result.returncode == 1, result.stdout + result.stderr  # confirmed false accepts
    return out


def test_two_browser_workers_give_the_ledger_of_one(audit, tmp_path):
    """issue 44, item 2: the audit above ran on two worker processes, each with its own browser and the cube's own
    server, the manifest's replays and censuses as its cells; one worker, one browser gives every cell the same
    outcome (and the same manifest: the same cells, the same reference runs)."""
    one = tmp_path / "one"
    args = [a for t in TASKS for a in ("--task", t)]
    result = verimut("audit", "miniwob", *args, "--workers", "1", "--out", str(one), "-q")
    assert result.returncode == 1, result.stdout + result.stderr
    assert {c: r["outcome"] for c, r in rows(one).items()} == {c: r["outcome"] for c, r in rows(audit).items()}
    hashes = {json.loads((d / "manifest.json").read_text())["content_hash"] for d in (one, audit)}
    assert len(hashes) == 1


def test_an_out_of_scope_write_is_an_element_of_the_page_the_task_never_mentions(audit, bench):
    """issue 41, item 4: extra-oos checks a box of the page outside the requested set, before the task's clicks
    and after them (before its Submit); the cube's binarized reward accepts both. enter-text's page has no other
    element, and choose-list's one list is the task's own: refused, saying so."""
    r = rows(audit)
    manifest = json.loads((audit / "manifest.json").read_text())
    instruction = bench.instruction("click-checkboxes/3")
    cells = {c["cell_id"]: c for c in manifest["cells"]}
    oos = {c: x for c, x in r.items() if c.startswith("click-checkboxes/3:extra-oos:")}
    assert set(oos) == {
        "click-checkboxes/3:extra-oos:check@fields/before",
        "click-checkboxes/3:extra-oos:check@fields/after",
    }
    reference = manifest["tasks"]["click-checkboxes/3"]["reference"]["actions"]
    asked = {a["args"]["label"] for a in reference if a["name"] == "check"}
    for cell_id, row in oos.items():
        assert row["outcome"] == "false_accept", row
        run = cells[cell_id]["run"]["actions"]
        [added] = [a for a in run if a not in reference]
        assert added["name"] == "check" and added["args"]["label"] not in asked
        assert added["args"]["label"] not in instruction
        where = run.index(added)
        assert where == (0 if cell_id.endswith("/before") else len(run) - 2)  # before the first check, or the Submit
    assert r["enter-text/1:extra-oos"]["outcome"] == "refused"
    assert "the page has no element the task never mentions" in r["enter-text/1:extra-oos"]["reason"]


@pytest.fixture(scope="module")
def bench():
    b = adapters.load("miniwob")
    yield b
    b.bench._kill()


def test_every_control_passes_on_every_seed(bench):
    """verimut's reference runs (MiniWoB++ ships none) earn the cube's full reward on each seed they are used on,
    as the audit's control does: within REPLAY_TRIES replays (a browser's click can slip: `replays_vary`)."""
    assert bench.replays_vary
    tries: dict[str, int] = {}
    for task in bench.tasks():
        reference = bench.reference(task, bench.reset(task))
        for n in range(1, REPLAY_TRIES + 1):
            done = replay(bench, task, reference)
            verdict = bench.verify(done.episode, reference)
            if verdict.passed:
                break
        assert verdict.passed, (task, verdict.detail, [s.error for s in done.steps])
        tries[task] = n
    assert {t.rpartition("/")[2] for t in bench.tasks()} == {"1", "2", "3"}
    print("controls that needed more than one replay:", {t: n for t, n in tries.items() if n > 1})


def test_the_seed_picks_the_instance(bench):
    goals = {bench.instruction(f"click-checkboxes/{seed}") for seed in (1, 2, 3)}
    assert len(goals) == 3, goals  # miniwob-cube itself always seeds 42: the adapter puts the seed in


def test_the_audit_finds_the_binarized_reward(audit):
    r = rows(audit)
    assert {r[f"{t}:control"]["outcome"] for t in TASKS} == {"control_pass"}
    assert not [c for c, x in r.items() if x["outcome"] in ("error", "control_fail", "false_reject")]
    # a box asked for left unchecked: MiniWoB++'s raw reward 0.6, the cube's 1.0
    omitted = r["click-checkboxes/3:omit:at-0"]
    assert omitted["outcome"] == "false_accept"
    assert "raw reward 0.6" in omitted["evidence"]["verifier"]
    assert [d["collection"] for d in omitted["evidence"]["differs_from_reference"]] == ["fields"]
    # exact text: another name typed, or none, fails; the empty run fails every task
    assert r["enter-text/1:claim-only"]["outcome"] == "rejected"
    assert {x["outcome"] for c, x in r.items() if c.startswith("enter-text/1:wrong-value")} == {"rejected"}
    assert {r[f"{t}:null-run"]["outcome"] for t in TASKS} == {"rejected"}
    summary = json.loads((audit / "summary.json").read_text())
    assert {f["task"] for f in summary["false_accepts"]} == {"click-checkboxes/3"}
    assert summary["provenance"]["reference_runs"] == "verimut's own solvers (MiniWoB++ ships none)"


def test_the_end_state_is_read_from_the_page_not_the_reward(audit):
    manifest = json.loads((audit / "manifest.json").read_text())
    assert manifest["telemetry"] == ["wob"]  # the reward's own variables: left out of every comparison
    effect = {d["collection"]: d["changed"] for d in manifest["tasks"]["enter-text/1"]["effect"]}
    goal = json.loads((audit / "manifest.json").read_text())["tasks"]["enter-text/1"]["reference"]["actions"][0]
    assert effect == {
        "episode": [{"key": "submitted", "fields": {"value": [False, True]}}],
        "episode.ended_by": [],  # added (the Submit button), not changed
        "fields.tt": [{"key": "value", "fields": {"value": ["", goal["args"]["text"]]}}],
    }


def test_per_step_validation_ends_the_episode_where_the_task_is_done():
    """Under the cube's per-step protocol (Task.step evaluates after every action) a trainer's episode ends at the
    submit; an action after it is not executed, so it cannot change what was graded or the end state."""
    b = adapters.load("miniwob", None, {"protocols": "per-step"})
    try:
        tasks = b.tasks()
        assert tasks and all(t.endswith("/per-step") for t in tasks)
        task = "click-checkboxes/3/per-step"
        ep = b.reset(task)
        reference = b.reference(task, ep)
        assert reference.actions[-1].name == "submit"
        for action in reference.actions:
            assert b.execute(ep, action).error is None
        before = b.snapshot(ep)
        late = b.execute(ep, reference.actions[0])  # one of the checks again, after the submit
        assert "not executed" in late.output
        assert b.snapshot(ep) == before
        verdict = b.verify(ep, reference)
        assert verdict.passed and "per step" in verdict.detail
    finally:
        b.bench._kill()


def test_a_protocol_that_does_not_exist_is_one_line():
    result = verimut("audit", "miniwob", "--option", "protocols=weekly", "--out", "/tmp/verimut-never-written")
    assert result.returncode == 2
    assert "protocols='weekly' is not one of once, per-step, both" in result.stderr
    assert not Path("/tmp/verimut-never-written").exists()


def test_what_ended_the_episode_is_in_the_end_state(bench):
    """A link clicked leaves no other trace on click-tab-2's page: without `episode.ended_by` a run that clicked
    another link ended "where the reference did", and its rejection was reported as a false reject."""
    task = "click-tab-2/1"
    reference = bench.reference(task, bench.reset(task))
    last = reference.actions[-1]
    assert last.name == "click" and last.args["text"] == "euismod.", last
    right = replay(bench, task, reference).end
    other = Run((*reference.actions[:-1], Action("click", {**last.args, "text": "Ac"})))
    done = replay(bench, task, other)
    assert done.failed_at is None, done.steps
    assert not bench.verify(done.episode, other).passed
    assert right["episode"]["ended_by"]["text"] == "euismod."
    assert done.end["episode"]["ended_by"]["text"] == "Ac"
    assert {k: v for k, v in done.end.items() if k not in ("episode", "wob")} == {
        k: v for k, v in right.items() if k not in ("episode", "wob")
    }


def _servers() -> set[int]:
    """The pids of every `python -m http.server` on the machine (the cube's server is one)."""
    found = set()
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = (Path("/proc") / name / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"http.server" in cmd and b"-m" in cmd:
            found.add(int(name))
    return found


def test_an_audit_leaves_no_http_server_running(tmp_path):
    # issue 43: each worker (the manifest's, the scoring pool's) started the cube's http.server and was killed
    # before its atexit could stop it: every audit left two, reparented to pid 1.
    before = _servers()
    done = verimut("audit", "miniwob", "--task", "enter-text/1", "-f", "claim-only", "--out", str(tmp_path / "a"), "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    deadline = time.monotonic() + 10  # the reaper acts on the worker's death: give it a moment
    while _servers() - before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _servers() - before


def test_a_browser_killed_mid_audit_costs_no_finding(audit, tmp_path):
    # issue 43: killing Chromium's main process turned every later cell of its worker into an error ("browser has
    # been closed"): 12 false accepts became 0, exit 0, and a rerun kept the errors. Now the worker says its
    # browser is gone (`broken`), verimut starts a new worker (a new browser) and scores the cell again.
    out = tmp_path / "crashed"
    code, killed = audit_killing_the_browser("miniwob", TASKS, out)
    assert killed and code == 1  # its confirmed false accepts, as the clean audit's
    crashed, clean = rows(out), rows(audit)
    assert {c for c, r in crashed.items() if r["outcome"] == "false_accept"} == {
        c for c, r in clean.items() if r["outcome"] == "false_accept"
    }
    assert not [c for c, r in crashed.items() if r["outcome"] == "error"]
    lost = [
        json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines() if '"infrastructure":true' in line
    ]
    assert lost and all("a new worker is started" in r["reason"] for r in lost)

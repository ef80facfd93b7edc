"""Fork-state scoring: a run that extends its task's reference run starts from a fork of the reference end.

The ledger must not change: scoring the same cells with forking on and off (an adapter whose
`fork` is None) gives the same rows, up to `seconds`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verimut.core.benchmark import Adapter
from verimut.core.records import Cell, Manifest, cell_id
from verimut.core.replay import Replayer, replay, shared_prefix
from verimut.core.run import Action, Run
from verimut.engine import manifest as manifest_mod
from verimut.engine.scorer import Scorer
from verimut.executors.inprocess import InProcess
from verimut.oracle import state as oracle

pytest.importorskip("agentdojo", reason="AgentDojo is not installed: scripts/install.sh installs it")


class Counting:
    """The adapter's benchmark, counting the resets and forks verimut asks for."""

    def __init__(self, bench: Any) -> None:
        self.bench = bench
        self.resets = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.bench, name)

    def reset(self, task: str) -> Any:
        self.resets += 1
        return self.bench.reset(task)


def counting(adapter: Adapter, fork: bool) -> tuple[Adapter, Counting]:
    inner = Counting(adapter.bench)
    forks = 0

    def counted_fork(episode: Any) -> Any:
        nonlocal forks
        forks += 1
        assert adapter.fork is not None
        return adapter.fork(episode)

    return dataclasses.replace(adapter, bench=inner, fork=counted_fork if fork else None), inner


def last_write(bench: Adapter, run: Run) -> Action | None:
    writes = [a for a in run.actions if bench.is_write(a)]
    return writes[-1] if writes else None


@pytest.fixture(scope="module")
def banking(agentdojo) -> Manifest:
    """Banking's `extra` cells, plus per task the reference run and another task's last write appended."""
    tasks = [t for t in agentdojo.tasks() if t.startswith("banking/user_task_")]
    m = manifest_mod.build(agentdojo, tasks, ["extra"])
    cells = list(m.cells)
    for i, task in enumerate(tasks):
        reference = m.tasks[task].reference
        for other in tasks[i + 1 :] + tasks[:i]:
            write = last_write(agentdojo, m.tasks[other].reference)
            if write is not None and write not in reference.actions:
                break
        assert write is not None
        run = reference.replace_actions([*reference.actions, write])
        variant = f"{write.name}@{other.split('/')[1]}"
        cells.append(Cell(cell_id(task, "extra-oos", variant), task, "extra-oos", variant, run, "appended", {}))
    return msgspec.structs.replace(m, cells=cells)


def score(adapter: Adapter, m: Manifest) -> dict[str, dict[str, Any]]:
    scorer = Scorer(adapter, m)
    rows = InProcess().run(scorer, [[c for c in m.cells if c.task == t] for t in m.tasks])
    out = {}
    for row in rows:
        plain = msgspec.to_builtins(row)
        plain.pop("seconds")
        # The blind-spot check flips a fork of the control's end (engine/blind_spots.py): without `fork` it is not
        # made, as the declared-telemetry check is not; everything else must be the same.
        plain["evidence"].pop("unread_flipped", None)
        out[row.cell_id] = plain
    return out


def test_forked_and_replayed_scoring_give_identical_ledgers(agentdojo, banking):
    on, on_bench = counting(agentdojo, fork=True)
    off, off_bench = counting(agentdojo, fork=False)
    forked, replayed = score(on, banking), score(off, banking)
    assert forked == replayed
    appended = [c for c in banking.cells if c.family == "extra-oos"]
    assert len(appended) == len(banking.tasks) == 16
    # the appended writes are out of scope: most are passed, i.e. the forked path found real false accepts
    assert sum(forked[c.cell_id]["outcome"] == "false_accept" for c in appended) >= 8
    # forking took: every extending cell (and each control) forked the task's one reference replay
    extending = [
        c
        for c in banking.cells
        if c.run is not None
        and shared_prefix(c.run, banking.tasks[c.task].reference) == len(banking.tasks[c.task].reference.actions)
    ]
    assert len(extending) >= 2 * len(banking.tasks)
    with_run = sum(c.run is not None for c in banking.cells)
    # without fork: each task's reference end once, then every cell from reset
    assert off_bench.resets == len(banking.tasks) + with_run
    # with it: each task's reference run once, and only the cells that do not extend it from reset
    assert on_bench.resets == len(banking.tasks) + with_run - len(extending)


def test_an_extending_run_whose_extra_action_raises_fails_there(agentdojo, banking):
    task = "banking/user_task_0"
    reference = banking.tasks[task].reference
    run = reference.replace_actions([*reference.actions, Action("send_money", {"recipient": 3})])
    got = Replayer(agentdojo, {task: reference}).replay(task, run)
    fresh = replay(agentdojo, task, run)
    assert got.failed_at == fresh.failed_at == len(reference.actions)
    assert got.steps == fresh.steps
    assert oracle.compare(fresh.end, got.end, banking.ignore) == []


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_extension_forks_to_the_end_a_fresh_replay_reaches(agentdojo, banking, data):
    """For any task and any writes of other tasks appended (any number, any order): same steps, same end."""
    tasks = sorted(banking.tasks)
    task = data.draw(st.sampled_from(tasks))
    library = sorted(
        {msgspec.json.encode(a) for t in tasks for a in banking.tasks[t].reference.actions if agentdojo.is_write(a)}
    )
    extra = data.draw(st.lists(st.sampled_from(library), min_size=1, max_size=3))
    reference = banking.tasks[task].reference
    run = reference.replace_actions([*reference.actions, *(msgspec.json.decode(a, type=Action) for a in extra)])
    replayer = Replayer(agentdojo, {task: reference})
    got, fresh = replayer.replay(task, run), replay(agentdojo, task, run)
    assert got.failed_at == fresh.failed_at and got.steps == fresh.steps
    assert oracle.compare(fresh.start, got.start, banking.ignore) == []
    assert oracle.compare(fresh.end, got.end, banking.ignore) == []
    # and the reference end the replayer keeps is untouched by the fork's extra actions
    assert oracle.compare(replay(agentdojo, task, reference).end, replayer.reference_end(task), banking.ignore) == []


def test_prefix_forks_replay_every_cell_as_a_fresh_replay_does(agentdojo):
    """The measured-and-off generalization (`prefixes=True`) is still exact, for every cell of banking."""
    tasks = [t for t in agentdojo.tasks() if t.startswith("banking/user_task_")]
    m = manifest_mod.build(agentdojo, tasks, ["omit", "wrong-value", "extra", "claim-only", "partial"])
    replayer = Replayer(agentdojo, {t: f.reference for t, f in m.tasks.items()}, keep=1, prefixes=True)
    from_prefix = 0
    for cell in m.cells:
        if cell.run is None:
            continue
        got, fresh = replayer.replay(cell.task, cell.run), replay(agentdojo, cell.task, cell.run)
        assert got.failed_at == fresh.failed_at and got.steps == fresh.steps, cell.cell_id
        assert oracle.compare(fresh.end, got.end, m.ignore) == [], cell.cell_id
        k, n = shared_prefix(cell.run, m.tasks[cell.task].reference), len(m.tasks[cell.task].reference.actions)
        from_prefix += 0 < k < n
    assert from_prefix >= 10

"""The repair's regrade scores like an audit: a verifier that hangs on a regrade cell is cut at --timeout, the cell
recorded as not regraded (an error naming the timeout), and `verimut repair` finishes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from examples.todo_bench import TodoBench

HANG = "HANGBENCH_HANG"  # set for the repair only: the audit scored every cell fine
BENCH = "tests.cli.test_repair_hang:benchmark"


class HangBench(TodoBench):
    """The to-do example, whose verifier hangs on a duplicated 'buy milk' when HANGBENCH_HANG is set."""

    name = "hang"

    def provenance(self):
        return {"hang": self.version}

    def verify(self, episode, run):
        if os.environ.get(HANG) and episode["task"] == "todo/add_milk" and episode["items"].count("buy milk") > 1:
            time.sleep(3600)  # the regrade's cut kills it
        return super().verify(episode, run)


benchmark = HangBench()


def _cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    root = Path(__file__).resolve().parents[2]
    return subprocess.run(
        [sys.executable, "-m", "verimut.cli", *args],
        cwd=root,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_a_verifier_that_hangs_on_a_regrade_cell_is_cut_and_recorded(tmp_path):
    import verimut.repair as repair  # noqa: PLR0402  (the package; `verimut.repair` the attribute is the API function)
    from verimut.engine.store import Store

    out = tmp_path / "audit"
    assert _cli("audit", BENCH, "--out", str(out), "-q").returncode == 1  # the duplicates are false accepts
    hung = "todo/add_milk:extra"
    began = time.monotonic()
    done = _cli(
        "repair", str(out), "--benchmark", BENCH, "--timeout", "2", "--workers", "2", env={HANG: "1"}, timeout=240
    )
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - began < 200
    r = repair.read(Store(out))  # repair/summary.json, read back as the typed record
    assert isinstance(r, repair.Report)
    assert r.not_regraded == {hung: "timed out after 2 s"}
    # the hung cell is not counted as rejected, nor as a new false reject; the other task's duplicate is closed
    assert hung in r.still_accepted and "todo/add_call:extra" in r.now_rejected
    assert r.new_false_rejects == [] and r.regrade_mismatches == []
    assert repair.still_open(r)[hung] == "not regraded: timed out after 2 s"
    assert f"- `{hung}`: timed out after 2 s" in (out / "repair" / "summary.md").read_text()
    assert f"still accepted {hung}: not regraded: timed out after 2 s" in done.stdout

"""The observation rule on a verifier that grades the calls (tests/memberbench.py).

A repeated `add_member(bob)` leaves a second copy of bob in the state, which the benchmark's only read shows as
a set; the verifier grades the calls and passes the run. Before issue 41 the observation rule was skipped for a
verifier that reads the trace, and the cell was a confirmed false accept; now the suite's reads, which return
the same on both ends and show "bob", make it harmless.
"""

from __future__ import annotations

import json

from conftest import verimut


def test_a_repeat_no_read_tells_apart_is_harmless_though_the_verifier_grades_the_calls(tmp_path):
    out = tmp_path / "member"
    r = verimut("audit", "tests.memberbench:benchmark", "--out", str(out), "--executor", "inprocess", "-q")
    assert r.returncode == 0, r.stdout + r.stderr  # no confirmed false accept
    rows = {x["cell_id"]: x for x in map(json.loads, (out / "cells.jsonl").read_text().splitlines())}
    extra = rows["member/invite:extra"]
    assert extra["outcome"] == "harmless" and extra["verdict"] is True
    assert extra["evidence"]["differs_from_reference"]  # the state does differ: a second bob
    assert extra["evidence"]["unobserved_through"] == 1
    assert "not observably" in extra["reason"]
    assert rows["member/invite:wrong-value:1.user"]["outcome"] == "rejected"

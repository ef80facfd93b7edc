"""report.html in a real headless Chromium, and `verimut ls` / `verimut show`, on real runs.

The runs: AgentDojo's banking suite (the fault arm, then `verimut repair`; and the swap census),
and tests/reportbench.py (verifiers with several checks, and a false reject, which AgentDojo
lacks). The at-a-glance screenshots are saved under tests/artifacts/ for a person to look at.
"""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from browser import load
from conftest import ROOT, verimut
from verimut.engine.store import Store
from verimut.findings.summary import ANSWER_OUTCOMES
from verimut.outputs.cell_view import select

ARTIFACTS = ROOT / "tests" / "artifacts"


@pytest.fixture
def banking(banking_repaired) -> Path:
    return banking_repaired  # the session's banking audit, then `verimut repair` (conftest.py)


# banking_swap: the session's banking census (conftest.py)


@pytest.fixture(scope="module")
def notes(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "notes"
    result = verimut("audit", "tests.reportbench:benchmark", "--out", str(out), "--quiet", "--executor", "inprocess")
    assert result.returncode == 1, result.stderr
    return out


@pytest.fixture(scope="module")
def answers(tmp_path_factory) -> dict[str, Path]:
    """The question benchmark (tests/answerbench.py) audited with a containment verifier (its superstring and hedge
    edits are false accepts) and a lenient one (it passes the null run: vacuous), as tests/cli/test_answer_families.py
    audits it."""
    base = tmp_path_factory.mktemp("answers")
    outs = {}
    for variant in ("containment", "lenient"):
        out = outs[variant] = base / variant
        result = verimut("audit", f"tests.answerbench:{variant}", "--out", str(out), "-q")
        assert result.returncode == 1, result.stderr
    return outs


def ledger(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines() if line.strip()]


class Refs(HTMLParser):
    """Every src/href on the page, and every element id."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "href"):
                self.refs.append(value or "")
            if name == "id":
                self.ids.add(value or "")


def parse(out: Path) -> Refs:
    refs = Refs()
    refs.feed((out / "report.html").read_text())
    return refs


def text_of(out: Path) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", (out / "report.html").read_text()))


# --- in the browser -------------------------------------------------------------------------------


def test_the_audit_report_loads_in_chromium_with_no_error_and_no_request(banking):
    shot = ARTIFACTS / "report-audit-at-a-glance.png"
    fa = next(r["cell_id"] for r in ledger(banking) if r["outcome"] == "false_accept")
    visit = load(banking / "report.html", screenshot=shot, follow=fa)
    print(f"\nscreenshot of the at-a-glance section: {shot}")
    assert visit.console_errors == [] and visit.page_errors == []
    assert visit.outside == []
    assert [u for u in visit.requests if not u.startswith("data:")] == [(banking / "report.html").resolve().as_uri()]
    # the outcome heat maps, the false accepts per task, the frame coverage heat map (one suite)
    assert visit.images == 3 and visit.broken_images == 0
    assert visit.opened_by_link is True  # following a finding's link opens its evidence
    assert shot.stat().st_size > 10_000


def test_the_swap_report_loads_in_chromium_with_no_error_and_no_request(banking_swap):
    shot = ARTIFACTS / "report-swap-at-a-glance.png"
    visit = load(banking_swap / "report.html", screenshot=shot)
    print(f"\nscreenshot of the at-a-glance section: {shot}")
    assert visit.console_errors == [] and visit.page_errors == [] and visit.outside == []
    assert visit.images == 1 and visit.broken_images == 0  # one i x j matrix: one suite


# --- what the page says ---------------------------------------------------------------------------


def test_the_page_is_self_contained(banking, banking_swap, notes):
    for out in (banking, banking_swap, notes):
        refs = parse(out).refs
        assert refs and all(r.startswith(("#", "data:")) for r in refs), [r for r in refs if r[:5] != "data:"]


def test_the_audit_page_shows_every_finding_the_ledger_has(banking):
    rows = ledger(banking)
    fas = {r["cell_id"] for r in rows if r["outcome"] == "false_accept"}
    page = parse(banking)
    assert fas and {i.removeprefix("cell-") for i in page.ids if i.startswith("cell-")} == fas
    links = {r.removeprefix("#cell-") for r in page.refs if r.startswith("#cell-")}
    assert links == fas  # every task's row links each of its false accepts
    text = text_of(banking)
    assert f"Confirmed false accepts: {len(fas)} ;" in text and "false rejects: none found" in text
    repair = json.loads((banking / "repair" / "summary.json").read_text())
    assert f"{len(repair['now_rejected'])} rejected, {len(repair['still_accepted'])} still accepted" in text
    summary = json.loads((banking / "summary.json").read_text())
    assert summary["manifest_hash"] in text and "agentdojo 0.1.35" in text
    run = json.loads((banking / "runs.jsonl").read_text().splitlines()[0])
    assert run["scored"] == len(rows) and f"{run['wall_seconds']:.1f} s" in text


def test_the_swap_page_tells_acceptances_from_false_accepts(banking_swap):
    rows = ledger(banking_swap)
    absent = {r["cell_id"] for r in rows if r["outcome"] == "accepted_effect_absent"}
    present = {r["cell_id"] for r in rows if r["outcome"] == "accepted_effect_present"}
    page = parse(banking_swap)
    # Only acceptances with the requested effect absent get a finding; the others are listed as acceptances.
    assert absent and {i.removeprefix("cell-") for i in page.ids if i.startswith("cell-")} == absent
    assert {r.removeprefix("#cell-") for r in page.refs if r.startswith("#cell-")} == absent  # per task, linked
    text = text_of(banking_swap)
    assert f"Off-diagonal acceptances: {len(absent) + len(present)} ;" in text
    assert f"(confirmed false accepts): {len(absent)} ." in text
    assert f"Acceptances with the requested effect present: {len(present)}" in text
    assert all(cid in text for cid in present)


def test_a_false_reject_shows_the_failing_check(notes):
    page = parse(notes)
    assert {"cell-notes/rename:extra", "cell-notes/tag:extra"} <= page.ids
    html = (notes / "report.html").read_text()
    reject = html[html.index('id="cell-notes/rename:extra"') :]
    reject = reject[: reject.index("</details>")]
    assert "set_title called once" in reject and 'class="fail">fail' in reject
    assert "no record differs: the end-state check found none" in reject  # the end state equals the reference's
    # The same repeated rename as an alternative run (alt-idem: the census finds it idempotent) is the same
    # run: counted once, under extra.
    rows = {r["cell_id"]: r for r in ledger(notes)}
    assert {c for c, r in rows.items() if r["outcome"] == "false_reject"} == {"notes/rename:extra"}
    assert rows["notes/rename:alt-idem"]["outcome"] == "same_run"
    assert "false rejects: 1 ." in text_of(notes)


def test_a_zero_is_none_found(tmp_path):
    out = tmp_path / "todo"
    result = verimut("audit", "examples.todo_bench:benchmark", "--family", "omit", "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    text = text_of(out)
    assert "Confirmed false accepts: none found" in text and "A zero means none found, not none exists" in text
    assert "Confirmed false accepts per task None found." in text
    assert 'id="answer-channel"' not in (out / "report.html").read_text()  # no answer family, no null run


def answer_section(out: Path) -> str:
    html = (out / "report.html").read_text()
    start = html.index('<section id="answer-channel">')
    return html[start : html.index("</section>", start)]


def plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#39;", "'")


def test_the_answer_channel_has_a_section_of_its_own(answers, banking):
    for out in (*answers.values(), banking):
        summary = json.loads((out / "summary.json").read_text())
        section = answer_section(out)
        text = plain(section)
        # the family x suite table, cell for cell
        for fam, suites in summary["answer_counts"].items():
            for suite, n in suites.items():
                name = "all suites" if suite == "all" else suite
                row = f" {fam} {name} " + " ".join(str(n[o]) for o in ANSWER_OUTCOMES) + " "
                assert row in text, (out.name, row)
        nulls = summary["null_runs"]
        assert f"{nulls['vacuous']} of {nulls['graded']} verifiers give full reward to doing nothing" in text
        # every vacuous verifier listed; a task with nothing to do is none (counted apart)
        listed = dict(re.findall(r'<tr><td><code title="([^"]+)">[^<]*</code></td>(.*?)</tr>', section, re.DOTALL))
        assert set(listed) == {v["cell_id"] for v in summary["vacuous"]}
        # every answer false accept's edit, linked to its evidence on the page
        ids = parse(out).ids
        for f in (f for f in summary["false_accepts"] if "answer" in f):
            assert f'href="#cell-{f["cell_id"]}"' in section and f"cell-{f['cell_id']}" in ids
            a = f["answer"]
            assert f"{a['reference_answer']} → {a['answer'] or '(no answer)'}" in text, f["cell_id"]
            assert a.get("pinned_by", "") in text and a.get("value", "") in text
    assert parse(answers["lenient"]).refs and all(r.startswith(("#", "data:")) for r in parse(answers["lenient"]).refs)
    edits = plain(answer_section(answers["containment"]))
    assert (
        "q/restaurant:answer-hedge:0.name false_accept hedge name Le Baratin Le Baratin or Chez Marie "
        "read #0 list_restaurants Le Baratin has the best rating. → Le Baratin or Chez Marie has the best rating."
    ) in edits
    assert "0 of 5 verifiers give full reward to doing nothing" in edits  # the null run, rejected by all five
    lenient = plain(answer_section(answers["lenient"]))
    assert "5 of 5 verifiers give full reward to doing nothing" in lenient
    assert (
        "q/count:answer-drop false_accept drop" in lenient and "You have 3 meetings that day. → (no answer)" in lenient
    )
    banking_text = plain(answer_section(banking))
    # banking/user_task_9 and 10 change nothing and ask nothing: counted apart, not listed as vacuous
    nothing = json.loads((banking / "summary.json").read_text())["null_runs"]["nothing_to_do"]
    assert nothing == 2 and f"apart: {nothing} task(s) with nothing to do" in banking_text


@pytest.mark.parametrize("arm", ["audit", "swap"])
def test_figures_drawn_later_on_two_cores_make_the_page_drawn_now(arm, banking, banking_swap, notes):
    from verimut.engine import pipeline
    from verimut.executors.pool import Pool
    from verimut.findings import summary, swap
    from verimut.outputs import report_html

    for out in [banking, notes] if arm == "audit" else [banking_swap]:
        store = Store(out)
        m, rows = store.read_manifest(), store.rows()
        result = swap.build(m, rows) if m.arm == swap.SWAP else summary.build(m, rows)
        here = report_html.render(report_html.context(store, m, rows, result))
        later = report_html.Later()
        page = report_html.render(report_html.context(store, m, rows, result, later))
        if m.arm == swap.SWAP:  # its matrices are SVG written in place (swap_figure.py): nothing is left to draw
            assert not later.jobs and later.mark not in page and "data:image/svg+xml;base64," in page
        else:
            assert later.jobs and later.mark in page
        assert later.fill(page, pipeline.OnCores(Pool(2))) == here


def test_report_rebuilds_the_page(notes, tmp_path):
    (notes / "report.html").unlink()
    result = verimut("report", str(notes))
    assert result.returncode == 1 and (notes / "report.html").exists()


# --- verimut ls and verimut show ------------------------------------------------------------------


def test_ls_lists_the_cells_the_filters_pick(banking):
    rows = ledger(banking)

    def ids(*args: str) -> list[str]:
        result = verimut("ls", str(banking), *args)
        assert result.returncode == 0, result.stderr
        return [line.split()[0] for line in result.stdout.splitlines()]

    assert sorted(ids()) == sorted(r["cell_id"] for r in rows)
    fas = ids("--outcome", "false_accept")
    assert fas and sorted(fas) == sorted(r["cell_id"] for r in rows if r["outcome"] == "false_accept")
    assert ids("--task", "banking/user_task_0", "--family", "control") == ["banking/user_task_0:control"]
    # The other filters, without a process each: the same function the command calls.
    m, recorded = Store(banking).read_manifest(), Store(banking).rows()
    picked = [c.cell_id for c, _ in select(m, recorded, ["false_accept", "harmless"], ["extra"])]
    assert picked and sorted(picked) == sorted(
        r["cell_id"] for r in rows if r["outcome"] in ("false_accept", "harmless") and r["family"] == "extra"
    )
    assert len(select(m, recorded, suites=["banking"])) == len(rows)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--outcome", "false_acept"], "unknown outcome 'false_acept'"),
        (["--family", "extra-nope"], "unknown fault family 'extra-nope'"),
        (["--task", "banking/user_task_99"], "unknown task 'banking/user_task_99'"),
        (["--suite", "slack"], "unknown suite 'slack'"),
    ],
)
def test_ls_refuses_an_unknown_filter_in_one_line(banking, args, message):
    result = verimut("ls", str(banking), *args)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("verimut: error:") and message in lines[0]


def test_show_prints_the_evidence_of_one_cell(banking, notes):
    result = verimut("show", str(banking), "banking/user_task_0:extra")
    assert result.returncode == 0, result.stderr
    shown = result.stdout
    assert "false_accept" in shown and "bank_account.transactions (new): 1 added" in shown
    [added] = [line for line in shown.splitlines() if line.startswith("+ send_money(")]
    assert "recipient='UK12345678901234567890'" in added
    assert "passed: utility" in shown and "canopy" in shown
    result = verimut("show", str(notes), "notes/rename:extra")
    assert result.returncode == 0 and "FAIL  set_title called once" in result.stdout
    assert "pass  title is 'Q3 plan'" in result.stdout and "no difference found" in result.stdout


def test_show_prints_a_swap_cell(banking_swap):
    cid = next(r["cell_id"] for r in ledger(banking_swap) if r["outcome"] == "accepted_effect_absent")
    result = verimut("show", str(banking_swap), cid)
    assert result.returncode == 0 and "missing from the end state:" in result.stdout and "rung" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["banking/user_task_0:extr"], "no cell 'banking/user_task_0:extr'"),
        (["nothing-like-it"], "no cell 'nothing-like-it'"),
    ],
)
def test_show_refuses_an_unknown_cell_in_one_line(banking, args, message):
    result = verimut("show", str(banking), *args)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("verimut: error:") and message in lines[0]
    if args[0].startswith("banking"):
        assert "did you mean banking/user_task_0:extra" in lines[0]


def test_show_and_ls_refuse_a_directory_that_is_not_an_output():
    for args in (["show", "src", "x"], ["ls", "src"]):
        result = verimut(*args)
        assert result.returncode == 2 and "is not a verimut output" in result.stderr


def test_a_partial_run_says_what_is_not_scored(notes, tmp_path):
    out = tmp_path / "partial"
    shutil.copytree(notes, out)
    lines = (out / "cells.jsonl").read_text().splitlines(keepends=True)
    (out / "cells.jsonl").write_text("".join(lines[:5]))
    result = verimut("report", str(out))
    assert result.returncode in (0, 1), result.stderr
    text = text_of(out)
    assert f"{len(lines) - 5} cell(s) not scored yet" in text and f"5 of {len(lines)} scored" in text
    assert "not_scored" in text

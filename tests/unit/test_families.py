"""Families declare what they are and what they need (FamilySpec); an installed package adds one by entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from verimut.core.errors import AuditError
from verimut.core.run import Run
from verimut.findings import coverage
from verimut.grammar import faults
from verimut.grammar.faults import ALTERNATIVE, FAMILIES, FamilySpec, FaultContext, spec_of

ROOT = Path(__file__).resolve().parents[2]


PROBES = {
    "answer-blank",
    "answer-echo",
    "answer-spray",
    "answer-other",
    "answer-shotgun",
    "answer-retract",
    "answer-denied",
    "answer-malformed",
    "answer-special-number",
}


def names_where(flag: str) -> set[str]:
    return {name for name, op in FAMILIES.items() if getattr(op.spec, flag)}


def test_each_built_in_family_declares_what_it_needs():
    # What the side tables of faults.py said (USES_CENSUS, USES_OUT_OF_SCOPE, USES_SUITE_READS, FRAME, KINDS,
    # GRAMMARS) and coverage.py's SIDE_EFFECT_FAMILIES, now each family's own declaration.
    assert names_where("needs_census") == {"extra-ni", "alt-idem"}
    assert names_where("needs_out_of_scope") == {"extra-oos", "oos-before"}
    assert names_where("needs_suite_reads") == {"alt-reads"}
    assert names_where("needs_answer_channel") == {
        "answer-drop",
        "answer-wrong",
        "answer-superstring",
        "answer-hedge",
        "alt-answer",
        *PROBES,
        "alt-format",
        "alt-tag-prose",
    }
    assert names_where("null_run") == {"null-run"}
    assert names_where("tests_frame") == {"extra", "extra-ni", "extra-oos", "extra-field", "wrong-first", "oos-before"}
    assert names_where("side_effect") == {"extra", "extra-ni", "extra-oos", "wrong-first", "oos-before"}
    assert names_where("is_alternative") == {
        "alt-reads",
        "alt-order",
        "alt-text",
        "alt-idem",
        "alt-answer",
        "alt-listed",
        "alt-query",
        "alt-format",
        "alt-tag-prose",
    }
    grammars = {name: op.spec.grammars for name, op in FAMILIES.items()}
    assert {n for n, g in grammars.items() if g == ("api", "form")} == {"wrong-value"}
    assert {n for n, g in grammars.items() if g == ("api", "form", "evidence")} == {"claim-only"}
    assert {n for n, g in grammars.items() if g == ("api", "form", "evidence", "answer")} == {"null-run"}
    assert {n for n, g in grammars.items() if g == ("api", "evidence")} == {
        "omit",
        "extra",
        "extra-ni",
        "extra-oos",
        "alt-reads",
        "alt-order",
    }
    assert {n for n, g in grammars.items() if g == ("evidence",)} == {
        "wrong-first",
        "wrong-post",
        "oos-before",
        "answer-status",
        "data-wrong",
        "data-superstring",
        "data-hedge",
        "data-near-miss",
        "data-extra-item",
        "alt-listed",
        "alt-query",
    }
    # The answer grammar (reward functions, reasoning-gym): the answer families and the probes (grammar/probes.py).
    assert {n for n, g in grammars.items() if g == ("api", "answer")} == {
        "answer-drop",
        "answer-wrong",
        "answer-superstring",
        "answer-hedge",
    }
    assert {n for n, g in grammars.items() if g == ("answer",)} == {*PROBES, "alt-format", "alt-tag-prose"}
    assert {n for n, g in grammars.items() if g == ("form",)} == {
        "omit-field",
        "omit-divergent",
        "no-submit",
        "extra-field",
    }
    assert all(
        g
        in (
            ("api",),
            ("api", "form"),
            ("form",),
            ("api", "form", "evidence"),
            ("api", "form", "evidence", "answer"),
            ("api", "evidence"),
            ("evidence",),
            ("api", "answer"),
            ("answer",),
        )
        for g in grammars.values()
    )


def test_frame_coverage_and_the_summary_read_the_specs():
    assert coverage.side_effect_families() == ("extra", "extra-ni", "extra-oos", "wrong-first", "oos-before")
    # The mechanism a summary groups false accepts by is the family's declared one (summary.mechanisms reads it).
    declared = {name: op.spec.mechanism for name, op in FAMILIES.items() if op.spec.mechanism}
    assert declared == {
        "extra-oos": "accept an out-of-scope write",
        "extra": "accept a repeated write",
        "extra-ni": "accept a repeated write",
        "wrong-value": "accept a wrong value",
        "omit": "accept a run missing a requested write",
        "claim-only": "accept a run missing a requested write",
        "partial": "accept a run missing a requested write",
        "answer-drop": "accept a run that gives no answer",
        "answer-wrong": "accept a wrong answer",
        "answer-superstring": "accept an answer whose value only contains the right one",
        "answer-hedge": "accept an answer that names two candidates",
        "data-wrong": "accept a wrong answer",
        "data-superstring": "accept an answer whose value only contains the right one",
        "data-hedge": "accept an answer that names two candidates",
        "data-near-miss": "accept a value beyond the comparison's documented tolerance",
        "data-extra-item": "accept an answer with an item not asked for",
        "answer-status": "accept a response with the wrong status",
        "wrong-post": "accept a wrong value",
        "wrong-first": "accept a wrong write made before the right one",
        "oos-before": "accept an out-of-scope write",
        "answer-blank": "accept a blank reply",
        "answer-echo": "accept the prompt echoed back",
        "answer-spray": "accept a reply that lists every candidate without knowing the answer",
        "answer-other": "accept a wrong answer in perfect format",
        "answer-shotgun": "accept a reply that lists every candidate",
        "answer-retract": "accept an answer the reply takes back",
        "answer-denied": "accept an answer denied inside its own slot",
        "answer-malformed": "accept malformed output",
        "answer-special-number": "accept NaN, Infinity or a fractional count",
    }


def test_a_cell_family_that_is_no_family_declares_nothing():
    for name in ("control", "swap", "not-installed-here"):
        assert spec_of(name) == faults.UNDECLARED
        assert not spec_of(name).is_alternative
    assert faults.UNDECLARED == FamilySpec(grammars=("api",), role=faults.FAULT)


def test_a_spec_that_contradicts_itself_is_refused():
    with pytest.raises(ValueError, match="role"):
        FamilySpec(role="kind")
    with pytest.raises(ValueError, match="grammars"):
        FamilySpec(grammars=("ui",))
    with pytest.raises(ValueError, match="grammars"):
        FamilySpec(grammars=())
    with pytest.raises(ValueError, match="tests the frame condition"):
        FamilySpec(side_effect=True)
    with pytest.raises(ValueError, match="correct run"):
        FamilySpec(role=ALTERNATIVE, tests_frame=True)


def test_a_registered_family_s_spec_is_what_the_manifest_builder_reads():
    name = "test-needs-census"
    try:

        @faults.family(name, FamilySpec(needs_census=True, tests_frame=True))
        def keep(run: Run, ctx: FaultContext) -> list[faults.Edit] | faults.Refusal:
            return faults.Refusal("nothing to do")

        assert FAMILIES[name] is keep and spec_of(name).needs_census and keep.spec.tests_frame
        assert name in faults.of_grammar("api") and name not in faults.of_grammar("form")
        with pytest.raises(ValueError, match="already registered"):
            faults.family(name)(keep)
        assert keep.spec.needs_census  # the refused registration left its spec alone
    finally:
        FAMILIES.pop(name, None)


def test_an_operator_without_a_spec_is_refused_by_name():
    reg = faults.Families("fault family")
    reg.register("bare", lambda run, ctx: [])  # type: ignore[arg-type]
    with pytest.raises(AuditError, match=r"fault family 'bare' declares no FamilySpec"):
        reg.get("bare")


PLUGIN = '''
from verimut.grammar.faults import Edit, FamilySpec, Refusal, declare


@declare(FamilySpec(needs_census=True, mechanism="accept a run without its first write"))
def drop_first_write(run, ctx):
    """Drop the first write (a plug-in family, found through its entry point)."""
    writes = ctx.write_positions()
    if not writes:
        return Refusal("the reference run has no write")
    # The census ran because the spec asks for it: each write has a verdict.
    assert all(ctx.non_idempotent[i] is not None for i in writes), ctx.non_idempotent
    kept = [a for i, a in enumerate(run.actions) if i != writes[0]]
    return [Edit("-", run.replace_actions(kept), "dropped the first write")]
'''


def test_an_installed_package_s_entry_point_adds_a_family(tmp_path):
    """A distribution declaring `[project.entry-points."verimut.families"]` adds a family, with its spec."""
    site = tmp_path / "site"
    info = site / "dropfirst_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dropfirst-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[verimut.families]\ndrop-first-write = dropfirst_plugin:drop_first_write\n")
    (site / "dropfirst_plugin.py").write_text(PLUGIN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=300
        )

    listed = run("-m", "verimut.cli", "families")
    assert listed.returncode == 0, listed.stderr
    last = listed.stdout.strip().splitlines()[-1]
    assert last.startswith("drop-first-write (api)  Drop the first write (a plug-in family"), listed.stdout
    asked = run(
        "-c",
        "from verimut.grammar.faults import FAMILIES, spec_of, of_grammar;"
        "s = spec_of('drop-first-write');"
        "print(FAMILIES.names()[:2], s.needs_census, s.tests_frame, 'drop-first-write' in of_grammar('api'))",
    )
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.split() == ["['claim-only',", "'omit']", "True", "False", "True"]  # built-ins first

    out = tmp_path / "out"
    audited = run(
        "-m", "verimut.cli", "audit", "examples.todo_bench:benchmark", "-f", "drop-first-write", "-o", str(out), "-q"
    )
    assert audited.returncode in (0, 1), audited.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["families"] == ["drop-first-write"]
    assert all(t["census"] for t in manifest["tasks"].values())  # needs_census: the census was run
    cells = [c for c in manifest["cells"] if c["family"] == "drop-first-write"]
    assert len(cells) == 2 and all(c["run"] is not None for c in cells)

"""Replay a sample of an AgentDojo audit's answer-channel findings with AgentDojo's own API, for a person to judge.

    .venv/bin/python precision/agentdojo_answers.py AUDIT_DIR [--seed 29] [--sample 8] [--out FILE.json]
                                                    [--judgements FILE.json]

The sample is stratified by family and value kind: for each answer family (answer-drop, answer-wrong,
answer-superstring, answer-hedge) and each kind of value its false accepts edited (number, name, time, ...),
`--sample` of them (all when fewer), drawn with random.Random(f"{seed}/{family}/{kind}") from the stratum in
cell-id order (so adding a stratum does not move another's draw); then every vacuous null-run cell (and every one
passed on a task with nothing to do, outcome nothing_to_do) and every
alt-answer false reject and alt_pass. Each is replayed as agentdojo.py replays a finding (AgentDojo's own suite,
FunctionsRuntime, and the task's own utility), with the model output set to the cell's answer; and the task's
check is printed from its own source (inspect.getsource), so the judge reads what it tests. `--judgements`
fills each finding's judgement from a JSON object {cell_id: "holds: why"}. Never imports verimut.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import inspect
import json
import os
import random
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

HERE = os.path.dirname(os.path.realpath(__file__))
# This folder's agentdojo.py (named like the package it checks, so loaded by path): its Suite and grade, and
# its sys.path fix, which keeps this folder from shadowing the `agentdojo` package.
_spec = importlib.util.spec_from_file_location("precision_agentdojo", os.path.join(HERE, "agentdojo.py"))
assert _spec is not None and _spec.loader is not None
_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_script)
Suite, grade = _script.Suite, _script.grade

from precision_common import (
    base_args,
    diff,
    load_audit,
    mismatch,
    outcome_counts,
    require,
    short,
    without_noise,
    write_report,
)

ANSWER_FAMILIES = ("answer-drop", "answer-wrong", "answer-superstring", "answer-hedge")


def kind_of(row: dict[str, Any]) -> str:
    """The kind of value the cell's answer edit acted on (number, name, time, ...)."""
    return str(((row.get("evidence") or {}).get("detail") or {}).get("kind") or "-")


def strata(rows: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Each answer family's false accepts by the kind of value edited, in cell-id order."""
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in sorted(rows, key=lambda r: r["cell_id"]):
        if r["family"] in ANSWER_FAMILIES and r["outcome"] == "false_accept":
            out.setdefault((r["family"], kind_of(r)), []).append(r)
    return {k: out[k] for k in sorted(out, key=lambda k: (ANSWER_FAMILIES.index(k[0]), k[1]))}


def pick_answers(rows: list[dict[str, Any]], sample: int, seed: int) -> list[dict[str, Any]]:
    picked: list[dict[str, Any]] = []
    for (family, kind), accepts in strata(rows).items():
        rng = random.Random(f"{seed}/{family}/{kind}")
        picked += sorted(rng.sample(accepts, min(sample, len(accepts))), key=lambda r: r["cell_id"])
    # every null run passed: the vacuous verifiers, and the tasks with nothing to do (issue 41), to be judged too
    picked += sorted((r for r in rows if r["outcome"] in ("vacuous", "nothing_to_do")), key=lambda r: r["cell_id"])
    picked += sorted(
        (r for r in rows if r["family"] == "alt-answer" and r["outcome"] in ("false_reject", "alt_pass")),
        key=lambda r: r["cell_id"],
    )
    return picked


def check_source(task: Any) -> str:
    for name in ("utility_from_traces", "utility", "security_from_traces", "security"):
        if name in type(task).__dict__:
            return textwrap.dedent(inspect.getsource(getattr(type(task), name)))
    return ""


def replay(suites: dict[str, Any], row: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    suite_name, _, task_id = row["task"].partition("/")
    suite = suites[suite_name]
    task = suite.tasks[task_id]
    start = suite.start(task)
    reference = [(c.function, dict(c.args)) for c in task.ground_truth(start.model_copy(deep=True))]
    edited = [(a["name"], dict(a["args"])) for a in run["actions"]]
    ref_env, _ = suite.execute(start, reference)
    again_env, _ = suite.execute(start, reference)
    edit_env, errors = suite.execute(start, edited)
    ref_dump = ref_env.model_dump(mode="json")
    noise = diff(ref_dump, again_env.model_dump(mode="json"))  # clocks: paths two replays of the reference differ in
    ref_verdict, _ = grade(task, str(task.GROUND_TRUTH_OUTPUT), start, ref_env, reference)
    answer = str(run.get("answer", ""))
    verdict, verifier = grade(task, answer, start, edit_env, edited)
    detail = (row.get("evidence") or {}).get("detail") or {}
    return {
        "cell_id": row["cell_id"],
        "task": row["task"],
        "kind": "user",
        "family": row["family"],
        "value_kind": kind_of(row),
        "outcome": row["outcome"],
        "instruction": str(task.PROMPT),
        "edit": (row.get("evidence") or {}).get("edit", ""),
        "reference_answer": str(task.GROUND_TRUTH_OUTPUT),
        "answer": answer,
        "actions_same_as_reference": edited == reference,
        "value": detail.get("value"),
        "to": detail.get("to"),
        "pinned_by": detail.get("pinned_by"),
        "verdict_verimut": row.get("verdict"),
        "verdict_replayed": verdict,
        "reference_verdict": ref_verdict,
        "verifier_detail": f"{type(task).__name__}.{verifier}",
        "check_source": check_source(task),
        # An answer edit keeps the actions: the two end states should be equal (the finding is in what it says).
        "state_diff": without_noise(diff(ref_dump, edit_env.model_dump(mode="json")), noise),
        "reads_run": 0,
        "reads_differ": [],
        # The actions are the reference's: no write call differs (the shape precision_common.render reads).
        "trace_difference": {"only_in_edited": [], "only_in_reference": []},
        "notes": [f"the edited run's call {e}" for e in errors]
        + ([f"{len(noise)} paths differ between two replays of the reference; left out of the diff"] if noise else []),
        "judgement": "",
    }


def answers_section(findings: list[dict[str, Any]]) -> str:
    """Markdown: per finding, the reference's and the edited answer, the edit's value, and the task's check."""
    lines = ["", "# The answers and the checks", ""]
    for n, f in enumerate(findings, 1):
        lines += [
            f"## {n}. `{f['cell_id']}` ({f['family']}, {f['value_kind']})",
            "",
            f"- reference answer (GROUND_TRUTH_OUTPUT): `{short(f['reference_answer'], 400)}`",
            f"- edited answer: `{short(f['answer'], 400)}`",
            f"- value: `{f['value']}` -> `{f['to']}` (pinned by {f['pinned_by']})",
            f"- {f['verifier_detail']}: {f['verdict_replayed']}",
            "",
            "```python",
            f["check_source"].rstrip() or "# (no utility of its own: the suite's base class)",
            "```",
            "",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = base_args(8)
    parser.set_defaults(seed=29)  # issue 29's draw
    for action in parser._actions:
        if action.dest == "seed":
            action.help = "seed of the sample (default 29)"
        elif action.dest == "sample":
            action.help = "false accepts to sample per family and value kind (default 8; all when fewer)"
        elif action.dest == "out":
            action.help = "the JSON report (default AUDIT/precision-answers.json); .md beside it"
    parser.add_argument("--judgements", type=Path, help="JSON object {cell_id: judgement} to fill in")
    args = parser.parse_args()
    require("agentdojo", "run it with verimut's .venv/bin/python (bash scripts/install.sh)")
    audit = load_audit(args.audit)
    version = audit.provenance.get("benchmark_version", "v1.2")
    installed = importlib.metadata.version("agentdojo")
    picked = pick_answers(audit.rows, args.sample, args.seed)
    suites = {name: Suite(version, name) for name in sorted({r["task"].partition("/")[0] for r in picked})}
    findings = [replay(suites, row, audit.run(row["cell_id"])) for row in picked]
    judged = json.loads(args.judgements.read_text()) if args.judgements else {}
    unknown = sorted(set(judged) - {f["cell_id"] for f in findings})
    if unknown:
        raise SystemExit(f"--judgements names cells not in the sample: {', '.join(unknown)}")
    for f in findings:
        f["judgement"] = judged.get(f["cell_id"], "")
    drawn = Counter((f["family"], f["value_kind"]) for f in findings if f["outcome"] == "false_accept")
    sampled = {f"{fam}/{kind}": [drawn[(fam, kind)], len(rows)] for (fam, kind), rows in strata(audit.rows).items()}
    # The meta precision_common.render reads, counted over the answer channel (not the whole audit, whose
    # false rejects are other families'), with the whole audit's outcomes beside them.
    answer_rows = [r for r in audit.rows if r["family"] in ANSWER_FAMILIES]
    meta = {
        "benchmark": f"agentdojo {version} (answer channel)",
        "audit": str(args.audit),
        "seed": args.seed,
        "sample_per_stratum": args.sample,
        "false_accepts": sum(1 for r in answer_rows if r["outcome"] == "false_accept"),
        "false_rejects": sum(1 for r in audit.rows if r["family"] == "alt-answer" and r["outcome"] == "false_reject"),
        "sampled_false_accepts": sum(1 for f in findings if f["outcome"] == "false_accept"),
        "strata": sampled,
        "outcomes": outcome_counts(audit.rows),
        "replayed_with": f"agentdojo {installed}'s own suites, FunctionsRuntime and utility",
    }
    md = write_report(args.out or args.audit / "precision-answers.json", meta, findings)
    with md.open("a") as out:  # what the shared report leaves out and the judge reads: the answers and the check
        out.write(answers_section(findings))
    bad = [f["cell_id"] for f in findings if mismatch(f)]
    moved = [f["cell_id"] for f in findings if f["state_diff"]]
    print(
        f"{meta['benchmark']}: {len(findings)} replayed ({meta['sampled_false_accepts']} of {meta['false_accepts']} "
        f"answer false accepts, {sum(1 for f in findings if f['outcome'] == 'vacuous')} vacuous null runs, "
        f"{sum(1 for f in findings if f['family'] == 'alt-answer')} alt-answer cells); verdict mismatches: "
        f"{len(bad)}{' (' + ', '.join(bad) + ')' if bad else ''}; end states that differ from the reference's: "
        f"{len(moved)}{' (' + ', '.join(moved) + ')' if moved else ''}; report {md}"
    )
    print("sampled (drawn/false accepts): " + ", ".join(f"{k} {d}/{n}" for k, (d, n) in sampled.items()))
    by_family: dict[str, Counter[str]] = {}
    for f in findings:  # the judgement's first word: holds / disputed / wrong
        word = f["judgement"].split(" ", 1)[0].rstrip(":") if f["judgement"] else "unjudged"
        by_family.setdefault(f["family"], Counter())[word] += 1
    print(
        "judgements: "
        + "; ".join(f"{fam} " + ", ".join(f"{k} {n}" for k, n in sorted(c.items())) for fam, c in by_family.items())
    )


if __name__ == "__main__":
    main()

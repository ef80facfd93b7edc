"""Replay a sample of an AgentDojo audit's findings with AgentDojo's own API, for a person to judge.

    .venv/bin/python precision/agentdojo.py AUDIT_DIR [--seed 26] [--sample 25] [--out FILE.json]

For each sampled false accept and every false reject: the task's clean environment as AgentDojo builds
it, its ground_truth() run and the cell's edited run (from the manifest) executed through
FunctionsRuntime.run_function, each graded as TaskSuite grades (utility_from_traces, else utility;
security_from_traces, else security), the two end states diffed (model_dump), and every read call of the
suite's reference runs run on a copy of each end state. Never imports verimut.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.realpath(__file__))
# This file is named like the package it checks: keep its folder from shadowing `agentdojo`.
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != HERE] + [HERE]

from precision_common import (
    Audit,
    base_args,
    canonical,
    diff,
    load_audit,
    pick,
    report_findings,
    require,
    trace_difference,
    without_noise,
)

READ_PREFIXES = ("get_", "search_", "list_", "read_", "check_")


def is_read(name: str) -> bool:
    return name.startswith(READ_PREFIXES)


class Suite:
    """One AgentDojo suite: its tasks, its runtime, its default environment, the reads its reference runs make."""

    def __init__(self, version: str, name: str) -> None:
        from agentdojo.functions_runtime import FunctionsRuntime
        from agentdojo.task_suite.load_suites import get_suite

        self.suite = get_suite(version, name)
        self.runtime = FunctionsRuntime(self.suite.tools)
        self.default = self.suite.load_and_inject_default_environment({})
        self.tasks: dict[str, Any] = {**self.suite.user_tasks, **self.suite.injection_tasks}
        reads: dict[str, tuple[str, dict[str, Any]]] = {}
        for task in self.tasks.values():
            for call in task.ground_truth(self.start(task)):
                if is_read(call.function):
                    reads.setdefault(canonical(call.function, call.args), (call.function, dict(call.args)))
        self.reads = [reads[k] for k in sorted(reads)]

    def start(self, task: Any) -> Any:
        """The task's clean start, as TaskSuite.run_task_with_pipeline builds it."""
        env = self.default.model_copy(deep=True)
        return env if is_injection(task) else task.init_environment(env)

    def execute(self, start: Any, calls: list[tuple[str, dict[str, Any]]]) -> tuple[Any, list[str]]:
        env = start.model_copy(deep=True)
        errors = []
        for name, args in calls:
            _, error = self.runtime.run_function(env, name, args, raise_on_error=False)
            if error is not None:
                errors.append(f"{name}: {error}")
        return env, errors

    def read(self, env: Any, name: str, args: dict[str, Any]) -> str:
        from agentdojo.agent_pipeline.tool_execution import tool_result_to_str

        result, error = self.runtime.run_function(env.model_copy(deep=True), name, args, raise_on_error=False)
        return f"error: {error}" if error is not None else tool_result_to_str(result)


def is_injection(task: Any) -> bool:
    from agentdojo.base_tasks import BaseInjectionTask

    return isinstance(task, BaseInjectionTask)


def grade(task: Any, answer: str, start: Any, end: Any, calls: list[tuple[str, dict[str, Any]]]) -> tuple[bool, str]:
    """As TaskSuite._check_user_task_utility / _check_injection_task_security: the trace verifier first."""
    from agentdojo.functions_runtime import FunctionCall

    traces = [FunctionCall(function=name, args=args) for name, args in calls]
    check, by_traces = (
        ("security", "security_from_traces") if is_injection(task) else ("utility", "utility_from_traces")
    )
    pre, post = start.model_copy(deep=True), end.model_copy(deep=True)
    said = getattr(task, by_traces)(answer, pre, post, traces)
    if said is not None:
        return bool(said), by_traces
    return bool(getattr(task, check)(answer, pre, post)), check


def replay(audit: Audit, suites: dict[str, Suite], row: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    suite_name, _, task_id = row["task"].partition("/")
    suite = suites[suite_name]
    task = suite.tasks[task_id]
    start = suite.start(task)
    reference = [(c.function, dict(c.args)) for c in task.ground_truth(start.model_copy(deep=True))]
    edited = [(a["name"], dict(a["args"])) for a in run["actions"]]

    ref_env, ref_errors = suite.execute(start, reference)
    again_env, _ = suite.execute(start, reference)
    edit_env, edit_errors = suite.execute(start, edited)
    ref_dump, edit_dump = ref_env.model_dump(mode="json"), edit_env.model_dump(mode="json")
    noise = diff(ref_dump, again_env.model_dump(mode="json"))
    reads_differ = []
    for name, args in suite.reads:
        before, after = suite.read(ref_env, name, args), suite.read(edit_env, name, args)
        if before != after:
            reads_differ.append({"call": canonical(name, args), "reference": before, "edited": after})

    ref_verdict, _ = grade(task, str(task.GROUND_TRUTH_OUTPUT), start, ref_env, reference)
    verdict, verifier = grade(task, str(run.get("answer", "")), start, edit_env, edited)
    notes = audit.reference_note(row["task"], reference)
    notes += [
        f"the {which} run's call {e}"
        for which, errs in (("reference", ref_errors), ("edited", edit_errors))
        for e in errs
    ]
    if noise:
        notes.append(f"{len(noise)} paths differ between two replays of the reference; left out of the diff")
    return {
        "cell_id": row["cell_id"],
        "task": row["task"],
        "kind": "injection" if is_injection(task) else "user",
        "family": row["family"],
        "outcome": row["outcome"],
        "instruction": str(task.GOAL if is_injection(task) else task.PROMPT),
        "edit": (row.get("evidence") or {}).get("edit", ""),
        "verdict_verimut": row.get("verdict"),
        "verdict_replayed": verdict,
        "verifier_detail": f"{type(task).__name__}.{verifier}",
        "reference_verdict": ref_verdict,
        "answer": run.get("answer", ""),
        "state_diff": without_noise(diff(ref_dump, edit_dump), noise),
        "reads_run": len(suite.reads),
        "reads_differ": reads_differ,
        "trace_difference": trace_difference(
            [canonical(n, a) for n, a in reference if not is_read(n)],
            [canonical(n, a) for n, a in edited if not is_read(n)],
        ),
        "notes": notes,
        "judgement": "",
    }


def main() -> None:
    args = base_args(25).parse_args()
    require("agentdojo", "run it with verimut's .venv/bin/python (bash scripts/install.sh)")
    audit = load_audit(args.audit)
    version = audit.provenance.get("benchmark_version", "v1.2")
    installed = importlib.metadata.version("agentdojo")
    if audit.provenance.get("agentdojo") not in (None, installed):
        print(f"warning: the audit ran agentdojo {audit.provenance['agentdojo']}, this is {installed}", file=sys.stderr)
    picked = pick(audit.rows, args.sample, args.seed)
    suites = {name: Suite(version, name) for name in sorted({r["task"].partition("/")[0] for r in picked})}
    findings = [replay(audit, suites, row, audit.run(row["cell_id"])) for row in picked]
    report_findings(
        args,
        audit,
        findings,
        f"agentdojo {version}",
        f"agentdojo {installed}'s own suites, FunctionsRuntime and task verifiers",
    )


if __name__ == "__main__":
    main()

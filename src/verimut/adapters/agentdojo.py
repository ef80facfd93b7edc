"""AgentDojo (PyPI `agentdojo`), its four suites, and the verifiers they ship: each user task's
`utility` and each injection task's `security`.

Facts this adapter relies on (checked against agentdojo 0.1.35):
- each suite's default environment is loaded once; a user task's clean start is a deep copy
  of it passed through `task.init_environment`; an injection task's is the copy itself, as
  AgentDojo's `run_task_with_pipeline` gives an injection task run on its own (injection
  tasks have no `init_environment`);
- the reference run is `task.ground_truth(start)` plus `task.GROUND_TRUTH_OUTPUT`, for both kinds;
- AgentDojo grades a user task with `utility_from_traces` (the run's own calls) and falls back
  to `utility` when that returns None, and an injection task likewise with
  `security_from_traces` and `security` (`TaskSuite._check_injection_task_security`); we do
  the same, with the verifier's code untouched. `security` passing means the attack
  succeeded: that verifier's "task done";
- a version's injection tasks are `suite.injection_tasks` (each id's latest version up to it:
  v1.2 mixes v1, v1.1.1 and v1.2 classes);
- `initial_*` fields alias the live records and computed fields repeat them, so the
  snapshot leaves both out;
- fetching a page logs it in `web_requests`, and reading email sets its `read` flag: declared
  telemetry, which verimut checks before scoring (declared.py): workspace/user_task_24 grades the
  read flags, so they are state on this benchmark, and the manifest says so;
- contracts: a user task's `utility` is an `effect` contract (the requested effect, nothing else);
  an injection task's `security` a `goal` contract: AgentDojo calls it on a state that also holds the
  user task's effects, to decide whether the attacker's goal was reached;
- new emails, calendar events, files and transactions get ids in creation order (assigned keys);
- an invitation's address (`invite_user_to_slack`'s `user_email`) is stored nowhere: a trace effect;
- a task whose class defines `utility_from_traces` (`security_from_traces`) grades the run's calls.
"""

from __future__ import annotations

import datetime
import enum
import importlib.metadata
import inspect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from verimut.adapters.base import plain, unknown_task
from verimut.adapters.recording import recorded
from verimut.core.benchmark import Verdict
from verimut.core.errors import AuditError
from verimut.core.reads import STATE, TRACE, Reads
from verimut.core.run import Action, AnswerChannel, Run, Step
from verimut.oracle.state import NEW

DEFAULT_VERSION = "v1.2"
USER, INJECTION = "user", "injection"
# Tools whose names start so only read. get_unread_emails and get_webpage also touch
# state, but only telemetry (read flags, the request log).
_READ_PREFIXES = ("get_", "search_", "list_", "read_", "check_")


@dataclass
class Episode:
    task_id: str
    task: Any
    suite: Any
    start: Any  # the environment before the run: what the verifier gets as pre_environment
    env: Any  # the live environment the run changes


# Fields AgentDojo fills from a set: `create_calendar_event` stores `list(set(participants))`, so
# their order follows string hashing, which differs between processes. Kept sorted, a snapshot (and
# so the manifest, which a resumed run must rebuild identically) is the same in every process.
_SET_VALUED = frozenset({"participants"})


def _unordered(name: str, value: Any) -> Any:
    if name in _SET_VALUED and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return sorted(value)
    return value


def _fields(obj: Any) -> Mapping[str, Any] | None:
    """A model's own fields: not the `initial_*` aliases, not computed fields."""
    if not isinstance(obj, BaseModel):
        return None
    return {
        name: _unordered(name, getattr(obj, name)) for name in type(obj).model_fields if not name.startswith("initial_")
    }


def _scalar(obj: Any) -> Any:
    if isinstance(obj, (datetime.datetime, datetime.date, datetime.time)):
        return obj.isoformat()
    if isinstance(obj, enum.Enum):
        return obj.value
    return obj


def _plain(obj: Any) -> Any:
    """Plain JSON data of an environment."""
    return plain(obj, _fields, _scalar)


def _defer_agent_pipeline() -> None:
    """Load AgentDojo's suites without the model clients its agent_pipeline package imports.

    `agentdojo.agent_pipeline/__init__.py` imports every model client AgentDojo supports (anthropic,
    openai, cohere, ...): about half the adapter's load time, none of it used here (verimut calls no
    model). The task suites need three of its submodules, which import as usual, except that one of them
    (tool_execution) takes a constant from the google-genai client's module, whose import of google.genai
    is most of what is left: that module is deferred too, with the constant read off its source. The
    deferred modules' names load, for real, the first time anything asks for one (PEP 562), so AgentDojo's
    code that uses them is unchanged.
    """
    _defer("agentdojo.agent_pipeline")
    google = "agentdojo.agent_pipeline.llms.google_llm"
    constant = _literal(google, "EMPTY_FUNCTION_NAME")
    if constant is not None:
        _defer(google, {"EMPTY_FUNCTION_NAME": constant})


def _literal(name: str, assigned: str) -> object | None:
    """The literal value module `name` assigns to `assigned` at its top level, read off its source without
    running it (None if it assigns none)."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    for node in ast.parse(Path(spec.origin).read_text()).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [assigned]:
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                return None
    return None


def _defer(name: str, given: Mapping[str, object] | None = None) -> None:
    """Put module `name` in sys.modules without running it: it runs, for real, the first time a name it
    defines is asked for, but for the names `given` here (already its own values)."""
    import importlib.util
    import sys

    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        return  # let the import that needs it raise what it raises
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def __getattr__(attr: str) -> object:
        if attr == "__path__" and spec.submodule_search_locations is None:
            raise AttributeError(attr)  # `from module import name` asks whether it is a package: it is not
        del module.__dict__["__getattr__"]  # once: the real module defines the names
        loader.exec_module(module)
        return getattr(module, attr)

    module.__dict__.update(given or {})
    module.__dict__["__getattr__"] = __getattr__
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent in sys.modules:
        setattr(sys.modules[parent], child, module)


class AgentDojo:
    name = "agentdojo"
    telemetry: Sequence[str] = ("web.web_requests", "inbox.emails[*].read", "inbox.trash[*].read")
    contracts: Mapping[str, str] = {USER: "effect", INJECTION: "goal"}
    assigned_keys: Sequence[str] = (
        "inbox.emails",
        "calendar.events",
        "cloud_drive.files",
        "bank_account.transactions",
        "bank_account.scheduled_transactions",
    )
    trace_args: Mapping[str, Sequence[str]] = {"invite_user_to_slack": ("user_email",)}
    # A user task's `utility(model_output, ...)` reads the run's final answer: the answer families edit it.
    answer_channel = AnswerChannel("AgentDojo's model output (the `model_output` a task's check reads)")

    def __init__(self, version: str | None = None) -> None:
        _defer_agent_pipeline()
        from agentdojo.functions_runtime import FunctionsRuntime
        from agentdojo.task_suite.load_suites import _SUITES

        self.version = version or DEFAULT_VERSION
        if self.version not in _SUITES:
            known = ", ".join(sorted(_SUITES))
            raise AuditError(f"unknown AgentDojo version {self.version!r} (known: {known})")
        self._suites: dict[str, Any] = dict(_SUITES[self.version])
        # Both are properties that rebuild the version's task dict on each read: read once.
        self._user = {name: dict(s.user_tasks) for name, s in self._suites.items()}
        self._injection = {name: dict(s.injection_tasks) for name, s in self._suites.items()}
        self._runtimes = {name: FunctionsRuntime(s.tools) for name, s in self._suites.items()}
        self._defaults: dict[str, Any] = {}
        self._reads_trace: dict[str, bool] = {}

    # -- what there is ---------------------------------------------------------------
    def provenance(self) -> Mapping[str, str]:
        return {
            "agentdojo": importlib.metadata.version("agentdojo"),
            "pydantic": importlib.metadata.version("pydantic"),
            "benchmark_version": self.version,
        }

    def tasks(self) -> Sequence[str]:
        """Each suite's user tasks, then its injection tasks, each in numeric order."""
        ids: list[str] = []
        for name in self._suites:
            for kind in (self._user[name], self._injection[name]):
                ids.extend(f"{name}/{t}" for t in sorted(kind, key=lambda t: int(re.sub(r"\D", "", t) or 0)))
        return ids

    def _task(self, task_id: str) -> tuple[Any, Any]:
        suite_name, _, tid = task_id.partition("/")
        suite = self._suites.get(suite_name)
        if suite is not None:
            found = self._user[suite_name].get(tid) or self._injection[suite_name].get(tid)
            if found is not None:
                return suite, found
        raise unknown_task("AgentDojo", task_id)

    def kind(self, task: str) -> str:
        return INJECTION if _is_injection(self._task(task)[1]) else USER

    def instruction(self, task: str) -> str:
        t = self._task(task)[1]
        return str(t.GOAL if _is_injection(t) else t.PROMPT)

    # -- an episode ------------------------------------------------------------------
    def reset(self, task: str) -> Episode:
        suite, t = self._task(task)
        name = suite.name
        if name not in self._defaults:
            self._defaults[name] = suite.load_and_inject_default_environment({})
        env = self._defaults[name].model_copy(deep=True)
        if not _is_injection(t):
            env = t.init_environment(env)
        return Episode(task, t, suite, env.model_copy(deep=True), env)

    def reference(self, task: str, episode: Episode) -> Run:
        calls = episode.task.ground_truth(episode.env.model_copy(deep=True))
        actions = tuple(Action(c.function, _plain(dict(c.args))) for c in calls)
        return Run(actions, str(episode.task.GROUND_TRUTH_OUTPUT))

    def execute(self, episode: Episode, action: Action) -> Step:
        from agentdojo.agent_pipeline.tool_execution import tool_result_to_str

        runtime = self._runtimes[episode.suite.name]
        result, error = runtime.run_function(episode.env, action.name, dict(action.args), raise_on_error=False)
        if error is not None:
            return Step("", error)
        try:
            return Step(tool_result_to_str(result))
        except TypeError:
            return Step(str(result))

    def is_write(self, action: Action) -> bool:
        return not action.name.startswith(_READ_PREFIXES)

    def snapshot(self, episode: Episode) -> Any:
        return _plain(episode.env)

    def fork(self, episode: Episode) -> Episode:
        return Episode(
            episode.task_id,
            episode.task,
            episode.suite,
            episode.start.model_copy(deep=True),
            episode.env.model_copy(deep=True),
        )

    def patch(self, episode: Episode, path: Sequence[str], value: Any) -> None:
        """Set the value at a snapshot path in the live environment (models by attribute, dicts by key)."""
        node: Any = episode.env
        for seg in path[:-1]:
            node = _child(node, seg)
        last = path[-1]
        old = _child(node, last)
        if isinstance(old, (datetime.datetime, datetime.date)) and isinstance(value, str):
            value = type(old).fromisoformat(value)
        elif isinstance(old, enum.Enum):
            value = type(old)(value)
        if isinstance(node, BaseModel):
            setattr(node, last, value)
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[_key_of(node, last)] = value

    def reads_trace(self, task: str) -> bool:
        """Whether its `*_from_traces` answers (a combined task defines one that answers None, and AgentDojo then
        falls back to the state's verifier): asked once, of the reference run on its own end state."""
        if task not in self._reads_trace:
            from agentdojo.functions_runtime import FunctionCall

            episode = self.reset(task)
            run = self.reference(task, episode)
            for action in run.actions:
                self.execute(episode, action)
            traces = [FunctionCall(function=a.name, args=dict(a.args)) for a in run.actions]
            by_traces = _VERIFIERS[_is_injection(episode.task)][1]
            try:
                said = getattr(episode.task, by_traces)(run.answer, episode.start, episode.env, traces)
            except Exception:  # noqa: BLE001  (one that raises on its own reference is not one we can read)
                said = None
            self._reads_trace[task] = said is not None
        return self._reads_trace[task]

    def verify(self, episode: Episode, run: Run) -> Verdict:
        return self._verify(episode.task, episode, run)

    def verify_as(self, task: str, episode: Episode, run: Run) -> Verdict:
        suite, t = self._task(task)
        if suite.name != episode.suite.name:
            raise AuditError(f"cannot grade a {episode.suite.name} episode with {task!r}: suites differ")
        return self._verify(t, episode, run)

    def verify_reading(self, episode: Episode, run: Run) -> tuple[Verdict, Reads]:
        """`verify`, with what the verifier read of the end state (`state`) and of the run's calls (`trace`)
        recorded as it ran (adapters/recording.py): the same call, on the same objects."""
        from agentdojo.functions_runtime import FunctionCall

        traces = [FunctionCall(function=a.name, args=dict(a.args)) for a in run.actions]
        return recorded(
            {STATE: episode.env, TRACE: traces},
            lambda views: self._verify(episode.task, episode, run, views[TRACE]),
        )

    def _verify(self, task: Any, episode: Episode, run: Run, traces: list[Any] | None = None) -> Verdict:
        from agentdojo.functions_runtime import FunctionCall

        if traces is None:
            traces = [FunctionCall(function=a.name, args=dict(a.args)) for a in run.actions]
        check, by_traces = _VERIFIERS[_is_injection(task)]
        said = getattr(task, by_traces)(run.answer, episode.start, episode.env, traces)
        if said is not None:
            return Verdict(bool(said), by_traces)
        return Verdict(bool(getattr(task, check)(run.answer, episode.start, episode.env)), check)

    # -- why a difference went unseen, and where to look ---------------------------------
    def _verifier(self, task: str) -> tuple[type, str]:
        """The task's class and the name of the verifier method it defines itself."""
        cls = type(self._task(task)[1])
        check, by_traces = _VERIFIERS[issubclass(cls, _injection_base())]
        # A combined task defines `*_from_traces` but has it answer None, and AgentDojo then grades by `check`.
        return cls, by_traces if by_traces in cls.__dict__ and self.reads_trace(task) else check

    def verifier_source(self, task: str) -> tuple[str, int, str] | None:
        cls, own = self._verifier(task)
        fn = getattr(cls, own)
        try:
            path = inspect.getsourcefile(fn)
            line = inspect.getsourcelines(fn)[1]
        except (OSError, TypeError):
            return None
        return (path, line, f"{cls.__name__}.{own}") if path else None

    def explain(self, task: str, collections: Sequence[str]) -> str | None:
        cls, own = self._verifier(task)
        try:
            source = inspect.getsource(getattr(cls, own))
        except (OSError, TypeError):
            return None

        def read_by_source(path: str) -> bool:
            # A dynamic key (a user name) is not in the source; a field on the way to it is.
            segments = path.removesuffix(NEW).split(".")
            return any(seg in source for seg in segments[1:] or segments)

        frame = "DeepDiff" in source or "check_new_" in source
        # A diff of the whole environment reads every collection, named or not.
        seen = [c for c in collections if frame or read_by_source(c)]
        unseen = [c for c in collections if c not in seen]
        parts = []
        if seen:
            how = (
                "runs a diff-based frame check that lets this change through"
                if frame
                else (
                    "looks up the records it expects and checks some of their values, not how many there are or the fields that differ"
                )
            )
            parts.append(f"reads {', '.join(seen)} but {how}")
        if unseen:
            parts.append(f"never reads {', '.join(unseen)}")
        return f"{cls.__name__}.{own}() " + "; ".join(parts)


def _key_of(node: Mapping[Any, Any], seg: str) -> Any:
    """The dict key a snapshot path segment names (the snapshot makes every key a string)."""
    return next((k for k in node if str(k) == seg), seg)


def _child(node: Any, seg: str) -> Any:
    if isinstance(node, BaseModel):
        return getattr(node, seg)
    if isinstance(node, list):
        return node[int(seg)]
    return node[_key_of(node, seg)]


# A task's verifier and its trace-reading variant, which AgentDojo asks first: by "is an injection task".
_VERIFIERS = {False: ("utility", "utility_from_traces"), True: ("security", "security_from_traces")}


def _injection_base() -> type:
    from agentdojo.base_tasks import BaseInjectionTask

    return BaseInjectionTask


def _is_injection(task: Any) -> bool:
    return isinstance(task, _injection_base())


def create(version: str | None = None) -> AgentDojo:
    return AgentDojo(version)

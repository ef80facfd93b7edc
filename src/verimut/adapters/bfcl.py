"""BFCL multi-turn (PyPI `bfcl-eval`), its backend API classes and its `multi_turn_checker`, unmodified.

A whole-state verifier, audited as a control: after every turn the checker compares the model's
backend instances with the ground truth's, attribute by attribute, and checks that the ground
truth's call results appear among the model's. Facts this adapter relies on (checked against
bfcl-eval 2026.3.23; tests/test_bfcl.py checks them again):
- a call is a Python call string, `mv(source='a', destination='b')`; we parse it with `ast` and
  write edited calls back as keyword calls (positional arguments get their parameter's name);
- `execute_multi_turn_func_call` keeps each backend instance in its module's globals under
  "<model name>_<entry id>_<class>_instance" and reuses it on the next call: every episode and
  every verification gets its own model name, and its globals are removed when done;
- the package's own data loader takes a file lock inside site-packages, so entries are read
  from its data files directly;
- a backend error is a return value (`{"error": ...}`, or "Error during execution: ..."), not an
  exception: a failing call is delivered, as it is to a model;
- the long-context extensions (bfcl_eval...func_source_code.long_context: CREDIT_CARD_EXTENSION,
  BOOKING_RECORD_EXTENSION, ...) are module-level data that `_load_scenario` puts into instances
  by reference: every instance in a process, the model's and the ground truth's alike, holds the
  same card dicts, so a change to one is a change to all. Our episodes own deep copies, and the
  module data is put back as shipped after each call of the package (as in a fresh process);
  the checker's own two instances still share it, as they do in BFCL's evaluation;
- `state_checker` compares public attributes only (names not starting with "_"): the current
  directory (`GorillaFileSystem._current_dir`), the brake and slope forces of the vehicle are
  outside what it sees. The snapshot holds them, so the oracle does (see STATE_COMPARED);
- the checker grades the trace too (each ground-truth call's result must be among the run's), so every
  task's verifier reads the trace (`reads_trace`): a run whose calls differ is never "the same effect"
  as the reference's, even where the start state already holds what a call would do (a budget already
  set, a user already logged in), so failing it is no false reject; its one contract is `effect`.

A run is the entry's turns in order, each opened by a TURN marker action (not a write) followed
by that turn's calls; the checker gets the calls of each turn as one step.

No answer channel, so the answer families are refused on every task: BFCL's multi-turn checker grades no text
answer. bfcl_eval/eval_checker/eval_runner.py `_evaluate_single_multi_turn_entry` keeps only what
`decode_execute` decodes as function calls (a message that does not decode, a model "chatting", is skipped), and
multi_turn_checker.py `multi_turn_checker` compares backend state (`state_checker`) and call results
(`response_checker`) turn by turn: a final text response never reaches it.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import importlib
import importlib.metadata
import importlib.resources
import importlib.util
import inspect
import itertools
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from verimut.adapters.base import check_version, plain, require
from verimut.adapters.recording import recorded
from verimut.core.benchmark import Verdict
from verimut.core.errors import AuditError
from verimut.core.reads import KEYS, OWN_STATES, STATE, TRACE, VALUE, WHOLE, Reads
from verimut.core.run import Action, Run, Step

CATEGORIES = ("base", "miss_func", "miss_param", "long_context")
TURN = "<turn>"  # marks where a turn begins; the checker grades per turn

# Methods that change a backend instance, by class (read from the backend sources; a test
# replays every other call of the sliced entries and checks that it changes nothing).
# `echo` writes only when given a file name.
WRITES: Mapping[str, frozenset[str]] = {
    "GorillaFileSystem": frozenset({"cd", "mkdir", "touch", "echo", "mv", "rm", "rmdir", "cp"}),
    "MessageAPI": frozenset({"message_login", "send_message", "delete_message", "add_contact"}),
    "TwitterAPI": frozenset(
        {"authenticate_twitter", "post_tweet", "retweet", "comment", "mention", "follow_user", "unfollow_user"}
    ),
    "TicketAPI": frozenset(
        {"create_ticket", "close_ticket", "resolve_ticket", "edit_ticket", "ticket_login", "logout"}
    ),
    "TradingBot": frozenset(
        {
            "cancel_order",
            "place_order",
            "withdraw_funds",
            "trading_login",
            "trading_logout",
            "fund_account",
            "remove_stock_from_watchlist",
            "add_to_watchlist",
        }
    ),
    "TravelAPI": frozenset(
        {
            "authenticate_travel",
            "register_credit_card",
            "book_flight",
            "cancel_booking",
            "set_budget_limit",
            "purchase_insurance",
        }
    ),
    "VehicleControlAPI": frozenset(
        {
            "startEngine",
            "fillFuelTank",
            "lockDoors",
            "adjustClimateControl",
            "setHeadlights",
            "activateParkingBrake",
            "pressBrakePedal",
            "releaseBrakePedal",
            "setCruiseControl",
            "set_navigation",
        }
    ),
    "MathAPI": frozenset(),
}
_WRITE_NAMES = frozenset().union(*WRITES.values())

# Left out of the snapshot: constant text, and the random generator's state (advanced by id
# draws whose effect is in the public records anyway). A file's `_last_modified` is wall-clock
# time, different on every replay.
_NOT_STATE = ("_api_description", "_random")
STATE_COMPARED = (
    "at the end of every turn (the checker's own grain) and now: every attribute, public and private (the checker sees only public ones), of every backend instance "
    "the entry involves; the file tree flattened to paths, the current directory as a path; "
    "left out: _api_description (constant), _random (generator state), File._last_modified (wall clock), "
    "TravelAPI._flight_cost_lookup (telemetry: a cache of get_flight_cost reads), "
    "VehicleControlAPI._parkingBrakeForce and _slopeAngle (telemetry: the simulator's bookkeeping of a brake call)"
)


def _data_dir() -> Any:
    return importlib.resources.files("bfcl_eval") / "data"


def _read_jsonl(path: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@dataclass
class Entry:
    category: str
    question: dict[str, Any]  # the test entry: id, question, initial_config, involved_classes
    ground_truth: list[list[str]]  # call strings per turn

    @property
    def long_context(self) -> bool:
        # What the checker passes as long_context for this entry's category.
        return "long_context" in self.category or "composite" in self.category


@dataclass
class Episode:
    entry: Entry
    instances: dict[str, Any]  # class name -> backend instance (ours: never in the checker's globals)
    # The state at the end of each finished turn: the checker compares state after every turn,
    # so the oracle does too.
    turns: list[dict[str, Any]] = field(default_factory=list)
    started: bool = False  # the first TURN marker opens turn 1 and closes nothing
    # Values set at snapshot paths (`patch`): the checker re-executes the run's calls on instances of its own,
    # so `verify` sets them on those instances, at the turn the path names, before it compares them.
    flips: list[tuple[tuple[str, ...], Any]] = field(default_factory=list)


_names = itertools.count()


def _unique(kind: str) -> str:
    """A model name no other episode or verification uses, in this or any other process."""
    return f"verimut_{kind}_{os.getpid()}_{next(_names)}"


def _utils() -> Any:
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    return multi_turn_utils


def _long_context() -> Any:
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import long_context

    return long_context


_SHIPPED: dict[str, Any] = {}  # the long-context module data as shipped


def _keep_shipped() -> None:
    """Read the module data as shipped from a fresh execution of its file (the live one may have changed)."""
    if not _SHIPPED:
        spec = importlib.util.find_spec(_long_context().__name__)
        assert spec is not None and spec.loader is not None
        fresh = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fresh)
        for name, value in vars(fresh).items():
            if name.isupper() and isinstance(value, (dict, list)):
                _SHIPPED[name] = value


def _restore_shipped() -> None:
    """Put the long-context module data back as shipped, in place (other modules hold the same objects)."""
    module = _long_context()
    for name, shipped in _SHIPPED.items():
        live = getattr(module, name)
        if live == shipped:
            continue
        if isinstance(live, dict):
            live.clear()
            live.update(copy.deepcopy(shipped))
        else:
            live[:] = copy.deepcopy(shipped)


def _shared_keys() -> dict[str, str]:
    """Key -> name of the module-level dict that holds it (a card id -> CREDIT_CARD_EXTENSION)."""
    return {str(k): name for name, value in _SHIPPED.items() if isinstance(value, dict) for k in value}


def _package_call(entry: Any, calls: list[str], model: str) -> Any:
    """BFCL's own executor on `calls` for one entry, under model name `model` (its globals' key)."""
    return _utils().execute_multi_turn_func_call(
        calls,
        entry.question["initial_config"],
        entry.question["involved_classes"],
        model,
        entry.question["id"],
        long_context=entry.long_context,
    )


def _drop_globals(model_name: str) -> None:
    """Remove every backend instance the package cached in its module globals for this model name."""
    namespace = vars(_utils())
    prefix = re.sub(r"[-./:]", "_", model_name) + "_"
    for key in [k for k in namespace if k.startswith(prefix)]:
        del namespace[key]


# -- call strings <-> actions ------------------------------------------------------------------
def parse_call(call: str, signatures: Mapping[str, inspect.Signature]) -> Action:
    """`f(1, b='x')` -> Action("f", {"a": 1, "b": "x"}): positional arguments take their parameter names."""
    node = ast.parse(call.strip(), mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise AuditError(f"not a plain function call: {call!r}")
    name = node.func.id
    args: dict[str, Any] = {}
    if node.args:
        sig = signatures.get(name)
        if sig is None:
            raise AuditError(f"{name!r} takes positional arguments but no involved class has it: {call!r}")
        params = [p for p in sig.parameters if p != "self"]
        for param, value in zip(params, node.args):
            args[param] = ast.literal_eval(value)
    for kw in node.keywords:
        if kw.arg is None:
            raise AuditError(f"**kwargs in a call string is not supported: {call!r}")
        args[kw.arg] = ast.literal_eval(kw.value)
    return Action(name, args)


def render_call(action: Action) -> str:
    """Action("f", {"b": "x"}) -> "f(b='x')": what the package's executor evaluates."""
    return f"{action.name}({', '.join(f'{k}={v!r}' for k, v in action.args.items())})"


def turns_of(run: Run) -> list[list[str]]:
    """The run's call strings per turn (a TURN marker opens each turn)."""
    turns: list[list[str]] = []
    for action in run.actions:
        if action.name == TURN:
            turns.append([])
        elif not turns:
            raise AuditError(f"{action.describe()} comes before the first turn marker")
        else:
            turns[-1].append(render_call(action))
    return turns


# -- state as plain data ---------------------------------------------------------------------------


def _tree(directory: Any, path: str, files: dict[str, Any], dirs: list[str]) -> None:
    for name, item in directory.contents.items():
        child = f"{path}/{name}"
        if hasattr(item, "contents"):
            dirs.append(child)
            _tree(item, child, files, dirs)
        else:
            files[child] = {"name": item.name, "content": item.content}


def _path_of(directory: Any) -> str:
    parts = []
    while directory is not None:
        parts.append(directory.name)
        directory = directory.parent
    return "/".join(reversed(parts))


def _instance_state(instance: Any) -> dict[str, Any]:
    """Public attributes as they are; private ones (what the checker skips) under "_private"."""
    state: dict[str, Any] = {}
    private: dict[str, Any] = {}
    for attr, value in vars(instance).items():
        if attr in _NOT_STATE:
            continue
        if attr == "root" and hasattr(value, "contents"):  # GorillaFileSystem's tree
            files: dict[str, Any] = {}
            dirs: list[str] = []
            _tree(value, _path_of(value), files, dirs)
            state["files"] = files
            state["directories"] = sorted(dirs)
        elif attr == "_current_dir" and hasattr(value, "contents"):
            private["_current_dir"] = _path_of(value)
        elif attr.startswith("_"):
            private[attr] = plain(value)
        else:
            state[attr] = plain(value)
    if private:
        state["_private"] = private
    return state


def _turn_key(index: int, turns: int) -> str:
    """The snapshot key of the state at the end of turn `index` (0-based) of `turns`."""
    return "now" if index == turns - 1 else f"after_turn_{index + 1}"


def _set_at(instance: Any, path: Sequence[str], value: Any) -> None:
    """Set `value` on a backend instance at a snapshot path below its class (`_private` holds the private names;
    dict keys match as the snapshot spells them, a tuple key joined with '|')."""
    segs = list(path[1:] if path and path[0] == "_private" else path)
    if segs == ["_current_dir"]:  # a path in the snapshot: moved to another folder (the top one, or one below it)
        root, now = instance.root, instance._current_dir
        others = [d for d in root.contents.values() if hasattr(d, "contents")]
        if now is root and not others:
            raise ValueError("no other folder to move the current directory to")
        instance._current_dir = root if now is not root else others[0]
        return
    if segs and segs[0] in ("files", "directories"):  # views of the tree: changed by a folder holding a file
        if "verimut_flipped" not in instance.root.contents:
            instance.root._add_directory("verimut_flipped")
            instance.root.contents["verimut_flipped"]._add_file("flipped.txt", str(value))
        return
    if not segs:
        raise ValueError(f"no flip at {'.'.join(path)}: not an attribute")
    if len(segs) == 1:
        setattr(instance, segs[0], value)
        return
    node = getattr(instance, segs[0])
    for i, seg in enumerate(segs[1:]):
        if isinstance(node, list):
            key: Any = int(seg)
        else:
            key = next(
                k for k in node if k == seg or str(k) == seg or (isinstance(k, tuple) and "|".join(map(str, k)) == seg)
            )
        if i == len(segs) - 2:
            node[key] = value
        else:
            node = node[key]


class _Reading:
    """What `multi_turn_checker` read while it ran (core/reads.py): the attributes it took off the instances the
    run's calls were executed on, at each turn it compared, and the run's call outputs its response check took."""

    def __init__(self, positions: Sequence[int]) -> None:
        self.positions = positions  # the k-th call output is the run's action at positions[k]
        self.seen: set[tuple[tuple[str, ...], str]] = set()

    def attribute(self, at: tuple[str, ...], name: str, value: Any) -> None:
        """A read of attribute `name` of the instance at snapshot path `at`, named as the snapshot names it."""
        how = VALUE if isinstance(value, (str, int, float, bool, type(None))) else WHOLE
        if name == "root":  # the file tree, compared through Directory.__eq__ all the way down
            self.seen.update({((*at, "files"), WHOLE), ((*at, "directories"), WHOLE)})
        elif name == "_current_dir":
            self.seen.add(((*at, "_private", name), VALUE))
        else:
            self.seen.add(((*at, "_private", name) if name.startswith("_") else (*at, name), how))

    def trace(self, reads: Reads, taken: int) -> None:
        """The response check's reads of the first `taken` outputs, put at their calls' positions in the run."""
        for how, paths in ((VALUE, reads.value), (KEYS, reads.keys), (WHOLE, reads.whole)):
            for path in paths:
                rest = path.split(".")[1:]
                if not rest:  # the list as a whole (the check copies it): every call's output it holds
                    self.seen.update(((TRACE, str(p)), how) for p in self.positions[:taken])
                else:
                    self.seen.add(((TRACE, str(self.positions[int(rest[0])]), *rest[1:]), how))


_WATCHED: dict[int, tuple[tuple[str, ...], _Reading]] = {}  # id(instance) -> (its snapshot path, the reading)


def _noting(self: Any, name: str) -> Any:
    """A backend class's attribute lookup while the checker compares: as before, and noted for a watched instance.
    `vars()` lists the attributes (a keys read); the values it then filters are not counted as read."""
    value = object.__getattribute__(self, name)
    watched = _WATCHED.get(id(self))
    if watched is not None:
        at, reading = watched
        if name == "__dict__":
            reading.seen.add((at, KEYS))
        elif name in object.__getattribute__(self, "__dict__"):
            reading.attribute(at, name, value)
    return value


@contextlib.contextmanager
def _watching(instances: Mapping[str, Any], at: tuple[str, ...], reading: _Reading) -> Iterator[None]:
    """Note attribute reads on `instances` (class name -> instance, at `at` + class name) while the block runs.
    Only the classes' `__getattribute__` is replaced, and put back after; their equality runs as written."""
    classes = {type(i) for i in instances.values()}
    own = {c: c.__dict__.get("__getattribute__") for c in classes}
    for name, instance in instances.items():
        _WATCHED[id(instance)] = ((*at, name), reading)
    for c in classes:
        type.__setattr__(c, "__getattribute__", _noting)
    try:
        yield
    finally:
        for c in classes:
            if own[c] is None:
                type.__delattr__(c, "__getattribute__")
            else:
                type.__setattr__(c, "__getattribute__", own[c])
        for instance in instances.values():
            _WATCHED.pop(id(instance), None)


@contextlib.contextmanager
def _hooked(
    flips: Sequence[tuple[tuple[str, ...], Any]], turns: int, model: str, reading: _Reading | None = None
) -> Iterator[None]:
    """While the checker runs: when turn i ends (its ground truth is executed, after the run's calls of the turn), set
    the flips whose path names turn i on the instances the run's calls were executed on (`model`'s), so a flip
    persists into the later turns as a write made then would; with a `reading`, note what the comparisons read.
    The checker's own functions run as written."""
    if not flips and reading is None:
        yield
        return
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_checker as checker

    execute, compare, respond = checker.execute_multi_turn_func_call, checker.state_checker, checker.response_checker
    seen = [0]  # ground-truth executions so far: one per turn
    instances: dict[str, Any] = {}  # the run's instances, once its first call made them

    def counted(*args: Any, **kwargs: Any) -> Any:
        done = execute(*args, **kwargs)
        if kwargs.get("model_name") == model:
            instances.update(done[1])
        elif kwargs.get("model_name") == model + "_ground_truth":
            seen[0] += 1
            key = _turn_key(seen[0] - 1, turns)
            for path, value in flips:
                if path[0] != key:
                    continue
                if path[1] not in instances:  # no call of the run yet: nothing holds the state to flip
                    raise ValueError(f"no instance of {path[1]} at {key} to flip")
                _set_at(instances[path[1]], path[2:], value)
        return done

    def compared(model_instances: dict[str, Any], truth: dict[str, Any]) -> Any:
        if reading is None:
            return compare(model_instances, truth)
        with _watching(model_instances, (STATE, _turn_key(seen[0] - 1, turns)), reading):
            return compare(model_instances, truth)

    def responded(results: list[Any], truth: list[Any], turn: int) -> Any:
        if reading is None:
            return respond(results, truth, turn)
        said, reads = recorded({TRACE: results}, lambda views: respond(views[TRACE], truth, turn))
        reading.trace(reads, len(results))
        return said

    checker.execute_multi_turn_func_call, checker.state_checker = counted, compared
    checker.response_checker = responded
    try:
        yield
    finally:
        checker.execute_multi_turn_func_call, checker.state_checker = execute, compare
        checker.response_checker = respond


def _status_only(output: str) -> bool:
    """Whether a call's output is a status: a JSON object whose values are all booleans or strings."""
    try:
        value = json.loads(output)
    except ValueError:
        return False
    return isinstance(value, dict) and all(isinstance(v, (bool, str)) for v in value.values())


# -- the adapter ---------------------------------------------------------------------------------
class BFCL:
    name = "bfcl"
    markers = frozenset({TURN})  # a turn boundary is structure: alternative runs leave it in place
    # A price cache that reads fill: telemetry. The snapshot may flatten it into one collection per
    # flight (`..._flight_cost_lookup.JFK|LAX|first|2026-10-15`), hence the second pattern.
    # The parking brake's force and the road's slope angle: simulator bookkeeping, not world state. A brake call
    # invents the slope (engage sets 10.0 degrees on whatever road), and engaging an engaged brake moves only
    # these two while the status a user sees stays 'engaged'. Checked like every declaration, by flipping them
    # where the checker compares (`patch`): a verifier that graded them would make them state for its task.
    telemetry: Sequence[str] = (
        "*.TravelAPI._private._flight_cost_lookup",
        "*.TravelAPI._private._flight_cost_lookup.*",
        "*.VehicleControlAPI._private[_parkingBrakeForce]",
        "*.VehicleControlAPI._private[_slopeAngle]",
    )

    contracts: Mapping[str, str] = {"user": "effect"}

    def reads_trace(self, task: str) -> bool:
        return True  # multi_turn_checker's response check: the ground truth's call results among the run's

    def idle_writes(self, task: str) -> Sequence[int]:
        """The reference's writes a run may leave out: each changes nothing, public or private, where the reference
        makes it; what it returns is a status, no data (`{"authentication_status": true}`, "logged in
        successfully": booleans and messages, no number or list); and its turn makes other calls. A login on a
        session already authenticated, or one whose password is wrong. The checker still wants the call's output
        among the run's, but the output carries nothing the task asks for and the run ends the same. Not idle: a
        budget set to what it already is or a stock added to a watchlist that holds it (their outputs are the
        data the user named), nor a call that is its turn's only one (a run without it ignores that request)."""
        if task not in self._idle:
            episode = self.reset(task)
            idle: list[int] = []
            turn: list[int] = []  # the current turn's calls, by index
            quiet: set[int] = set()
            for i, action in enumerate(self.reference(task, episode).actions):
                if action.name == TURN:
                    idle += [k for k in turn if k in quiet] if len(turn) > 1 else []
                    turn = []
                    self.execute(episode, action)
                    continue
                turn.append(i)
                before = self._state(episode) if self.is_write(action) else None
                step = self.execute(episode, action)
                if before is not None and self._state(episode) == before and _status_only(step.output):
                    quiet.add(i)
            idle += [k for k in turn if k in quiet] if len(turn) > 1 else []
            self._idle[task] = tuple(idle)
        return self._idle[task]

    def __init__(self, version: str | None = None) -> None:
        self.version = require("bfcl-eval", "bfcl-eval", "install-bfcl.sh")
        self._idle: dict[str, tuple[int, ...]] = {}
        self._entries: dict[str, Entry] = {}
        data = _data_dir()
        for category in CATEGORIES:
            questions = _read_jsonl(data / f"BFCL_v4_multi_turn_{category}.json")
            answers = {
                a["id"]: a["ground_truth"]
                for a in _read_jsonl(data / "possible_answer" / f"BFCL_v4_multi_turn_{category}.json")
            }
            for q in questions:
                self._entries[f"{category}/{q['id']}"] = Entry(category, q, answers[q["id"]])
        self._signatures: dict[str, dict[str, inspect.Signature]] = {}
        _keep_shipped()

    # -- what there is ---------------------------------------------------------------------------
    def provenance(self) -> Mapping[str, str]:
        return {
            "bfcl-eval": self.version,
            "mpmath": importlib.metadata.version("mpmath"),
            "categories": ", ".join(f"multi_turn_{c}" for c in CATEGORIES),
            "verifier": "bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker.multi_turn_checker",
            "state_compared": STATE_COMPARED,
            # An entry's state is the classes it involves: another entry's writes never land in it (read maps).
            OWN_STATES: "each entry's state is its own: the backend classes it involves",
        }

    def tasks(self) -> Sequence[str]:
        return list(self._entries)

    def entry(self, task: str) -> Entry:
        try:
            return self._entries[task]
        except KeyError:
            raise AuditError(f"unknown BFCL multi-turn entry {task!r}") from None

    def instruction(self, task: str) -> str:
        turns = self.entry(task).question["question"]
        lines = []
        for n, turn in enumerate(turns):
            said = " ".join(m["content"] for m in turn if m.get("role") == "user")
            lines.append(f"turn {n + 1}: {said or '(no user message: a withheld function is added)'}")
        return "\n".join(lines)

    def _methods(self, entry: Entry) -> dict[str, inspect.Signature]:
        """Method name -> signature over the entry's classes; the last class wins, as in the package."""
        from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING

        key = ",".join(entry.question["involved_classes"])
        if key not in self._signatures:
            found: dict[str, inspect.Signature] = {}
            for class_name in entry.question["involved_classes"]:
                cls = getattr(importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name]), class_name)
                for name, fn in inspect.getmembers(cls, predicate=inspect.isfunction):
                    if not name.startswith("_"):
                        found[name] = inspect.signature(fn)
            self._signatures[key] = found
        return self._signatures[key]

    # -- an episode ------------------------------------------------------------------------------
    def reset(self, task: str) -> Episode:
        entry = self.entry(task)
        model = _unique("episode")
        try:
            # The package's own constructor path: instance, then _load_scenario on a deep copy.
            _, instances = _package_call(entry, [], model)
        finally:
            _drop_globals(model)
        # Our own copy: the instances hold the long-context module data by reference.
        return Episode(entry, copy.deepcopy(dict(instances)))

    def reference(self, task: str, episode: Episode) -> Run:
        signatures = self._methods(episode.entry)
        actions: list[Action] = []
        for turn in episode.entry.ground_truth:
            actions.append(Action(TURN))
            actions.extend(parse_call(call, signatures) for call in turn)
        return Run(tuple(actions), "")

    def execute(self, episode: Episode, action: Action) -> Step:
        if action.name == TURN:
            if episode.started:
                episode.turns.append(self._state(episode))
            episode.started = True
            return Step("")
        entry = episode.entry
        model = _unique("step")
        utils = _utils()
        # Hand our instances to the package's executor under a fresh name, so it dispatches and
        # evaluates the call exactly as for a model; take them back out after.
        names = {c: re.sub(r"[-./:]", "_", f"{model}_{entry.question['id']}_{c}_instance") for c in episode.instances}
        for class_name, global_name in names.items():
            vars(utils)[global_name] = episode.instances[class_name]
        try:
            results, _ = _package_call(entry, [render_call(action)], model)
        finally:
            _drop_globals(model)
            _restore_shipped()  # a read may write module data (the long weather report's temperature)
        return Step(str(results[0]))

    def is_write(self, action: Action) -> bool:
        if action.name == "echo":
            return action.args.get("file_name") is not None
        return action.name in _WRITE_NAMES

    @staticmethod
    def _state(episode: Episode) -> dict[str, Any]:
        return {name: _instance_state(inst) for name, inst in episode.instances.items()}

    def snapshot(self, episode: Episode) -> Any:
        """The state now, and as it was at the end of each earlier turn ("after_turn_N")."""
        earlier = {f"after_turn_{n + 1}": state for n, state in enumerate(episode.turns)}
        return {"now": self._state(episode), **earlier}

    def fork(self, episode: Episode) -> Episode:
        return Episode(
            episode.entry,
            copy.deepcopy(episode.instances),
            copy.deepcopy(episode.turns),
            episode.started,
            copy.deepcopy(episode.flips),
        )

    def patch(self, episode: Episode, path: Sequence[str], value: Any) -> None:
        """Set a value at a snapshot path (`now` or `after_turn_N`, class, attribute ...) where the checker looks:
        on the instances it re-executes the run's calls on, at the end of that turn, kept into the later turns
        (`verify`). The checker never reads our episode, so a flip there would prove nothing."""
        episode.flips.append((tuple(path), value))

    def verify(self, episode: Episode, run: Run) -> Verdict:
        return self._verify(episode, run)

    def verify_reading(self, episode: Episode, run: Run) -> tuple[Verdict, Reads]:
        """`verify`, with what the checker read recorded as it ran: the attributes its comparison took off the
        instances the run's calls were executed on (`state`, by turn: `now`, `after_turn_N`) and the call outputs
        its response check took (`trace`, by the call's position in the run)."""
        reading = _Reading([i for i, a in enumerate(run.actions) if a.name != TURN])
        verdict = self._verify(episode, run, reading)
        return verdict, Reads.of(reading.seen)

    def _verify(self, episode: Episode, run: Run, reading: _Reading | None = None) -> Verdict:
        """The package's multi_turn_checker on the run's calls per turn, under a model name of its own."""
        from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

        entry = episode.entry
        turns = turns_of(run)
        if len(turns) != len(entry.ground_truth):
            # What the package's runner says before the checker runs ("force-terminated").
            return Verdict(False, f"{len(turns)} turns, the entry has {len(entry.ground_truth)}")
        model = _unique("verify")
        try:
            with _hooked(episode.flips, len(entry.ground_truth), model, reading):
                result = multi_turn_checker(
                    [[calls] if calls else [] for calls in turns],
                    entry.ground_truth,
                    copy.deepcopy(entry.question),
                    f"multi_turn_{entry.category}",
                    model,
                )
        finally:
            _drop_globals(model)
            _restore_shipped()  # the checker's instances changed the shared module data: undo it for the next cell
        if result["valid"]:
            return Verdict(True, "multi_turn_checker: valid")
        return Verdict(False, f"multi_turn_checker: {result.get('error_type')}: {result.get('error_message')}")

    # -- why a difference went unseen ----------------------------------------------------------
    def explain(self, task: str, collections: Sequence[str]) -> str | None:
        shared = _shared_keys()
        private, aliased, public = [], [], []
        for c in collections:
            segments = c.split(".")
            if any(seg.startswith("_") for seg in segments):
                private.append(c)
            elif any(seg in shared for seg in segments):
                aliased.append(c)
            else:
                public.append(c)
        parts = []
        if private:
            parts.append(
                f"{', '.join(private)} is private state: state_checker compares public attributes only "
                "(it skips names starting with '_')"
            )
        if aliased:
            names = sorted({shared[seg] for c in aliased for seg in c.split(".") if seg in shared})
            parts.append(
                f"{', '.join(aliased)} is bfcl_eval's module-level long-context data ({', '.join(names)}), which "
                "the model's and the ground truth's instances hold by reference: state_checker compares it with itself"
            )
        if public:
            parts.append(f"{', '.join(public)} differs in a way the per-turn comparison let through")
        return "multi_turn_checker: " + "; ".join(parts) if parts else None


def create(version: str | None = None) -> BFCL:
    bench = BFCL()
    check_version("bfcl", "bfcl-eval", bench.version, version)
    return bench

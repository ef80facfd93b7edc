"""RL reward functions as a trainer is handed them: `verimut audit reward:rewards.py:accuracy_reward --dataset D`.

A target names a Python file or an importable module, then one function or several with a comma
(`reward:rewards.py:format_reward,accuracy_reward`; weights as the trainer sums them with `--option
weights=0.2,1`). Each is called as TRL's `GRPOTrainer` calls a reward function: keyword arguments only, each a
list over the batch (here a batch of one completion), every dataset column passed under its own name besides
`prompts`, `completions`, `completion_ids` and `trainer_state`; a completion is the text, or `[{"role":
"assistant", "content": text}]` when the dataset's prompts are conversations (TRL's `is_conversational`). The
functions' weighted sum is the reward, a `None` counting as nothing (TRL's `nansum`); when every function
returns `None` the completion is unscorable, a cell error.

Options (`--option KEY=VALUE`): `dataset` (also `--dataset`; a .jsonl, .json, .csv or .parquet file), `reference`
(the column holding the answer; inferred from the usual names or the functions' parameters), `prompt` (the
prompt column), `weights`, `full` (the full reward: the weights' sum by default), `slot` (the answer's format,
"<answer>{answer}</answer>"; inferred from the functions' string constants), `rows` (at most this many rows),
`conversational` (yes: completions as message lists; default: when the prompts are conversations, or a function
reads `completion[0]["content"]`, as TRL's accuracy_reward does).
"""

from __future__ import annotations

import csv
import importlib
import importlib.util
import inspect
import json
import math
import re
import sys
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from verimut.adapters.answer_tasks import AnswerTasks, NoReward, Row
from verimut.core.errors import AuditError

PREFIX = "reward:"
ANSWER_COLUMNS = ("answer", "solution", "ground_truth", "gold", "target", "label", "reference", "expected")
PROMPT_COLUMNS = ("prompt", "question", "problem", "query", "instruction", "input", "text")
TRAINER_ARGS = ("prompts", "completions", "completion_ids", "trainer_state", "log_extra", "log_metric")
ROWS = 200


class TrainerState(types.SimpleNamespace):
    """What `trainer_state` holds at the start of training (transformers' TrainerState, the fields reward code reads)."""


def split_target(target: str) -> tuple[str, list[str]]:
    """`path/to/rewards.py:f,g` or `package.module:f` -> (the file or module, the function names)."""
    where, colon, names = target.rpartition(":")
    funcs = [n.strip() for n in names.split(",") if n.strip()]
    if not colon or not where or not funcs:
        raise AuditError(f"reward target {target!r}: give FILE.py:FUNCTION or module:FUNCTION (several: f,g)")
    return where, funcs


def import_module(where: str) -> types.ModuleType:
    """The module that holds the functions: a .py file (its folder on sys.path, as `python file.py` would put it),
    or an importable module name (`trl.rewards`)."""
    if not where.endswith(".py"):
        if str(Path.cwd()) not in sys.path:
            sys.path.insert(0, str(Path.cwd()))  # `reward:rewards:f` finds ./rewards.py, as `python -m` would
        try:
            return importlib.import_module(where)
        except ImportError as e:
            raise AuditError(f"cannot import the reward module {where!r}: {e}") from None
    path = Path(where).resolve()
    if not path.is_file():
        raise AuditError(f"reward file {where!r} not found")
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    name = "verimut_rewards_" + re.sub(r"\W", "_", path.stem)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001  (the user's file: any exception is its failure to import)
        raise AuditError(f"importing {where} raised {type(e).__name__}: {e}") from None
    return module


def read_rows(dataset: str) -> list[dict[str, Any]]:
    """A dataset's rows: a .jsonl, .json (a list, or an object holding one), .csv or .parquet file."""
    path = Path(dataset)
    if not path.is_file():
        raise AuditError(f"dataset {dataset!r} not found")
    try:
        if path.suffix == ".jsonl":
            rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        elif path.suffix == ".json":
            data = json.loads(path.read_text())
            rows = data if isinstance(data, list) else next((v for v in data.values() if isinstance(v, list)), [])
        elif path.suffix == ".csv":
            with path.open(newline="") as handle:
                rows = list(csv.DictReader(handle))
        elif path.suffix == ".parquet":
            try:
                import pyarrow.parquet as pq  # type: ignore[import-not-found]
            except ImportError:
                raise AuditError(f"dataset {dataset!r}: reading Parquet needs pyarrow (pip install pyarrow)") from None
            rows = pq.read_table(path).to_pylist()
        else:
            raise AuditError(f"dataset {dataset!r}: give a .jsonl, .json, .csv or .parquet file")
    except (json.JSONDecodeError, UnicodeDecodeError, csv.Error) as e:
        raise AuditError(f"dataset {dataset!r} is not readable: {e}") from None
    if not rows or not all(isinstance(r, dict) for r in rows):
        raise AuditError(f"dataset {dataset!r} holds no rows of named columns")
    return rows


def is_conversation(value: Any) -> bool:
    """TRL's `is_conversational`: a list of messages with a role."""
    return isinstance(value, list) and bool(value) and isinstance(value[0], dict) and "role" in value[0]


def prompt_text(value: Any) -> str:
    if is_conversation(value):
        return "\n".join(str(m.get("content") or "") for m in value if m.get("role") in ("system", "user"))
    return "" if value is None else str(value)


def _parameters(func: Callable[..., Any]) -> Mapping[str, inspect.Parameter]:
    try:
        return inspect.signature(func).parameters
    except (TypeError, ValueError):
        return {}


def reference_column(given: str | None, columns: list[str], funcs: Mapping[str, Callable[..., Any]]) -> str:
    """The column that holds the answer: the one named, the one a function names as a parameter, or a usual name."""
    if given is not None:
        if given not in columns:
            raise AuditError(f"the dataset has no column {given!r} (its columns: {', '.join(columns)})")
        return given
    named = [p for f in funcs.values() for p in _parameters(f) if p in columns and p not in PROMPT_COLUMNS]
    found = next((c for c in [*named, *ANSWER_COLUMNS] if c in columns), None)
    if found is None:
        raise AuditError(
            f"cannot tell which column holds the reference answer (columns: {', '.join(columns)}): "
            "give --option reference=COLUMN"
        )
    return found


def slot_of(funcs: Mapping[str, Callable[..., Any]], prompts: list[str]) -> str:
    """The answer's format, from the functions' string constants and the prompts: `<answer>` tags, `\\boxed{}`, or
    none (the completion is the answer)."""
    texts = list(prompts[:5])
    for func in funcs.values():
        code = getattr(func, "__code__", None)
        stack = [code]
        while stack:
            c = stack.pop()
            if c is None:
                continue
            texts += [k for k in c.co_consts if isinstance(k, str)]
            stack += [k for k in c.co_consts if hasattr(k, "co_consts")]
        for name in getattr(code, "co_names", ()):
            value = getattr(func, "__globals__", {}).get(name)
            if isinstance(value, re.Pattern):
                texts.append(value.pattern)
            elif isinstance(value, str):
                texts.append(value)
    joined = "\n".join(texts)
    if "<answer>" in joined:
        return "<answer>{answer}</answer>"
    if "boxed" in joined:
        return "\\boxed{{answer}}"
    return ""


def reads_messages(func: Callable[..., Any]) -> bool:
    """Whether a function indexes a completion as a message list (`completion[0]["content"]`, as TRL's own
    accuracy_reward does): it is then handed conversational completions, whatever the prompts are."""
    try:
        source = inspect.getsource(func)
    except (OSError, TypeError):
        return False
    return re.search(r"\[0\]\s*\[\s*[\"']content[\"']\s*\]", source) is not None


class Caller:
    """The reward functions called as GRPOTrainer calls them, their weighted sum the reward."""

    def __init__(
        self,
        funcs: Mapping[str, Callable[..., Any]],
        weights: Mapping[str, float],
        prompt: str,
        messages: bool = False,
    ) -> None:
        self.funcs, self.weights, self.prompt = dict(funcs), dict(weights), prompt
        self.messages = messages  # completions as message lists, whatever the prompts are

    def kwargs(self, row: Row, completion: str) -> dict[str, Any]:
        prompt = row.row.get(self.prompt, row.prompt)
        conversational = self.messages or is_conversation(prompt)
        said: Any = [{"role": "assistant", "content": completion}] if conversational else completion
        out: dict[str, Any] = {
            "prompts": [prompt],
            "completions": [said],
            "completion_ids": [list(range(max(1, len(completion) // 4)))],  # about one token per four characters
            "trainer_state": TrainerState(global_step=0, epoch=0.0, max_steps=0, log_history=[]),
            "log_extra": lambda *a, **k: None,
            "log_metric": lambda *a, **k: None,
        }
        for column, value in row.row.items():
            if column not in ("prompt", "completion", "completion_ids"):
                out[column] = [value]
        return out

    def check(self, row: Row) -> None:
        """Each function can take the trainer's keywords (a wrong signature is the user's to fix: a one-line error)."""
        kwargs = self.kwargs(row, "")
        for name, func in self.funcs.items():
            params = _parameters(func)
            if not params:
                continue
            if "completions" not in params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
                raise AuditError(f"reward function {name!r} takes no `completions` (GRPOTrainer passes it by keyword)")
            try:
                inspect.signature(func).bind(**kwargs)
            except TypeError as e:
                raise AuditError(f"reward function {name!r} cannot be called as GRPOTrainer calls it: {e}") from None

    def __call__(self, row: Row, completion: str) -> float | None:
        kwargs = self.kwargs(row, completion)
        given: dict[str, float] = {}
        for name, func in self.funcs.items():
            out = list(func(**kwargs))
            if len(out) != 1:
                raise ValueError(f"{name} returned {len(out)} rewards for one completion")
            value = out[0]
            if value is None or isinstance(value, float) and math.isnan(value):
                continue  # TRL sums with nansum: None and NaN count as nothing
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{name} returned {type(value).__name__} ({value!r:.40}), not a number")
            given[name] = float(value)
        if not given:
            raise NoReward("every reward function returned None for this completion: the trainer cannot score it")
        return sum(self.weights[k] * v for k, v in given.items())


def _floats(text: str, what: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        raise AuditError(f"--option {what}={text!r}: give numbers separated by commas") from None


def create(
    version: str | None = None,
    target: str = "",
    dataset: str | None = None,
    reference: str | None = None,
    prompt: str | None = None,
    weights: str | None = None,
    full: str | None = None,
    slot: str | None = None,
    rows: str | None = None,
    conversational: str | None = None,
) -> AnswerTasks:
    if not target:
        raise AuditError(
            "a reward function is named as reward:FILE.py:FUNC --dataset FILE (or --option target=FILE.py:FUNC)"
        )
    where, names = split_target(target)
    if dataset is None:
        raise AuditError(f"reward:{target} needs a dataset: --dataset FILE (.jsonl, .json, .csv, .parquet)")
    data = read_rows(dataset)  # a missing dataset before importing the user's code
    module = import_module(where)
    funcs: dict[str, Callable[..., Any]] = {}
    for name in names:
        func = getattr(module, name, None)
        if not callable(func):
            raise AuditError(f"{where} has no function {name!r}")
        funcs[name] = func
    ws = _floats(weights, "weights") if weights is not None else [1.0] * len(names)
    if len(ws) != len(names):
        raise AuditError(f"--option weights: {len(ws)} weight(s) for {len(names)} function(s)")
    columns = list(dict.fromkeys(c for r in data for c in r))
    answer = reference_column(reference, columns, funcs)
    asked = prompt or next((c for c in PROMPT_COLUMNS if c in columns), None)
    if asked is None or asked not in columns:
        raise AuditError(f"cannot tell which column holds the prompt (columns: {', '.join(columns)}): --option prompt=")
    limit = int(rows) if rows is not None else ROWS
    suite = "+".join(names)
    table = {
        f"{suite}/{i}": Row(
            prompt_text(r.get(asked)),
            None if r.get(answer) is None else str(r[answer]).strip(),
            r,
        )
        for i, r in enumerate(data[:limit])
    }
    if conversational not in (None, "yes", "no"):
        raise AuditError(f"--option conversational={conversational!r}: yes or no (default: as the dataset's prompts)")
    messages = conversational == "yes" or (conversational is None and any(reads_messages(f) for f in funcs.values()))
    caller = Caller(funcs, dict(zip(names, ws, strict=True)), asked, messages)
    caller.check(next(iter(table.values())))
    top = float(full) if full is not None else sum(ws)
    form = slot if slot is not None else slot_of(funcs, [r.prompt for r in table.values()])
    if form and "{answer}" not in form:
        raise AuditError(f"--option slot={form!r}: write {{answer}} where the answer goes")
    stem = Path(where).stem if where.endswith(".py") else where
    return AnswerTasks(
        "reward",
        f"{stem}.{suite}".replace("+", "_"),
        table,
        caller,
        top,
        f"the completion {', '.join(names)} grade{'s' if len(names) == 1 else ''}",
        form,
        {"reward": target, "dataset": dataset, "reference_column": answer, "prompt_column": asked},
    )

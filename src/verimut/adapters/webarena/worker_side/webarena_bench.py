"""WebArena-Verified's side of the adapter: runs in the package's own environment (.venv-webarena).

Served to verimut by `verimut/adapters/worker.py` (`webarena_bench:WebArenaVerifiedBench`); imports only the
standard library and `webarena_verified` (it pins pydantic 2.12.0), never verimut.

- A task is one of the package's 812 (or its hard subset's), named `SITE/ID` by its first site.
- An action is one browser request, named by its HTTP method, `{"url", "status", "post_data", "headers", ...}`,
  or the agent's final response, `respond`, whose arguments are the response (task type, status, retrieved
  data) and the schema the package reads its data by (`results_schema`: the type and format of each value). The reference run is verimut's own, synthesized from the task's expected values (webarena_evidence.py):
  no site runs here.
- The end state is what the evidence says the run changed (webarena_effects.py): each write, read as the
  create, update, toggle or removal it asks a site for, and the final response. Reads (GETs) are not effects.
- The verifier is the package's `WebArenaVerified().evaluate_task`, unmodified, on the episode's requests as a
  HAR trace and its response; `verify_as` is the same call with another task's id; `verify_reading` the same
  call on recording copies of that evidence, with what it read as reads of the end state (webarena_reads.py).
"""

from __future__ import annotations

import copy
import itertools
import json
import logging
import os
from pathlib import Path
from typing import Any, ClassVar

import webarena_effects as effects
import webarena_evidence as evidence
import webarena_reads as reads

RESPOND = "respond"
SUBSETS = ("all", "hard")
MAX_ORDERS = 24  # a reference whose requests fail in the order written is tried in every order up to 4! of them


class WebArenaVerifiedBench:
    name = "webarena-verified"
    telemetry = ()
    grammar = "evidence"
    markers: ClassVar[list[str]] = [RESPOND]
    # A new record (a comment, a project, a cart line) gets its id from the site: records made by creates are
    # matched by content, so two runs that make the same ones in another order have the same effect.
    assigned_keys: ClassVar[list[str]] = [effects.CREATES]
    contracts: ClassVar[dict[str, str]] = {"user": "effect"}

    def __init__(self) -> None:
        logging.disable(logging.CRITICAL)  # the package logs every evaluation, and each one it refuses with a traceback
        import webarena_verified
        from webarena_verified.api.webarena_verified import WebArenaVerified
        from webarena_verified.types.config import WebArenaVerifiedConfig

        self.subset = os.environ.get("VERIMUT_WEBARENA_SUBSET", "all")
        if self.subset not in SUBSETS:
            raise RuntimeError(f"unknown subset {self.subset!r} (known: {', '.join(SUBSETS)})")
        self.package_version = str(getattr(webarena_verified, "__version__", "") or _dist_version())
        self.version = self.package_version if self.subset == "all" else f"{self.package_version}-{self.subset}"
        config = WebArenaVerifiedConfig(environments={k: {"urls": [v]} for k, v in evidence.SITES.items()})
        self.wa = WebArenaVerified(config=config)
        data = Path(webarena_verified.__file__).parent / "assets" / "dataset"
        raw = json.loads((data / "webarena-verified.json").read_text())
        wanted = None
        if self.subset == "hard":
            wanted = set(json.loads((data / "subsets" / "webarena-verified-hard.json").read_text())["task_ids"])
        self.raw = {f"{t['sites'][0]}/{t['task_id']}": t for t in raw if wanted is None or t["task_id"] in wanted}
        self._references: dict[str, dict[str, Any]] = {}
        self.unsatisfied: dict[str, str] = {}  # task -> why no synthesized evidence passes its evaluator

    def provenance(self) -> dict[str, str]:
        return {
            "webarena-verified": self.package_version,
            "subset": self.subset,
            "tasks": str(len(self.raw)),
            "references": "verimut's own, synthesized from each task's expected values (no site was run: the"
            " audit tests the evaluators on evidence, not what a site would do with it)",
        }

    def tasks(self) -> list[str]:
        return list(self.raw)

    def instruction(self, task: str) -> str:
        return str(self.raw[task]["intent"])

    def _id(self, task: str) -> int:
        return int(self.raw[task]["task_id"])

    # -- an episode: the requests made so far and the response -------------------------------------------------
    def reset(self, task: str) -> dict[str, Any]:
        return {"task": task, "requests": [], "response": None}

    def fork(self, episode: dict[str, Any]) -> dict[str, Any]:
        return copy.deepcopy(episode)

    def reference(self, task: str, episode: dict[str, Any]) -> dict[str, Any]:
        ref = self._reference(task)
        actions = [{"name": r["method"], "args": _args(r)} for r in ref["requests"]]
        # The response, and the schema the package reads its data by: the data families edit by format.
        respond = {"response": ref["response"], "results_schema": ref.get("schema") or {}}
        if ref.get("listed"):
            respond["listed"] = ref["listed"]  # the other values the task accepts, by where they sit
        actions.append({"name": RESPOND, "args": respond})
        return {"actions": actions, "answer": ""}

    def _reference(self, task: str) -> dict[str, Any]:
        """The synthesized reference; if the requests as written fail, the first order of them that passes.
        A task no order passes keeps the order written, and says why (`unsatisfied`)."""
        if task in self._references:
            return self._references[task]
        raw = self.raw[task]
        try:
            ref = evidence.reference(raw)
        except evidence.Unsynthesizable as e:
            self.unsatisfied[task] = f"verimut could not synthesize its evidence: {e}"
            ref = {"requests": [], "response": None, "schema": {}}
            self._references[task] = ref
            return ref
        first = self._evaluate(task, ref["requests"], ref["response"])
        if not first[0]:
            head, rest = ref["requests"][:1], ref["requests"][1:]
            for order in itertools.islice(itertools.permutations(rest), 1, MAX_ORDERS):
                if self._evaluate(task, [*head, *order], ref["response"])[0]:
                    ref = {**ref, "requests": [*head, *order]}
                    break
            else:
                self.unsatisfied[task] = _why(raw, first[1], len(rest))
                if first[2] and all(ok for name, ok in first[2].items() if "AgentResponse" not in name):
                    tried = self._other_responses(task, ref)
                    if tried:
                        self.unsatisfied[task] = tried
        self._references[task] = ref
        return ref

    def _other_responses(self, task: str, ref: dict[str, Any]) -> str | None:
        """Why no response passes a task whose requests pass but whose response does not: every shape of the
        response verimut tries fails (retrieved data absent, null, empty), or None if one passes (then it is the
        reference's)."""
        response = dict(ref["response"] or {})
        shapes = [{k: v for k, v in response.items() if k != "retrieved_data"}, {**response, "retrieved_data": None}]
        shapes.append({**response, "retrieved_data": []})
        for shape in shapes:
            if self._evaluate(task, ref["requests"], shape)[0]:
                ref["response"] = shape
                self.unsatisfied.pop(task, None)
                return None
        return (
            "its response evaluator fails every response verimut tried (the expected one, and with its retrieved"
            " data absent, null or empty)"
        )

    def execute(self, episode: dict[str, Any], action: dict[str, Any]) -> dict[str, Any]:
        name, args = action["name"], action.get("args") or {}
        if name == RESPOND:
            episode["response"] = copy.deepcopy(args.get("response"))
            return {"output": "", "error": None}
        if not isinstance(args.get("url"), str):
            return {"output": "", "error": f"a {name} request needs a url"}
        request = {"method": name, **copy.deepcopy(args)}
        url, body = str(args["url"]), args.get("post_data")
        named = effects.identity(name, url, body)
        if named is not None and any(
            named & (effects.identity(r["method"], r["url"], r.get("post_data")) or frozenset())
            and int(r.get("status") or 200) < 400
            for r in episode["requests"]
        ):
            # The site refuses a second member, invitation, project, group, fork, forum or product of one name: the edit
            # cannot be delivered (the cell is incomplete), as a call that raises is elsewhere.
            request["status"] = effects.REFUSED
            episode["requests"].append(request)
            return {"output": str(effects.REFUSED), "error": f"the site refuses a second {effects.target(url)} (409)"}
        episode["requests"].append(request)
        return {"output": str(request.get("status", 200)), "error": None}

    def is_write(self, action: dict[str, Any]) -> bool:
        args = action.get("args") or {}
        return effects.is_write(str(action["name"]), str(args.get("url", "")), args.get("post_data"))

    def snapshot(self, episode: dict[str, Any]) -> dict[str, Any]:
        return effects.state(episode["requests"], episode["response"])

    # -- the verifier -------------------------------------------------------------------------------------------
    def _evaluate(
        self, task: str, requests: list[dict[str, Any]], response: Any, seen: reads.Seen | None = None
    ) -> tuple[bool, str, dict[str, bool]]:
        # An empty trace is given as it is: the package's own answer to a run that made no request.
        trace = [evidence.har_entry(r) for r in requests]
        if seen is not None:  # verify_reading: the same evidence, as recording copies (webarena_reads.py)
            trace = [reads.recording(e, (reads.HAR, i), seen) for i, e in enumerate(trace)]
            response = reads.recording(copy.deepcopy(response), (reads.RESPONSE,), seen)
        result = self.wa.evaluate_task(task_id=self._id(task), agent_response=response, network_trace=trace)
        checks: dict[str, bool] = {}
        notes: list[str] = []
        for n, er in enumerate(result.evaluators_results):
            ok = er.score == 1.0
            checks[f"{n}:{er.evaluator_name}"] = ok
            if not ok:
                said = [m for a in er.assertions or () for m in a.assertion_msgs]
                notes.append(f"{er.evaluator_name}: {er.error_msg or '; '.join(said) or er.status}")
        passed = result.score == 1.0 and str(result.status).lower().endswith("success")
        detail = f"score {result.score}" + (": " + " | ".join(notes) if notes else "")
        if result.error_msg and not notes:
            detail += f": {result.error_msg}"
        return passed, detail[:2000], checks

    def verify(self, episode: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
        return self.verify_as(episode["task"], episode, run)

    def verify_reading(self, episode: dict[str, Any], run: dict[str, Any]) -> list[Any]:
        """`verify`, with what the evaluators read of the evidence, as reads of the end state (webarena_reads.py)."""
        seen: reads.Seen = []
        verdict = self._verdict(episode["task"], episode, seen)
        return [verdict, reads.to_state(seen, episode["requests"])]

    def verify_as(self, task: str, episode: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
        return self._verdict(task, episode)

    def _verdict(self, task: str, episode: dict[str, Any], seen: reads.Seen | None = None) -> dict[str, Any]:
        passed, detail, checks = self._evaluate(task, episode["requests"], episode["response"], seen)
        if not passed and task == episode["task"]:
            self._reference(task)  # this process may not have built it: the diagnosis comes with it
            if task in self.unsatisfied:
                detail = f"{self.unsatisfied[task]} ({detail})"
        return {"passed": passed, "detail": detail, "checks": checks}

    def explain(self, task: str, collections: list[str]) -> str | None:
        """What the task's evaluators look at, read from its own configuration."""
        parts = []
        for spec in self.raw[task]["eval"]:
            if spec["evaluator"] == "NetworkEventEvaluator":
                parts.append(effects.describe_network(spec))
            else:
                parts.append("the response's task type, status and retrieved data")
        intent = " ".join(str(self.raw[task]["intent"]).split())
        return f"the task asks: {intent!r}; its evaluators read " + "; ".join(parts) + ": nothing else in the trace"


def _args(request: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in request.items() if k != "method"}


def _dist_version() -> str:
    from importlib.metadata import version

    return version("webarena-verified")


def _why(raw: dict[str, Any], detail: str, n: int) -> str:
    """Why no evidence verimut synthesized passes the task's evaluator, as far as the evaluator's own
    words and configuration show it."""
    if "Alternatives require 2+ items" in detail or "Error during evaluation" in detail:
        return (
            "its evaluator errs on the task's own expected value, whatever the evidence: " + detail.split(": ", 1)[-1]
        )
    clash = effects.last_event_clash(raw)
    if clash:
        return clash
    orders = "in every order of its requests" if n > 1 else "as synthesized"
    return f"verimut's synthesized evidence fails its evaluator {orders} (a limit of the synthesis, or of the task)"

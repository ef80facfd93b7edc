"""Check WebArena-Verified's measured read sets by another instrument: the package's evaluators under `sys.settrace`.

    .venv-webarena/bin/python precision/read_sets_webarena.py AUDIT_DIR CHANGED.json [--seed 42] [--sample 10] [--out F]
    .venv-webarena/bin/python precision/read_sets_webarena.py AUDIT_DIR --blind-spots [--seed 42] [--sample 20] [--out F]

CHANGED.json is `bench/bench_read_sets.py reasons AUDIT_DIR --bench webarena-verified`'s output. A seeded sample of
its false accepts is replayed: the cell's run (manifest.json) as the requests it makes and the response it gives,
made into HAR entries by the adapter's worker side (`webarena_evidence.har_entry`, standard library only: the
evidence the audit gave the package), then graded by the package's own `WebArenaVerified().evaluate_task` on PLAIN
dicts (no recording copy), under a `sys.settrace` tracer. Never imports verimut, and shares nothing with its
recorder (recording copies that note each key taken): at every line and return in the package's code, the tracer
looks at the frame's local variables and the returned value, and a write of the evidence counts as looked at when
one of them IS (object identity) its HAR entry, its request dict, its body (`postData`) or its URL string, or a
`NetworkEvent` holding it; the response when one of them is the response dict or a value taken out of it; with the package's functions where it was seen
(`settrace_functions`); the package's own conversion of the trace into events (`load_trace_from_content`, which
holds every entry before any evaluator runs) does not count as reading it. Which
collection of the end state a write lands in (`creates`, `records`) is the adapter's reading of a write
(`webarena_effects.kind`), the same reading that made the end state. The judgement (holds / disputed / wrong) is
a person's, written into docs/precision/read-sets-appworld-webarena.json.

`--blind-spots` flips the read map's blind spots (summary.json's `read_map`, read as plain JSON: every one is a
response-only task's `creates` or `records`) on a seeded sample of those tasks: the task's reference evidence
(its control cell's run) gets one more request, a write to the task's own site that lands in that collection
(`WRITES`: a POST that makes a record, a POST that edits one, each a URL and body the site takes; which collection
it lands in is `webarena_effects.kind`, checked), and the package's `evaluate_task` grades it: the blind spot holds
when the verdict does not move.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from precision_common import changed_sample

HERE = os.path.dirname(os.path.realpath(__file__))
SIDE = os.path.join(os.path.dirname(HERE), "src", "verimut", "adapters", "webarena", "worker_side")
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != HERE] + [HERE, SIDE]
NEW = " (new)"
RESPOND = "respond"
# The package's conversion of the trace into NetworkEvents: it holds every entry before any evaluator runs (and
# reads only whether the first one has "request" and "response" keys, to tell HAR from Playwright).
CONVERSION = {"load_trace_from_content"}


def _evidence(run: dict[str, Any]) -> tuple[list[dict[str, Any]], Any]:
    """The run's requests and final response, as the adapter's episode holds them (a create a site keeps one of,
    made twice, is refused: 409)."""
    import webarena_effects as effects

    requests: list[dict[str, Any]] = []
    response = None
    for action in run["actions"]:
        args = dict(action.get("args") or {})
        if action["name"] == RESPOND:
            response = args.get("response")
            continue
        if not isinstance(args.get("url"), str):
            continue
        request = {"method": action["name"], **args}
        named = effects.identity(action["name"], args["url"], args.get("post_data"))
        if named is not None and any(
            named & (effects.identity(r["method"], r["url"], r.get("post_data")) or frozenset())
            and int(r.get("status") or 200) < 400
            for r in requests
        ):
            request["status"] = effects.REFUSED
        requests.append(request)
    return requests, response


class Tracer:
    def __init__(self, objects: dict[int, str], response: Any) -> None:
        self.objects = objects  # id -> collection
        self.response = response
        self.seen: dict[str, int] = {}
        self.where: dict[str, set[str]] = {}  # collection -> the package's functions that held it

    def _look(self, value: Any, frame: Any) -> None:
        from webarena_verified.types.tracing import NetworkEvent

        if isinstance(value, NetworkEvent):
            value = value.data.get("request")
        where = self.objects.get(id(value))
        if where is None and self.response is not None and (value is self.response or _inside(value, self.response)):
            where = "response"
        if where is not None:
            self.seen[where] = self.seen.get(where, 0) + 1
            self.where.setdefault(where, set()).add(frame.f_code.co_name)

    def __call__(self, frame: Any, event: str, arg: Any) -> Any:
        if "webarena_verified" not in frame.f_code.co_filename:
            return None
        return self._local

    def _local(self, frame: Any, event: str, arg: Any) -> Any:
        if event in ("line", "return"):
            for value in list(frame.f_locals.values()):
                self._look(value, frame)
            if event == "return":
                self._look(arg, frame)
        return self._local


def _inside(value: Any, response: Any) -> bool:
    if not isinstance(response, dict) or isinstance(value, (str, int, float, bool, type(None))):
        return False
    return any(value is v for v in response.values())


def replay(wa: Any, task_id: int, run: dict[str, Any]) -> dict[str, Any]:
    import webarena_effects as effects
    import webarena_evidence as evidence

    requests, response = _evidence(run)
    trace = [evidence.har_entry(r) for r in requests]
    objects: dict[int, str] = {}
    n = 0
    for r, entry in zip(requests, trace, strict=True):
        method, url, body = str(r["method"]).upper(), str(r["url"]), r.get("post_data")
        if not effects.is_write(method, url, body) or int(r.get("status") or 200) >= 400:
            continue
        where = effects.CREATES if effects.kind(method, url, body) == "create" else effects.RECORDS
        n += where == effects.CREATES
        for part in (entry, entry["request"], entry["request"].get("postData"), entry["request"]["url"]):
            if part is not None:
                objects[id(part)] = where
    tracer = Tracer(objects, response)
    sys.settrace(tracer)
    try:
        result = wa.evaluate_task(task_id=task_id, agent_response=response, network_trace=trace)
    finally:
        sys.settrace(None)
    passed = result.score == 1.0 and str(result.status).lower().endswith("success")
    return {"verdict": passed, "seen": tracer.seen, "where": {k: sorted(v) for k, v in tracer.where.items()}}


# Per site, one write that lands in each collection: a POST that makes a record (an issue, a newsletter
# subscription, a CMS page, a forum post) and a POST that edits one (a file on a branch, an address, a product, a
# biography). Placeholders are the package's own, rendered by `webarena_evidence.har_entry`.
WRITES: dict[str, dict[str, tuple[str, dict[str, str]]]] = {
    "gitlab": {
        "creates": ("__GITLAB__/byteblaze/dotfiles/-/issues", {"issue[title]": "Follow-up", "issue[description]": "x"}),
        "records": (
            "__GITLAB__/byteblaze/dotfiles/-/update/main/README.md",
            {"content": "# dotfiles", "branch_name": "main"},
        ),
    },
    "shopping": {
        "creates": ("__SHOPPING__/newsletter/subscriber/new/", {"email": "emma.lopez@gmail.com"}),
        "records": ("__SHOPPING__/customer/address/formPost/id/1/", {"city": "Boston", "postcode": "02115"}),
    },
    "shopping_admin": {
        "creates": ("__SHOPPING_ADMIN__/cms/page/save/", {"title": "Winter sale", "identifier": "winter-sale"}),
        "records": ("__SHOPPING_ADMIN__/catalog/product/save/id/1/", {"product[price]": "1.00"}),
    },
    "reddit": {
        "creates": ("__REDDIT__/submit/books", {"title": "A question", "body": "x"}),
        "records": ("__REDDIT__/user/MarvelsGrantMan136/edit_biography", {"user_biography[biography]": "x"}),
    },
}


def _grade(wa: Any, task_id: int, requests: list[dict[str, Any]], response: Any) -> bool:
    import webarena_evidence as evidence

    trace = [evidence.har_entry(r) for r in requests]
    result = wa.evaluate_task(task_id=task_id, agent_response=response, network_trace=trace)
    return result.score == 1.0 and str(result.status).lower().endswith("success")


def check_blind_spots(wa: Any, audit: Path, sample: int, seed: int, out: Path | None) -> int:
    import random

    import webarena_effects as effects

    verifiers = json.loads((audit / "summary.json").read_text())["read_map"]["verifiers"]
    spotted = sorted(t for t, v in verifiers.items() if v["blind_spots"])
    drawn = sorted(random.Random(seed).sample(spotted, min(sample, len(spotted))))
    cells = {c["cell_id"]: c for c in json.loads((audit / "manifest.json").read_text())["cells"]}
    found = []
    for task in drawn:
        site, _, number = task.partition("/")
        requests, response = _evidence(cells[f"{task}:control"]["run"])
        before = _grade(wa, int(number), requests, response)
        for spot in verifiers[task]["blind_spots"]:
            url, body = WRITES[site][spot["collection"]]
            lands = effects.CREATES if effects.kind("POST", url, body) == "create" else effects.RECORDS
            assert lands == spot["collection"], (url, lands)
            write = {"method": "POST", "url": url, "post_data": body, "status": 200}
            after = _grade(wa, int(number), [*requests, write], response)
            check = "held" if after == before else "moved"
            found.append(
                {
                    "task": task,
                    "collection": spot["collection"],
                    "write": f"POST {url}",
                    "body": body,
                    "passed_reference": before,
                    "passed_with_write": after,
                    "check": check,
                }
            )
    held = sum(f["check"] == "held" for f in found)
    result = {"audit": str(audit), "seed": seed, "tasks_with_blind_spots": len(spotted), "flips": found}
    target = out or audit / "read-sets-flips.json"
    target.write_text(json.dumps(result, indent=1) + "\n")
    passed = sum(f["passed_reference"] for f in found)
    print(
        f"{len(drawn)} of {len(spotted)} tasks, {len(found)} blind spots, each given one write: the verdict held on "
        f"{held} (the reference passed on {passed}); {target}"
    )
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("audit", type=Path)
    p.add_argument("changed", type=Path, nargs="?")
    p.add_argument("--blind-spots", action="store_true", help="add one write per blind spot to the reference evidence")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--sample", type=int)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    logging.disable(logging.CRITICAL)
    import webarena_evidence as evidence
    from webarena_verified.api.webarena_verified import WebArenaVerified
    from webarena_verified.types.config import WebArenaVerifiedConfig

    wa = WebArenaVerified(
        config=WebArenaVerifiedConfig(environments={k: {"urls": [v]} for k, v in evidence.SITES.items()})
    )
    if args.blind_spots:
        return check_blind_spots(wa, args.audit, args.sample or 20, args.seed, args.out)
    if args.changed is None:
        p.error("CHANGED.json is needed unless --blind-spots")
    args.sample = args.sample or 10
    rows, cells, drawn, by_id = changed_sample(args.audit, args.changed, args.sample, args.seed)
    out = []
    for cid in drawn:
        row, cell = rows[cid], cells[cid]
        got = replay(wa, int(cell["task"].split("/")[1]), cell["run"])
        claims = []
        for coll, said in by_id[cid]["collections"].items():
            name = coll.removesuffix(NEW)
            claims.append(
                {
                    "collection": coll,
                    "source_text": said["source_text"],
                    "measured": said["measured"],
                    "settrace": "read" if set(got["where"].get(name, [])) - CONVERSION else "never",
                }
            )
        out.append(
            {
                "cell_id": cid,
                "reason": row["reason"],
                "verdict_recorded": row["verdict"],
                "verdict_now": got["verdict"],
                "claims": claims,
                "agree": all(c["measured"] == c["settrace"] for c in claims) and got["verdict"] == row["verdict"],
                "settrace_seen": got["seen"],
                "settrace_functions": got["where"],
            }
        )
    result = {"audit": str(args.audit), "seed": args.seed, "changed": len(by_id), "sampled": out}
    target = args.out or args.audit / "read-sets-precision.json"
    target.write_text(json.dumps(result, indent=1) + "\n")
    agree = sum(o["agree"] for o in out)
    print(f"{len(out)} changed reasons replayed under sys.settrace: the measurement agrees on {agree}; {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

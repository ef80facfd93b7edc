"""Precision check for WebArena-Verified: a seeded sample of an audit's findings, re-scored with the package's own
`WebArenaVerified().evaluate_task`, never with verimut's code.

    .venv-webarena/bin/python precision/webarena.py AUDIT_DIR [--seed 39] [--per-family 7]
        [--judgements docs/precision/webarena-judged.json] [--out FILE.json]

What it samples (random.Random(seed), cell-id order before each draw): `--per-family` confirmed false accepts of
every family that has any (so each is represented), then every false reject. For each it rebuilds, with its own
code, the HAR trace and the agent response the edited run leaves (each request of the run as a HAR entry; the
run's `respond` as the response), and the reference's; calls `evaluate_task` on both; and lists the writes one
trace makes and the other does not, and how the responses differ.

The one rule it shares with the audit, stated here in its own words: no site runs, so a request a site refuses
is modelled, not observed. A site keeps one member or invitation per user; one project, group, fork or forum per
path; one product per name; one milestone per title; one open merge request per source branch; one shipment per
order; one commit of the same files: a second such create of one name is answered 409 (GitLab's documented `409
Conflict`), and a refused request changes nothing.

The judgement is a person's: `--judgements FILE` ({cell id: "holds|disputed|wrong: reason"}) merges one in and
counts the share that holds.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import re
import sys
import urllib.parse
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent))
from precision_common import Audit, load_audit, require, short, trace_difference

HTTP = ("GET", "POST", "PUT", "PATCH", "DELETE")
SITES = {  # any local address will do offline; the package maps each placeholder to it and back
    "__GITLAB__": "http://gitlab.example.test:8023",
    "__SHOPPING_ADMIN__": "http://admin.example.test:7780/admin",
    "__SHOPPING__": "http://shop.example.test:7770",
    "__REDDIT__": "http://reddit.example.test:9999",
    "__MAP__": "http://map.example.test:3000",
    "__WIKIPEDIA__": "http://wiki.example.test:8888",
    "__HOMEPAGE__": "http://home.example.test:4399",
}
UNIQUE = re.compile(
    r"/(members|invitations|fork|groups|create_forum|milestones|merge_requests)/?$|/projects/?$"
    r"|/catalog/product/save/type/|/repository/commits/?$|/order_shipment/save/"
)
NAMES = (
    "user_id",
    "path",
    "name",
    "project[path]",
    "project[name]",
    "group[path]",
    "forum[name]",
    "product[name]",
    "product[sku]",
)


def url_of(text: str) -> str:
    for placeholder, base in SITES.items():
        text = text.replace(placeholder, base)
    return text


def har(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The run's requests as HAR entries, a repeated create of a one-per-name record answered 409."""
    entries: list[dict[str, Any]] = []
    made: set[tuple[str, str, str]] = set()
    for a in actions:
        if a["name"] not in HTTP:
            continue
        args = a["args"]
        request: dict[str, Any] = {
            "method": a["name"],
            "url": url_of(args["url"]),
            "headers": [{"name": k, "value": url_of(str(v))} for k, v in (args.get("headers") or {}).items()],
        }
        body = args.get("post_data")
        if body is not None:
            form = args.get("encoding", "form") == "form" and all(isinstance(v, str) for v in body.values())
            request["postData"] = (
                {"mimeType": "application/x-www-form-urlencoded", "text": urllib.parse.urlencode(body)}
                if form
                else {"mimeType": "application/json", "text": json.dumps(body)}
            )
        status = int(args.get("status", 200))
        path = args["url"].split("?", 1)[0]
        named = {k: v for k, v in body.items() if k in NAMES} if isinstance(body, dict) else {}
        keys = {(a["name"], path, f"{k}={v!r}") for k, v in named.items()} or {(a["name"], path, json.dumps(body))}
        if a["name"] == "POST" and UNIQUE.search(path) and keys & made:
            status = 409  # one of its names is taken
        elif status < 400:
            made |= keys
        content = {"mimeType": "application/json", "text": json.dumps(args["response"])} if args.get("response") else {}
        cookies = [{"name": k, "value": urllib.parse.quote(str(v))} for k, v in (args.get("cookies") or {}).items()]
        redirect = url_of(args.get("redirect") or "") if 300 <= status < 400 else ""
        entries.append(
            {
                "request": request,
                "response": {
                    "status": status,
                    "headers": [],
                    "redirectURL": redirect,
                    "content": content,
                    "cookies": cookies,
                },
            }
        )
    return entries


def response_of(actions: list[dict[str, Any]]) -> Any:
    said = [a["args"].get("response") for a in actions if a["name"] == "respond"]
    return said[-1] if said else None


def writes(trace: list[dict[str, Any]]) -> list[str]:
    return [
        f"{e['request']['method']} {e['request']['url']} {e['request'].get('postData', {}).get('text', '')} -> {e['response']['status']}"
        for e in trace
        if e["request"]["method"] != "GET"
    ]


class Evaluator:
    def __init__(self) -> None:
        logging.disable(logging.CRITICAL)
        from webarena_verified.api.webarena_verified import WebArenaVerified
        from webarena_verified.types.config import WebArenaVerifiedConfig

        self.wa = WebArenaVerified(
            config=WebArenaVerifiedConfig(environments={k: {"urls": [v]} for k, v in SITES.items()})
        )

    def grade(self, task_id: int, trace: list[dict[str, Any]], response: Any) -> tuple[bool, str]:
        result = self.wa.evaluate_task(task_id=task_id, agent_response=response, network_trace=trace)
        said = [
            m
            for er in result.evaluators_results
            if er.score != 1.0
            for a in er.assertions or ()
            for m in a.assertion_msgs
        ]
        return result.score == 1.0, f"score {result.score}" + (": " + "; ".join(said)[:300] if said else "")

    def intent(self, task_id: int) -> str:
        return str(self.wa.get_task(task_id).intent)


def pick(rows: list[dict[str, Any]], per_family: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    accepts: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(rows, key=lambda r: r["cell_id"]):
        if r.get("outcome") == "false_accept":
            accepts.setdefault(r["family"], []).append(r)
    drawn = [r for fam in sorted(accepts) for r in rng.sample(accepts[fam], min(per_family, len(accepts[fam])))]
    rejects = sorted((r for r in rows if r.get("outcome") == "false_reject"), key=lambda r: r["cell_id"])
    return drawn + rejects


def replay(audit: Audit, ev: Evaluator, row: dict[str, Any]) -> dict[str, Any]:
    task, task_id = row["task"], int(row["task"].rsplit("/", 1)[1])
    run = audit.run(row["cell_id"])
    reference = (audit.manifest["tasks"][task]["reference"] or {}).get("actions", [])
    edited_trace, reference_trace = har(run["actions"]), har(reference)
    passed, detail = ev.grade(task_id, edited_trace, response_of(run["actions"]))
    ref_passed, _ = ev.grade(task_id, reference_trace, response_of(reference))
    said, ref_said = response_of(run["actions"]), response_of(reference)
    return {
        "cell_id": row["cell_id"],
        "task": task,
        "family": row["family"],
        "outcome": row["outcome"],
        "instruction": ev.intent(task_id),
        "edit": (row.get("evidence") or {}).get("edit", ""),
        "verdict_verimut": row.get("verdict"),
        "verdict_replayed": passed,
        "verifier_detail": detail,
        "reference_verdict": ref_passed,
        "writes": trace_difference(writes(reference_trace), writes(edited_trace)),
        "response": None if said == ref_said else {"reference": ref_said, "edited": said},
    }


def render(meta: dict[str, Any], findings: list[dict[str, Any]]) -> str:
    lines = [
        "# Precision check: WebArena-Verified",
        "",
        (
            f"Audit `{meta['audit']}`: {meta['sampled']} false accepts sampled ({meta['per_family']} per family with"
            f" any, seed {meta['seed']}) of {meta['false_accepts']}, and all {meta['false_rejects']} false rejects,"
            f" re-scored with {meta['replayed_with']}. Verdict mismatches: {meta['mismatches']}."
        ),
        "",
        f"Judged: {meta['judged']}.",
        "",
        "| # | cell | outcome | verimut | replay | judgement |",
        "|---|---|---|---|---|---|",
    ]
    for n, f in enumerate(findings, 1):
        flag = " **MISMATCH**" if f["verdict_replayed"] != f["verdict_verimut"] else ""
        lines.append(
            f"| {n} | `{f['cell_id']}` | {f['outcome']} | {f['verdict_verimut']} | {f['verdict_replayed']}{flag} "
            f"| {short(f.get('judgement') or '', 200)} |"
        )
    for n, f in enumerate(findings, 1):
        lines += [
            "",
            f"## {n}. `{f['cell_id']}`",
            "",
            f"> {f['instruction']}",
            "",
            f"- edit: {f['edit']}",
            (
                f"- verdict: verimut {f['verdict_verimut']}, replay {f['verdict_replayed']}"
                f" ({f['verifier_detail']}); reference {f['reference_verdict']}"
            ),
            *[f"- write only in the edited trace: `{short(w, 300)}`" for w in f["writes"]["only_in_edited"]],
            *[f"- write only in the reference: `{short(w, 300)}`" for w in f["writes"]["only_in_reference"]],
        ]
        if f["response"]:
            lines.append(
                f"- response: {short(f['response']['reference'], 200)} -> {short(f['response']['edited'], 200)}"
            )
        lines.append(f"- judgement: {f.get('judgement') or '(none yet)'}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("audit", type=Path)
    parser.add_argument("--seed", type=int, default=39)
    parser.add_argument("--per-family", type=int, default=7)
    parser.add_argument("--judgements", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    require("webarena_verified", "run it with .venv-webarena/bin/python (scripts/install-webarena-verified.sh)")
    audit = load_audit(args.audit)
    ev = Evaluator()
    findings = [replay(audit, ev, r) for r in pick(audit.rows, args.per_family, args.seed)]
    judged = json.loads(args.judgements.read_text()) if args.judgements else {}
    for f in findings:
        f["judgement"] = judged.get(f["cell_id"], "")
    words = Counter(f["judgement"].split(":", 1)[0] if f["judgement"] else "unjudged" for f in findings)
    fa = [f for f in findings if f["outcome"] == "false_accept"]
    holds = sum(1 for f in fa if f["judgement"].startswith("holds"))
    from importlib.metadata import version

    meta = {
        "audit": str(args.audit),
        "seed": args.seed,
        "per_family": args.per_family,
        "false_accepts": sum(1 for r in audit.rows if r.get("outcome") == "false_accept"),
        "false_rejects": sum(1 for r in audit.rows if r.get("outcome") == "false_reject"),
        "sampled": len(fa),
        "replayed_with": f"webarena-verified {version('webarena-verified')}'s evaluate_task",
        "mismatches": sum(1 for f in findings if f["verdict_replayed"] != f["verdict_verimut"]),
        "judged": ", ".join(f"{k} {v}" for k, v in sorted(words.items()))
        + (f"; false accepts that hold: {holds}/{len(fa)}" if fa else ""),
    }
    out = args.out or args.audit / "precision-webarena.json"
    out.write_text(json.dumps({**meta, "findings": findings}, indent=1, default=str) + "\n")
    out.with_suffix(".md").write_text(render(meta, findings))
    print(
        f"{len(findings)} findings re-scored, {meta['mismatches']} verdict mismatches; {meta['judged']}; {out.with_suffix('.md')}"
    )


if __name__ == "__main__":
    main()

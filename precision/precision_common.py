"""What the three precision checks share: reading an audit as plain JSON, the seeded sample, a small
recursive diff, and the JSON + markdown report. Standard library only (it also runs in AppWorld's
interpreter), and never verimut: an audit is read as the files it wrote, nothing more.
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ABSENT = "<absent>"
KNOWN = ("false_accept", "false_reject")


@dataclass
class Audit:
    path: Path
    manifest: dict[str, Any]
    rows: list[dict[str, Any]]  # cells.jsonl, one scored cell a row
    runs: dict[str, dict[str, Any] | None]  # cell id -> the manifest's edited run (actions, answer)

    @property
    def provenance(self) -> dict[str, Any]:
        return dict(self.manifest.get("provenance") or {})

    def reference_note(self, task: str, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
        """A note when the reference run the audit recorded is not the one the benchmark's own API gives."""
        recorded = ((self.manifest.get("tasks") or {}).get(task) or {}).get("reference") or {}
        theirs = [(a["name"], a["args"]) for a in recorded.get("actions", [])]
        if not theirs or theirs == calls:
            return []
        return [f"the audit's reference run ({len(theirs)} actions) differs from the benchmark's own ({len(calls)})"]

    def run(self, cell_id: str) -> dict[str, Any]:
        run = self.runs.get(cell_id)
        if run is None:
            raise SystemExit(f"the manifest has no run for cell {cell_id!r}")
        return run


def load_audit(path: Path) -> Audit:
    manifest = json.loads((path / "manifest.json").read_text())
    rows = [json.loads(line) for line in (path / "cells.jsonl").read_text().splitlines() if line.strip()]
    runs = {c["cell_id"]: c.get("run") for c in manifest["cells"]}
    return Audit(path, manifest, rows, runs)


def pick(rows: Iterable[Mapping[str, Any]], sample: int, seed: int) -> list[dict[str, Any]]:
    """A seeded sample of `sample` false accepts (in cell-id order before drawing, so the draw does not
    depend on the ledger's order), then every false reject. Other outcomes are ignored."""
    by_outcome: dict[str, list[dict[str, Any]]] = {k: [] for k in KNOWN}
    for row in rows:
        if row.get("outcome") in by_outcome:
            by_outcome[row["outcome"]].append(dict(row))
    accepts = sorted(by_outcome["false_accept"], key=lambda r: r["cell_id"])
    drawn = random.Random(seed).sample(accepts, min(sample, len(accepts)))
    return sorted(drawn, key=lambda r: r["cell_id"]) + sorted(by_outcome["false_reject"], key=lambda r: r["cell_id"])


def changed_sample(
    audit: Path, changed: Path, sample: int, seed: int
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]], list[str], dict[str, dict[str, Any]]]:
    """For the read-set checks: the audit's ledger rows and manifest cells by id, a seeded sample of `sample` of
    the cells `bench_read_sets.py reasons` wrote to `changed` (drawn in cell-id order, returned sorted), and each
    changed cell's entry by id."""
    manifest = json.loads((audit / "manifest.json").read_text())
    rows = {
        r["cell_id"]: r
        for r in (json.loads(line) for line in (audit / "cells.jsonl").read_text().splitlines() if line.strip())
    }
    cells = {c["cell_id"]: c for c in manifest["cells"]}
    entries = json.loads(changed.read_text())["changed"]
    ids = sorted(c["cell_id"] for c in entries)
    drawn = sorted(random.Random(seed).sample(ids, min(sample, len(ids))))
    return rows, cells, drawn, {c["cell_id"]: c for c in entries}


def outcome_counts(rows: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    return dict(Counter(str(r.get("outcome")) for r in rows))


def installed(package: str) -> bool:
    """Whether `package` is importable as an installed package (not as a script of this folder, which
    shares the benchmarks' names and sits last on sys.path)."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    return spec is not None and spec.origin is not None and Path(spec.origin).parent != Path(__file__).parent


def require(package: str, hint: str) -> None:
    if not installed(package):
        raise SystemExit(f"{package} is not installed in {sys.executable}: {hint}")


# -- the diff ---------------------------------------------------------------------------------------
def diff(reference: Any, edited: Any, path: str = "") -> list[dict[str, Any]]:
    """Every leaf where two plain-data states differ: dicts by key, lists by position."""
    if isinstance(reference, dict) and isinstance(edited, dict):
        out: list[dict[str, Any]] = []
        for key in sorted(set(reference) | set(edited), key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in reference:
                out.append({"path": sub, "reference": ABSENT, "edited": edited[key]})
            elif key not in edited:
                out.append({"path": sub, "reference": reference[key], "edited": ABSENT})
            else:
                out.extend(diff(reference[key], edited[key], sub))
        return out
    if isinstance(reference, list) and isinstance(edited, list):
        out = []
        for i in range(max(len(reference), len(edited))):
            sub = f"{path}[{i}]"
            ref = reference[i] if i < len(reference) else ABSENT
            new = edited[i] if i < len(edited) else ABSENT
            out.extend(
                diff(ref, new, sub) if ABSENT not in (ref, new) else [{"path": sub, "reference": ref, "edited": new}]
            )
        return out
    return [] if reference == edited else [{"path": path, "reference": reference, "edited": edited}]


def without_noise(changes: list[dict[str, Any]], noise: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Drop the paths that differ between two replays of the same reference run (clocks, random ids)."""
    masked = {n["path"] for n in noise}
    return [c for c in changes if c["path"] not in masked]


def canonical(name: str, args: Mapping[str, Any]) -> str:
    return f"{name}({json.dumps(dict(args), sort_keys=True, default=str)})"


def trace_difference(reference: list[str], edited: list[str]) -> dict[str, list[str]]:
    """The write calls (as canonical strings) one run makes more often than the other."""
    ref, new = Counter(reference), Counter(edited)
    return {"only_in_edited": sorted((new - ref).elements()), "only_in_reference": sorted((ref - new).elements())}


# -- the report -------------------------------------------------------------------------------------
def short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    text = text.replace("\n", " ").replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def mismatch(finding: Mapping[str, Any]) -> bool:
    return finding["verdict_replayed"] is not None and finding["verdict_replayed"] != finding["verdict_verimut"]


def write_report(out: Path, meta: dict[str, Any], findings: list[dict[str, Any]]) -> Path:
    """JSON to `out`, markdown beside it (same name, .md). Returns the markdown's path."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({**meta, "findings": findings}, indent=1, default=str) + "\n")
    md = out.with_suffix(".md")
    md.write_text(render(meta, findings))
    return md


def render(meta: Mapping[str, Any], findings: list[dict[str, Any]]) -> str:
    lines = [f"# Precision check: {meta['benchmark']}", ""]
    if meta.get("label"):
        lines += [f"**{meta['label']}**", ""]
    lines += [
        (
            f"Audit `{meta['audit']}`; {meta['sampled_false_accepts']} of {meta['false_accepts']} false accepts "
            f"sampled (seed {meta['seed']}), and all {meta['false_rejects']} false rejects. Replayed with "
            f"{meta['replayed_with']}, not verimut's code."
        ),
        "",
        (
            "The judgement is a person's: read the task's instruction, the edit and what differs, then write "
            "holds / disputed / wrong and one line of reason."
        ),
        "",
        "| # | cell | outcome | verimut | replay | state paths | reads differ | judgement |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n, f in enumerate(findings, 1):
        flag = " **MISMATCH**" if mismatch(f) else ""
        lines.append(
            f"| {n} | `{f['cell_id']}` | {f['outcome']} | {f['verdict_verimut']} | {f['verdict_replayed']}{flag} "
            f"| {len(f['state_diff'])} | {len(f['reads_differ'])} | {short(f.get('judgement') or '', 80)} |"
        )
    for n, f in enumerate(findings, 1):
        lines += ["", f"## {n}. `{f['cell_id']}`", ""]
        if mismatch(f):
            lines += [
                f"> **VERDICT MISMATCH**: verimut recorded {f['verdict_verimut']}, the replay gives {f['verdict_replayed']}.",
                "",
            ]
        for note in f.get("notes", []):
            lines += [f"> **NOTE**: {note}", ""]
        lines += [
            f"- task `{f['task']}` ({f['kind']}), family `{f['family']}`, outcome `{f['outcome']}`",
            (
                f"- verdict: verimut {f['verdict_verimut']}, replay {f['verdict_replayed']} "
                f"({f.get('verifier_detail', '')}); reference run: {f.get('reference_verdict')}"
            ),
            f"- edit: {f['edit']}",
            "",
            "Instruction:",
            "",
            *[f"> {line}" for line in str(f["instruction"]).splitlines() or [""]],
            "",
            f"State diff, reference -> edited ({len(f['state_diff'])} paths):",
            "",
        ]
        lines += [f"- `{c['path']}`: {short(c['reference'])} -> {short(c['edited'])}" for c in f["state_diff"][:25]]
        if len(f["state_diff"]) > 25:
            lines.append(f"- ... and {len(f['state_diff']) - 25} more (in the JSON)")
        if not f["state_diff"]:
            lines.append("- (none)")
        lines += ["", f"Reads that differ ({len(f['reads_differ'])} of {f.get('reads_run', 0)} run):", ""]
        lines += [
            f"- `{short(r['call'], 120)}`: {short(r['reference'], 100)} -> {short(r['edited'], 100)}"
            for r in f["reads_differ"][:15]
        ]
        if len(f["reads_differ"]) > 15:
            lines.append(f"- ... and {len(f['reads_differ']) - 15} more (in the JSON)")
        if not f["reads_differ"]:
            lines.append("- (none)")
        trace = f["trace_difference"]
        lines += [
            "",
            "Write calls that differ:",
            "",
            *[f"- only in edited: `{short(c, 200)}`" for c in trace["only_in_edited"]],
            *[f"- only in reference: `{short(c, 200)}`" for c in trace["only_in_reference"]],
        ]
        if not trace["only_in_edited"] and not trace["only_in_reference"]:
            lines.append("- (none)")
        lines += ["", f"**Judgement:** {f.get('judgement') or ''}", ""]
    return "\n".join(lines) + "\n"


def summary_line(meta: Mapping[str, Any], findings: list[dict[str, Any]], md: Path) -> str:
    bad = [f["cell_id"] for f in findings if mismatch(f)]
    silent = sum(1 for f in findings if f["outcome"] == "false_accept" and not f["reads_differ"])
    return (
        f"{meta['benchmark']}: {len(findings)} replayed ({meta['sampled_false_accepts']} false accepts sampled, "
        f"{meta['false_rejects']} false rejects); verdict mismatches: {len(bad)}"
        f"{' (' + ', '.join(bad) + ')' if bad else ''}; false accepts no read sees: {silent}; report {md}"
    )


def base_args(default_sample: int) -> Any:
    import argparse

    parser = argparse.ArgumentParser(description=(sys.modules["__main__"].__doc__ or "").strip().splitlines()[0])
    parser.add_argument("audit", type=Path, help="an audit's output directory (manifest.json, cells.jsonl)")
    parser.add_argument("--seed", type=int, default=26, help="seed of the false-accept sample (default 26)")
    parser.add_argument(
        "--sample", type=int, default=default_sample, help=f"false accepts to sample (default {default_sample})"
    )
    parser.add_argument("--out", type=Path, help="the JSON report (default AUDIT/precision.json); .md beside it")
    return parser


def report_findings(
    args: Any, audit: Audit, findings: list[dict[str, Any]], benchmark: str, replayed_with: str, **more: Any
) -> None:
    """Write the report of the replayed findings (to --out, else AUDIT_DIR/precision.json) and print its line."""
    counts = outcome_counts(audit.rows)
    meta = {
        "benchmark": benchmark,
        **more,
        "audit": str(args.audit),
        "seed": args.seed,
        "false_accepts": counts.get("false_accept", 0),
        "false_rejects": counts.get("false_reject", 0),
        "sampled_false_accepts": sum(1 for f in findings if f["outcome"] == "false_accept"),
        "outcomes": counts,
        "replayed_with": replayed_with,
    }
    out: Path = args.out or args.audit / "precision.json"
    print(summary_line(meta, findings, write_report(out, meta, findings)))

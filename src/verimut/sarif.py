"""SARIF 2.1.0: one result per confirmed false accept, for code-scanning dashboards.

Each fault family is a rule (`false-accept/extra`, ...); the intent-swap census has one
rule, `false-accept/intent-swap`. A result's location is the task's verifier: its source
file and first line when the adapter can say where it is (`verifier_source`, optional),
relative to `root` (`%SRCROOT%`) when the file is under it, else as an absolute file URI;
always also a logical location naming the task and its verifier. The evidence (the edit,
the run, every record that differs) is the message text and, line by line, a property.

Only confirmed false accepts are results: a false reject or an error is not a finding a
code-scanning alert should carry (the JUnit report and the gate see them). Built from the
manifest and the ledger, so `verimut report DIR --sarif PATH` can write it again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from verimut import __version__, evidence
from verimut.benchmark import Adapter
from verimut.faults import FAMILIES
from verimut.records import Cell, CellResult, Manifest
from verimut.swap import SWAP

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
SWAP_RULE = "intent-swap"
# (file path, first line, qualified name) of a task's verifier, or None when unknown.
Source = tuple[str, int, str]
Locator = Callable[[str], Source | None]


def rule_id(family: str) -> str:
    return f"false-accept/{family}"


def _rule(family: str) -> dict[str, Any]:
    if family == SWAP_RULE:
        short = "Another task's correct run passes this task's verifier without the requested effect."
        full = (
            "The intent-swap census replayed another task's reference run and graded it with this task's "
            "unmodified verifier; the verifier passed, and the end state lacks what this task asks for."
        )
    else:
        doc = (FAMILIES[family].__doc__ or "").strip().splitlines() if family in FAMILIES else []
        short = f"The verifier passes a run edited by '{family}' whose end state differs from the correct run's."
        full = (doc[0] + " " if doc else "") + (
            "The edited run was replayed from a clean start; the verifier, called unmodified, passed it, and "
            "the end-state check found records that differ from the reference run's end state."
        )
    return {
        "id": rule_id(family),
        "name": "FalseAccept" + "".join(p.capitalize() for p in family.replace("_", "-").split("-")),
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {
            "text": "Add the frame condition the verifier lacks (e.g. a count of added records); "
            "`verimut repair DIR` proposes one and regrades every cell with it."
        },
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["verifier", "false-accept", family]},
    }


def _uri(path: str, root: Path) -> dict[str, str]:
    p = Path(path).resolve()
    try:
        return {"uri": p.relative_to(root.resolve()).as_posix(), "uriBaseId": SRCROOT}
    except ValueError:
        return {"uri": p.as_uri()}


def _location(task: str, source: Source | None, root: Path) -> dict[str, Any]:
    logical = {"fullyQualifiedName": task, "kind": "function"}
    if source is None:
        return {"logicalLocations": [{"name": task, **logical}]}
    path, line, name = source
    return {
        "physicalLocation": {"artifactLocation": _uri(path, root), "region": {"startLine": max(1, line)}},
        "logicalLocations": [{"name": name, **logical}],
    }


def _result(m: Manifest, cell: Cell, row: CellResult, index: int, source: Source | None, root: Path) -> dict[str, Any]:
    family = SWAP_RULE if m.arm == SWAP else cell.family
    ident = f"{m.benchmark}:{m.version}:{cell.cell_id}"
    return {
        "ruleId": rule_id(family),
        "ruleIndex": index,
        "level": "error",
        "message": {"text": evidence.text(cell, row)},
        "locations": [_location(cell.task, source, root)],
        "partialFingerprints": {"verimutCell/v1": hashlib.sha256(ident.encode()).hexdigest()},
        "properties": {
            "cell_id": cell.cell_id,
            "task": cell.task,
            "family": cell.family,
            "variant": cell.variant,
            "outcome": row.outcome,
            "evidence": evidence.lines(cell, row),
        },
    }


def document(
    m: Manifest, rows: Mapping[str, CellResult], locate: Locator | None = None, root: Path | None = None
) -> dict[str, Any]:
    """The SARIF log as plain data (pure, apart from asking `locate` where verifiers are)."""
    root = root or Path.cwd()
    families = [SWAP_RULE] if m.arm == SWAP else list(m.families)
    index = {f: i for i, f in enumerate(families)}
    found = [
        (c, rows[c.cell_id]) for c in m.cells if c.cell_id in rows and rows[c.cell_id].outcome in evidence.CONFIRMED
    ]
    sources: dict[str, Source | None] = {}
    for c, _ in found:
        if c.task not in sources:
            sources[c.task] = locate(c.task) if locate else None
    results = [
        _result(m, c, r, index[SWAP_RULE if m.arm == SWAP else c.family], sources[c.task], root) for c, r in found
    ]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "verimut",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [_rule(f) for f in families],
            }
        },
        "automationDetails": {"id": f"verimut/{m.benchmark}-{m.version}/{m.arm}/"},
        "columnKind": "unicodeCodePoints",
        "results": results,
        "properties": {
            "benchmark": m.benchmark,
            "benchmark_version": m.version,
            "arm": m.arm,
            "manifest": m.content_hash,
            "provenance": dict(m.provenance),
            "cells": len(m.cells),
            "scored": len(rows),
            "note": "A lower bound: a zero means none found, not none exists.",
        },
    }
    if any(
        "uriBaseId" in loc.get("physicalLocation", {}).get("artifactLocation", {})
        for r in results
        for loc in r["locations"]
    ):
        run["originalUriBaseIds"] = {SRCROOT: {"uri": root.resolve().as_uri() + "/"}}
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def write(
    m: Manifest, rows: Mapping[str, CellResult], path: Path, locate: Locator | None = None, root: Path | None = None
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(msgspec.json.format(msgspec.json.encode(document(m, rows, locate, root))))
    return path


def locator(bench: Adapter) -> Locator | None:
    """The adapter's `verifier_source`, when it has one."""
    return bench.verifier_source

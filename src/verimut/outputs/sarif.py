"""SARIF 2.1.0: one result per confirmed false accept and per vacuous verifier, for code-scanning dashboards.

Each fault family is a rule (`false-accept/extra`, ...); the intent-swap census has one
rule, `false-accept/intent-swap`. A verifier that passes the null run (no action, no answer)
is a result of its own rule, `vacuous-verifier`, at level warning: a finding, but no confirmed
false accept (a task with nothing to do, whose null run passes rightly, is no result). A result's location is the task's verifier: its source
file and first line when the adapter can say where it is (`verifier_source`, optional),
relative to `root` (`%SRCROOT%`) when the file is under it, else as an absolute file URI;
always also a logical location naming the task and its verifier. The evidence (the edit,
the run, every record that differs) is the message text and, line by line, a property.

Only confirmed false accepts and vacuous verifiers are results: a false reject or an error is not a finding a
code-scanning alert should carry (the JUnit report and the gate see them). Built from the
manifest and the ledger, so `verimut report DIR --sarif PATH` can write it again.

With a baseline (`--baseline FILE`), every result has a `baselineState`: `unchanged` when the baseline holds it,
`new` when not; and each baselined false accept or vacuous verifier that no longer occurs is a result of its own,
`absent` (kind `pass`, level `none`, as SARIF 2.1.0 says a result that is no problem must be), so a dashboard
closes its alert.
"""

from __future__ import annotations

import hashlib
import urllib.parse
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from verimut import __version__
from verimut.core.benchmark import Adapter
from verimut.core.records import Cell, CellResult, Manifest, Outcome
from verimut.engine import arms
from verimut.engine.store import atomic_write
from verimut.findings import evidence
from verimut.findings.baseline import Entry, Match
from verimut.grammar.faults import FAMILIES, spec_of

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
SWAP_RULE = "intent-swap"
VACUOUS_RULE = "vacuous-verifier"
# (file path, first line, qualified name) of a task's verifier, or None when unknown.
Source = tuple[str, int, str]
Locator = Callable[[str], Source | None]


def rule_id(family: str) -> str:
    return f"false-accept/{family}"


def _vacuous_rule() -> dict[str, Any]:
    return {
        "id": VACUOUS_RULE,
        "name": "VacuousVerifier",
        "shortDescription": {"text": "The verifier passes the empty run: no action and no answer."},
        "fullDescription": {
            "text": "The null run (no action, no final answer) was replayed from the task's start state; the "
            "verifier, called unmodified, passed it, so it cannot tell doing the task from doing nothing. Not a "
            "confirmed false accept. A task with nothing to do (no question, and a reference run that changes "
            "nothing and says nothing) is no result: passing the null run is right there."
        },
        "help": {
            "text": "Make the verifier require what the task asks for: the change it requests, or the answer's value."
        },
        "defaultConfiguration": {"level": "warning"},
        "properties": {"tags": ["verifier", "vacuous"]},
    }


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
    try:  # a URI reference: a space, "%" or "#" in a file's name percent-encoded, as as_uri() does
        return {"uri": urllib.parse.quote(p.relative_to(root.resolve()).as_posix()), "uriBaseId": SRCROOT}
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


def _rule_family(m: Manifest, family: str) -> str:
    """A cell's rule: its fault family, or the census's one rule."""
    return family if arms.of(m).edits else SWAP_RULE


def _rule_of(m: Manifest, cell: Cell, row: CellResult) -> str:
    return VACUOUS_RULE if row.outcome == Outcome.VACUOUS else rule_id(_rule_family(m, cell.family))


def _fingerprint(m: Manifest, cell_id: str) -> dict[str, str]:
    ident = f"{m.benchmark}:{m.version}:{cell_id}"
    return {"verimutCell/v1": hashlib.sha256(ident.encode()).hexdigest()}


def _result(m: Manifest, cell: Cell, row: CellResult, index: int, source: Source | None, root: Path) -> dict[str, Any]:
    vacuous = row.outcome == Outcome.VACUOUS
    return {
        "ruleId": _rule_of(m, cell, row),
        "ruleIndex": index,
        "level": "warning" if vacuous else "error",
        # A vacuous verifier's whole story is its reason (it passed the empty run); the evidence is in properties.
        "message": {"text": (row.reason or evidence.headline(cell, row)) if vacuous else evidence.text(cell, row)},
        "locations": [_location(cell.task, source, root)],
        "partialFingerprints": _fingerprint(m, cell.cell_id),
        "properties": {
            "cell_id": cell.cell_id,
            "task": cell.task,
            "family": cell.family,
            "variant": cell.variant,
            "outcome": row.outcome,
            "evidence": evidence.lines(cell, row),
        },
    }


def _entry_rule(m: Manifest, e: Entry) -> str | None:
    """The rule of a baselined finding, or None when SARIF does not report its kind (a false reject)."""
    if e.outcome == Outcome.VACUOUS:
        return VACUOUS_RULE
    if not e.outcome.is_confirmed_false_accept:
        return None
    return rule_id(_rule_family(m, e.family))


def _absent(m: Manifest, e: Entry, index: int, source: Source | None, root: Path, why: str) -> dict[str, Any]:
    """A baselined finding that no longer occurs: SARIF's `absent` result, no problem (kind pass, level none)."""
    return {
        "ruleId": _entry_rule(m, e),
        "ruleIndex": index,
        "kind": "pass",
        "level": "none",
        "baselineState": "absent",
        "message": {"text": f"no longer occurs ({why}): the baseline's {e.outcome.value} of {e.cell_id}"},
        "locations": [_location(e.task, source, root)],
        "partialFingerprints": _fingerprint(m, e.cell_id),
        "properties": {
            "cell_id": e.cell_id,
            "task": e.task,
            "family": e.family,
            "outcome": e.outcome.value,
            "run_hash": e.run_hash,
            "reason": e.reason,
        },
    }


def _rule_for(rule: str) -> dict[str, Any]:
    return _vacuous_rule() if rule == VACUOUS_RULE else _rule(rule.removeprefix("false-accept/"))


def document(
    m: Manifest,
    rows: Mapping[str, CellResult],
    locate: Locator | None = None,
    root: Path | None = None,
    baseline: Match | None = None,
) -> dict[str, Any]:
    """The SARIF log as plain data (pure, apart from asking `locate` where verifiers are); with `baseline`, each
    result's baselineState and the baselined findings that no longer occur."""
    root = root or Path.cwd()
    found = [(c, rows[c.cell_id]) for c in m.cells if c.cell_id in rows and _reported(rows[c.cell_id])]
    # A null-run family's pass is vacuous, never a false accept: its rule is the vacuous one, not false-accept/null-run.
    edits = arms.of(m).edits
    families = [f for f in m.families if not spec_of(f).null_run] if edits else [SWAP_RULE]
    rules = [_rule(f) for f in families]
    null_run = edits and any(spec_of(f).null_run for f in m.families)
    if null_run or any(r.outcome == Outcome.VACUOUS for _, r in found):
        rules.append(_vacuous_rule())
    index = {r["id"]: i for i, r in enumerate(rules)}
    sources: dict[str, Source | None] = {}
    for c, _ in found:
        if c.task not in sources:
            sources[c.task] = locate(c.task) if locate else None
    results = [_result(m, c, r, index[_rule_of(m, c, r)], sources[c.task], root) for c, r in found]
    if baseline is not None:
        for x in results:
            x["baselineState"] = "unchanged" if x["properties"]["cell_id"] in baseline.held else "new"
        gone = [(e, "its cell is graded, and no finding now") for e in baseline.fixed] + [
            (e, "its run is not in this audit") for e in baseline.missing
        ]
        for e, why in gone:
            rule = _entry_rule(m, e)
            if rule is None:
                continue
            if rule not in index:  # a family this audit no longer runs: its rule still describes the result
                index[rule] = len(rules)
                rules.append(_rule_for(rule))
            if e.task not in sources:
                sources[e.task] = locate(e.task) if locate and e.task in m.tasks else None
            results.append(_absent(m, e, index[rule], sources[e.task], root, why))
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "verimut",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": rules,
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


def _reported(row: CellResult) -> bool:
    outcome = Outcome(row.outcome)  # (a row built by hand may hold the outcome's text)
    return outcome.is_confirmed_false_accept or outcome == Outcome.VACUOUS


def write(
    m: Manifest,
    rows: Mapping[str, CellResult],
    path: Path,
    locate: Locator | None = None,
    root: Path | None = None,
    baseline: Match | None = None,
) -> Path:
    atomic_write(path, msgspec.json.format(msgspec.json.encode(document(m, rows, locate, root, baseline))))
    return path


def locator(bench: Adapter) -> Locator | None:
    """The adapter's `verifier_source`, when it has one."""
    return bench.verifier_source

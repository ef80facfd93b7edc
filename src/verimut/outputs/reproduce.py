"""Re-derive every count in an audit's summary.json from its ledger and manifest, with the standard library only.

Usage, from inside an unpacked `verimut bundle`:  python3 reproduce.py [DIR]
(DIR defaults to the `audit/` folder next to this file.)

This file is copied into every bundle, so it imports nothing outside the standard library
(not verimut, not msgspec): anyone with a Python 3.11+ can check the arithmetic of a report
without installing anything. It checks that summary.json is what cells.jsonl and manifest.json
give, number by number; it cannot check that the ledger's outcomes are true (that needs the
benchmark, replayed: rerun verimut with the versions in versions.json).

The rules below mirror verimut's `summary.build` (fault arm, with `coverage.build`'s per-verifier counts)
and `swap.build` (swap census).
Exit code: 0 when every number matches, 1 otherwise (a mismatch, or a file that cannot be read).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path
from typing import IO, Any, NamedTuple

# The store's file names (verimut.engine.store), written out again: this script runs from an archive with
# the standard library only, so it cannot import them. tests/test_layering.py checks they agree.
MANIFEST, LEDGER, SUMMARY = "manifest.json", "cells.jsonl", "summary.json"
CONTROL = "control"
# The outcome names the rules need (verimut's records.Outcome). Counts are taken over
# whatever outcome names the ledger holds, so an unknown name shows up as a mismatch.
CONTROL_PASS, FALSE_ACCEPT, FALSE_REJECT, REJECTED = "control_pass", "false_accept", "false_reject", "rejected"
ACCEPTED = ("accepted_effect_present", "accepted_effect_absent")
VALID = (REJECTED, *ACCEPTED)  # swap: the cells whose verdict counts toward "valid"
SWAP_ROWS = (CONTROL, "0", "1", "2", "3", "read-only")  # swap: the table's row order
# verimut's coverage.side_effect_families() for the built-in families (tests/cli/test_frame_coverage.py checks they
# agree). A plug-in family that declares a side effect is not known here: `verimut verify` of an audit with one
# would find its frame coverage differ (docs/bundle.md).
SIDE_EFFECT_FAMILIES = ("extra", "extra-ni", "extra-oos", "wrong-first", "oos-before")
TALLY = ("side_effects", "rejected", "false_accepts")
# verimut's answer channel for the built-in families (tests/cli/test_bundle.py checks they agree): the families that
# edit the final answer (FamilySpec.needs_answer_channel), the null run's (FamilySpec.null_run), and the outcomes
# summary.answer_counts tabulates. A plug-in answer family is taken from the family names summary.json's
# answer_counts records (its numbers are still re-derived); a plug-in null run is known by its cell's detail.
ANSWER_FAMILIES = (
    "answer-drop",
    "answer-wrong",
    "answer-superstring",
    "answer-hedge",
    "alt-answer",
    # the answer probes (grammar/probes.py)
    "answer-blank",
    "answer-echo",
    "answer-spray",
    "answer-other",
    "answer-shotgun",
    "answer-retract",
    "answer-denied",
    "answer-malformed",
    "answer-special-number",
    "alt-format",
    "alt-tag-prose",
)
NULL_RUN_FAMILIES = ("null-run",)
ANSWER_OUTCOMES = (FALSE_ACCEPT, REJECTED, "refused", FALSE_REJECT, "alt_pass")
VACUOUS = "vacuous"
NOTHING_TO_DO = "nothing_to_do"
ALL_SUITES = "all"  # verimut's summary.ALL_SUITES: the answer table's row of every suite together
GOAL = "goal"  # verimut's benchmark.GOAL contract
USER = "user"  # a task's kind when the manifest names none (verimut's TaskFacts.kind)


class Check(NamedTuple):
    """One number (or list of cell ids) re-derived from the ledger, and what summary.json says."""

    name: str
    derived: Any
    recorded: Any

    @property
    def ok(self) -> bool:
        return bool(self.derived == self.recorded)

    def line(self) -> str:
        if isinstance(self.derived, list) and isinstance(self.recorded, list):
            if self.ok:
                return f"OK        {self.name}: {len(self.derived)} cell id(s)"
            missing = [c for c in self.derived if c not in self.recorded]
            extra = [c for c in self.recorded if c not in self.derived]
            what = f"ledger has, summary.json lacks: {missing}; summary.json has, ledger lacks: {extra}"
            return f"MISMATCH  {self.name}: " + (what if missing or extra else "same ids in another order")
        if self.ok:
            return f"OK        {self.name} = {self.derived}"
        return f"MISMATCH  {self.name}: ledger gives {self.derived}, summary.json says {self.recorded}"


# The ledger is read in chunks of this size, never whole: a ledger padded with gigabytes of blank lines
# (a compression bomb's payload) costs its rows in memory, not its length.
CHUNK = 1 << 20
# A row is a few KB; a "line" longer than this is no row, and is refused rather than held in memory.
MAX_LINE = 64 << 20
# A line's text from its first non-blank byte: the regular expression skips blank lines in C, which a
# Python loop over a billion of them could not do in reasonable time.
_TEXT = re.compile(rb"\S[^\n]*")


def read_ledger(data: bytes | IO[bytes]) -> dict[str, dict[str, Any]]:
    """Rows by cell id, as verimut reads them: a torn tail after the last newline is not a row,
    blank lines are skipped, and a cell recorded twice counts once (its last record).

    `data` is the ledger's bytes or a binary file, read CHUNK bytes at a time."""
    f = io.BytesIO(data) if isinstance(data, bytes | bytearray) else data
    rows: dict[str, dict[str, Any]] = {}
    seen = 0  # lines before `block`
    tail: list[bytes] = []  # the current line's bytes so far, not yet ended by a newline
    held = 0
    while chunk := f.read(CHUNK):
        end = chunk.rfind(b"\n") + 1
        if not end:
            tail.append(chunk)
            held += len(chunk)
            if held > MAX_LINE:
                raise ValueError(f"{LEDGER}: line {seen + 1} is longer than {MAX_LINE} bytes: not a cell record")
            continue
        block = b"".join([*tail, chunk[:end]])
        tail, held = [chunk[end:]], len(chunk) - end
        for m in _TEXT.finditer(block):
            try:
                row = json.loads(m.group())
                rows[str(row["cell_id"])] = row
            except (ValueError, KeyError, TypeError) as e:
                n = seen + block.count(b"\n", 0, m.start()) + 1
                raise ValueError(f"{LEDGER}: line {n} is not a cell record ({e})") from None
        seen += block.count(b"\n")
    # What follows the last newline is empty unless a write was torn: verimut ignores it too.
    return rows


def _float(x: float) -> str:
    # msgspec's float text: Python's shortest repr, but fixed-point down to 1e-5 and no "+" or
    # leading zeros in an exponent.
    if not math.isfinite(x):
        return "null"
    text = repr(x)
    if "e" not in text:
        return text
    mantissa, exp = text.split("e")
    if int(exp) == -5:
        sign = "-" if mantissa.startswith("-") else ""
        return sign + "0.0000" + mantissa.lstrip("-").replace(".", "")
    return f"{mantissa}e{int(exp)}"


def canonical(value: Any) -> str:
    """JSON text as `msgspec.json.encode(value, order="sorted")` writes it (compact, keys sorted)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{canonical(k)}:{canonical(value[k])}" for k in sorted(value)) + "}"
    raise TypeError(f"not JSON data: {type(value).__name__}")


def manifest_hash(manifest: dict[str, Any]) -> str:
    """The manifest's content hash: sha256 of its sorted compact JSON with `content_hash` empty."""
    body = {**manifest, "content_hash": ""}
    return hashlib.sha256(canonical(body).encode()).hexdigest()


def _ids(items: Any) -> list[str]:
    return [str(i.get("cell_id")) for i in items] if isinstance(items, list) else items


def _common(manifest: dict[str, Any], rows: dict[str, dict[str, Any]], summary: dict[str, Any]) -> list[Check]:
    return [
        Check("manifest.json content_hash (recomputed)", manifest_hash(manifest), manifest.get("content_hash")),
        Check("manifest_hash", manifest.get("content_hash"), summary.get("manifest_hash")),
        Check("cells", len(manifest["cells"]), summary.get("cells")),
        Check("scored", len(rows), summary.get("scored")),
        Check("seconds", round(sum(float(r.get("seconds", 0.0)) for r in rows.values()), 3), summary.get("seconds")),
    ]


def _id_checks(name: str, derived: list[str], recorded: Any) -> list[Check]:
    recorded_ids = _ids(recorded)
    count = len(recorded_ids) if isinstance(recorded_ids, list) else recorded_ids
    return [Check(f"len({name})", len(derived), count), Check(f"{name} cell ids", derived, recorded_ids)]


def _nested(prefix: str, derived: dict[str, Any], recorded: Any, depth: int) -> list[Check]:
    """One check per leaf of a nested count table; a missing or extra branch is one check too."""
    recorded = recorded if isinstance(recorded, dict) else {}
    out: list[Check] = []
    for key in [*derived, *(k for k in recorded if k not in derived)]:
        name = f"{prefix}[{key}]"
        d, r = derived.get(key), recorded.get(key)
        if depth == 1:
            out.append(Check(name, d or 0, r or 0))  # verimut leaves zero counts out
        elif d is None or not isinstance(r, dict):
            out.append(Check(name, d, r))
        else:
            out += _nested(name, d, r, depth - 1)
    return out


def _fault(manifest: dict[str, Any], rows: dict[str, dict[str, Any]], summary: dict[str, Any]) -> list[Check]:
    counts: dict[str, Counter[str]] = {}
    for cell in manifest["cells"]:
        counts.setdefault(cell["family"], Counter())
    for row in rows.values():
        counts.setdefault(row["family"], Counter())[row["outcome"]] += 1
    # Findings are listed in manifest order, for the cells the ledger has.
    ordered = [rows[c["cell_id"]] for c in manifest["cells"] if c["cell_id"] in rows]
    tasks = manifest["tasks"].values()
    census = [e for t in tasks for e in t.get("census", [])]
    checks = _common(manifest, rows, summary)
    for fam, c in counts.items():
        checks.append(Check(f"counts[{fam}] total", sum(c.values()), _total(summary.get("counts", {}).get(fam))))
    checks += _nested("counts", {f: dict(c) for f, c in counts.items()}, summary.get("counts"), 2)
    kinds = _by_kind(manifest, rows)
    # A summary written before task kinds existed has no counts_by_kind; it is checked whenever
    # the summary has one or the manifest has a task that is not a user task.
    if "counts_by_kind" in summary or set(kinds) - {USER}:
        checks += _nested("counts_by_kind", kinds, summary.get("counts_by_kind"), 3)
    checks += _id_checks(
        "false_accepts", [r["cell_id"] for r in ordered if r["outcome"] == FALSE_ACCEPT], summary.get("false_accepts")
    )
    checks += _id_checks(
        "false_rejects", [r["cell_id"] for r in ordered if r["outcome"] == FALSE_REJECT], summary.get("false_rejects")
    )
    failures = [r["cell_id"] for r in ordered if r["family"] == CONTROL and r["outcome"] != CONTROL_PASS]
    checks += _id_checks("control_failures", failures, summary.get("control_failures"))
    checks += _answer_channel(manifest, rows, summary)
    recorded_census = summary.get("census", {})
    return [
        *checks,
        *_frame_coverage(manifest, rows, summary.get("frame_coverage")),
        Check("unpinned_arguments", sum(len(t.get("unpinned", [])) for t in tasks), summary.get("unpinned_arguments")),
        Check("census[writes]", len(census), recorded_census.get("writes")),
        Check(
            "census[non_idempotent]",
            sum(bool(e["non_idempotent"]) for e in census),
            recorded_census.get("non_idempotent"),
        ),
    ]


def _frame_coverage(manifest: dict[str, Any], rows: dict[str, dict[str, Any]], recorded: Any) -> list[Check]:
    """Each verifier's confirmed side effects, rejected and false accepts (verimut's coverage.build).

    A summary written before frame coverage existed has none to check."""
    if recorded is None:
        return []
    # A goal-contract task's verifier promises no frame condition: coverage leaves it out (verimut's GOAL).
    goal = {task for task, facts in manifest["tasks"].items() if facts.get("contract") == GOAL}
    tally: dict[str, Counter[str]] = {task: Counter() for task in manifest["tasks"] if task not in goal}
    for row in rows.values():
        if row["task"] in goal:
            continue
        confirmed = row["outcome"] in (REJECTED, FALSE_ACCEPT) and not row.get("unscorable", False)
        if row["family"] in SIDE_EFFECT_FAMILIES and confirmed:
            tally.setdefault(row["task"], Counter())[row["outcome"]] += 1
    derived = {
        task: {"side_effects": c[REJECTED] + c[FALSE_ACCEPT], "rejected": c[REJECTED], "false_accepts": c[FALSE_ACCEPT]}
        for task, c in tally.items()
    }
    verifiers = recorded.get("verifiers") if isinstance(recorded, dict) else None
    if isinstance(verifiers, dict):
        verifiers = {t: {k: v.get(k) for k in TALLY} if isinstance(v, dict) else v for t, v in verifiers.items()}
    return _nested("frame_coverage.verifiers", derived, verifiers, 2)


def _suite(task: str) -> str:
    return task.split("/", 1)[0] if "/" in task else ""


def _answer_channel(manifest: dict[str, Any], rows: dict[str, dict[str, Any]], summary: dict[str, Any]) -> list[Check]:
    """The answer families' outcomes per suite, the vacuous verifiers and the null-run counts (verimut's
    `summary.answer_counts`, `summary.null_runs`). A summary written before the answer channel has none to check,
    unless the manifest has a cell of it."""
    recorded = summary.get("answer_counts")
    families = {*ANSWER_FAMILIES, *(recorded if isinstance(recorded, dict) else ())}
    counts: dict[str, dict[str, Counter[str]]] = {}
    for cell in manifest["cells"]:
        if cell["family"] not in families:
            continue
        per_suite = counts.setdefault(cell["family"], {})
        row = rows.get(cell["cell_id"])
        for suite in (_suite(cell["task"]), ALL_SUITES):
            tally = per_suite.setdefault(suite, Counter())
            if row is not None:
                tally[row["outcome"]] += 1
    derived = {
        fam: {
            s: {o: n[o] for o in ANSWER_OUTCOMES} for s, n in per_suite.items() if len(per_suite) > 2 or s != ALL_SUITES
        }
        for fam, per_suite in counts.items()
    }
    out: list[Check] = []
    if "answer_counts" in summary or derived:
        out += _nested("answer_counts", derived, recorded, 3)
    ordered = [rows[c["cell_id"]] for c in manifest["cells"] if c["cell_id"] in rows]
    vacuous = [r["cell_id"] for r in ordered if r["outcome"] == VACUOUS]
    if "vacuous" in summary or vacuous:
        out += _id_checks("vacuous", vacuous, summary.get("vacuous"))
    total, by_suite = _null_runs(manifest, rows)
    if "null_runs" in summary or total is not None:
        recorded_total = summary.get("null_runs")
        if total is None or not isinstance(recorded_total, dict):
            out.append(Check("null_runs", total, recorded_total))
        else:
            out += _nested("null_runs", total, recorded_total, 1)
        out += _nested("null_runs_by_suite", by_suite, summary.get("null_runs_by_suite"), 2)
    return out


def _null_runs(
    manifest: dict[str, Any], rows: dict[str, dict[str, Any]]
) -> tuple[dict[str, int] | None, dict[str, dict[str, int]]]:
    """The null runs the verifiers graded (vacuous or rejected), passed (vacuous), and apart, passed on a task with
    nothing to do (outcome nothing_to_do), in all and per suite; None when the audit has none."""
    by_suite: dict[str, Counter[str]] = {}
    for cell in manifest["cells"]:
        if cell["family"] not in NULL_RUN_FAMILIES and not cell.get("detail", {}).get("null_run"):
            continue
        tally = by_suite.setdefault(_suite(cell["task"]), Counter())
        row = rows.get(cell["cell_id"])
        if row is None:
            continue
        if row["outcome"] == NOTHING_TO_DO:
            tally["nothing_to_do"] += 1
        elif row["outcome"] in (VACUOUS, REJECTED):
            tally["graded"] += 1
            tally["vacuous"] += row["outcome"] == VACUOUS
    if not by_suite:
        return None, {}
    keys = ("graded", "vacuous", "nothing_to_do")
    total = {k: sum(t[k] for t in by_suite.values()) for k in keys}
    return total, {s: {k: t[k] for k in keys} for s, t in by_suite.items()}


def _by_kind(manifest: dict[str, Any], rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """kind -> family -> outcome -> scored cells, as verimut's `summary.by_kind` counts them."""
    tasks = manifest["tasks"]

    def kind(task: str) -> str:
        return str(tasks.get(task, {}).get("kind", USER))

    table: dict[str, dict[str, Counter[str]]] = {}
    for cell in manifest["cells"]:
        table.setdefault(kind(cell["task"]), {}).setdefault(cell["family"], Counter())
    for cell in manifest["cells"]:
        row = rows.get(cell["cell_id"])
        if row is not None:
            table[kind(cell["task"])][cell["family"]][row["outcome"]] += 1
    return {k: {f: dict(c) for f, c in fams.items()} for k, fams in table.items()}


def _total(counts: Any) -> Any:
    return sum(counts.values()) if isinstance(counts, dict) else counts


def _swap(manifest: dict[str, Any], rows: dict[str, dict[str, Any]], summary: dict[str, Any]) -> list[Check]:
    table: dict[str, dict[str, Counter[str]]] = {}
    acceptances: list[dict[str, Any]] = []
    failures: list[str] = []
    for cell in manifest["cells"]:
        task = cell["task"]
        suite = table.setdefault(_suite(task), {})
        control = cell["family"] == CONTROL
        counts = suite.setdefault(CONTROL if control else str(cell["detail"]["rung"]), Counter())
        counts["cells"] += 1
        row = rows.get(cell["cell_id"])
        if row is None:
            continue
        counts["scored"] += 1
        counts[row["outcome"]] += 1
        if control:
            if row["outcome"] != CONTROL_PASS:
                failures.append(row["cell_id"])
            continue
        if row["outcome"] in VALID:
            counts["valid"] += 1
        if row["outcome"] in ACCEPTED:
            counts["passed"] += 1
            acceptances.append(row)
    # verimut orders rows control, rung 0..3, read-only; an unknown row is kept here, to show up.
    derived = {s: {k: dict(r[k]) for k in sorted(r, key=_row_order)} for s, r in table.items()}
    recorded = summary.get("acceptances")
    absent = [a for a in recorded if a.get("outcome") == ACCEPTED[1]] if isinstance(recorded, list) else recorded
    return [
        *_common(manifest, rows, summary),
        *_nested("table", derived, summary.get("table"), 3),
        *_id_checks("acceptances", [a["cell_id"] for a in acceptances], recorded),
        *_id_checks(
            "acceptances, effect absent", [a["cell_id"] for a in acceptances if a["outcome"] == ACCEPTED[1]], absent
        ),
        *_id_checks("control_failures", failures, summary.get("control_failures")),
    ]


def _row_order(key: str) -> int:
    return SWAP_ROWS.index(key) if key in SWAP_ROWS else len(SWAP_ROWS)


def checks(manifest_data: bytes, ledger_data: bytes | IO[bytes], summary_data: bytes) -> tuple[str, list[Check]]:
    """The arm ("fault" or "swap") and every check. Raises ValueError when a file cannot be read.

    The ledger, the one file that grows with the run, may be given as a binary file: it is streamed."""
    try:
        manifest, summary = json.loads(manifest_data), json.loads(summary_data)
    except ValueError as e:
        raise ValueError(f"{MANIFEST} or {SUMMARY} is not JSON ({e})") from None
    rows = read_ledger(ledger_data)
    arm = manifest.get("arm", "fault")
    try:
        if arm == "fault":
            return arm, _fault(manifest, rows, summary)
        if arm == "swap":
            return arm, _swap(manifest, rows, summary)
    except (KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"{MANIFEST} or {LEDGER} lacks a field the summary is built from ({e!r})") from None
    raise ValueError(f"{MANIFEST}: unknown arm {arm!r}")


def check_dir(directory: Path) -> tuple[str, list[Check]]:
    data = {}
    try:
        for name in (MANIFEST, SUMMARY):
            data[name] = (directory / name).read_bytes()
        name = LEDGER
        with open(directory / name, "rb") as ledger:  # streamed, not read whole
            return checks(data[MANIFEST], ledger, data[SUMMARY])
    except OSError as e:
        raise ValueError(f"cannot read {directory / name} ({e.strerror})") from None


def main(argv: list[str]) -> int:
    directory = Path(argv[0]) if argv else Path(__file__).resolve().parent / "audit"
    try:
        arm, found = check_dir(directory)
    except ValueError as e:
        print(f"ERROR     {e}")
        return 1
    print(f"re-deriving {directory / SUMMARY} from {LEDGER} and {MANIFEST} ({arm} arm)")
    for c in found:
        print(c.line())
    bad = [c.name for c in found if not c.ok]
    print(f"{len(found)} numbers checked: " + (f"{len(bad)} MISMATCH ({', '.join(bad)})" if bad else "all OK"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""JUnit XML: one test case per cell, one test suite per task, for CI dashboards.

A cell's outcome maps to a test result:

- confirmed false accept (and, in the swap census, accepted with the effect absent): a
  failure, its message the evidence headline and its text the whole evidence;
- false reject (the verifier failed a correct end state): a failure too, of its own type;
- vacuous (the verifier passed the null run: no action, no answer): a failure of its own type
  `vacuous`, no false accept (nothing_to_do, the null run passed on a task with nothing to do, passes);
- error (the verifier raised, or the executor cut the cell) and a control that fails its
  own verifier (the task cannot be audited): an error;
- refused, incomplete, and cells not scored yet: skipped, with the reason;
- a finding a baseline holds (`--baseline FILE`): skipped, its message the baseline's reason and the evidence
  headline, so a known and accepted finding is visible without failing the build;
- everything else (control_pass, harmless, rejected, accepted with the effect present): passed.

Built from the manifest and the ledger alone, so `verimut report DIR --junit PATH` can
write it again at any time.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

from verimut.core.records import Cell, CellResult, Manifest, Outcome
from verimut.engine.store import atomic_write
from verimut.findings import evidence
from verimut.findings.baseline import Match

_ERROR = (Outcome.ERROR.value, Outcome.CONTROL_FAIL.value)
# A repeated run is scored (and reported) once, under its first cell; a weak pin's acceptance is reported
# apart from the findings (pinned.py), so neither fails the suite.
_SKIPPED = (Outcome.REFUSED.value, Outcome.INCOMPLETE.value, Outcome.SAME_RUN.value, Outcome.WEAK_PIN_ACCEPT.value)
# XML 1.0 cannot carry most control characters, which a traceback or a record may hold.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("\N{REPLACEMENT CHARACTER}", text)


def case_name(cell: Cell) -> str:
    """The cell id without its task: `extra`, `wrong-value:1.title`, `swap:user_task_3`."""
    return cell.cell_id[len(cell.task) + 1 :]


def class_name(benchmark: str, task: str) -> str:
    """Dotted, so a consumer that groups by package groups by benchmark, then suite."""
    return ".".join([benchmark, *task.split("/")])


def _case(m: Manifest, cell: Cell, row: CellResult | None, baseline: Match | None) -> tuple[ET.Element, str]:
    case = ET.Element(
        "testcase",
        name=case_name(cell),
        classname=class_name(m.benchmark, cell.task),
        time=f"{row.seconds:.3f}" if row else "0",
    )
    if row is None:
        ET.SubElement(case, "skipped", message="not scored yet: run the audit again to resume")
        return case, "skipped"
    head = _clean(evidence.headline(cell, row))
    held = baseline.held.get(cell.cell_id) if baseline is not None else None
    if held is not None:
        why = held.reason or "no reason given"
        skipped = ET.SubElement(case, "skipped", message=_clean(f"baselined ({why}): {head}"))
        skipped.text = _clean(evidence.text(cell, row))
        kind = "skipped"
    elif Outcome(row.outcome).is_finding:  # (a row built by hand may hold the outcome's text)
        failure = ET.SubElement(case, "failure", message=head, type=row.outcome)
        failure.text = _clean(evidence.text(cell, row))
        kind = "failures"
    elif row.outcome in _ERROR:
        error = ET.SubElement(case, "error", message=head, type=row.outcome)
        error.text = _clean(evidence.text(cell, row))
        kind = "errors"
    elif row.outcome in _SKIPPED:
        ET.SubElement(case, "skipped", message=head)
        kind = "skipped"
    else:
        kind = "passed"
    out = ET.SubElement(case, "system-out")
    out.text = _clean(f"outcome: {row.outcome}\n{cell.note}")
    return case, kind


def document(m: Manifest, rows: Mapping[str, CellResult], baseline: Match | None = None) -> ET.Element:
    """The whole report as an element tree (pure: no I/O); `baseline`'s held findings skipped."""
    by_task: dict[str, list[Cell]] = {}
    for cell in m.cells:
        by_task.setdefault(cell.task, []).append(cell)
    root = ET.Element("testsuites", name=f"verimut {m.benchmark} {m.version}")
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    seconds = 0.0
    for task, cells in by_task.items():
        suite = ET.SubElement(root, "testsuite", name=task)
        props = ET.SubElement(suite, "properties")
        for key, value in {"arm": m.arm, "manifest": m.content_hash, **m.provenance}.items():
            ET.SubElement(props, "property", name=key, value=value)
        counts = dict.fromkeys(totals, 0)
        time = 0.0
        for cell in cells:
            row = rows.get(cell.cell_id)
            case, kind = _case(m, cell, row, baseline)
            suite.append(case)
            counts["tests"] += 1
            if kind in counts:
                counts[kind] += 1
            time += row.seconds if row else 0.0
        for k, v in counts.items():
            suite.set(k, str(v))
            totals[k] += v
        suite.set("time", f"{time:.3f}")
        seconds += time
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("time", f"{seconds:.3f}")
    for element in root.iter():  # names too: a task id or a provenance value with an ESC made the file unreadable
        element.attrib = {_clean(k): _clean(v) for k, v in element.attrib.items()}
        element.text = None if element.text is None else _clean(element.text)
    return root


def write(m: Manifest, rows: Mapping[str, CellResult], path: Path, baseline: Match | None = None) -> Path:
    root = document(m, rows, baseline)
    ET.indent(root)
    # Whole or not at all: a full disk is one line, and leaves no empty junit.xml for CI to read as no tests.
    atomic_write(path, ET.tostring(root, encoding="utf-8", xml_declaration=True))
    return path

"""The intent-swap census's grid: every ordered pair of a suite's tasks, and the rung of each.

Read off the manifest's task facts alone, so the manifest builder makes the grid without
importing the census's summary (`swap.py`), which reads manifests.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping

import msgspec

from verimut.core import forms
from verimut.core.benchmark import USER
from verimut.core.cells import Packed
from verimut.core.errors import AuditError
from verimut.core.records import Cell, Manifest, TaskFacts, cell_id
from verimut.core.run import Action, Run
from verimut.grammar.evidence import RESPOND
from verimut.grammar.faults import CONTROL
from verimut.oracle.state import NEW, canonical

HTTP_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"})
_ID = re.compile(r"\d+")


def _schema_text(value: object) -> str:
    return canonical(value).decode()


SWAP = "swap"
RUNGS = {
    "0": "Rung-0: twin intent (same calls, other argument values)",
    "1": "Rung-1: sibling (changes the same collections)",
    "2": "Rung-2: shared effect models (changed collections overlap)",
    "3": "Rung-3: disjoint (changed collections do not overlap)",
    "read-only": "Read-only (one of the two reference runs changes nothing)",
}


def suite_of(task: str) -> str:
    """A task's suite: its id's prefix before "/"; "" when ids have none (AppWorld): one suite, all tasks."""
    return task.split("/", 1)[0] if "/" in task else ""


def suite_title(suite: str) -> str:
    """How a suite is named in reports: "" (ids without a suite) is every task of the benchmark."""
    return suite or "all tasks"


def _call(a: Action) -> str:
    """What a call is, apart from its values: its name; a form step's also names the field it sets.

    Every form step is a `set_field`, so two form tasks are twins only when they set the same fields
    in the same order (WorkArena's same template, other configuration, same fields). A request (the evidence
    grammar) is its method and URL with the ids left out, a response its task type and the schema of its data:
    two WebArena tasks are twins when they make the same requests to the same kind of page and answer alike
    (in practice, one intent template).
    """
    if a.name in forms.FORM_ACTIONS and "field" in a.args:
        return f"{a.name}({a.args['field']})"
    if a.name in HTTP_METHODS and isinstance(a.args.get("url"), str):
        return f"{a.name} {_ID.sub('N', a.args['url'].split('?', 1)[0])}"
    if a.name == RESPOND and isinstance(a.args.get("response"), dict):
        return f"{a.name}({a.args['response'].get('task_type')}, {_schema_text(a.args.get('results_schema'))})"
    return a.name


def rung(i: TaskFacts, j: TaskFacts) -> tuple[str, str]:
    """The rung of grading j's reference run with i's verifier, and why (pure)."""
    a, b = i.reference.actions, j.reference.actions
    if [_call(x) for x in a] == [_call(y) for y in b]:
        differ = [
            f"#{n}.{k}"
            for n, (x, y) in enumerate(zip(a, b))
            for k in sorted(set(x.args) | set(y.args))
            if x.args.get(k, ...) != y.args.get(k, ...)
        ]
        if differ:
            return "0", f"same {len(a)} call(s); argument values differ at {', '.join(differ)}"
        return "0", f"same {len(a)} call(s) with the same arguments; the tasks differ in their answer"
    # An assigned-key collection's new records are diffed apart ("... (new)"); a rung is about the collection.
    wi, wj = {w.removesuffix(NEW) for w in i.writes}, {w.removesuffix(NEW) for w in j.writes}
    if not wi and not wj:
        return "read-only", "neither reference run changes anything"
    if not wi or not wj:
        return "read-only", f"the reference run of task {'i' if not wi else 'j'} changes nothing"
    if wi == wj:
        return "1", f"both change {', '.join(sorted(wi))}"
    if wi & wj:
        return "2", f"both change {', '.join(sorted(wi & wj))}"
    return "3", f"i changes {', '.join(sorted(wi))}; j changes {', '.join(sorted(wj))}"


def _start(i: str, j: str, facts: Mapping[str, TaskFacts]) -> str:
    same = facts[i].start_digest == facts[j].start_digest
    return f"the run is replayed from {j}'s clean start, which the verifier also gets as its start state; " + (
        f"{i}'s own clean start is identical" if same else f"{i}'s own clean start DIFFERS from it"
    )


CONTROL_NOTE = "the unedited reference run"


def _note(i: str, j: str) -> str:
    return f"the reference run of {j}, with its own answer, graded by the verifier of {i}"


def grid_cells(facts: Mapping[str, TaskFacts]) -> Iterator[Cell]:
    """Every ordered pair of user tasks within each suite, grouped by the run (j), diagonal first in its group.

    Tasks of another kind (AgentDojo's injection tasks) are left out: their verifier asks whether
    an attack succeeded, not whether a user's request was done.
    """
    suites: dict[str, list[str]] = {}
    for task in (t for t, f in facts.items() if f.kind == USER):
        suites.setdefault(suite_of(task), []).append(task)
    for tasks in suites.values():
        for j in tasks:
            run: Run = facts[j].reference
            yield Cell(cell_id(j, CONTROL, "-"), j, CONTROL, "-", run, CONTROL_NOTE)
            for i in tasks:
                if i == j:
                    continue
                r, why = rung(facts[i], facts[j])
                detail = {"run_task": j, "rung": r, "rung_reason": why, "start": _start(i, j, facts)}
                variant = j.rsplit("/", 1)[-1]
                yield Cell(cell_id(i, SWAP, variant), i, SWAP, variant, run, _note(i, j), detail)


def grid(facts: Mapping[str, TaskFacts]) -> list[Cell]:
    """`grid_cells`, as a list."""
    return list(grid_cells(facts))


def packed_grid(facts: Mapping[str, TaskFacts]) -> Packed:
    """The grid packed as manifest.json holds it (`stored`), each cell expanded when read: a census of a million
    cells is built, hashed and written without holding them all."""
    return Packed.of(_stored(c) for c in grid_cells(facts)).expanded(functools.partial(_expanded, facts))


# A swap census's cells all carry a task's reference run, which its facts hold already: at 1,000 tasks a
# million copies of a thousand runs, most of manifest.json and, decoded, most of the memory. The file holds
# each cell without its run, its note and its start sentence, all three read off the facts again (`stored`);
# reading it puts back the very Run object of the facts (`expanded`), one per task, shared by its column.
# The content hash is of the stored form.
_DERIVED = "start"


def stored(m: Manifest) -> Manifest:
    """The manifest as manifest.json holds it: a swap census's cells without run, note and start (pure)."""
    if isinstance(m.cells, Packed):  # packed in this form already
        return msgspec.structs.replace(m, cells=m.cells.stored())  # type: ignore[arg-type]
    return msgspec.structs.replace(m, cells=[_stored(c) for c in m.cells])


def _stored(c: Cell) -> Cell:
    return msgspec.structs.replace(c, run=None, note="", detail={k: v for k, v in c.detail.items() if k != _DERIVED})


def expanded(m: Manifest) -> Manifest:
    """The inverse of `stored`: each swap cell's run is its run task's reference, its note said again. Packed
    cells (as the store reads them) stay packed, each expanded when read: the sentences of a million cells are
    not all held at once."""
    for c in m.cells:  # every cell's tasks checked now, not when a later pass meets it
        if c.run_task not in m.tasks:
            raise AuditError(f"manifest cell {c.cell_id!r} names run task {c.run_task!r}, which it has no facts of")
        if not c.is_control and c.task not in m.tasks:
            raise AuditError(f"manifest cell {c.cell_id!r} names task {c.task!r}, which it has no facts of")
    expand = functools.partial(_expanded, m.tasks)
    if isinstance(m.cells, Packed):
        return msgspec.structs.replace(m, cells=m.cells.expanded(expand))  # type: ignore[arg-type]
    return msgspec.structs.replace(m, cells=[expand(c) for c in m.cells])


def _expanded(tasks: Mapping[str, TaskFacts], c: Cell) -> Cell:
    reference = tasks[c.run_task].reference  # the very Run object of the facts, shared by its column
    if c.is_control:
        return msgspec.structs.replace(c, run=reference, note=CONTROL_NOTE)
    detail = {**c.detail, _DERIVED: _start(c.task, c.run_task, tasks)}
    return msgspec.structs.replace(c, run=reference, note=_note(c.task, c.run_task), detail=detail)

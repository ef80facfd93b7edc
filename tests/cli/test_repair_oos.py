"""Repair follows an out-of-scope false accept: `Unchanged(collection)` for what the task must not touch.

A small plug-in benchmark whose verifiers check only their own record: a run that does the task
and then also writes another task's collection passes. The manifest and ledger come from the
real pipeline, with a test-only fault family registered under the real name `extra-oos`
(appending another task's write, as the grammar's family does), removed afterwards.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

import verimut.repair as repair  # noqa: PLR0402  (the package; `verimut.repair` the attribute is the API function)
from verimut import api as audit
from verimut.core.benchmark import Verdict, resolve
from verimut.core.records import Outcome
from verimut.core.run import Action, Run, Step
from verimut.engine.store import Store

# tool -> the collections it writes
WRITES = {
    "add_note": ["notes"],
    "add_contact": ["contacts"],
    "set_setting": ["settings"],
    "import_card": ["contacts", "notes"],  # a contact and a note about them
}
REFERENCES = {
    "desk/add_note": Run((Action("list_notes"), Action("add_note", {"id": "n2", "text": "call Ann"})), "Done."),
    "desk/add_contact": Run((Action("add_contact", {"id": "c2", "name": "Bob"}),), "Done."),
    "desk/set_theme": Run((Action("set_setting", {"key": "theme", "value": "dark"}),), "Done."),
    "desk/import_card": Run((Action("import_card", {"id": "c3", "name": "Cy", "note": "n3", "text": "met Cy"}),), ""),
}


class Desk:
    """Notes, contacts and settings; each task's verifier checks only its own record."""

    name, version, telemetry = "desk", "1", ()

    def provenance(self) -> dict[str, str]:
        return {"desk": self.version}

    def tasks(self) -> list[str]:
        return list(REFERENCES)

    def instruction(self, task: str) -> str:
        return task.split("/")[1].replace("_", " ")

    def reset(self, task: str) -> dict[str, Any]:
        return {
            "task": task,
            "notes": [{"id": "n1", "text": "milk"}],
            "contacts": [{"id": "c1", "name": "Ann"}],
            "settings": {"theme": "light", "lang": "en"},
        }

    def reference(self, task: str, episode: Any) -> Run:
        return REFERENCES[task]

    def execute(self, episode: dict[str, Any], action: Action) -> Step:
        a = action.args
        if action.name == "add_note":
            episode["notes"].append({"id": a["id"], "text": a["text"]})
        elif action.name == "add_contact":
            episode["contacts"].append({"id": a["id"], "name": a["name"]})
        elif action.name == "import_card":
            episode["contacts"].append({"id": a["id"], "name": a["name"]})
            episode["notes"].append({"id": a["note"], "text": a["text"]})
        elif action.name == "set_setting":
            episode["settings"][a["key"]] = a["value"]
        return Step("ok")

    def is_write(self, action: Action) -> bool:
        return action.name in WRITES

    def snapshot(self, episode: dict[str, Any]) -> Any:
        return {k: msgspec.json.decode(msgspec.json.encode(v)) for k, v in episode.items() if k != "task"}

    def fork(self, episode: dict[str, Any]) -> dict[str, Any]:
        return msgspec.json.decode(msgspec.json.encode(episode))

    def verify(self, episode: dict[str, Any], run: Run) -> Verdict:
        task = episode["task"]
        if task == "desk/add_note":
            return Verdict(any(n["id"] == "n2" and n["text"] == "call Ann" for n in episode["notes"]), "note n2")
        if task == "desk/add_contact":
            return Verdict(any(c["id"] == "c2" for c in episode["contacts"]), "contact c2")
        if task == "desk/import_card":
            return Verdict(any(c["id"] == "c3" for c in episode["contacts"]), "contact c3")
        return Verdict(episode["settings"]["theme"] == "dark", "theme")


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> tuple[Path, repair.Report]:
    out = tmp_path_factory.mktemp("desk")
    bench = resolve(Desk())
    audit.audit(bench, out, families=["extra", "extra-oos"])
    store = Store(out)
    return out, repair.run(bench, store.read_manifest(), store.rows(), store)


def test_an_out_of_scope_false_accept_gets_unchanged_and_the_regrade_rejects_it(audited):
    out, r = audited
    rows = Store(out).rows()
    oos = {cid for cid, row in rows.items() if row.family == "extra-oos"}
    fas = {cid for cid in oos if rows[cid].outcome is Outcome.FALSE_ACCEPT}
    # Each verifier checks only its own record: every appended write passes. Three per task: each other
    # task's write (import_card's touches contacts and notes; its variant is named for contacts).
    assert fas == oos and len(fas) == 12
    checks = {t.task: sorted(str(c) for c in t.checks) for t in r.tasks}
    assert checks == {
        "desk/add_note": ["AddedExactly('notes', 1)", "Unchanged('contacts')", "Unchanged('settings')"],
        "desk/add_contact": ["AddedExactly('contacts', 1)", "Unchanged('notes')", "Unchanged('settings')"],
        "desk/set_theme": ["Unchanged('contacts')", "Unchanged('notes')"],
        "desk/import_card": ["AddedExactly('contacts', 1)", "AddedExactly('notes', 1)", "Unchanged('settings')"],
    }
    assert fas <= set(r.now_rejected) and r.still_accepted == []
    assert r.controls == r.controls_still_passing == 4
    assert r.harmless == r.harmless_still_passing >= 1  # set_theme's repeated (idempotent) write
    assert r.new_false_rejects == [] and all(not t.dropped for t in r.tasks)
    caught = {cid: why for t in r.tasks for cid, why in t.caught.items()}
    assert caught["desk/add_note:extra-oos:add_contact@contacts"] == ["contacts: 1 added, expected no change"]
    assert caught["desk/add_contact:extra-oos:set_setting@settings"] == ["settings: 1 changed, expected no change"]
    # a write that also adds a note: the count rejects it, and `Unchanged` names the contact it adds
    assert caught["desk/add_note:extra-oos:import_card@contacts"] == [
        "notes: 2 added, expected 1",
        "contacts: 1 added, expected no change",
    ]
    # the written module holds them, and its verifier rejects the false accept the original passes
    module = repair.load_module(out / "repair" / repair.MODULE)
    assert "Unchanged('settings')" in [str(c) for c in module.CHECKS["desk/add_note"]]
    bench = Desk()
    fa = Store(out).read_manifest().cells
    cell = next(c for c in fa if c.cell_id == "desk/add_note:extra-oos:set_setting@settings")
    episode = bench.reset(cell.task)
    start = bench.snapshot(episode)
    for a in cell.run.actions:
        bench.execute(episode, a)
    assert bench.verify(episode, cell.run).passed
    assert not module.verify(bench, cell.task, episode, cell.run, start).passed


def test_a_check_that_fails_a_correct_run_is_dropped_and_said_so(audited):
    out, _ = audited
    store = Store(out)
    m, rows = store.read_manifest(), store.rows()
    task = "desk/add_note"
    fa = rows[f"{task}:extra-oos:add_contact@contacts"]
    control = rows[f"{task}:control"]
    ends = repair.ends_of(Desk(), m, [fa.cell_id, control.cell_id])
    start, end = ends[control.cell_id]
    # a control whose end also shows a contacts change (what nondeterminism, unmasked, would look like)
    noisy_end = {**end, "contacts": [*end["contacts"], {"id": "c9", "name": "noise"}]}
    ends[control.cell_id] = (start, noisy_end)
    [fix] = repair.synthesize(m, ends, [fa], [control])
    assert "Unchanged('contacts')" not in [str(c) for c in fix.checks]
    assert fix.dropped == {
        "Unchanged('contacts')": f"it fails the correct run {control.cell_id} (contacts: 1 added, expected no change)"
    }
    assert fa.cell_id in fix.unrepaired and "dropped" in fix.unrepaired[fa.cell_id]
    report = repair.report(m, [fix], [], Path("m.py"))
    assert f"drops `Unchanged('contacts')`: it fails the correct run {control.cell_id}" in repair.markdown(report)


def test_unchanged_is_named_even_where_a_count_already_rejects(audited):
    """An out-of-scope write that also adds to the task's own collection fails its count; `Unchanged` still names the rest."""
    out, _ = audited
    store = Store(out)
    m, rows = store.read_manifest(), store.rows()
    fa = rows["desk/add_note:extra-oos:import_card@contacts"]
    ends = repair.ends_of(Desk(), m, [fa.cell_id])
    [fix] = repair.synthesize(m, ends, [fa])
    assert [str(c) for c in fix.checks] == ["AddedExactly('notes', 1)", "Unchanged('contacts')"]
    # an edit of another family (a repeated write) that a count rejects gets no `Unchanged`: it changes nothing else
    extra = msgspec.structs.replace(fa, family="extra")
    [fix] = repair.synthesize(m, ends, [extra])
    assert [str(c) for c in fix.checks] == ["AddedExactly('notes', 1)"]

"""Check AppWorld's measured read sets by another instrument: SQLite's own authorizer on the end databases.

    .venv-appworld/bin/python precision/read_sets_appworld.py AUDIT_DIR CHANGED.json [--seed 42] [--sample 10] [--out F]
    .venv-appworld/bin/python precision/read_sets_appworld.py AUDIT_DIR --blind-spots [--out F]

(APPWORLD_ROOT set to the audited suite's data root, as the audit's manifest provenance names it.)

CHANGED.json is `bench/bench_read_sets.py reasons AUDIT_DIR --bench appworld`'s output. A seeded sample of its
false accepts is replayed with AppWorld's own API: a fresh `AppWorld(task_id=...)`, the cell's run (manifest.json)
executed call by call through `world.execute` (`apis.APP.API(**args)`), and the task's shipped evaluator run by
`world.evaluate()`, with `sqlite3.Connection.set_authorizer` installed on each END database's connection (the live
world's in-memory databases, which the evaluator reads as its end). SQLite calls the authorizer for every column a
statement reads (SQLITE_READ, with its table), when the statement is compiled: a check inside the database engine,
not SQLAlchemy's events (verimut's recorder listens to those). A collection (`app.Model`) counts as read when a
column of its table was. Never imports verimut. The judgement (holds / disputed / wrong) is a person's, written into
docs/precision/read-sets-appworld-webarena.json.

`--blind-spots` checks the read map's blind spots the way verimut would flip them if AppWorld could fork: re-derived
from the ledger (a collection some scored run changed that no recorded call of the task's verifier read), each is
emptied on a replay of the task's reference run, through AppWorld's own models (`record.delete()`), and the
evaluator is called: a verdict that holds confirms the blind spot; a table the reference end leaves empty has
nothing to flip.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

from precision_common import changed_sample

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != HERE] + [HERE]
NEW = " (new)"


def replay(task: str, run: dict[str, Any], n: int) -> dict[str, Any]:
    from appworld import AppWorld

    AppWorld.close_all()
    world = AppWorld(task_id=task, experiment_name=f"read-sets-precision-{os.getpid()}-{n}", ground_truth_mode="full")
    for action in run["actions"]:
        app, _, api = action["name"].partition(".")
        code = f"import json\n_r = apis.{app}.{api}(**json.loads({json.dumps(json.dumps(action['args']))}))"
        world.execute(code)
    tables: dict[tuple[str, str], str] = {}
    engines: dict[str, Any] = {}
    for app, name_to_model in world.models.items():
        for name, klass in name_to_model.items():
            if name != "SQLModel" and klass.is_table_model():
                tables[(app, klass.__tablename__)] = f"{app}.{name}"
                engines[app] = klass.db.engine
    seen: dict[str, set[str]] = {}

    def authorizer(app: str) -> Any:
        def check(action: int, table: str | None, column: str | None, db: str | None, source: str | None) -> int:
            if action == sqlite3.SQLITE_READ and (app, table) in tables:
                seen.setdefault(tables[(app, str(table))], set()).add(str(column))
            return sqlite3.SQLITE_OK

        return check

    for app, engine in engines.items():
        raw = engine.raw_connection()  # a StaticPool: the one connection every statement on this database uses
        raw.driver_connection.set_authorizer(authorizer(app))
        raw.close()
    try:
        tracker = world.evaluate()
    finally:
        for engine in engines.values():
            raw = engine.raw_connection()
            raw.driver_connection.set_authorizer(None)
            raw.close()
    return {"verdict": bool(tracker.success), "seen": {k: sorted(v) for k, v in seen.items()}}


def _lands(path: str, collection: str) -> bool:
    return path == f"state.{collection}" or path.startswith(f"state.{collection}.")


def blind_spots(rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Per task, the collections some scored run of the suite changed that no recorded call of its verifier read
    (from the ledger's `reads` and `changed_from_start` alone: the read map's rule, re-derived here)."""
    written = {c.removesuffix(NEW) for r in rows for c in r["evidence"].get("changed_from_start") or {}}
    read: dict[str, set[str]] = {}
    for r in rows:
        reads = r["evidence"].get("reads")
        if reads is None or r["evidence"].get("run_task") is not None:
            continue
        mine = read.setdefault(r["task"], set())
        paths = [p for how in ("value", "keys", "whole") for p in reads.get(how, [])]
        mine.update(c for c in written if any(_lands(p, c) for p in paths))
    return {t: sorted(written - got) for t, got in sorted(read.items()) if written - got}


def flip(task: str, run: dict[str, Any], collection: str, n: int) -> dict[str, Any]:
    """The reference run replayed, every row of `collection` deleted through AppWorld's own models (its write
    counter moves as for any delete), then the task's evaluator: does its verdict hold?"""
    from appworld import AppWorld

    AppWorld.close_all()
    world = AppWorld(task_id=task, experiment_name=f"read-sets-flip-{os.getpid()}-{n}", ground_truth_mode="full")
    for action in run["actions"]:
        app, _, api = action["name"].partition(".")
        world.execute(f"import json\n_r = apis.{app}.{api}(**json.loads({json.dumps(json.dumps(action['args']))}))")
    app, _, model = collection.partition(".")
    rows = world.models[app][model].all()
    for row in rows:
        row.delete()
    return {"rows_deleted": len(rows), "passed": bool(world.evaluate().success)}


def check_blind_spots(audit: Path, out: Path | None) -> int:
    manifest = json.loads((audit / "manifest.json").read_text())
    cells = {c["cell_id"]: c for c in manifest["cells"]}
    rows = [json.loads(line) for line in (audit / "cells.jsonl").read_text().splitlines() if line.strip()]
    found = []
    for n, (task, spots) in enumerate(blind_spots(rows).items()):
        control = cells[f"{task}:control"]
        for m, collection in enumerate(spots):
            got = flip(task, control["run"], collection, n * 100 + m)
            check = "nothing to flip" if not got["rows_deleted"] else "held" if got["passed"] else "moved"
            found.append({"task": task, "collection": collection, **got, "check": check})
    target = out or audit / "read-sets-flips.json"
    target.write_text(json.dumps({"audit": str(audit), "blind_spots": found}, indent=1) + "\n")
    held = sum(f["check"] == "held" for f in found)
    moved = sum(f["check"] == "moved" for f in found)
    print(f"{len(found)} blind spots: emptied, the verdict held on {held}, moved on {moved}; {target}")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("audit", type=Path)
    p.add_argument("changed", type=Path, nargs="?")
    p.add_argument("--blind-spots", action="store_true", help="empty each blind spot's table on the reference end")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--sample", type=int, default=10)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    if args.blind_spots:
        return check_blind_spots(args.audit, args.out)
    rows, cells, drawn, by_id = changed_sample(args.audit, args.changed, args.sample, args.seed)
    out = []
    for n, cid in enumerate(drawn):
        row, cell = rows[cid], cells[cid]
        got = replay(cell["task"], cell["run"], n)
        claims = []
        for coll, said in by_id[cid]["collections"].items():
            name = coll.removesuffix(NEW)
            claims.append(
                {
                    "collection": coll,
                    "source_text": said["source_text"],
                    "measured": said["measured"],
                    "authorizer": "read" if name in got["seen"] else "never",
                    "columns": got["seen"].get(name, []),
                }
            )
        out.append(
            {
                "cell_id": cid,
                "reason": row["reason"],
                "verdict_recorded": row["verdict"],
                "verdict_now": got["verdict"],
                "claims": claims,
                "agree": all(c["measured"] == c["authorizer"] for c in claims) and got["verdict"] == row["verdict"],
                "authorizer_read": sorted(got["seen"]),
            }
        )
    result = {"audit": str(args.audit), "seed": args.seed, "changed": len(by_id), "sampled": out}
    target = args.out or args.audit / "read-sets-precision.json"
    target.write_text(json.dumps(result, indent=1) + "\n")
    agree = sum(o["agree"] for o in out)
    print(f"{len(out)} changed reasons replayed under SQLite's authorizer: the measurement agrees on {agree}; {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The bench/ scripts' one harness: their arguments, the machine facts, the bare loops, the alternating repeats
and the report, so that every figure in docs/ is measured the same way.

What it fixes for every script:

- each measurement of a repeat starts after a `gc.collect()`, and the order of the measurements alternates
  (forward on even repeats, backward on odd ones), so drift on a shared machine favours none;
- a ratio is taken inside each repeat (both sides measured minutes apart at most) and reported as min and
  median over the repeats; a time is reported as its median;
- the bare loop is one function (`bare`): per cell, `reset` (or a fork of a kept end), every action, the
  verifier; nothing else unless asked (snapshots, as the scorer takes them). Its verdicts come back so a script
  can compare them with the ledger's;
- the machine facts (Python, the cores, the load average at the start and the end) head the table and go to
  the JSON file with every repeat's raw numbers.

Run nothing here: the scripts beside it import it (`sys.path` holds bench/ when a script runs).
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
SUITES = ("workspace", "travel", "banking", "slack")


# -- arguments and machine facts ---------------------------------------------------------------


def arguments(
    doc: str,
    default_json: Path,
    argv: Sequence[str] | None = None,
    *,
    repeat: int = 3,
    suites: bool = True,
    more: Callable[[argparse.ArgumentParser], None] | None = None,
) -> argparse.Namespace:
    """The common flags (`--repeat`, `--json`, and `--suite` for the AgentDojo scripts), plus a script's own."""
    p = argparse.ArgumentParser(
        description=doc.split("\n\n", 1)[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    if suites:
        p.add_argument("--suite", action="append", choices=SUITES, help="an AgentDojo suite (repeatable; default: all)")
    p.add_argument("--repeat", type=int, default=repeat, metavar="N", help=f"measure N times (default {repeat})")
    p.add_argument("--json", type=Path, default=default_json, metavar="PATH", help="where to write every figure")
    if more is not None:
        more(p)
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    if suites:
        args.suite = list(dict.fromkeys(args.suite or SUITES))  # keep order, drop duplicates
    return args


def machine(*packages: str) -> dict[str, Any]:
    """The facts a figure depends on; the load average now (`finish` adds it at the end)."""
    import verimut

    info: dict[str, Any] = {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "verimut": verimut.__version__,
        "tempdir": tempfile.gettempdir(),
        "loadavg_start": list(os.getloadavg()),
    }
    for name in packages:
        try:
            info[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            info[name] = None
    return info


def load_agentdojo(suites: Sequence[str]) -> tuple[Any, dict[str, float]]:
    """verimut's AgentDojo adapter, each chosen suite's default environment loaded once (outside every timer)."""
    from verimut import adapters

    t0 = time.perf_counter()
    bench = adapters.load("agentdojo")
    loaded = time.perf_counter()
    first: dict[str, str] = {}
    for t in bench.tasks():
        first.setdefault(t.split("/", 1)[0], t)
    missing = [s for s in suites if s not in first]
    if missing:
        raise SystemExit(f"unknown suite(s) for AgentDojo {bench.version}: {', '.join(missing)}")
    for s in suites:
        bench.reset(first[s])
    return bench, {"adapter_load_s": loaded - t0, "env_load_s": time.perf_counter() - loaded}


def agentdojo_head(bench: Any, info: dict[str, Any], args: argparse.Namespace) -> str:
    """The heading of an AgentDojo script's table: the versions, the suites, the repeats."""
    return (
        f"AgentDojo {bench.version} (agentdojo {info.get('agentdojo')}), suites: {', '.join(args.suite)}; "
        f"{args.repeat} repeat(s), medians"
    )


# -- the bare loop -----------------------------------------------------------------------------


@dataclass
class Bare:
    """What a bare loop took: its seconds, the verifier's share of them (when timed apart), each cell's verdict
    (None where the verifier raised)."""

    seconds: float
    verify_s: float = 0.0
    verdicts: dict[str, bool | None] = field(default_factory=dict)

    @property
    def errors(self) -> int:
        return sum(v is None for v in self.verdicts.values())


def bare(
    bench: Any,
    cells: Iterable[Any],
    *,
    as_run_task: bool = False,
    snapshots: bool = False,
    stop_at_error: bool = False,
    time_verify: bool = False,
) -> Bare:
    """Each cell with nothing around it: `reset`, every action, the verifier. No diff, no ledger.

    `as_run_task`: replay the cell's run task and grade with its own task's verifier (`verify_as`), as a swap
    cell; `snapshots`: read the state before and after the actions, as the scorer does; `stop_at_error`: stop a
    run at its first action that raises, as the scorer does; `time_verify`: sum the verifier's calls apart.
    """
    reset, execute, snapshot, perf = bench.reset, bench.execute, bench.snapshot, time.perf_counter
    verdicts: dict[str, bool | None] = {}
    verify_s = 0.0
    began = perf()
    for cell in cells:
        ep = reset(cell.run_task if as_run_task else cell.task)
        if snapshots:
            snapshot(ep)
        for a in cell.run.actions:
            if execute(ep, a).error is not None and stop_at_error:
                break
        if snapshots:
            snapshot(ep)
        v0 = perf() if time_verify else 0.0
        try:
            verdict = bench.verify_as(cell.task, ep, cell.run) if as_run_task else bench.verify(ep, cell.run)
            verdicts[cell.cell_id] = verdict.passed
        except Exception:  # noqa: BLE001 - the verifier is the benchmark's code; its error is a verdict too
            verdicts[cell.cell_id] = None
        if time_verify:
            verify_s += perf() - v0
    return Bare(perf() - began, verify_s, verdicts)


# -- verimut's side ----------------------------------------------------------------------------


def only(m: Any, keep: Sequence[Any]) -> Any:
    """The manifest `m` with only the cells `keep` (its content hash made anew)."""
    from verimut.engine import manifest as manifest_mod

    m = msgspec.structs.replace(m, cells=list(keep))
    return msgspec.structs.replace(m, content_hash=manifest_mod.content_hash(m))


def score(bench: Any, m: Any) -> tuple[float, dict[str, Any]]:
    """`pipeline.score_all` in process into a fresh directory (the manifest written outside the timer, as
    `prepare` leaves it): the seconds, and the rows by cell id."""
    from verimut.engine import pipeline
    from verimut.engine.store import Store
    from verimut.executors.inprocess import InProcess

    with tempfile.TemporaryDirectory(prefix="verimut-bench-") as tmp:
        store = Store(Path(tmp))
        store.write_manifest(m)
        began = time.perf_counter()
        rows = pipeline.score_all(bench, m, store, InProcess())
        return time.perf_counter() - began, dict(rows)


def plain_rows(rows: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """Ledger rows as plain data by cell id, without `seconds` (timing, not outcome): what two runs must share."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        plain = row if isinstance(row, dict) else msgspec.to_builtins(row)
        plain = {k: v for k, v in plain.items() if k != "seconds"}
        out[plain["cell_id"]] = plain
    return out


def read_ledger(out: Path) -> dict[str, dict[str, Any]]:
    """An output directory's cells.jsonl as `plain_rows`."""
    lines = (out / "cells.jsonl").read_bytes().splitlines()
    return plain_rows(msgspec.json.decode(line) for line in lines if line.strip())


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The keys whose values differ (or that only one side has), sorted."""
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))


# -- repeats -----------------------------------------------------------------------------------


def seconds(fn: Callable[[], Any]) -> float:
    """How long one call of `fn` took."""
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


def alternate(repeat: int, measures: Sequence[tuple[str, Callable[[], Any]]]) -> list[dict[str, Any]]:
    """Run every measure `repeat` times, forward on even repeats and backward on odd ones, each after a
    `gc.collect()`; what a measure returns (its seconds, or a dict of figures) is kept under its name in the
    repeat's dict. Progress goes to stderr."""
    runs: list[dict[str, Any]] = []
    for i in range(repeat):
        order = measures if i % 2 == 0 else measures[::-1]
        r: dict[str, Any] = {"order": [name for name, _ in order]}
        for name, fn in order:
            print(f"[repeat {i + 1}/{repeat}] {name} ...", file=sys.stderr, flush=True)
            gc.collect()
            began = time.perf_counter()
            r[name] = fn()
            print(f"    {time.perf_counter() - began:.1f} s", file=sys.stderr, flush=True)
        runs.append(r)
    return runs


def pick(run: dict[str, Any], path: Sequence[str]) -> float:
    value: Any = run
    for key in path:
        value = value[key]
    return float(value)


def median(runs: Sequence[dict[str, Any]], *path: str) -> float:
    """The median over the repeats of the figure at `path` (keys into each repeat's dict)."""
    return statistics.median(pick(r, path) for r in runs)


def ratios(runs: Sequence[dict[str, Any]], top: Sequence[str], bottom: Sequence[str]) -> dict[str, Any]:
    """`top / bottom` inside each repeat, and their min and median over the repeats."""
    each = [pick(r, top) / pick(r, bottom) for r in runs]
    return {"min": min(each), "median": statistics.median(each), "each": each}


# -- the report --------------------------------------------------------------------------------


def load(info: dict[str, Any]) -> str:
    start = " ".join(f"{x:.1f}" for x in info["loadavg_start"])
    end = " ".join(f"{x:.1f}" for x in info.get("loadavg_end", []))
    return f"load average {start} at the start" + (f", {end} at the end" if end else "")


def finish(
    head: str, rows: Sequence[tuple[str, str]], info: dict[str, Any], path: Path, report: dict[str, Any]
) -> None:
    """Print the markdown table under its heading (with the machine facts) and write every figure to `path`."""
    info.setdefault("loadavg_end", list(os.getloadavg()))
    head = f"{head}; Python {info['python']}, {info['cpu_count']} CPUs, {load(info)}"
    print("\n".join([head, "", "| measure | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)]))
    for w in report.get("warnings", []):
        print(f"\nWARNING: {w}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(msgspec.json.format(msgspec.json.encode({"machine": info, **report})))
    print(f"\n(all figures: {path})")


# -- a worker benchmark's bare loop, in the benchmark's own interpreter --------------------------


def bare_elsewhere(python: Path, script: Path, payload: dict[str, Any]) -> Bare:
    """A bare loop in another interpreter (the benchmark's own environment): `script` reads `payload` as JSON on
    stdin and prints {"seconds": S, "verdicts": {cell: passed}} as its last line, its timer started after its
    benchmark is up."""
    import json
    import subprocess

    done = subprocess.run(
        [str(python), str(script)], input=json.dumps(payload), capture_output=True, text=True, check=True
    )
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return Bare(float(out["seconds"]), verdicts=dict(out["verdicts"]))


def versus_worker_bare(
    bench: Any,
    m: Any,
    bare_run: Callable[[Sequence[Any]], Bare],
    args: argparse.Namespace,
    info: dict[str, Any],
    title: str,
    bare_label: str,
) -> None:
    """verimut's scoring of `m`'s cells with a run of their own (over the worker seam, in process) against the
    benchmark's bare loop `bare_run` of the same cells, alternating; the verdicts compared; the table printed."""
    from collections import Counter

    kept = [c for c in m.cells if c.run is not None and c.same_run_as is None]
    kept_m = only(m, kept)
    families = Counter(c.family for c in kept)
    expected = bare_run(kept).verdicts  # warm-up, and the bare loop's verdicts
    disagree: set[str] = set()

    def bare_side() -> float:
        done = bare_run(kept)
        disagree.update(c for c, v in done.verdicts.items() if v != expected[c])
        return done.seconds

    def verimut_side() -> float:
        took, rows = score(bench, kept_m)
        disagree.update(c for c, row in rows.items() if row.verdict is not None and row.verdict != expected[c])
        return took

    runs = alternate(args.repeat, [("verimut", verimut_side), ("bare", bare_side)])
    for c in sorted(disagree):
        print(f"WARNING: {c}: verimut's verdict is not the bare loop's", file=sys.stderr)
    ratio = ratios(runs, ["verimut"], ["bare"])
    n = len(kept)
    fig: dict[str, Any] = {
        "tasks": len(m.tasks),
        "cells": n,
        "cells_by_family": dict(sorted(families.items())),
        "verimut_s": median(runs, "verimut"),
        "bare_s": median(runs, "bare"),
        "per_cell_ms": 1000 * median(runs, "verimut") / n,
        "per_cell_bare_ms": 1000 * median(runs, "bare") / n,
        "ratio_min": ratio["min"],
        "ratio_median": ratio["median"],
        "verdicts_disagreeing": sorted(disagree),
    }
    rows_md = [
        ("tasks", str(len(m.tasks))),
        ("cells with a run of their own", f"{n}: " + ", ".join(f"{f} {k}" for f, k in sorted(families.items()))),
        (
            "through `score_all` (worker seam, snapshots, diff, ledger), median (s)",
            f"{fig['verimut_s']:.1f} ({fig['per_cell_ms']:.0f} ms a cell)",
        ),
        (f"{bare_label}, median (s)", f"{fig['bare_s']:.1f} ({fig['per_cell_bare_ms']:.0f} ms a cell)"),
        ("**verimut / bare**, min / median", f"**{fig['ratio_min']:.2f}x / {fig['ratio_median']:.2f}x**"),
        ("verdicts that differ from the bare loop's", str(len(disagree))),
    ]
    head = f"{title} ({bench.version}); {args.repeat} repeats"
    finish(
        head, rows_md, info, args.json, {"args": vars(args) | {"json": str(args.json)}, "figures": fig, "runs": runs}
    )

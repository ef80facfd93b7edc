"""Benchmark: what the parallel path adds, against the floor of the work itself.

Run from the repository root:

    .venv/bin/python bench/bench_parallel.py                        # swap census and executors, once
    .venv/bin/python bench/bench_parallel.py --repeat 3 --json /tmp/p.json
    .venv/bin/python bench/bench_parallel.py --only executors       # only the banking pool/ray comparison

Two measurements, each repeated, the order of their parts alternating between repeats (forward on
even repeats, backward on odd ones) so that drift on a noisy machine favours none:

A. **The swap census at its floor** (`--only swap`). The whole command, `verimut swap agentdojo
   --workers W -q` in a fresh `--out`, timed from outside as a subprocess (start-up, imports,
   manifest, scoring, summary and report.html: everything a user waits for), against the bare
   loop: one process, the same adapter, for each user task j its reference run replayed once
   (`reset`, every action) and, for every verifier i of j's suite, a fork of the end (`bench.fork`)
   graded by `bench.verify_as(i, fork, run)`. Nothing else: no manifest, no diff, no ledger. The
   floor is the bare loop's time over the cores (`os.cpu_count()`, or `--workers`); the ratio is
   the command's wall time over the floor. The bare loop runs in its own subprocess too
   (`--bare`), so both pay for their own imports, and its loop alone is timed inside it; whole
   against whole, the command is also set against that bare program's whole time (its start-up,
   AgentDojo's load and the reference runs too) over the cores (`process_ratio`). The
   command's phases (manifest, worker start-up, scoring) come from its runs.jsonl. The same bare
   loop is also split across W processes started at once (each replays every run and makes every
   W-th verifier call): no harness, only the work run in parallel, so the machine's own loss to
   parallel running (shared caches, memory bandwidth, a neighbour on the host) shows apart from
   what verimut's parallel path adds (`scoring / split loop`).

B. **Executors on one suite** (`--only executors`): `verimut audit agentdojo --suite banking
   --executor E --workers W -q` for the pool and Ray, each in a fresh `--out`; the scoring phase
   and start-up (Ray's start and its actors' adapter loads) from runs.jsonl; the ledgers compared
   (every row but `seconds`).

Medians over the repeats go to stdout as a markdown table; every figure and the machine facts go to
the JSON file (default bench/out/parallel-latest.json).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from harness import machine, median

DEFAULT_JSON = HERE / "out" / "parallel-latest.json"
VERIMUT = [sys.executable, "-m", "verimut.cli"]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--repeat", type=int, default=1, metavar="N", help="measure N times; report medians")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="workers (default: the cores)")
    p.add_argument("--only", choices=("swap", "executors"), help="run one of the two measurements")
    p.add_argument("--no-split", action="store_true", help="skip the bare loop split across the workers (swap)")
    p.add_argument(
        "--baseline-src",
        type=Path,
        metavar="DIR",
        help="also time the command with verimut's code from DIR/verimut (a `git archive REV src` elsewhere), side by side",
    )
    p.add_argument("--suite", default="banking", help="the suite of the executor comparison (default banking)")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, metavar="PATH", help="where to write every figure")
    p.add_argument("--bare", action="store_true", help=argparse.SUPPRESS)  # the bare loop's own process
    # The bare loop's share K of W (every W-th verifier call from the K-th), in a process of its own.
    p.add_argument("--share", default="0/1", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.repeat < 1 or args.workers < 1:
        p.error("--repeat and --workers must be at least 1")
    return args


def bare_loop(share: int = 0, of: int = 1) -> dict[str, float]:
    """The floor's work in this process: each run replayed once, every verifier of its suite on a fork.

    What a bare harness of its own would do, and no more: load AgentDojo, take each user task's reference
    run, replay it once, and call every verifier of its suite on a fork of the end. No manifest (a bare
    harness has none), no diff, no ledger. With `of` > 1, only every `of`-th verifier call from the
    `share`-th (each run still replayed once): one of `of` processes that split the loop between them.
    """
    began = time.perf_counter()
    from verimut import adapters
    from verimut.engine import pipeline
    from verimut.grammar import pairs

    bench = adapters.load("agentdojo")
    tasks = pipeline.select_kinds(bench, pipeline.select_tasks(bench.tasks()), ["user"])
    assert bench.fork is not None and bench.verify_as is not None
    suites: dict[str, list[str]] = {}
    for t in tasks:
        suites.setdefault(pairs.suite_of(t), []).append(t)
    runs = {j: bench.reference(j, bench.reset(j)) for j in tasks}  # the ground-truth pipeline, once a task
    loaded, cpu = time.perf_counter(), time.process_time()
    calls = seen = 0
    for j in tasks:
        run = runs[j]
        episode = bench.reset(j)
        for action in run.actions:
            bench.execute(episode, action)
        for i in suites[pairs.suite_of(j)]:  # the census's column of j: every verifier of its suite, its own too
            seen += 1
            if (seen - 1) % of != share:
                continue
            bench.verify_as(i, bench.fork(episode), run)
            calls += 1
    done = {"loop_s": time.perf_counter() - loaded, "cpu_s": time.process_time() - cpu}
    return {**done, "setup_s": loaded - began, "calls": calls}


def _run(cmd: list[str], src: Path | None = None) -> float:
    env = None if src is None else {**os.environ, "PYTHONPATH": str(src)}
    began = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False, env=env)
    wall = time.perf_counter() - began
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return wall


def _phases(out: Path) -> dict[str, Any]:
    last = json.loads((out / "runs.jsonl").read_text().splitlines()[-1])
    keys = ("wall_seconds", "manifest_seconds", "startup_seconds", "scoring_seconds", "scored")
    return {k: last[k] for k in keys}


def _ledger(out: Path) -> dict[str, dict[str, Any]]:
    rows = (json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines())
    return {r["cell_id"]: {k: v for k, v in r.items() if k != "seconds"} for r in rows}


def bare_split(workers: int, tmp: Path) -> dict[str, Any]:
    """The bare loop split across `workers` processes started at once: the same work run in parallel on this
    machine with no harness at all, so what the machine itself loses to parallel running shows apart."""
    began = time.perf_counter()
    procs = []
    for k in range(workers):
        js = tmp / f"bare-{k}.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--bare", "--share", f"{k}/{workers}", "--json", str(js)]
        procs.append((subprocess.Popen(cmd, cwd=ROOT), js))
    for proc, _ in procs:
        if proc.wait() != 0:
            raise SystemExit(f"a bare share exited {proc.returncode}")
    wall = time.perf_counter() - began
    shares = [json.loads(js.read_text()) for _, js in procs]
    return {"process_s": wall, "loop_s": max(s["loop_s"] for s in shares), "shares": shares}


def swap_once(workers: int, forward: bool, split: bool = True, baseline: Path | None = None) -> dict[str, Any]:
    fig: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        parts = ["command", "bare", "split"] if split else ["command", "bare"]
        parts += ["baseline"] if baseline is not None else []
        parts = parts if forward else parts[::-1]
        for part in parts:
            if part == "baseline":
                out = Path(tmp) / "baseline"
                cmd = [*VERIMUT, "swap", "agentdojo", "--out", str(out), "-q", "--workers", str(workers)]
                fig["baseline_s"] = _run(cmd, baseline)
                fig["baseline_same_ledger"] = (
                    _ledger(out) == _ledger(Path(tmp) / "swap") if (Path(tmp) / "swap").exists() else None
                )
            elif part == "command":
                out = Path(tmp) / "swap"
                cmd = [*VERIMUT, "swap", "agentdojo", "--out", str(out), "-q", "--workers", str(workers)]
                fig["command_s"] = _run(cmd)
                fig["phases"] = _phases(out)
                if (Path(tmp) / "baseline").exists():
                    fig["baseline_same_ledger"] = _ledger(out) == _ledger(Path(tmp) / "baseline")
            elif part == "split":
                fig["split"] = bare_split(workers, Path(tmp))
            else:
                js = Path(tmp) / "bare.json"
                began = time.perf_counter()
                cmd = [sys.executable, str(Path(__file__).resolve()), "--bare", "--json", str(js)]
                subprocess.run(cmd, cwd=ROOT, check=True)
                fig["bare_process_s"] = time.perf_counter() - began
                fig["bare"] = json.loads(js.read_text())
    fig["floor_s"] = fig["bare"]["loop_s"] / workers
    fig["ratio"] = fig["command_s"] / fig["floor_s"]
    if baseline is not None:
        fig["baseline_ratio"] = fig["baseline_s"] / fig["floor_s"]
    # Whole against whole: the bare program's own start-up, AgentDojo's load and reference runs included.
    fig["process_floor_s"] = fig["bare_process_s"] / workers
    fig["process_ratio"] = fig["command_s"] / fig["process_floor_s"]
    fig["scoring_ratio"] = fig["phases"]["scoring_seconds"] / fig["floor_s"]
    if split:
        fig["split_ratio"] = fig["split"]["loop_s"] / fig["floor_s"]
        fig["scoring_over_split"] = fig["phases"]["scoring_seconds"] / fig["split"]["loop_s"]
        fig["command_over_split_process"] = fig["command_s"] / fig["split"]["process_s"]
    return fig


def executors_once(suite: str, workers: int, forward: bool) -> dict[str, Any]:
    fig: dict[str, Any] = {}
    ledgers = {}
    with tempfile.TemporaryDirectory() as tmp:
        names = ["pool", "ray"] if forward else ["ray", "pool"]
        for name in names:
            out = Path(tmp) / name
            cmd = [*VERIMUT, "audit", "agentdojo", "--suite", suite, "--out", str(out), "-q"]
            cmd += ["--executor", name, "--workers", str(workers)]
            fig[name] = {"command_s": _run(cmd), **_phases(out)}
            ledgers[name] = _ledger(out)
    fig["same_ledger"] = ledgers["pool"] == ledgers["ray"]
    fig["ray_over_pool_scoring"] = fig["ray"]["scoring_seconds"] / fig["pool"]["scoring_seconds"]
    return fig


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.bare:
        share, _, of = args.share.partition("/")
        args.json.write_text(json.dumps(bare_loop(int(share), int(of))))
        return 0
    load = {"start": os.getloadavg()[0]}
    swaps: list[dict[str, Any]] = []
    execs: list[dict[str, Any]] = []
    for r in range(args.repeat):
        forward = r % 2 == 0
        order = ["swap", "executors"] if forward else ["executors", "swap"]
        for part in order:
            if args.only not in (None, part):
                continue
            if part == "swap":
                swaps.append(swap_once(args.workers, forward, not args.no_split, args.baseline_src))
                said = f"swap repeat {r + 1}: {swaps[-1]['ratio']:.2f}x the floor"
                if "baseline_ratio" in swaps[-1]:
                    said += f"; the baseline's {swaps[-1]['baseline_ratio']:.2f}x, same ledger: "
                    said += str(swaps[-1]["baseline_same_ledger"])
                print(said, file=sys.stderr)
                # Every repeat's figures kept as they come (a long run cut short still leaves them).
                args.json.parent.mkdir(parents=True, exist_ok=True)
                args.json.with_suffix(".partial.json").write_text(json.dumps({"swap": swaps}, indent=2))
            else:
                execs.append(executors_once(args.suite, args.workers, forward))
                print(f"executors repeat {r + 1}: ray/pool {execs[-1]['ray_over_pool_scoring']:.2f}", file=sys.stderr)
    load["end"] = os.getloadavg()[0]
    lines = [f"verimut bench_parallel: {args.repeat} repeat(s), {args.workers} workers, load {load}", ""]
    lines += ["| measure | median |", "|---|---|"]
    if swaps:
        lines += [
            f"| `verimut swap agentdojo`, whole command (s) | {median(swaps, 'command_s'):.2f} |",
            f"| - manifest (s) | {median(swaps, 'phases', 'manifest_seconds'):.2f} |",
            f"| - worker start-up (s) | {median(swaps, 'phases', 'startup_seconds'):.2f} |",
            f"| - scoring (s) | {median(swaps, 'phases', 'scoring_seconds'):.2f} |",
            (
                f"| bare loop, one process: replays + {swaps[0]['bare']['calls']} verifier calls (s) | "
                f"{median(swaps, 'bare', 'loop_s'):.2f} |"
            ),
            f"| floor = bare loop / {args.workers} (s) | {median(swaps, 'floor_s'):.2f} |",
            f"| **command / floor** | **{median(swaps, 'ratio'):.2f}x** (min {min(s['ratio'] for s in swaps):.2f}x) |",
            f"| scoring / floor | {median(swaps, 'scoring_ratio'):.2f}x |",
            (
                f"| bare program, one process, whole: start-up, load, reference runs, the loop (s) | "
                f"{median(swaps, 'bare_process_s'):.2f} |"
            ),
            (
                f"| **command / (bare program / {args.workers})** (whole against whole) | "
                f"**{median(swaps, 'process_ratio'):.2f}x** (min {min(s['process_ratio'] for s in swaps):.2f}x) |"
            ),
        ]
        if "split" in swaps[0]:
            lines += [
                (
                    f"| bare loop split across {args.workers} processes at once: slowest share's loop (s) | "
                    f"{median(swaps, 'split', 'loop_s'):.2f} |"
                ),
                f"| - its whole processes, started together (s) | {median(swaps, 'split', 'process_s'):.2f} |",
                f"| split loop / floor (this machine's own cost of running in parallel) | {median(swaps, 'split_ratio'):.2f}x |",
                f"| **scoring / split loop** (what the parallel path adds) | **{median(swaps, 'scoring_over_split'):.2f}x** |",
                (
                    f"| **command / split processes** (whole against whole) | "
                    f"**{median(swaps, 'command_over_split_process'):.2f}x** |"
                ),
            ]
        if "baseline_s" in swaps[0]:
            lines += [
                f"| the same command, verimut's code from {args.baseline_src} (s) | {median(swaps, 'baseline_s'):.2f} |",
                f"| **its command / floor** | **{median(swaps, 'baseline_ratio'):.2f}x** |",
                f"| ledgers identical to the baseline's (every repeat) | {all(s['baseline_same_ledger'] for s in swaps)} |",
            ]
        lines += ["", "| repeat | command / floor | " + ("baseline / floor |" if "baseline_s" in swaps[0] else "")]
        lines += ["|---|---|" + ("---|" if "baseline_s" in swaps[0] else "")]
        for i, sw in enumerate(swaps):
            extra = f" {sw['baseline_ratio']:.2f}x |" if "baseline_s" in sw else ""
            lines += [f"| {i + 1} | {sw['ratio']:.2f}x |{extra}"]
    if execs:
        for name in ("pool", "ray"):
            lines += [
                (
                    f"| audit --suite {args.suite}, {name}: command / start-up / scoring (s) | "
                    f"{median(execs, name, 'command_s'):.2f} / {median(execs, name, 'startup_seconds'):.2f} / "
                    f"{median(execs, name, 'scoring_seconds'):.2f} |"
                )
            ]
        lines += [
            f"| **Ray scoring / pool scoring** | **{median(execs, 'ray_over_pool_scoring'):.2f}x** |",
            f"| ledgers identical (all repeats) | {all(e['same_ledger'] for e in execs)} |",
        ]
    print("\n".join(lines))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    facts = {"machine": machine(), "load": load, "workers": args.workers}
    args.json.write_text(json.dumps({**facts, "swap": swaps, "executors": execs}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

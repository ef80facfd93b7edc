"""Benchmark: how verimut's time, memory and output grow with the number of tasks and cells (issue 18, item 3).

Run from the repository root (a grid point per arm x size x executor; defaults are the issue's whole grid):

    .venv/bin/python bench/bench_scaling.py --arm fault --sizes 100,300 --executor pool-1 --executor pool-2
    .venv/bin/python bench/bench_scaling.py --arm swap --sizes 30,100 --repeat 3 --json /tmp/scale.json
    .venv/bin/python bench/bench_scaling.py                      # the whole grid: fault N = 100, 1,000, 10,000;
                                                                 # swap N = 100, 300, 1,000 (1,000,000 cells)

Each grid point runs the real command line, `.venv/bin/verimut audit|swap bench.scalebench:create -O tasks=N
-O records=S -O verify_ms=C -O seed=K --out TMP -q --executor E --workers W`, as a subprocess from the repository
root (so Ray's actors find `bench.scalebench` from that directory too) into a fresh temporary directory, then
`verimut report TMP` (what rebuilds summary.md/json and report.html from the ledger). The generated benchmark
(bench/scalebench.py) has N tasks in one suite, S records and verifiers of about C ms of CPU each. Executors:
`pool-1` (--executor pool --workers 1), `pool-2` (pool, 2 workers), `ray-2` (ray, 2 workers, a local Ray instance
the command starts and stops itself).

Per run it records:
- wall: from launch to exit, interpreter start-up, manifest, scoring, summary and report.html included;
- phases, from the output files' modification times and the ledger polled every `--poll` s: `build` (launch to
  manifest.json written: start-up, adapter, manifest), `scoring` (manifest written to the ledger's last row:
  includes starting the executor, e.g. Ray), `scoring_started` (the executor's start-up left out: runs.jsonl's
  `scoring_seconds` where verimut records it, else the ledger's first row to its last) and `startup` (runs.jsonl's
  `startup_seconds`), `summarize` (the run log to the last of summary.json/report.html);
- cells (ledger lines; checked against the manifest's count, ids unique), per-cell wall and scoring time, and the
  scorer's own time per cell (the ledger's `seconds`, summed);
- peak memory, two ways: `max_rss` is `ru_maxrss` of `getrusage(RUSAGE_CHILDREN)` in a fresh wrapper process
  that only runs the command: the peak RSS of the single largest process of the tree that was waited for (the
  maximum over the children, not their sum; verimut's own process, normally). `tree_pss` is the peak over samples
  (every `--poll` s, /proc/PID/smaps_rollup) of the summed PSS of every live process of the tree: pool workers,
  Ray's raylet, GCS and actors included, shared pages split between their sharers rather than counted twice;
- memory while scoring: verimut's own RSS (/proc/PID/status VmRSS) and the tree's PSS, sampled with the rest,
  at the first sample after the ledger's first row and at their peak until its last row (`while_scoring`);
- cpu: user + system seconds of the waited-for tree (the same getrusage);
- sizes of manifest.json and cells.jsonl;
- replays: resets of the benchmark (bench/scalebench.py appends one line per reset to $SCALEBENCH_TRACE), split
  into those made while building the manifest and while scoring;
- report: wall time, max_rss and exit code of `verimut report TMP`.

The executors' outcome counts at one arm and size must be equal (the executors record the same ledger): a
difference, a failed run or a ledger that does not hold every manifest cell once is a WARNING, and exit 1.

Then, per arm and executor, the growth law: the least-squares slope of log(time) against log(cells) for wall and
scoring time (and, for swap, of log(scoring replays) against log(N)), called linear when within `--tolerance` of 1.
A constant start-up (about 1-2 s for the pool, more for Ray) bends the wall slope below 1 at small sizes: the
`scoring_started` slope leaves it out. An affine fit, time = a + b x cells, extrapolates every figure to the
issue's whole grid (`estimate`).

stdout gets markdown tables; everything goes to the JSON file (default bench/out/scaling-latest.json); unless
`--no-doc`, the generated part of docs/bench-scaling.md (between its markers) and the plot docs/scaling.png
(per-cell wall time and peak RSS against cells, one line per arm and executor) are rewritten.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_JSON = HERE / "out" / "scaling-latest.json"
DOC = ROOT / "docs" / "bench-scaling.md"
PLOT = ROOT / "docs" / "scaling.png"
BEGIN, END = "<!-- bench_scaling: generated from here -->", "<!-- bench_scaling: to here -->"
BENCH = "bench.scalebench:create"
GRID = {"fault": (100, 1_000, 10_000), "swap": (100, 300, 1_000)}
EXECUTORS = {"pool-1": ("pool", 1), "pool-2": ("pool", 2), "ray-2": ("ray", 2)}
MB = 1024 * 1024

# Runs the command as its only child, then reports getrusage(RUSAGE_CHILDREN): a fresh process, so no earlier
# child of the bench counts. ru_maxrss is in KiB on Linux and is the largest child's peak, not a sum.
WRAPPER = """
import json, resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
u = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as f:
    json.dump({"rc": rc, "max_rss_kb": u.ru_maxrss, "cpu_s": u.ru_utime + u.ru_stime}, f)
"""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--arm", action="append", choices=sorted(GRID), help="fault or swap (repeatable; default both)")
    p.add_argument(
        "--sizes",
        help="task counts N, comma-separated, for every chosen arm (default: fault 100,1000,10000; swap 100,300,1000)",
    )
    p.add_argument("--executor", action="append", choices=list(EXECUTORS), help="repeatable (default: all three)")
    p.add_argument("--repeat", type=int, default=1, metavar="R", help="run each point R times; report medians")
    p.add_argument("--records", type=int, default=300, metavar="S", help="records in the state (default 300)")
    p.add_argument("--verify-ms", type=float, default=1.0, metavar="C", help="CPU ms per verifier call (default 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tolerance", type=float, default=0.15, help="a slope within this of 1 is linear (default 0.15)")
    p.add_argument("--poll", type=float, default=0.2, metavar="S", help="memory and ledger sampling period (s)")
    p.add_argument("--verimut", type=Path, default=ROOT / ".venv" / "bin" / "verimut", help="the command to run")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, metavar="PATH", help="where to write every figure")
    p.add_argument("--no-doc", action="store_true", help="do not rewrite docs/bench-scaling.md and docs/scaling.png")
    p.add_argument(
        "--from-json", type=Path, metavar="PATH", help="run nothing: report (tables, docs, plot) from an earlier --json"
    )
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    args.arm = list(dict.fromkeys(args.arm or sorted(GRID)))
    args.executor = list(dict.fromkeys(args.executor or EXECUTORS))
    try:
        sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else None
    except ValueError:
        p.error(f"--sizes {args.sizes!r}: give task counts, comma-separated")
    if sizes is not None and min(sizes) < 2:
        p.error("--sizes: at least 2 tasks")
    args.grid = {arm: sorted(set(sizes or GRID[arm])) for arm in args.arm}
    return args


# -- one run ---------------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(c) for c in f.read().split()]
    except OSError:
        pass  # gone meanwhile
    return out


def _tree(pid: int) -> list[int]:
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        seen.append(p)
        todo += _children(p)
    return seen


def _kb(path: str, field: str) -> int:
    """A "Field:  123 kB" line of a /proc file, in KiB (0 when the process is gone)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def measure(cmd: Sequence[str], ledger: Path | None, poll: float, env: dict[str, str]) -> dict[str, Any]:
    """Run `cmd` under the wrapper from the repository root; sample its tree's memory and the ledger."""
    with tempfile.NamedTemporaryFile(prefix="verimut-scale-rusage-", suffix=".json", delete=False) as f:
        usage_path = Path(f.name)
    began_wall, began = time.time(), time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", WRAPPER, str(usage_path), *cmd],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: on Ctrl-C the bench stops exactly what it started
    )
    peak_pss = main_hwm = 0
    first_row: float | None = None
    samples: list[tuple[float, int, int]] = []  # (time, verimut's own RSS, the tree's PSS), in kB
    try:
        while True:
            try:
                stdout, stderr = proc.communicate(timeout=poll)
                break
            except subprocess.TimeoutExpired:
                pass
            tree = _tree(proc.pid)
            pss = sum(_kb(f"/proc/{p}/smaps_rollup", "Pss:") for p in tree[1:])  # the wrapper itself left out
            peak_pss = max(peak_pss, pss)
            if len(tree) > 1:
                main_hwm = max(main_hwm, _kb(f"/proc/{tree[1]}/status", "VmHWM:"))
                samples.append((time.time(), _kb(f"/proc/{tree[1]}/status", "VmRSS:"), pss))
            if first_row is None and ledger is not None and ledger.exists() and ledger.stat().st_size > 0:
                first_row = time.time()
    except BaseException:
        _stop(proc)
        raise
    wall = time.perf_counter() - began
    usage = json.loads(usage_path.read_text()) if usage_path.exists() and usage_path.stat().st_size else {}
    usage_path.unlink(missing_ok=True)
    return {
        "began": began_wall,
        "wall_s": wall,
        "rc": usage.get("rc", proc.returncode),
        "max_rss_mb": usage.get("max_rss_kb", 0) / 1024,
        "main_hwm_mb": main_hwm / 1024,
        "tree_pss_mb": peak_pss / 1024,
        "cpu_s": usage.get("cpu_s"),
        "first_row": first_row,
        "samples": samples,
        "stderr_tail": stderr.decode(errors="replace")[-400:],
        "stdout_tail": stdout.decode(errors="replace")[-200:],
    }


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop the process group this bench started (by its id), politely first."""
    for sig, wait in ((signal.SIGINT, 10.0), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue


def while_scoring(samples: list[tuple[float, int, int]], first_row: float | None, last_row: float) -> dict[str, Any]:
    """Memory from the ledger's first row to its last (the scoring phase): verimut's own RSS and the tree's PSS
    at the first sample of it and their peaks over it. Flat in the number of cells when the peak is the start."""
    during = [s for s in samples if first_row is not None and first_row <= s[0] <= last_row]
    if not during:
        return {"scoring_samples": 0}
    return {
        "scoring_samples": len(during),
        "scoring_rss_first_mb": during[0][1] / 1024,
        "scoring_rss_peak_mb": max(s[1] for s in during) / 1024,
        "scoring_pss_first_mb": during[0][2] / 1024,
        "scoring_pss_peak_mb": max(s[2] for s in during) / 1024,
    }


def _count(path: Path, needle: bytes) -> int:
    n, tail = 0, b""
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            buf = tail + chunk
            n += buf.count(needle)
            tail = buf[-(len(needle) - 1) :] if len(needle) > 1 else b""
    return n


def read_ledger(path: Path) -> tuple[int, int, float, Counter[str]]:
    """Rows, distinct cell ids, the scorer's seconds summed, and the outcomes: one pass, one row at a time."""
    ids: set[str] = set()
    rows, seconds, outcomes = 0, 0.0, Counter[str]()
    with open(path, "rb") as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            rows += 1
            ids.add(row["cell_id"])
            seconds += row.get("seconds") or 0.0
            outcomes[row["outcome"]] += 1
    return rows, len(ids), seconds, outcomes


def run_point(arm: str, n: int, executor: str, args: argparse.Namespace) -> dict[str, Any]:
    kind, workers = EXECUTORS[executor]
    with tempfile.TemporaryDirectory(prefix="verimut-scale-") as tmp:
        out, trace = Path(tmp) / "out", Path(tmp) / "trace"
        env = {**os.environ, "SCALEBENCH_TRACE": str(trace)}
        options = {"tasks": n, "records": args.records, "verify_ms": args.verify_ms, "seed": args.seed}
        cmd = [str(args.verimut), "audit" if arm == "fault" else "swap", BENCH]
        for k, v in options.items():
            cmd += ["--option", f"{k}={v}"]
        cmd += ["--out", str(out), "-q", "--executor", kind, "--workers", str(workers)]
        loadavg = os.getloadavg()[0]
        r = measure(cmd, out / "cells.jsonl", args.poll, env)
        r |= {"arm": arm, "n": n, "executor": executor, "loadavg_1min": loadavg, "command": " ".join(cmd)}
        if r["rc"] not in (0, 1):
            r["failed"] = True
            return r
        mtime = lambda name: (out / name).stat().st_mtime
        built, scored, logged = mtime("manifest.json"), mtime("cells.jsonl"), mtime("runs.jsonl")
        summarized = max(mtime(f) for f in ("summary.json", "report.html"))
        rows, distinct, scorer_s, outcomes = read_ledger(out / "cells.jsonl")
        planned = _count(out / "manifest.json", b'"cell_id"')
        resets = [float(line.split()[1]) for line in trace.read_text().splitlines()] if trace.exists() else []
        r |= {
            "cells": rows,
            "ledger_ok": rows == distinct == planned,
            "manifest_cells": planned,
            "build_s": built - r["began"],
            "scoring_s": scored - built,
            "scoring_started_s": scored - r["first_row"] if r["first_row"] else None,
            "startup_s": None,
            "summarize_s": summarized - logged,
            "scorer_sum_s": scorer_s,
            "manifest_bytes": (out / "manifest.json").stat().st_size,
            "ledger_bytes": (out / "cells.jsonl").stat().st_size,
            "replays_build": sum(t <= built for t in resets),
            "replays_scoring": sum(t > built for t in resets),
            "outcomes": dict(sorted(outcomes.items())),
        }
        # verimut 0.5 records its phases in runs.jsonl: start-up (Ray's start, the actors' adapter loads) and
        # scoring after it, measured inside the process. Prefer them to the polled first row.
        logged_run = json.loads((out / "runs.jsonl").read_text().splitlines()[-1])
        if logged_run.get("scoring_seconds"):
            r["scoring_started_s"], r["startup_s"] = logged_run["scoring_seconds"], logged_run["startup_seconds"]
        r["run_log"] = logged_run
        r |= while_scoring(r.pop("samples"), r["first_row"], scored)
        rep = measure([str(args.verimut), "report", str(out)], None, args.poll, env)
        r["report"] = {k: rep[k] for k in ("wall_s", "rc", "max_rss_mb", "tree_pss_mb")}
    return r


# -- growth ----------------------------------------------------------------------------------


def slope(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """The least-squares slope of log(y) against log(x); None without two distinct positive x."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y and y > 0]
    if len({x for x, _ in pts}) < 2:
        return None
    mx, my = statistics.fmean(x for x, _ in pts), statistics.fmean(y for _, y in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)


def affine(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float] | None:
    """Least squares y = a + b x; None without two distinct x."""
    if len(set(xs)) < 2:
        return None
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


ESTIMATED = ("wall_s", "scoring_s", "max_rss_mb", "tree_pss_mb", "manifest_bytes", "ledger_bytes")


def growth(points: list[dict[str, Any]], tolerance: float) -> dict[str, Any]:
    """Per arm and executor: the log-log slopes, whether each is linear, and the affine extrapolation to the grid."""
    out: dict[str, Any] = {}
    for key in sorted({(p["arm"], p["executor"]) for p in points}):
        pts = sorted((p for p in points if (p["arm"], p["executor"]) == key), key=lambda p: p["cells"])
        cells = [p["cells"] for p in pts]
        g: dict[str, Any] = {"sizes": [p["n"] for p in pts], "cells": cells}
        for name in ("wall_s", "scoring_s", "scoring_started_s", "cpu_s"):
            s = slope(cells, [p[name] for p in pts])
            g[f"slope_{name}"] = s
            g[f"linear_{name}"] = None if s is None else abs(s - 1) <= tolerance
        if key[0] == "swap":
            s = slope([p["n"] for p in pts], [p["replays_scoring"] for p in pts])
            g["slope_replays_vs_n"], g["linear_replays"] = s, None if s is None else abs(s - 1) <= tolerance
        n_per = statistics.fmean(p["cells"] / (p["n"] if key[0] == "fault" else p["n"] ** 2) for p in pts)
        estimate: dict[str, Any] = {}
        for n in GRID[key[0]]:
            target = n_per * (n if key[0] == "fault" else n * n)
            estimate[str(n)] = {"cells": round(target)}
            for name in ESTIMATED:
                fit = affine(cells, [p[name] for p in pts])
                if fit is not None:
                    estimate[str(n)][name] = fit[0] + fit[1] * target
        g["estimate"] = estimate if len(set(cells)) > 1 else {}
        out[f"{key[0]}/{key[1]}"] = g
    return out


# -- reporting -------------------------------------------------------------------------------


def _median_points(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One point per (arm, n, executor): the medians of its repeats' numbers, the first repeat's other fields."""
    groups: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    for r in runs:
        if not r.get("failed"):
            groups.setdefault((r["arm"], r["n"], r["executor"]), []).append(r)
    points = []
    for rs in groups.values():
        p = dict(rs[0])
        for k, v in rs[0].items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                vals = [r[k] for r in rs if isinstance(r.get(k), (int, float))]
                p[k] = statistics.median(vals)
        p["report_wall_s"] = statistics.median(r["report"]["wall_s"] for r in rs)
        p["report_max_rss_mb"] = statistics.median(r["report"]["max_rss_mb"] for r in rs)
        p["repeats"] = len(rs)
        points.append(p)
    return sorted(points, key=lambda p: (p["arm"], list(EXECUTORS).index(p["executor"]), p["n"]))


def _size(b: float) -> str:
    return f"{b / MB:,.1f} MB" if b < 1024 * MB else f"{b / (1024 * MB):,.2f} GB"


def _dur(s: float | None) -> str:
    if s is None:
        return "-"
    return f"{s:,.1f} s" if s < 120 else f"{s / 60:,.1f} min" if s < 7200 else f"{s / 3600:,.1f} h"


def _slope(s: float | None, linear: bool | None) -> str:
    return "-" if s is None else f"{s:.2f} ({'linear' if linear else 'NOT linear'})"


def tables(points: list[dict[str, Any]], law: dict[str, Any], tolerance: float) -> str:
    head = (
        "| arm | N | executor | cells | wall | build | scoring | scoring once started | summary + report.html | per cell (wall / scoring"
        " / scorer) | peak RSS: largest process / tree PSS | cpu | manifest.json | cells.jsonl | replays (build"
        " / scoring) | `verimut report`: wall, peak RSS | load avg |"
    )
    lines = [head, "|" + "---|" * 17]
    for p in points:
        c = p["cells"]
        started = _dur(p["scoring_started_s"])
        if p.get("startup_s") is not None:
            started += f" (+{_dur(p['startup_s'])} start-up)"
        per = f"{1000 * p['wall_s'] / c:.2f} / {1000 * p['scoring_s'] / c:.2f} / {1000 * p['scorer_sum_s'] / c:.2f} ms"
        lines.append(
            f"| {p['arm']} | {p['n']:,} | {p['executor']} | {c:,}{'' if p['ledger_ok'] else ' (LEDGER MISMATCH)'} "
            f"| {_dur(p['wall_s'])} | {_dur(p['build_s'])} | {_dur(p['scoring_s'])} | {started} "
            f"| {_dur(p['summarize_s'])} | {per} | {p['max_rss_mb']:,.0f} / {p['tree_pss_mb']:,.0f} MB | {_dur(p['cpu_s'])} "
            f"| {_size(p['manifest_bytes'])} | {_size(p['ledger_bytes'])} "
            f"| {p['replays_build']:,} / {p['replays_scoring']:,} "
            f"| {_dur(p['report_wall_s'])}, {p['report_max_rss_mb']:,.0f} MB | {p['loadavg_1min']:.1f} |"
        )
    lines += [
        "",
        f"Growth law (least-squares slope of log y against log cells; linear: within {tolerance:g} of 1):",
        "",
        "| arm / executor | sizes | wall | scoring | scoring once started | cpu | swap: scoring replays against N |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, g in law.items():
        lines.append(
            f"| {key} | {', '.join(f'{n:,}' for n in g['sizes'])} | {_slope(g['slope_wall_s'], g['linear_wall_s'])} "
            f"| {_slope(g['slope_scoring_s'], g['linear_scoring_s'])} "
            f"| {_slope(g['slope_scoring_started_s'], g['linear_scoring_started_s'])} "
            f"| {_slope(g['slope_cpu_s'], g['linear_cpu_s'])} "
            f"| {_slope(g.get('slope_replays_vs_n'), g.get('linear_replays'))} |"
        )
    flat = [p for p in points if p.get("scoring_samples")]
    if flat:
        lines += [
            "",
            "Memory while scoring (sampled every `--poll` s from the ledger's first row to its last): verimut's own",
            "process and the whole tree, at the first sample and at the peak of that phase:",
            "",
            "| arm | N | executor | cells | samples | verimut RSS: first / peak | tree PSS: first / peak |",
            "|---|---|---|---|---|---|---|",
        ]
        for p in flat:
            lines.append(
                f"| {p['arm']} | {p['n']:,} | {p['executor']} | {p['cells']:,} | {p['scoring_samples']:,} "
                f"| {p['scoring_rss_first_mb']:,.0f} / {p['scoring_rss_peak_mb']:,.0f} MB "
                f"| {p['scoring_pss_first_mb']:,.0f} / {p['scoring_pss_peak_mb']:,.0f} MB |"
            )
    est = [(k, n, e) for k, g in law.items() for n, e in g["estimate"].items() if int(n) not in g["sizes"]]
    if est:
        lines += [
            "",
            "Extrapolated (affine fit a + b x cells over the sizes measured) to the grid's sizes not measured:",
            "",
            (
                "| arm / executor | N | cells | wall | scoring | peak RSS: largest process / tree PSS | manifest.json "
                "| cells.jsonl |"
            ),
            "|---|---|---|---|---|---|---|---|",
        ]
        for k, n, e in est:
            if "wall_s" not in e:
                continue
            lines.append(
                f"| {k} | {int(n):,} | {e['cells']:,} | {_dur(e['wall_s'])} | {_dur(e['scoring_s'])} "
                f"| {e['max_rss_mb']:,.0f} / {e['tree_pss_mb']:,.0f} MB | {_size(e['manifest_bytes'])} "
                f"| {_size(e['ledger_bytes'])} |"
            )
    return "\n".join(lines)


def plot(points: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import ScalarFormatter

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    colours = {e: f"C{k}" for k, e in enumerate(EXECUTORS)}  # one colour per executor, one line style per arm
    for key in dict.fromkeys((p["arm"], p["executor"]) for p in points):
        pts = [p for p in points if (p["arm"], p["executor"]) == key]
        style = {"color": colours[key[1]], "marker": "o" if key[0] == "fault" else "s"}
        style["linestyle"] = "-" if key[0] == "fault" else "--"
        label = f"{key[0]}, {key[1]}"
        cells = [p["cells"] for p in pts]
        left.plot(cells, [1000 * p["wall_s"] / p["cells"] for p in pts], label=label, **style)
        right.plot(cells, [p["max_rss_mb"] for p in pts], label=label, **style)
    for ax, title in ((left, "wall time per cell (ms)"), (right, "peak RSS, largest process (MB)")):
        ax.set_xscale("log")
        ax.set_xlabel("cells")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    left.set_yscale("log")
    left.yaxis.set_major_formatter(ScalarFormatter())
    left.yaxis.set_minor_formatter(ScalarFormatter())
    right.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def machine() -> dict[str, Any]:
    def version(pkg: str) -> str | None:
        try:
            return importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            return None

    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], check=False, cwd=ROOT, capture_output=True, text=True
    )
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "nproc": len(os.sched_getaffinity(0)),
        "cpu_count": os.cpu_count(),
        "verimut": version("verimut"),
        "ray": version("ray"),
        "commit": commit.stdout.strip() or None,
    }


def write_doc(path: Path, text: str) -> None:
    """Replace the generated part of the page (between BEGIN and END), or write the page with it alone."""
    block = f"{BEGIN}\n{text}\n{END}"
    old = path.read_text() if path.exists() else ""
    if BEGIN in old and END in old:
        new = old[: old.index(BEGIN)] + block + old[old.index(END) + len(END) :]
    else:
        new = f"# bench/bench_scaling.py: latest output\n\n{block}\n"
    path.write_text(new)


def measure_grid(args: argparse.Namespace, command: str) -> dict[str, Any]:
    """Every grid point, `--repeat` times (alternating the order), with the machine's facts around them."""
    if not args.verimut.exists():
        sys.exit(f"bench_scaling: no {args.verimut}: run scripts/install.sh, or give --verimut")
    info = machine() | {"loadavg_start": list(os.getloadavg())}
    forward = [(arm, n, e) for arm in args.arm for n in args.grid[arm] for e in args.executor]
    runs: list[dict[str, Any]] = []
    for i in range(args.repeat):
        for arm, n, e in forward if i % 2 == 0 else forward[::-1]:
            print(f"[repeat {i + 1}/{args.repeat}] {arm} N={n:,} {e} ...", file=sys.stderr, flush=True)
            r = run_point(arm, n, e, args) | {"repeat": i}
            runs.append(r)
            if r.get("failed"):
                print(f"    FAILED (exit {r['rc']}): {r['stderr_tail']}", file=sys.stderr, flush=True)
            else:
                print(
                    f"    {r['cells']:,} cells, {r['wall_s']:.1f} s, peak RSS {r['max_rss_mb']:.0f} MB, "
                    f"load {r['loadavg_1min']:.1f}",
                    file=sys.stderr,
                    flush=True,
                )
    info["loadavg_end"] = list(os.getloadavg())
    settings = {k: getattr(args, k) for k in ("records", "verify_ms", "seed", "repeat", "tolerance")}
    return {"machine": info, "command": command, "settings": settings, "runs": runs}


def report(measured: dict[str, Any], tolerance: float) -> tuple[str, list[dict[str, Any]], dict[str, Any], bool]:
    """The page's text, the points (medians), the growth law, and whether every run went well."""
    info, s, runs = measured["machine"], measured["settings"], measured["runs"]
    points = _median_points(runs)
    law = growth(points, tolerance)
    load = lambda xs: " ".join(f"{x:.1f}" for x in xs)
    head = (
        f"`.venv/bin/python {measured['command']}`: records S = {s['records']}, verifier {s['verify_ms']:g} ms of "
        f"CPU, seed {s['seed']}, {s['repeat']} repeat(s) (medians). verimut {info['verimut']} (commit "
        f"{info['commit']}), Python {info['python']}, Ray {info['ray']}, nproc {info['nproc']}, {info['platform']}; "
        f"load average (1, 5, 15 min) {load(info['loadavg_start'])} at the start, {load(info['loadavg_end'])} at "
        "the end."
    )
    text = head + "\n\n" + tables(points, law, tolerance)
    failed = [r for r in runs if r.get("failed")]
    if failed:
        text += "\n\nFAILED: " + "; ".join(f"{r['arm']} N={r['n']} {r['executor']} (exit {r['rc']})" for r in failed)
    bad = [p for p in points if not p["ledger_ok"]]
    if bad:
        text += "\n\nWARNING: the ledger does not hold every manifest cell once in " + ", ".join(
            f"{p['arm']} N={p['n']} {p['executor']}" for p in bad
        )
    by_size: dict[tuple[str, int], dict[str, dict[str, int]]] = {}
    for p in points:
        by_size.setdefault((p["arm"], p["n"]), {})[p["executor"]] = p["outcomes"]
    differ = [f"{arm} N={n}" for (arm, n), seen in by_size.items() if len({json.dumps(o) for o in seen.values()}) > 1]
    if differ:  # the executors must record the same ledger (up to line order and `seconds`)
        text += "\n\nWARNING: the executors' outcome counts differ in " + ", ".join(differ)
    return text, points, law, not failed and not bad and not differ


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.from_json:
        measured = json.loads(args.from_json.read_text())
    else:
        command = "bench/bench_scaling.py " + " ".join(sys.argv[1:] if argv is None else argv)
        measured = measure_grid(args, command.strip())
    text, points, law, ok = report(measured, args.tolerance)
    if not args.from_json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(measured | {"points": points, "growth": law}, indent=1, default=str))
    print(text)
    if not args.no_doc and points:
        write_doc(DOC, text + f"\n\n![per-cell wall time and peak RSS against cells]({PLOT.name})")
        plot(points, PLOT)
        print(f"\n(docs: {DOC}, {PLOT})")
    if not args.from_json:
        print(f"\n(all figures: {args.json})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

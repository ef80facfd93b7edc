"""verimut and falsepass side by side, in one run, on the same targets: a TRL-style reward file with its dataset
(tests/data/rewards: one planted defect per function, and a correct one) and reasoning-gym datasets behind
reasoning-gym's own extract_answer + score_answer (bench/falsepass_targets/rg_reward.py).

    .venv/bin/python bench/bench_falsepass.py [--work DIR] [--out docs/bench-falsepass.md]

falsepass 0.11.0 runs in its own environment (it drives `uv`, which must not download a Python: shared/peers.md):
this script makes it in WORK/fp (python3 -m venv, pip install falsepass==0.11.0 uv), links pyenv's Python 3.12
first on PATH, and sets UV_PYTHON_DOWNLOADS=never. Each target is audited by both tools (falsepass: `init` then
`audit -n 500`; verimut: `audit reward:FILE:FUNC --dataset D`), each timed as a whole command. The table maps
falsepass's probes to verimut's families and says, per target, which loophole each reports (a falsepass probe
with a failed known-bad or known-good completion; a verimut family with a false accept, a false reject, or a
vacuous null run).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "rewards"
RG_DATASETS = ("game_of_life_halting", "puzzle24", "gsm_symbolic", "basic_arithmetic", "coin_flip", "letter_jumble")
FORMAT = " Put the final answer in <answer></answer>."  # what reasoning-gym's default system prompt asks for

# falsepass probe -> the verimut family that plants the same completion (None: no counterpart)
COUNTERPART = {
    "P2": "alt-format", "P3": "answer-blank", "P4": "answer-echo", "P5": "answer-shotgun", "P6": "answer-other",
    "P7": "answer-other", "P9": "answer-retract", "P10": "answer-malformed", "P13": "answer-special-number",
    "P14": "alt-tag-prose", "P15": "answer-denied", "A1": "answer-spray", "P11": None, "P12": None, "T7": None,
    "P16": None, "P17": None, "X1": "answer-other",
}  # fmt: skip
# A reward function reads a message list's content as text (falsepass too): these malformed replies are blank ones.
BY_VARIANT = {("P10", "content_none"): "answer-blank", ("P10", "no_assistant_turn"): "answer-blank"}
FINDING = ("false_accept", "false_reject", "vacuous")


def falsepass_env(work: Path) -> dict[str, str]:
    fp = work / "fp"
    if not (fp / "bin" / "falsepass").exists():
        subprocess.run([sys.executable, "-m", "venv", str(fp)], check=True)
        subprocess.run([str(fp / "bin" / "pip"), "install", "-q", "falsepass==0.11.0", "uv"], check=True)
    py = work / "py312"
    py.mkdir(exist_ok=True)
    root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, check=True).stdout.strip()
    for name in ("python3.12", "python3"):
        link = py / name
        if not link.exists():
            link.symlink_to(Path(root) / "versions" / "3.12.1" / "bin" / "python3.12")
    return {**os.environ, "PATH": f"{py}:{fp / 'bin'}:/usr/bin:/bin", "UV_PYTHON_DOWNLOADS": "never"}


def rg_dataset(work: Path) -> Path:
    import reasoning_gym

    rows = []
    for name in RG_DATASETS:
        made = reasoning_gym.create_dataset(name, size=5, seed=42)
        for i in range(5):
            entry = made[i]
            rows.append(
                {"prompt": entry["question"] + FORMAT, "answer": str(entry["answer"]), "dataset": name, "index": i}
            )
    path = work / "rg.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run_falsepass(env: dict[str, str], work: Path, name: str, file: Path, func: str, data: Path, extra: list[str]):
    where = work / "falsepass" / name
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    shutil.copy(file, where / file.name)
    shutil.copy(data, where / data.name)
    began = time.perf_counter()
    made = subprocess.run(["falsepass", "init", file.name, "--dataset", data.name, "--func", func, *extra],
                          cwd=where, env=env, check=True, capture_output=True, text=True)  # fmt: skip
    audit = made.stdout.strip().splitlines()[-1].split()[-1]  # its last line: "falsepass audit NAME"
    done = subprocess.run(
        ["falsepass", "audit", audit, "-n", "500"], cwd=where, env=env, capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - began
    results = json.loads((where / "audits" / audit / "probe-results.json").read_text())["results"]
    failed: dict[str, int] = {}
    mapped: dict[str, str | None] = {}  # "probe variant" -> the verimut family that plants it
    for r in results:
        if not r["passed"] and not r.get("same_as_good") and not r.get("no_control"):
            failed[r["probe"]] = failed.get(r["probe"], 0) + 1
            key = (r["probe"], r["variant"])
            mapped[" ".join(key)] = BY_VARIANT.get(key, COUNTERPART.get(r["probe"]))
    errors = sum(bool(r["errors"]) for r in results)
    return {
        "seconds": seconds,
        "failed": failed,
        "mapped": mapped,
        "errors": errors,
        "completions": len(results),
        "code": done.returncode,
    }


def run_verimut(work: Path, name: str, file: Path, func: str, data: Path, extra: list[str]):
    out = work / "verimut" / name
    shutil.rmtree(out, ignore_errors=True)
    began = time.perf_counter()
    subprocess.run([str(ROOT / ".venv" / "bin" / "verimut"), "audit", f"reward:{file}:{func}", "--dataset", str(data),
                    "-o", str(out), "-q", "--fail-on", "never", *extra], check=True, capture_output=True)  # fmt: skip
    seconds = time.perf_counter() - began
    rows = [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()]
    found: dict[str, int] = {}
    partly: dict[str, int] = {}  # confirmed-wrong completions paid some reward, short of full (in the ceiling)
    for r in rows:
        if r["outcome"] in FINDING:
            found[r["family"]] = found.get(r["family"], 0) + 1
        elif r["outcome"] == "rejected" and (r["evidence"].get("reward") or 0) > 0:
            partly[r["family"]] = partly.get(r["family"], 0) + 1
    errors = sum(r["outcome"] == "error" for r in rows)
    return {"seconds": seconds, "found": found, "partly_paid": partly, "errors": errors, "cells": len(rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-falsepass"))
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "bench-falsepass.md")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    env = falsepass_env(args.work)
    rg = rg_dataset(args.work)
    slot = ["--option", "slot=<answer>{answer}</answer>"]
    targets = [
        *[(f, DATA / "planted.py", f, DATA / "data.jsonl", [], []) for f in
          ("contains", "pays_token", "tolerant", "first_tag", "pays_format", "pays_blank", "exact", "first_opener")],
        ("correct", DATA / "correct.py", "accuracy", DATA / "data.jsonl", [], []),
        ("reasoning-gym", ROOT / "bench" / "falsepass_targets" / "rg_reward.py", "rg_reward", rg,
         ["--with", "reasoning-gym==0.1.25"], slot),
    ]  # fmt: skip
    lines = [
        (
            "| target | falsepass: failed probes | verimut: families with findings | verimut: wrong completions paid "
            "part of the reward | falsepass only | verimut only | falsepass s | verimut s |"
        ),
        "|---|---|---|---|---|---|---|---|",
    ]
    report = []
    for name, file, func, data, fp_extra, vm_extra in targets:
        fp = run_falsepass(env, args.work, name, file, func, data, fp_extra)
        vm = run_verimut(args.work, name, file, func, data, vm_extra)
        mapped = {m or f"({p.split()[0]})" for p, m in fp["mapped"].items()}
        only_fp = sorted(m for m in mapped if m not in vm["found"] and m not in vm["partly_paid"])
        only_vm = sorted(f for f in vm["found"] if f not in mapped)
        report.append(
            {"target": name, "falsepass": fp, "verimut": vm, "falsepass_only": only_fp, "verimut_only": only_vm}
        )
        lines.append(
            f"| {name} | {', '.join(f'{p} ({n})' for p, n in sorted(fp['failed'].items())) or 'none'} | "
            f"{', '.join(f'{k} ({n})' for k, n in sorted(vm['found'].items())) or 'none'} | "
            f"{', '.join(f'{k} ({n})' for k, n in sorted(vm['partly_paid'].items())) or 'none'} | "
            f"{', '.join(only_fp) or '-'} | {', '.join(only_vm) or '-'} | {fp['seconds']:.1f} | {vm['seconds']:.1f} |"
        )
        print(lines[-1], flush=True)
    (args.work / "side-by-side.json").write_text(json.dumps(report, indent=1))
    args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

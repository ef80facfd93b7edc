"""Re-score a seeded sample of a reasoning-gym audit's findings with reasoning-gym's own API. Never imports verimut.

    .venv/bin/python precision/reasoninggym.py AUDIT_DIR [--sample 40] [--seed 40] [--out FILE.json]

AUDIT_DIR is `verimut audit reasoning-gym -o AUDIT_DIR`. The audit is read as the files it wrote (manifest.json,
cells.jsonl). For each sampled finding (false accepts and false rejects, drawn round-robin over the families so
every family is in the sample, each family's cells shuffled with `random.Random(seed)`, a dataset not repeated
while another is left), the dataset is made again with `reasoning_gym.create_dataset(name, size, seed)` from the
audit's provenance, the entry's question and answer are checked against the audit's, and the edited completion
is graded the way the audit says it graded it: `extract_answer` (when the provenance says so), then the dataset's
`score_answer`. The script writes JSON and markdown, one section per finding with an empty judgement: the
judgement is a person's (precision/README.md).
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import reasoning_gym
from reasoning_gym.factory import DATASETS
from reasoning_gym.utils import extract_answer

KNOWN = ("false_accept", "false_reject")
FULL = 1.0


def load(audit: Path) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, dict[str, Any]]]:
    manifest = json.loads((audit / "manifest.json").read_text())
    rows = [json.loads(line) for line in (audit / "cells.jsonl").read_text().splitlines() if line.strip()]
    cells = {c["cell_id"]: c for c in manifest["cells"]}
    return manifest, rows, cells


def sample(rows: list[dict[str, Any]], k: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    by_family: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in sorted((r for r in rows if r["outcome"] in KNOWN), key=lambda r: r["cell_id"]):
        by_family[row["family"]].append(row)
    for found in by_family.values():
        rng.shuffle(found)
    chosen: list[dict[str, Any]] = []
    seen: set[str] = set()
    while len(chosen) < k and any(by_family.values()):
        for family in sorted(by_family):
            found = by_family[family]
            if not found or len(chosen) >= k:
                continue
            fresh = next((r for r in found if r["task"].split("/")[0] not in seen), found[0])
            found.remove(fresh)
            seen.add(fresh["task"].split("/")[0])
            chosen.append(fresh)
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("audit", type=Path)
    parser.add_argument("--sample", type=int, default=40)
    parser.add_argument("--seed", type=int, default=40)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    manifest, rows, cells = load(args.audit)
    provenance = manifest["provenance"]
    size, seed = int(provenance["entries"]), int(provenance["seed"])
    extract = provenance.get("extract_answer", "no") == "yes"
    # Every dataset made in name order, each entry drawn as it is made, as the audit did: a dataset that draws
    # from Python's global random state (polynomial_multiplication) gives other entries in another order.
    made: dict[str, Any] = {}
    entries: dict[str, list[Any]] = {}
    for name in sorted(DATASETS):
        try:
            made[name] = reasoning_gym.create_dataset(name, size=size, seed=seed)
            entries[name] = [made[name][i] for i in range(size)]
        except Exception:  # noqa: BLE001, S112  (left out by the audit too: composite)
            continue
    out = []
    for row in sample(rows, args.sample, args.seed):
        name, index = row["task"].rsplit("/", 1)
        dataset = made[name]
        entry = entries[name][int(index)]
        facts = manifest["tasks"][row["task"]]
        completion = cells[row["cell_id"]]["run"]["answer"]
        graded = extract_answer(completion) if extract else completion
        reward = dataset.score_answer(graded, entry)
        reference = f"<answer>{entry['answer']}</answer>" if extract else str(entry["answer"])
        notes = []
        if facts["reference"]["answer"] != reference:
            notes.append("the audit's reference answer is not the entry's")
        if facts.get("prompt") and facts["prompt"] != entry["question"]:
            notes.append("the audit's prompt is not the entry's question")
        passed = reward >= FULL - 1e-9
        if passed != bool(row["verdict"]):
            notes.append("VERDICT MISMATCH")
        if row["evidence"].get("reward") is not None and abs(row["evidence"]["reward"] - reward) > 1e-9:
            notes.append(f"REWARD MISMATCH: the audit recorded {row['evidence']['reward']}")
        out.append(
            {
                "cell_id": row["cell_id"],
                "dataset": name,
                "family": row["family"],
                "outcome": row["outcome"],
                "question": entry["question"],
                "reference_answer": str(entry["answer"]),
                "completion": completion,
                "graded": graded,
                "reward_now": reward,
                "reward_recorded": row["evidence"].get("reward"),
                "reference_reward_now": dataset.score_answer(str(entry["answer"]), entry),
                "oracle": row["evidence"].get("answer_differs"),
                "notes": notes,
                "judgement": "",
            }
        )
    target = args.out or args.audit / "precision.json"
    target.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    target.with_suffix(".md").write_text(markdown(out, provenance))
    mismatches = sum(any("MISMATCH" in n for n in f["notes"]) for f in out)
    print(
        f"{len(out)} findings re-scored with reasoning-gym {provenance.get('reasoning-gym')}: {mismatches} mismatches"
    )


def _cut(text: Any, limit: int = 400) -> str:
    text = str(text)
    return text if len(text) <= limit else f"{text[:limit]}... [{len(text):,} characters]"


def markdown(found: list[dict[str, Any]], provenance: dict[str, Any]) -> str:
    lines = [
        f"# reasoning-gym {provenance.get('reasoning-gym')}: {len(found)} findings re-scored with its own API",
        "",
        "| cell | outcome | reward now (recorded) | notes |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| `{f['cell_id']}` | {f['outcome']} | {f['reward_now']:g} ({f['reward_recorded']}) | {'; '.join(f['notes'])} |"
        for f in found
    ]
    for f in found:
        lines += [
            "",
            f"## `{f['cell_id']}`: {f['outcome']}",
            "",
            f"- question: {_cut(f['question'])!r}",
            f"- reference answer: {_cut(f['reference_answer'])!r} (score_answer gives it {f['reference_reward_now']:g})",
            f"- completion: {_cut(f['completion'])!r}",
            f"- what score_answer was given: {_cut(f['graded'])!r}, reward {f['reward_now']:g}",
            f"- the oracle's reason: {f['oracle']}",
            f"- judgement: {f['judgement']}",
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

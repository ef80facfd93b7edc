"""reasoning-gym (PyPI `reasoning-gym`): every procedural dataset, its own `score_answer` the verifier.

A task is `DATASET/i`, the i-th entry of `reasoning_gym.create_dataset(DATASET, size=entries, seed=seed)`; its
instruction is the entry's question, its reference run answers the entry's `answer`, and its verifier is
`dataset.score_answer(answer, entry)`, called unmodified. A completion reaches it as reasoning-gym's own trainers
hand it over: written in the format its system prompt asks for (`<answer>...</answer>`), the answer taken out with
`reasoning_gym.utils.extract_answer` (the last tag, stripped). `--option extract=no` grades the bare completion
instead. Options: `entries` (per dataset, default 5), `seed` (default 42), `extract` (yes). A dataset that cannot be made from its defaults (`composite` needs a list of datasets) is left out
and named in the provenance.
"""

from __future__ import annotations

import importlib.metadata
import os
import pickle
import subprocess
import sys
from typing import Any

from verimut.adapters.answer_tasks import AnswerTasks, Row
from verimut.core.cache import CACHE
from verimut.core.errors import AuditError

ENTRIES, SEED = 5, 42
HASH_SEED = "0"  # a few datasets (word_ladder, ransom_note, knight_swap ...) draw in a set's order: str hashes
SLOT = "<answer>{answer}</answer>"  # the format reasoning-gym's default system prompt asks for


def create(
    version: str | None = None, entries: str | None = None, seed: str | None = None, extract: str = "yes"
) -> AnswerTasks:
    if extract not in ("yes", "no"):
        raise AuditError(f"--option extract={extract!r}: yes (the answer tag, as its trainers read it) or no")
    try:
        from reasoning_gym.utils import extract_answer
    except ImportError:
        raise AuditError("reasoning-gym is not installed: bash scripts/install-reasoning-gym.sh") from None
    installed = importlib.metadata.version("reasoning-gym")  # its __version__ attribute lags (0.1.19 in 0.1.25)
    if version is not None and version != installed:
        raise AuditError(f"reasoning-gym {installed} is installed, not the requested {version}")
    try:
        size, start = int(entries or ENTRIES), int(seed or SEED)
    except ValueError:
        raise AuditError(f"--option entries= and seed= take whole numbers, not {entries!r}, {seed!r}") from None
    made, left_out, unstable = _datasets(size, start, installed)
    rows: dict[str, Row] = {}
    for name, (_, entries_made) in made.items():
        for i, entry in enumerate(entries_made):
            if not entry:  # not reproducible from its seed (named in the provenance)
                continue
            answer = entry.get("answer")
            rows[f"{name}/{i}"] = Row(
                str(entry["question"]), None if answer is None else str(answer), {"entry": entry, "dataset": name}
            )

    def score(row: Row, completion: str) -> Any:
        answer = extract_answer(completion) if extract == "yes" else completion
        return made[row.row["dataset"]][0].score_answer(answer, row.row["entry"])

    provenance = {"reasoning-gym": installed, "entries": str(size), "seed": str(start), "extract_answer": extract}
    if left_out:
        provenance["left_out"] = "; ".join(left_out)
    if unstable:
        provenance["not_reproducible"] = (
            f"{', '.join(unstable)}: two draws with the same seed give different entries; left out"
        )
    return AnswerTasks(
        "reasoning-gym",
        installed,
        rows,
        score,
        1.0,
        "the completion (its <answer> tag) the dataset's score_answer grades",
        SLOT if extract == "yes" else "",
        provenance,
    )


Made = dict[str, tuple[Any, list[dict[str, Any]]]]  # dataset name -> (the dataset, its entries)


def _datasets(size: int, start: int, version: str) -> tuple[Made, list[str], list[str]]:
    """Every dataset and its entries, the same in every process and on every run (else a resumed audit, or a
    worker, would see other questions under the same task ids): drawn once, twice over, in a child whose string
    hashes are fixed (a few datasets draw in a set's order); an entry the two draws disagree on is not reproducible
    from its seed (codeio's reference code calls numpy's unseeded random) and is left out, named. The draw is kept
    in the cache directory; the datasets that grade it are made here."""
    cached = CACHE / f"reasoning-gym-draw1-{version}-{size}-{start}.pkl"
    if not cached.exists():
        child = subprocess.run(
            [sys.executable, "-c", f"from {__name__} import _dump; _dump({size}, {start})"],
            env={**os.environ, "PYTHONHASHSEED": HASH_SEED},
            capture_output=True,
            check=False,
        )
        if child.returncode != 0:
            tail = child.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
            raise AuditError(f"reasoning-gym's datasets could not be drawn in a child process: {tail[0]}")
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(f".{os.getpid()}.part")
        partial.write_bytes(child.stdout)
        partial.replace(cached)  # whole or absent: two audits drawing at once each write their own part
    drawn: dict[str, list[dict[str, Any]]]
    drawn, left_out, unstable = pickle.loads(cached.read_bytes())
    import reasoning_gym

    made = {n: (reasoning_gym.create_dataset(n, size=size, seed=start), e) for n, e in drawn.items()}
    return made, left_out, unstable


def _dump(size: int, start: int) -> None:
    """The child's side of `_datasets`: the entries both draws agree on, pickled to stdout (the datasets' own
    chatter goes to stderr)."""
    import reasoning_gym
    from reasoning_gym.factory import DATASETS

    real, sys.stdout = sys.stdout, sys.stderr
    drawn: dict[str, list[dict[str, Any]]] = {}
    left_out: list[str] = []
    unstable: list[str] = []
    for name in sorted(DATASETS):
        try:
            first = reasoning_gym.create_dataset(name, size=size, seed=start)
            again = reasoning_gym.create_dataset(name, size=size, seed=start)
            pairs = [(first[i], again[i]) for i in range(size)]
        except Exception as e:  # noqa: BLE001  (a dataset that needs configuration to be made: left out, named)
            left_out.append(f"{name} ({type(e).__name__}: {e})")
            continue
        drawn[name] = [a if repr(a) == repr(b) else {} for a, b in pairs]
        unstable += [f"{name}/{i}" for i, (a, b) in enumerate(pairs) if repr(a) != repr(b)]
    real.buffer.write(pickle.dumps((drawn, left_out, unstable)))
    real.flush()

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
from typing import Any

from verimut.adapters.answer_tasks import AnswerTasks, Row
from verimut.core.errors import AuditError

ENTRIES, SEED = 5, 42
SLOT = "<answer>{answer}</answer>"  # the format reasoning-gym's default system prompt asks for


def create(
    version: str | None = None, entries: str | None = None, seed: str | None = None, extract: str = "yes"
) -> AnswerTasks:
    if extract not in ("yes", "no"):
        raise AuditError(f"--option extract={extract!r}: yes (the answer tag, as its trainers read it) or no")
    try:
        import reasoning_gym
        from reasoning_gym.factory import DATASETS
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
    rows: dict[str, Row] = {}
    made: dict[str, Any] = {}
    left_out: list[str] = []
    for name in sorted(DATASETS):
        try:
            dataset = reasoning_gym.create_dataset(name, size=size, seed=start)
            entries_made = [dataset[i] for i in range(size)]
        except Exception as e:  # noqa: BLE001  (a dataset that needs configuration to be made: left out, named)
            left_out.append(f"{name} ({type(e).__name__}: {e})")
            continue
        made[name] = dataset
        for i, entry in enumerate(entries_made):
            answer = entry.get("answer")
            rows[f"{name}/{i}"] = Row(
                str(entry["question"]), None if answer is None else str(answer), {"entry": entry, "dataset": name}
            )

    def score(row: Row, completion: str) -> Any:
        answer = extract_answer(completion) if extract == "yes" else completion
        return made[row.row["dataset"]].score_answer(answer, row.row["entry"])

    provenance = {"reasoning-gym": installed, "entries": str(size), "seed": str(start), "extract_answer": extract}
    if left_out:
        provenance["left_out"] = "; ".join(left_out)
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

"""reasoning-gym's reward as a trainer hands it over (TRL's calling convention): the last <answer> tag of the
completion (reasoning_gym.utils.extract_answer), graded by the dataset's own score_answer. The rows say which
dataset and entry (bench/bench_falsepass.py writes them: 5 entries of each dataset, seed 42)."""

import reasoning_gym
from reasoning_gym.utils import extract_answer

_MADE = {}


def _entry(name, index):
    if name not in _MADE:
        dataset = reasoning_gym.create_dataset(name, size=5, seed=42)
        _MADE[name] = (dataset, [dataset[i] for i in range(5)])
    dataset, entries = _MADE[name]
    return dataset, entries[int(index)]


def rg_reward(completions, **kwargs):
    # The row's columns by keyword (GRPOTrainer passes each): not parameters, so no tool takes `dataset` for the
    # reference column.
    out = []
    for completion, name, i in zip(completions, kwargs["dataset"], kwargs["index"]):
        text = completion if isinstance(completion, str) else completion[-1]["content"]
        data, entry = _entry(name, i)
        out.append(float(data.score_answer(extract_answer(text), entry)))
    return out

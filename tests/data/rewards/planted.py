"""TRL-style reward functions, each with one planted defect that one answer family finds (tests/cli/test_reward_functions.py).

Each takes the completions and the dataset's `solution` column as GRPOTrainer passes them, and returns one number per
completion. The defect is named in the function's first line.
"""

import math
import re

TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def _slot(text):
    found = TAG.search(text)
    return None if found is None else found.group(1)


def pays_blank(completions, solution, **kwargs):
    """answer-blank: a blank reply is taken for 'no answer needed' and paid."""
    return [1.0 if not c.strip() or _slot(c) == s else 0.0 for c, s in zip(completions, solution)]


def pays_length(completions, solution, **kwargs):
    """answer-echo: a long reply is taken for a worked solution and paid."""
    return [1.0 if len(c) > 40 or _slot(c) == s else 0.0 for c, s in zip(completions, solution)]


def pays_token(completions, solution, **kwargs):
    """answer-spray, answer-shotgun: pays when the answer is any token of the reply."""
    return [1.0 if s in re.split(r"[\s,<>/]+", c) else 0.0 for c, s in zip(completions, solution)]


def pays_format(completions, solution, **kwargs):
    """answer-other: pays the format alone."""
    return [1.0 if re.fullmatch(r"\s*<answer>.+</answer>\s*", c, re.DOTALL) else 0.0 for c in completions]


def first_tag(completions, solution, **kwargs):
    """answer-retract: grades the first answer tag, whatever the reply says after it."""
    return [1.0 if (_slot(c) or "").strip() == s else 0.0 for c, s in zip(completions, solution)]


def contains(completions, solution, **kwargs):
    """answer-denied, answer-superstring, answer-hedge: the answer anywhere inside the slot."""
    return [1.0 if s in (_slot(c) or "") else 0.0 for c, s in zip(completions, solution)]


def pays_on_error(completions, solution, **kwargs):
    """answer-malformed: an exception while grading is paid."""
    out = []
    for c, s in zip(completions, solution):
        try:
            out.append(1.0 if c.split("<answer>")[1].split("</answer>")[0].strip() == s else 0.0)
        except IndexError:
            out.append(1.0)
    return out


def tolerant(completions, solution, **kwargs):
    """answer-special-number: a tolerance written as a rejection (NaN passes) and int() truncation."""
    out = []
    for c, s in zip(completions, solution):
        try:
            x, want = float((_slot(c) or "").strip()), float(s)
        except ValueError:
            out.append(1.0 if (_slot(c) or "").strip() == s else 0.0)
            continue
        if abs(x - want) > 0.5 and not math.isinf(x):
            out.append(0.0)
        else:
            out.append(1.0 if math.isnan(x) or math.isinf(x) or int(x) == int(want) else 0.0)
    return out


def pays_any_number(completions, solution, **kwargs):
    """answer-wrong: any number in the slot is paid."""
    return [
        1.0 if re.search(r"\d", _slot(c) or "") or (_slot(c) or "").strip() == s else 0.0
        for c, s in zip(completions, solution)
    ]


def exact(completions, solution, **kwargs):
    """alt-format: the reply must be exactly the tag around the answer (padding, case are failed)."""
    return [1.0 if c == f"<answer>{s}</answer>" else 0.0 for c, s in zip(completions, solution)]


def first_opener(completions, solution, **kwargs):
    """alt-tag-prose: grades from the first '<answer>', even one the reply names in prose."""
    return [1.0 if (_slot(c) or "").strip() == s else 0.0 for c, s in zip(completions, solution)]


def raises(completions, solution, **kwargs):
    """A reward that raises on a blank reply."""
    if not completions[0].strip():
        raise ValueError("empty completion")
    return [1.0 if _slot(c) == s else 0.0 for c, s in zip(completions, solution)]


def says_string(completions, solution, **kwargs):
    """A reward that returns a string."""
    return ["1" for _ in completions]


def says_none(completions, solution, **kwargs):
    """A reward that returns None for a blank reply (TRL: unscorable)."""
    return [None if not c.strip() else 1.0 if _slot(c) == s else 0.0 for c, s in zip(completions, solution)]


def no_completions(prompts, solution):
    """A wrong signature: GRPOTrainer passes `completions`, and every column, by keyword."""
    return [0.0]


def message_content(completions, solution, **kwargs):
    """Reads each completion as a message list, as TRL's accuracy_reward does (correct otherwise)."""
    return [1.0 if (_slot(c[0]["content"]) or "").strip() == s else 0.0 for c, s in zip(completions, solution)]


_calls = [0]


def flaky(completions, solution, **kwargs):
    """Determinism (falsepass's P11): every third call fails whatever it grades, as a sampled judge or a timed check."""
    _calls[0] += 1
    if _calls[0] % 3 == 0:
        return [0.0 for _ in completions]
    return [1.0 if _slot(c) == s else 0.0 for c, s in zip(completions, solution)]

"""A correct TRL-style reward function: the last non-empty answer tag, compared by value."""

import re
from fractions import Fraction

BLOCK = re.compile(r"<answer>((?:(?!<answer>).)*?)</answer>", re.DOTALL)


def _meaning(text):
    said = " ".join(text.split()).strip().rstrip(".").strip()
    try:
        return Fraction(said)
    except (ValueError, ZeroDivisionError):
        return said.casefold()


def accuracy(completions, solution, **kwargs):
    out = []
    for c, s in zip(completions, solution):
        blocks = [b for b in BLOCK.findall(c) if b.strip()]
        out.append(1.0 if blocks and _meaning(blocks[-1]) == _meaning(s) else 0.0)
    return out

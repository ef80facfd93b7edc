"""One check alone as the verifier: an audit's counts recounted from its ledger, had the verifier been that check.

A verifier that reports its checks (tau2-bench's reward bases `db` and `communicate`, a checker's per-call
assertions) is several verifiers at once; a trainer that rewards one basis alone sees this table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from verimut.core.records import CONTROL, CellResult
from verimut.engine.classify import classify


def by_check(rows: Iterable[CellResult], check: str) -> dict[str, Counter[str]]:
    """Counts per family x outcome with each row's verdict replaced by its `checks[check]`.

    The oracle's answer (same end state as the reference or not) stays. Rows with no verdict (refused,
    error, incomplete) or without that check keep their outcome.
    """
    counts: dict[str, Counter[str]] = {}
    for row in rows:
        checks = row.evidence.checks or {}
        if row.verdict is None or check not in checks:
            outcome = str(row.outcome)
        else:
            outcome = classify(
                control=row.family == CONTROL,
                refused=False,
                delivered=True,
                verdict=bool(checks[check]),
                same_as_reference=not row.evidence.differs_from_reference,
            ).value
        counts.setdefault(row.family, Counter())[outcome] += 1
    return counts

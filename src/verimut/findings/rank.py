"""Rank sensitivity: which leaderboard orders survive an assumed verifier error budget.

With a false-accept budget alpha and a false-reject budget beta, a shipped score q is only known to
lie in the sharp interval [max(0, (q - alpha)/(1 - alpha)), min(1, q/(1 - beta))]: the true success
rate s gives q = s(1 - b) + (1 - s)a for some a <= alpha, b <= beta. Two systems' order within a split
is identified only when their intervals do not overlap (the blind-spots paper, section 4, Table 3).
Overlap does not show a rank error; it shows that the budget leaves the order open.
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from itertools import combinations
from pathlib import Path

import msgspec

from verimut.core.errors import AuditError
from verimut.core.records import Outcome
from verimut.engine import arms
from verimut.engine.store import Store
from verimut.grammar.faults import CONTROL, spec_of

COLUMNS = ("system", "split", "score")
ENVELOPE = 0.95
NOTE = (
    "A pair survives when its intervals do not overlap. Overlap does not show a rank error: it only means "
    "the budget does not identify the order."
)
LOWER_BOUND = (
    "A budget read from an audit is a lower bound on the verifier's errors: the audit finds only what its edits plant."
)
ENVELOPE_NOTE = (
    "The envelope is illustrative: reading it as a confidence bound assumes the audited tasks are "
    "exchangeable with the tasks behind the scores, which nothing here establishes."
)


class Row(msgspec.Struct, frozen=True):
    system: str
    split: str
    score: float


class Budget(msgspec.Struct, frozen=True):
    """alpha: share of eligible tasks with a confirmed false accept; beta: share of tasks whose verifier
    fails a correct run (its control, or an alternative run)."""

    alpha: float
    beta: float
    # The counts behind each share (k of n), None when the value was given rather than counted.
    alpha_k: int | None = None
    alpha_n: int | None = None
    beta_k: int | None = None
    beta_n: int | None = None
    source: str | None = None  # the audit directory the counts come from

    @property
    def counted(self) -> bool:
        return None not in (self.alpha_k, self.alpha_n, self.beta_k, self.beta_n)


class Scored(msgspec.Struct, frozen=True):
    system: str
    score: float
    low: float
    high: float


class Pair(msgspec.Struct, frozen=True):
    """An identified order: `above`'s interval lies strictly above `below`'s."""

    above: str
    below: str


class SplitResult(msgspec.Struct, frozen=True):
    split: str
    systems: list[Scored]  # best score first
    surviving: list[Pair]
    pairs_surviving: int
    pairs: int  # unordered pairs of systems in the split
    top1: str | None  # the best system, when its interval lies above every other's; else None


class Analysis(msgspec.Struct, frozen=True):
    budget: str  # "observed" or the envelope's name
    alpha: float
    beta: float
    splits: list[SplitResult]


class Report(msgspec.Struct, frozen=True):
    budget: Budget
    analyses: list[Analysis]
    note: str = NOTE
    envelope_note: str | None = None


def interval(q: float, alpha: float, beta: float) -> tuple[float, float]:
    """The sharp interval of true scores that a shipped score q allows under budgets alpha, beta."""
    if not 0.0 <= q <= 1.0:
        raise AuditError(f"score {q} is outside [0, 1]")
    if not 0.0 <= alpha < 1.0:
        raise AuditError(f"alpha {alpha} is outside [0, 1)")
    if not 0.0 <= beta < 1.0:
        raise AuditError(f"beta {beta} is outside [0, 1)")
    # low <= q <= high holds exactly in real arithmetic ((q - a)/(1 - a) <= q iff a(1 - q) >= 0);
    # the clamps keep it so under float rounding.
    low = min(q, max(0.0, (q - alpha) / (1.0 - alpha)))
    high = max(q, min(1.0, q / (1.0 - beta)))
    return low, high


def _bounds(q: float, alpha: float, beta: float) -> tuple[float, float]:
    """interval(), also at a budget of 1 (a Clopper-Pearson bound of k = n gives one): a = 1 leaves
    no lower constraint on the true score (low 0), b = 1 no upper one (high 1)."""
    low = interval(q, alpha, 0.0)[0] if alpha < 1.0 else 0.0
    high = interval(q, 0.0, beta)[1] if beta < 1.0 else 1.0
    return low, high


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), 0 < p < 1; terms in logs so large n cannot overflow."""
    lp, lq = math.log(p), math.log1p(-p)
    return sum(math.exp(math.log(math.comb(n, i)) + i * lp + (n - i) * lq) for i in range(k + 1))


def clopper_pearson_upper(k: int, n: int, confidence: float = ENVELOPE) -> float:
    """The one-sided Clopper-Pearson upper bound on a rate seen k times in n: the p with P(X <= k) = 1 - confidence."""
    if n <= 0:
        raise AuditError(f"no Clopper-Pearson bound from n = {n} observations")
    if not 0 <= k <= n:
        raise AuditError(f"k = {k} is not a count out of n = {n}")
    if not 0.0 < confidence < 1.0:
        raise AuditError(f"confidence {confidence} is outside (0, 1)")
    if k == n:
        return 1.0
    lo, hi = 0.0, 1.0
    # The CDF falls as p rises; 100 halvings are far below float resolution.
    for _ in range(100):
        mid = (lo + hi) / 2
        if _binom_cdf(k, n, mid) > 1.0 - confidence:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def read_scores(path: Path) -> list[Row]:
    """The scores CSV: a header with (at least) system, split, score; one row per (system, split)."""
    rows: list[Row] = []
    seen: dict[tuple[str, str], int] = {}
    try:
        # utf-8-sig: a spreadsheet's byte-order mark would otherwise become part of the first column's name.
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f, skipinitialspace=True)
            header = [h.strip() for h in reader.fieldnames or []]
            if not header:
                raise AuditError(f"{path} is empty: it needs a header line {','.join(COLUMNS)} and one row per system")
            reader.fieldnames = header
            missing = [c for c in COLUMNS if c not in header]
            if missing:
                raise AuditError(f"{path} line 1: the header lacks column(s) {', '.join(missing)}")
            for raw in reader:
                line = reader.line_num
                values = {c: (raw.get(c) or "").strip() for c in COLUMNS}
                for c in ("system", "split"):
                    if not values[c]:
                        raise AuditError(f"{path} line {line}: empty {c}")
                try:
                    score = float(values["score"])
                except ValueError:
                    raise AuditError(f"{path} line {line}: score {values['score']!r} is not a number") from None
                if not 0.0 <= score <= 1.0:  # also refuses nan
                    raise AuditError(f"{path} line {line}: score {score} is outside [0, 1] (give a fraction)")
                key = (values["system"], values["split"])
                if key in seen:
                    raise AuditError(
                        f"{path} line {line}: system {key[0]!r} in split {key[1]!r} again (first on line {seen[key]})"
                    )
                seen[key] = line
                rows.append(Row(key[0], key[1], score))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise AuditError(f"cannot read scores from {path}: {e}") from None
    if not rows:
        raise AuditError(f"{path} has a header but no rows")
    return rows


def budget_from_audit(directory: Path) -> Budget:
    """Error budgets counted per task (a template, in AgentDojo), as the paper counts generators, not cells."""
    store = Store(directory)
    m = store.read_manifest()
    if not arms.of(m).edits:  # the budget is counted on edited runs of each task's own reference
        raise AuditError(f"{directory} is an intent-swap census; rank needs a fault-arm audit (verimut audit)")
    rows = store.rows()
    unscored = sum(c.cell_id not in rows for c in m.cells)
    if unscored:
        # A half-scored audit would give a budget from whichever cells happened to finish first.
        raise AuditError(
            f"{directory}: {unscored} of {len(m.cells)} cells are not scored yet; "
            "run the audit again with the same --out to finish it"
        )
    control: dict[str, str] = {}
    tried: set[str] = set()  # tasks with a fault edit that applied
    accepted: set[str] = set()  # tasks with a confirmed false accept
    rejects_alternative: set[str] = set()  # tasks whose verifier fails a correct run by another route
    for row in rows.values():
        if row.family == CONTROL:
            control[row.task] = row.outcome
        elif spec_of(row.family).is_alternative:
            if row.outcome == Outcome.FALSE_REJECT.value:
                rejects_alternative.add(row.task)
        elif row.outcome != Outcome.REFUSED.value:
            tried.add(row.task)
            if row.outcome == Outcome.FALSE_ACCEPT.value:
                accepted.add(row.task)
    eligible = {t for t in tried if control.get(t) == Outcome.CONTROL_PASS.value}
    # A control that errored has no verdict, so it is neither a pass nor a false reject.
    verdicts = [o for o in control.values() if Outcome(o).is_control_verdict]
    if not eligible:
        raise AuditError(f"{directory}: no task has a passing control and an edit that applied, so no alpha")
    alpha_k, alpha_n = len(accepted & eligible), len(eligible)
    # beta: tasks whose verifier fails a correct run, the reference itself or an alternative the oracle confirmed.
    judged = {t for t, o in control.items() if Outcome(o).is_control_verdict}
    failing = {t for t in judged if control[t] == Outcome.CONTROL_FAIL.value} | (rejects_alternative & judged)
    beta_k, beta_n = len(failing), len(verdicts)
    return Budget(alpha_k / alpha_n, beta_k / beta_n, alpha_k, alpha_n, beta_k, beta_n, str(directory))


def envelope(b: Budget, confidence: float = ENVELOPE) -> tuple[float, float]:
    """One-sided Clopper-Pearson upper bounds on alpha and beta from the budget's counts."""
    if not b.counted:
        raise AuditError("an envelope needs the counts behind alpha and beta (give --audit DIR)")
    assert b.alpha_k is not None and b.alpha_n is not None and b.beta_k is not None and b.beta_n is not None
    return clopper_pearson_upper(b.alpha_k, b.alpha_n, confidence), clopper_pearson_upper(
        b.beta_k, b.beta_n, confidence
    )


def analyze(rows: list[Row], alpha: float, beta: float, label: str = "observed") -> Analysis:
    """Per split (in order of first appearance): intervals, the orders they identify, and top-1 uniqueness."""
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not 0.0 <= value <= 1.0:
            raise AuditError(f"{name} {value} is outside [0, 1]")
    by_split: dict[str, list[Scored]] = defaultdict(list)
    for r in rows:
        by_split[r.split].append(Scored(r.system, r.score, *_bounds(r.score, alpha, beta)))
    splits = []
    for split, systems in by_split.items():
        systems.sort(key=lambda s: (-s.score, s.system))
        # Sorted by score and low <= score <= high, so only the earlier system of a pair can be above.
        surviving = [Pair(a.system, b.system) for a, b in combinations(systems, 2) if a.low > b.high]
        best, others = systems[0], systems[1:]
        top1 = best.system if all(best.low > o.high for o in others) else None
        n = len(systems)
        splits.append(SplitResult(split, systems, surviving, len(surviving), n * (n - 1) // 2, top1))
    return Analysis(label, alpha, beta, splits)

"""The three numbers a trainer reads first, per reward function (each suite of a reward-function audit):

- the false-pass ceiling: the highest reward any known-wrong completion earned (a fault cell the oracle confirmed
  wrong: a false accept, a rejected one, or the null run);
- the lazy-policy reward: the best average reward of one fixed strategy that never uses the reference answer
  (an answer-free probe variant, `detail["answer_free"]`, or the null run), over the suite's tasks;
- the false-fail rate: the share of known-correct completions (the reference, and each alternative form of it)
  denied full reward;

and beside them what the adapter checked before any cell (adapters/answer_tasks.py, in the manifest's provenance):
whether one completion scored ten times earns one reward (falsepass's P11), and the dataset's duplicate prompts and
conflicting labels (P12).

They read the reward each cell recorded (`Evidence.reward`): a benchmark whose verifier gives no number has none.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

import msgspec

from verimut.adapters.answer_tasks import CHECKS, SuiteChecks
from verimut.core.records import CONTROL, CellResult, Manifest, Outcome
from verimut.grammar.faults import spec_of
from verimut.grammar.oos import suite_of

_WRONG = (Outcome.FALSE_ACCEPT, Outcome.REJECTED, Outcome.VACUOUS)
_RIGHT = (Outcome.CONTROL_PASS, Outcome.CONTROL_FAIL, Outcome.ALT_PASS, Outcome.FALSE_REJECT)


class RewardNumbers(msgspec.Struct, frozen=True):
    false_pass_ceiling: float | None
    false_pass_via: str | None  # the cell that earned it
    lazy_policy_reward: float | None
    lazy_policy_via: str | None  # family/variant: the fixed strategy
    false_fail_rate: float | None
    known_bad: int  # completions confirmed wrong that earned a reward
    known_good: int  # correct completions that earned a reward
    errors: int  # cells whose reward function raised or gave no number
    # Scored before the cells (adapters/answer_tasks.py): None where the adapter made no such check.
    unstable: str | None = None  # one completion, different rewards over ten calls
    repeats_checked: int | None = None  # completions scored ten times
    duplicate_prompts: int | None = None
    conflicting_labels: int | None = None


def build(m: Manifest, rows: Mapping[str, CellResult]) -> dict[str, RewardNumbers]:
    """Per suite (a reward function; a reasoning-gym dataset), when the audit's verifier gives rewards."""
    if not any(r.evidence.reward is not None for r in rows.values()):
        return {}
    answer_free = {c.cell_id for c in m.cells if c.detail.get("answer_free")}  # not every cell by id
    recorded = m.provenance.get(CHECKS)
    checks = {} if recorded is None else msgspec.json.decode(recorded, type=dict[str, SuiteChecks])
    bad: dict[str, list[tuple[float, str]]] = defaultdict(list)
    good: dict[str, list[bool]] = defaultdict(list)
    lazy: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    errors: dict[str, int] = defaultdict(int)
    for row in rows.values():
        suite = suite_of(row.task)
        errors[suite] += row.outcome == Outcome.ERROR
        reward = row.evidence.reward
        if reward is None:
            continue
        spec = spec_of(row.family)
        if row.outcome in _WRONG and row.family != CONTROL and not spec.is_alternative:
            bad[suite].append((reward, row.cell_id))
        if row.outcome in _RIGHT:
            good[suite].append(bool(row.verdict))
        if spec.null_run or row.cell_id in answer_free:
            lazy[suite][f"{row.family}/{row.variant}"].append(reward)
    out: dict[str, RewardNumbers] = {}
    for suite in sorted({suite_of(t) for t in m.tasks}):
        worst = max(bad[suite], default=None)
        tasks = sum(1 for t in m.tasks if suite_of(t) == suite)
        # A strategy counts when it applies on at least half the suite's tasks: one that fits two tasks is no policy.
        means = {k: sum(v) / len(v) for k, v in lazy[suite].items() if 2 * len(v) >= tasks}
        best = max(means, key=lambda k: (means[k], k), default=None)
        denied = good[suite]
        checked = checks.get(suite)
        out[suite] = RewardNumbers(
            false_pass_ceiling=None if worst is None else worst[0],
            false_pass_via=None if worst is None else worst[1],
            lazy_policy_reward=None if best is None else round(means[best], 6),
            lazy_policy_via=best,
            false_fail_rate=round(sum(not ok for ok in denied) / len(denied), 6) if denied else None,
            known_bad=len(bad[suite]),
            known_good=len(denied),
            errors=errors[suite],
            unstable=None if checked is None else checked.unstable,
            repeats_checked=None if checked is None else checked.repeats_checked,
            duplicate_prompts=None if checked is None else checked.duplicate_prompts,
            conflicting_labels=None if checked is None else checked.conflicting_labels,
        )
    return out


def _n(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def _stable(n: RewardNumbers) -> str:
    if not n.repeats_checked:
        return "-"
    return f"**no**: {n.unstable}" if n.unstable else f"yes ({n.repeats_checked} x 10)"


def _defects(n: RewardNumbers) -> str:
    if n.duplicate_prompts is None:
        return "-"
    return f"{n.duplicate_prompts} / {n.conflicting_labels}"


def lines(numbers: Mapping[str, RewardNumbers]) -> list[str]:
    """The markdown section: one row per reward function."""
    if not numbers:
        return []
    out = [
        "## The numbers trainers read first, per reward function",
        "",
        (
            "False-pass ceiling: the most reward a completion the oracle confirms wrong earned. Lazy-policy reward: the "
            "best average reward of one fixed strategy that never reads the reference. False-fail rate: the share of "
            "correct completions (the reference, and its other legal forms) denied full reward. Stable: each "
            "completion checked, scored ten times, earned one reward. Duplicates / conflicting labels: prompts the "
            "dataset gives twice / of them, those with different reference answers (no completion earns both)."
        ),
        "",
        (
            "| reward function | false-pass ceiling | earned by | lazy-policy reward | strategy | false-fail rate | "
            "correct / wrong completions | errors | stable | duplicates / conflicting labels |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for suite, n in numbers.items():
        out.append(
            f"| {suite or '(all)'} | {_n(n.false_pass_ceiling)} | `{n.false_pass_via or '-'}` | "
            f"{_n(n.lazy_policy_reward)} | {n.lazy_policy_via or '-'} | {_n(n.false_fail_rate)} | "
            f"{n.known_good} / {n.known_bad} | {n.errors} | {_stable(n)} | {_defects(n)} |"
        )
    return [*out, ""]

"""The answer probes: what a reward function pays for that is not the answer (the answer channel at full breadth).

A reward function reads one thing, the completion, so its loopholes are there: a blank reply, the prompt echoed,
every candidate at once, another task's answer in perfect format, the answer retracted or denied, malformed text,
NaN for a number. Each family below is one probe (falsepass's catalogue, docs/rewards-functions.md), a pure
function from the reference run to edited runs, registered in the same family registry as the others (lazily,
from faults.py). Each declares examples of itself (`EXAMPLES`: a reference answer, and what its edit must say),
which tests/unit/test_probes.py runs, as cosmic-ray's operators do.

Wrong answers are written in the task's format (`AnswerChannel.slot`), so a reward that pays for the format
alone shows. A probe's finding is confirmed by the family's own judgement (`confirm`, reached through
`answers.confirm`): the edited answer's value differs from the reference's (`meaning`), never by asking the reward
under test. The alternatives (`alt-format`, `alt-tag-prose`) are the same answer in another legal form: a reward
that denies them full reward has a false fail.

`detail["answer_free"]` says whether an edit was made without the reference answer: a fixed strategy a policy
that knows nothing can follow, whose best average reward is the lazy-policy reward (findings/reward_numbers.py).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from verimut.core.records import bounded
from verimut.core.run import Run
from verimut.grammar import answers
from verimut.grammar.alternatives import RESTORE
from verimut.grammar.faults import ALTERNATIVE, Edit, FamilySpec, FaultContext, Refusal, declare

GRAMMARS = ("answer",)
_NO_CHANNEL = Refusal("the benchmark declares no answer channel (its verifier grades no answer)")
_NO_ANSWER = Refusal("the reference run gives no answer")


# --- what an answer means ---------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def meaning(text: str) -> Any:
    """What an answer says, whatever its form: a number's exact value ("0.5", "1/2" and "0.50" alike), else its
    text with case, whitespace and a final period left out ("B A C" is "bac"). Two answers that mean the same are
    never a finding, in either direction.

    Kept for the last answers asked about: every cell of a task compares its completion with the same reference
    answer, and an answer-free completion (every integer to 1,000) is compared twice."""
    said = " ".join(text.split()).strip().rstrip(".").strip()
    plain = said.replace(",", "") if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", said) else said
    try:
        return Fraction(plain)
    except (ValueError, ZeroDivisionError):
        pass
    low = plain.casefold()
    if low in ("nan", "inf", "infinity", "-inf", "-infinity"):
        return ("special", low)  # not a value at all: never the meaning of a finite answer
    return low.replace(" ", "")  # `said` has single spaces only; re.sub over 4,000 characters took 0.7 ms


def same(a: str, b: str) -> bool:
    return bool(meaning(a) == meaning(b))


def _number(text: str) -> Fraction | None:
    value = meaning(text)
    return value if isinstance(value, Fraction) else None


# --- the reference, the format, and wrong answers to write in it ----------------------------------


class _Said:
    """The reference completion and the answer its format's slot holds."""

    def __init__(self, completion: str, answer: str) -> None:
        self.completion, self.answer = completion, answer


def _reference(run: Run, ctx: FaultContext) -> _Said | Refusal:
    if ctx.channel is None:
        return _NO_CHANNEL
    said = ctx.channel.read(run)
    if not said.strip():
        return _NO_ANSWER
    inner = ctx.channel.inner(said)
    return _Said(said, (inner if inner is not None else said).strip())


def wrong_answers(answer: str, others: tuple[str, ...], k: int = 1) -> list[str]:
    """Up to k answers that differ in value from `answer`: other tasks' answers first (the same kind of answer,
    a wrong one in perfect format), then, for a number, the number moved by 7, 8, ... units of its leading digit
    (`unit`: so the wrong number differs at any precision a task asks for, "3 significant figures" included)."""
    found: list[str] = []
    for other in others:
        if not same(other, answer) and not any(same(other, f) for f in found) and other.strip():
            found.append(other.strip())
    n = _number(answer)
    step = 7
    while n is not None and len(found) < k:
        moved = _written(n + step * unit(n), answer)
        if not any(same(moved, f) for f in [answer, *found]):
            found.append(moved)
        step += 1
    return found[:k]


def unit(n: Fraction) -> Fraction:
    """One unit of a number's leading digit (1 for 7, 100000 for 851737.58, 0.1 for 0.5): a move by whole units
    changes the number at its first significant figure, so no precision a task asks for rounds it back."""
    if n == 0:
        return Fraction(1)
    return Fraction(10) ** math.floor(math.log10(abs(float(n))))


def _written(value: Fraction, like: str) -> str:
    """A number written as `like` writes one: a whole number, a decimal with its places, or a fraction."""
    if "/" in like:
        return str(value)
    if "e" in like.lower():  # scientific notation, as the answer writes it
        return f"{float(value):.6e}"
    places = len(like.split(".", 1)[1]) if "." in like else 0
    return f"{float(value):.{places}f}" if places else str(int(value))


_NO_WRONG = Refusal("no answer of another value: no other task's answer differs, and the answer is no number")


def _with_wrong(run: Run, ctx: FaultContext) -> tuple[_Said, str] | Refusal:
    """The reference, and one wrong answer of the same kind (`wrong_answers`), or why there is none."""
    said = _reference(run, ctx)
    if isinstance(said, Refusal):
        return said
    wrong = wrong_answers(said.answer, ctx.other_answers)
    return (said, wrong[0]) if wrong else _NO_WRONG


def _edit(run: Run, ctx: FaultContext, variant: str, text: str, note: str, detail: dict[str, Any]) -> Edit:
    assert ctx.channel is not None
    return Edit(variant, ctx.channel.write(run, text), note, detail)


def _detail(form: str, said: _Said, edited: str, free: bool, **more: Any) -> dict[str, Any]:
    # The edited answer is the run's; the detail keeps what a person reads (a long one as its prefix and hash).
    return {
        "answer_edit": form,
        "reference_answer": bounded(said.completion),
        "value": bounded(said.answer),
        "answer": bounded(edited),
        "answer_free": free,
        **more,
    }


# --- confirmations: why an edited answer is not the reference's (None: it may be right) --------------

Confirm = Callable[[dict[str, Any], str, str], "str | None"]


def _differs(detail: dict[str, Any], reference: str, edited: str) -> str | None:
    """The edited completion's answer (its slot, or all of it) means something else than the reference's."""
    value = str(detail.get("value", ""))
    wrong = str(detail.get("to", ""))
    if not wrong or same(wrong, value):
        return None
    return f"the answer is {_short(wrong)!r} where the reference answers {_short(value)!r}"


def _blank(detail: dict[str, Any], reference: str, edited: str) -> str | None:
    return "the completion says nothing" if not edited.strip() and reference.strip() else None


def _unasked(detail: dict[str, Any], reference: str, edited: str) -> str | None:
    """An answer-free reply (the prompt, a list of every integer): it commits to no answer, unless it is the
    reference answer itself."""
    value = str(detail.get("value", ""))
    if same(edited, value) or same(edited, reference):
        return None
    return f"the completion ({detail.get('answer_edit')}) commits to no answer; the reference answers {_short(value)!r}"


def _two(detail: dict[str, Any], reference: str, edited: str) -> str | None:
    """The reference's answer next to other candidates (or denied, or retracted for another): no commitment to it."""
    value = str(detail.get("value", ""))
    others = [str(o) for o in detail.get("others", [])]
    distinct = [o for o in others if not same(o, value)]
    if not distinct:
        return None
    how = {
        "shotgun": "lists every candidate",
        "retract": "gives the answer, then takes it back for",
        "denied": "writes the answer denied, or beside",
    }.get(str(detail.get("answer_edit")), "names")
    return f"the completion {how} {', '.join(repr(_short(o)) for o in distinct[:3])}: it does not commit to {value!r}"


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


CONFIRMS: dict[str, Confirm] = {
    "blank": _blank,
    "echo": _unasked,
    "spray": _unasked,
    "malformed": _unasked,
    "other": _differs,
    "special-number": _differs,
    "shotgun": _two,
    "retract": _two,
    "denied": _two,
}
answers.CONFIRMS.update(CONFIRMS)


# --- the fault probes ---------------------------------------------------------------------------------


def _fault(mechanism: str) -> FamilySpec:
    return FamilySpec(grammars=GRAMMARS, needs_answer_channel=True, mechanism=mechanism)


BLANKS = {"empty": "", "whitespace": " \n\t\n "}


@declare(_fault("accept a blank reply"))
def answer_blank(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """An empty reply, and one of whitespace only."""
    said = _reference(run, ctx)
    if isinstance(said, Refusal):
        return said
    return [
        _edit(run, ctx, v, text, f"answer: a {v} reply", _detail("blank", said, text, True))
        for v, text in BLANKS.items()
    ]


@declare(_fault("accept the prompt echoed back"))
def answer_echo(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """The prompt itself as the reply."""
    said = _reference(run, ctx)
    if isinstance(said, Refusal):
        return said
    if not ctx.instruction.strip():
        return Refusal("the task has no prompt to echo")
    text = ctx.instruction
    return [_edit(run, ctx, "-", text, "answer: the prompt, echoed back", _detail("echo", said, text, True))]


def sprays(prompt: str) -> dict[str, str]:
    """Replies that list what most short answers could be, built without the answer."""
    words = list(dict.fromkeys(re.findall(r"[A-Za-z][\w'-]*|\d+(?:\.\d+)?", prompt)))
    return {
        "integers": " ".join(str(i) for i in range(1001)),
        "letters": " ".join(chr(c) for c in range(ord("A"), ord("Z") + 1)),
        "yes-no": "yes no maybe true false correct incorrect unknown none",
        "prompt-words": " ".join(words[:400]),
    }


@declare(_fault("accept a reply that lists every candidate without knowing the answer"))
def answer_spray(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """Every integer 0-1000, every letter, yes/no words, the prompt's words: in the answer's format."""
    said = _reference(run, ctx)
    if isinstance(said, Refusal):
        return said
    assert ctx.channel is not None
    edits = []
    for v, spray in sprays(ctx.instruction).items():
        if not spray:
            continue
        text = ctx.channel.fill(spray)
        edits.append(
            _edit(
                run, ctx, v, text, f"answer: {v} listed ({len(spray):,} characters)", _detail("spray", said, text, True)
            )
        )
    return edits


@declare(_fault("accept a wrong answer in perfect format"))
def answer_other(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """Another task's reference answer, in this task's format (`-`), and stated confidently in plain prose."""
    found = _with_wrong(run, ctx)
    if isinstance(found, Refusal):
        return found
    said, w = found
    assert ctx.channel is not None
    formatted = ctx.channel.fill(w)
    confident = f"I have verified this carefully. The answer is definitely {w}."
    return [
        _edit(
            run,
            ctx,
            "-",
            formatted,
            f"answer: {_short(w)!r} in the answer's format",
            _detail("other", said, formatted, True, to=w),
        ),
        _edit(
            run,
            ctx,
            "confident",
            confident,
            f"answer: {_short(w)!r}, stated confidently",
            _detail("other", said, confident, True, to=w),
        ),
    ]


@declare(_fault("accept a reply that lists every candidate"))
def answer_shotgun(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """The answer among other candidates (the answer in the middle): a bare list, each in the format, all in one slot."""
    said = _reference(run, ctx)
    if isinstance(said, Refusal):
        return said
    assert ctx.channel is not None
    n = _number(said.answer)
    others = (
        [_written(n + d * unit(n), said.answer) for d in (-3, -2, -1, 1, 2, 3)]
        if n is not None
        else wrong_answers(said.answer, ctx.other_answers, k=4)
    )
    others = [o for o in others if not same(o, said.answer)]
    if not others:
        return Refusal("no other candidate of another value to list")
    if len(others) == 1:
        others = others * 2
    ordered = [*others[: len(others) // 2], said.answer, *others[len(others) // 2 :]]
    forms = {
        "list": ", ".join(ordered),
        "each-in-format": "\n".join(ctx.channel.fill(a) for a in ordered),
        "one-slot": ctx.channel.fill(" ".join(ordered)),
    }
    if not ctx.channel.slot:
        del forms["each-in-format"]  # without a format it is the list again, one per line
    return [
        _edit(
            run,
            ctx,
            v,
            text,
            f"answer: {len(ordered)} candidates ({v})",
            _detail("shotgun", said, text, False, others=others),
        )
        for v, text in forms.items()
    ]


FILLER = "Let us consider the problem from several angles. " * 100  # 5 kB on each side


@declare(_fault("accept an answer the reply takes back"))
def answer_retract(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """The right answer given, then retracted for a wrong one (after a long preamble), or named and denied."""
    found = _with_wrong(run, ctx)
    if isinstance(found, Refusal):
        return found
    said, w = found
    assert ctx.channel is not None
    right, other = ctx.channel.fill(said.answer), ctx.channel.fill(w)
    forms = {
        "retracted": f"{FILLER}\n{right}\n{FILLER}\nOn reflection that was a mistake.\n{other}",
        "denied": f"One might guess {said.answer}, but that is incorrect.\n{other}",
    }
    return [
        _edit(
            run,
            ctx,
            v,
            text,
            f"answer: the answer {v}, then {_short(w)!r}",
            _detail("retract", said, text, False, others=[w]),
        )
        for v, text in forms.items()
    ]


def denials(answer: str, wrong: str) -> dict[str, str]:
    """Replies that deny the answer, or name it beside a wrong one, inside the answer's slot."""
    # Not "W = R": an equation's last side is its value by convention ("x = 7"; math-verify reads it so), and that
    # reply ends on the right one (judged disputed on TRL's accuracy_reward). "R = W" ends on the wrong one.
    return {
        "denied": f"{answer} (this is wrong)",
        "denied-latex": f"{answer} \\text{{ is wrong}}",
        "not": f"not {answer}",
        "either-or": f"{wrong} or {answer}",
        "either-or-latex": f"{wrong} \\lor {answer}",
        "false-equation-reversed": f"{answer} = {wrong}",
        "either-or-reversed": f"{answer} or {wrong}",
    }


@declare(_fault("accept an answer denied inside its own slot"))
def answer_denied(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """The answer denied, negated, or beside a wrong one, written where the answer goes."""
    found = _with_wrong(run, ctx)
    if isinstance(found, Refusal):
        return found
    said, w = found
    assert ctx.channel is not None
    edits = []
    for v, inner in denials(said.answer, w).items():
        text = ctx.channel.fill(inner)
        # A denial names no second value: the denial is the other "candidate" its confirmation reads.
        others = [w] if w in inner else [inner]
        edits.append(
            _edit(
                run,
                ctx,
                v,
                text,
                f"answer: {_short(inner)!r} in the slot",
                _detail("denied", said, text, False, others=others),
            )
        )
    return edits


MALFORMED = {
    "unclosed-tags": "<think>reasoning that never ends <answer> \\boxed{ ```python\n",
    "deep-nesting": "\\boxed{" * 3000 + "}" * 3000,
    "only-closers": "}}}}]]]]</answer></think>```",
    "null-byte": "the answer is \x00 here",
    "control-chars": "\x1b[2J\x07\r\x0b\x0c",
    "leading-dashes": "--help",
    "huge": "9" * 20_000,  # 20 kB: every task's manifest holds it, so not falsepass's 200 kB
}


@declare(_fault("accept malformed output"))
def answer_malformed(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """Malformed output: unclosed tags, deep nesting, stray closers, a null byte, control characters, 20 kB of nines."""
    said = _reference(run, ctx)
    if isinstance(said, Refusal):
        return said
    return [
        _edit(run, ctx, v, text, f"answer: malformed output ({v})", _detail("malformed", said, text, True))
        for v, text in MALFORMED.items()
    ]


def special_numbers(answer: str) -> dict[str, tuple[str, str, bool]]:
    """variant -> (the slot's text, the wrong value it states, built without the answer): NaN and Infinity where
    the answer is a number; the number plus 0.9 where it is whole; the same inside a JSON answer."""
    n = _number(answer)
    if n is not None:
        cases = {"nan": ("NaN", "NaN", True), "infinity": ("Infinity", "Infinity", True)}
        # A count: written in digits, small enough that 0.9 is more than any rounding (not 1.25e+18).
        if re.fullmatch(r"-?\d{1,6}", answer.strip()):
            cases["plus-0.9"] = (f"{int(n)}.9", f"{int(n)}.9", False)
        return cases
    try:
        value = json.loads(answer)
    except (ValueError, TypeError):
        return {}
    if not isinstance(value, (dict, list)):
        return {}
    out: dict[str, tuple[str, str, bool]] = {}
    nan, k = _numbers(value, floats=lambda _: math.nan)
    if k:
        text = json.dumps(nan)
        out["json-floats-nan"] = (text, text, False)
    plus, k = _numbers(value, ints=lambda i: i + 0.9)
    if k:
        text = json.dumps(plus)
        out["json-ints-plus-0.9"] = (text, text, False)
    return out


def _numbers(value: Any, floats: Any = None, ints: Any = None) -> tuple[Any, int]:
    if isinstance(value, bool):
        return value, 0
    if isinstance(value, float) and floats is not None:
        return floats(value), 1
    if isinstance(value, int) and ints is not None:
        return ints(value), 1
    if isinstance(value, dict):
        pairs = {k: _numbers(v, floats, ints) for k, v in value.items()}
        return {k: v for k, (v, _) in pairs.items()}, sum(n for _, n in pairs.values())
    if isinstance(value, list):
        items = [_numbers(v, floats, ints) for v in value]
        return [v for v, _ in items], sum(n for _, n in items)
    return value, 0


@declare(_fault("accept NaN, Infinity or a fractional count"))
def answer_special_number(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """NaN and Infinity for a number, the whole number plus 0.9 (`int()` truncates 8.9 to 8), in the format."""
    said = _reference(run, ctx)
    if isinstance(said, Refusal):
        return said
    assert ctx.channel is not None
    cases = special_numbers(said.answer)
    if not cases:
        return Refusal(f"the answer {_short(said.answer)!r} is no number and no JSON with numbers")
    return [
        _edit(
            run,
            ctx,
            v,
            ctx.channel.fill(inner),
            f"answer: {_short(inner)!r} for {_short(said.answer)!r}",
            _detail("special-number", said, ctx.channel.fill(inner), free, to=to),
        )
        for v, (inner, to, free) in cases.items()
    ]


# --- the alternatives: the same answer in another legal form ---------------------------------------

_FIXES_CASE = re.compile(r"\b(case|upper-?case|lower-?case|capital letters?|capitali[sz]\w*)\b", re.IGNORECASE)
# a prompt that names a number format ("2 decimal places", "as a fraction") fixes how the number is written
_FIXES_NUMBER = re.compile(
    r"\b(decimal|significant|digits?|fraction|integer|whole number|round(ed|ing)?|precision|format)\b", re.IGNORECASE
)

# A name or a word as prose writes it ("Paris", "Monday", "New York"), at most three words: only then is the lower
# case the same answer. Judged by hand on reasoning-gym (docs/precision/reasoning-gym.md), an author disputes a case
# change of symbols ("A# B#"), of moves where case means a push ("LURD"), of a program's output, a decoded sentence
# or a list of words to reverse (there the case is the answer), and of a word the prompt itself writes ("reply
# 'True'", "one of Peng, Chi, Pass"): that is the form asked for.
_WORDS = re.compile(r"[A-Z]?[a-z'-]+(?: [A-Z]?[a-z'-]+){0,2}")


def _case_is_free(answer: str, prompt: str) -> bool:
    """Whether the answer's lower case is the same answer: a name or words as prose writes them, in a prompt that
    neither names a case nor writes the answer itself."""
    word = answer.strip()
    return (
        _WORDS.fullmatch(word) is not None
        and word != word.lower()
        and not _FIXES_CASE.search(prompt)
        and re.search(rf"(?<![\w']){re.escape(word)}(?![\w'])", prompt) is None
    )


def forms_of(answer: str, slot: str, prompt: str) -> dict[str, str]:
    """The answer in other forms that mean the same (`meaning`), inside the slot: padded, another case (a name or
    words the prompt neither writes nor puts in a case, lowered), an equivalent number (where the prompt fixes no
    number format). One form only where the format has a slot (outside it, a reply is free text): a sentence after
    the answer.

    No final period, no "6.0" for an integer and no Windows line ends (CR LF between a grid's rows): judged by hand
    (docs/precision/reasoning-gym.md), an author disputes each as text the requested format does not allow ("rows
    separated by newlines"), so a reward that refuses them is no false reject."""
    forms = {"padded": f"  {answer}  "}
    if _case_is_free(answer, prompt):
        forms["case"] = answer.lower()
    n = _number(answer)
    if n is not None and not _FIXES_NUMBER.search(prompt):
        if re.fullmatch(r"-?\d+\.\d+", answer.strip()):
            forms["trailing-zero"] = f"{answer.strip()}0"
        elif "/" in answer and n.denominator in (2, 4, 5, 8, 10, 20, 25, 50, 100):
            forms["as-decimal"] = str(float(n))
    return {k: v for k, v in forms.items() if v != answer and same(v, answer)}


@declare(FamilySpec(grammars=GRAMMARS, role=ALTERNATIVE, needs_answer_channel=True))
def alt_format(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """The same answer in another legal form (falsepass's equivalent forms): whitespace, case, an equivalent
    number; with a format, a sentence after it too."""
    said = _reference(run, ctx)
    if isinstance(said, Refusal):
        return said
    assert ctx.channel is not None
    texts = {v: ctx.channel.fill(f) for v, f in forms_of(said.answer, ctx.channel.slot, ctx.instruction).items()}
    texts["surrounding-whitespace"] = f"\n\n  {said.completion}  \n\n"
    if ctx.channel.slot:
        texts["sentence-after"] = f"{said.completion}\nThat is my final answer."
    edits = []
    for v, text in texts.items():
        detail = {**_detail(v, said, text, False), RESTORE: {text: said.completion}}
        edits.append(_edit(run, ctx, v, text, f"answer: {_short(said.answer)!r} written {v}; the same answer", detail))
    return edits


def prose(completion: str, slot: str) -> dict[str, str]:
    """A correct completion that also names its format in prose, before or after it (a paired tag or a box)."""
    tag = re.fullmatch(r"<([A-Za-z_][\w-]*)>\{answer\}</\1>", slot)
    if tag is not None:
        opener, closer = f"<{tag.group(1)}>", f"</{tag.group(1)}>"
        return {
            "tag-before": f"Here is the answer, inside {opener} tags:\n{completion}",
            "empty-pair-before": f"I will wrap the answer in {opener}{closer}.\n{completion}",
            "empty-pair-after": f"{completion}\nI wrapped it in {opener}{closer} as asked.",
        }
    if slot == "\\boxed{{answer}}":
        return {
            "empty-box-before": f"I will put the final answer in \\boxed{{}}.\n{completion}",
            "empty-box-after": f"{completion}\nThe answer is written in \\boxed{{}} as asked.",
        }
    return {}


@declare(FamilySpec(grammars=GRAMMARS, role=ALTERNATIVE, needs_answer_channel=True))
def alt_tag_prose(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """The correct completion with its format named in prose ("I will wrap the answer in <answer></answer>")."""
    said = _reference(run, ctx)
    if isinstance(said, Refusal):
        return said
    assert ctx.channel is not None
    texts = prose(said.completion, ctx.channel.slot)
    if not texts:
        return Refusal("the answer's format has no paired tag or box to name")
    return [
        _edit(
            run,
            ctx,
            v,
            text,
            f"answer: the reference, its format named in prose ({v})",
            {**_detail(v, said, text, False), RESTORE: {text: said.completion}},
        )
        for v, text in texts.items()
    ]


# --- each family's examples: a reference answer, and a variant whose reply must say ... ----------------


class Example:
    """One example a family declares of itself: on `answer` (in `slot`, with `others` the suite's answers), the
    variant `variant` writes a reply that contains `says`, and its confirmation holds (a fault) or it means the
    same (an alternative)."""

    def __init__(self, answer: str, variant: str, says: str, slot: str = "", others: tuple[str, ...] = ()) -> None:
        self.answer, self.variant, self.says, self.slot, self.others = answer, variant, says, slot, others


EXAMPLES: dict[str, list[Example]] = {
    "answer-blank": [Example("7", "empty", ""), Example("7", "whitespace", "\t")],
    "answer-echo": [Example("7", "-", "What is 3 + 4?")],
    "answer-spray": [Example("7", "integers", " 7 8 "), Example("B", "letters", "A B C")],
    "answer-other": [
        Example("7", "-", "<answer>12</answer>", "<answer>{answer}</answer>", ("12",)),
        Example("Paris", "confident", "definitely Rome", "", ("Rome",)),
    ],
    "answer-shotgun": [
        Example("7", "list", "4, 5, 6, 7, 8, 9, 10"),
        Example("cab", "one-slot", "abc cab", "", ("abc",)),
    ],
    "answer-retract": [Example("7", "denied", "One might guess 7, but that is incorrect.\n12", "", ("12",))],
    "answer-denied": [
        Example("7", "denied", "<answer>7 (this is wrong)</answer>", "<answer>{answer}</answer>", ("12",)),
        Example("7", "either-or", "14 or 7"),
    ],
    "answer-malformed": [Example("7", "null-byte", "\x00"), Example("7", "leading-dashes", "--help")],
    "answer-special-number": [
        Example("7", "nan", "NaN"),
        Example("7", "plus-0.9", "7.9"),
        Example("[1, 2]", "json-ints-plus-0.9", "[1.9, 2.9]"),
    ],
    "alt-format": [
        Example("Paris", "case", "paris"),
        Example("7", "padded", "  7  "),
        Example("0.5", "trailing-zero", "0.50"),
        Example("7", "sentence-after", "That is my final answer.", "<answer>{answer}</answer>"),
    ],
    "alt-tag-prose": [Example("7", "empty-pair-before", "<answer></answer>.", "<answer>{answer}</answer>")],
}

"""The answer channel's values: what a run says, read as typed values, and the pure edits the answer families make.

A final answer is prose around values: "Your total spending in March 2022 was £1,050." holds a date-like
"March 2022" the instruction gave and the value asked for, "£1,050". `values` finds the values of an answer
by kind (url, email, datetime, date, time, number, name), in order, without overlaps; each edit acts on one
of them and leaves the rest of the answer as it was:

- `wrong`: another legal value of the same kind (the start state's first, as wrong-value does);
- `superstring`: another value of the same kind that contains it ("3" -> "13", "1:30" -> "11:30");
- `hedge`: the value and a second candidate ("3 or 4");
- `alternative_forms`: the same value in another form the instruction does not fix ("3" -> "three").

`whole_token` is the check the repair synthesizes: the value stands as a token of its kind, not inside a
larger one ("3" is in "13" as a substring, not as a number).
"""

from __future__ import annotations

import datetime
import functools
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from verimut.grammar.pinned import ValueIndex, alternative, synthesize

# The longest answer the answer families parse (an answer is a sentence or a list; a longer one is a document).
PARSED = 20_000

URL, EMAIL, DATETIME, DATE, TIME, NUMBER, NAME = "url", "email", "datetime", "date", "time", "number", "name"
KINDS = (URL, EMAIL, DATETIME, DATE, TIME, NUMBER, NAME)

_TIME = r"\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp]\.?[Mm]\.?)?"
_PATTERNS: dict[str, str] = {
    URL: r"https?://[^\s,;]+[^\s,;.)]",
    # Starts only where a run of address characters starts: tried at every character of a long word, the local
    # part would scan to the word's end each time (quadratic: 20,000 characters took 1.2 s).
    EMAIL: r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    DATETIME: r"\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}(?::\d{2})?",
    DATE: r"\d{4}-\d{2}-\d{2}|(?:January|February|March|April|May|June|July|August|September|October|November"
    r"|December) \d{1,2}, \d{4}",
    TIME: _TIME,
    # A number not inside a word or another number; a currency sign and thousands separators belong to it.
    # A hyphen joins it to a larger token (an address "1-1-1", a range "110-200", a postcode "160-0023").
    NUMBER: (
        r"[£$€]?(?<![\w.,-])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w,-]|[.]\d)"
        r"|[£$€]?(?<![\w.,-])\d+(?:\.\d+)?(?![\w-]|[.,]\d)"
    ),
    # Capitalized words (with the short joiners names carry: "Le Baratin", "House of Sushi", "Breizh Café").
    NAME: r"(?<![\w'])[A-Z][\w'&.-]*(?:\s(?:(?:of|de|du|la|le|the|and|des|del|&)\s)?[A-Z][\w'&.-]*)*",
}
_ANY = re.compile("|".join(f"(?P<{kind}>{p})" for kind, p in _PATTERNS.items()))
# An enumeration marker of a numbered answer ("1. 3 2. ..."): structure, not a value.
_MARKER = re.compile(r"(?:^|(?<=\s))\d{1,2}\.(?!\d)")


class Value(msgspec.Struct, frozen=True):
    """One value an answer states: its text as written, its kind, and where it starts."""

    text: str
    kind: str
    start: int

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def _markers(answer: str) -> set[int]:
    if not re.match(r"\s*1\.(\s|$)", answer):
        return set()
    return {m.start() for m in _MARKER.finditer(answer)}


# A terminal escape sequence (CSI "ESC[31m", OSC "ESC]0;title BEL", 8-bit CSI): its digits are codes, not values.
_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x9b[0-?]*[ -/]*[@-~]|\x1b")


def _unescaped(answer: str) -> str:
    """The answer with each escape sequence blanked, character for character (so positions stay the answer's)."""
    if "\x1b" not in answer and "\x9b" not in answer:
        return answer
    return _ESCAPE.sub(lambda m: " " * len(m.group()), answer)


def values(answer: str) -> list[Value]:
    """The values an answer states, in order. A numbered answer's markers ("1.", "2.") are none, nor are the
    numbers of a terminal escape sequence ("ESC[31m")."""
    markers = _markers(answer)
    found: list[Value] = []
    for m in _ANY.finditer(_unescaped(answer)):
        kind = m.lastgroup
        assert kind is not None
        text = m.group(0).rstrip(".") if kind == NAME else m.group(0)
        if m.start() in markers or not text:
            continue
        found.append(Value(text, kind, m.start()))
    return found


def tokens(text: str, kind: str) -> list[str]:
    """Every value of `kind` that `text` states (what "a second candidate of the same kind" is read from)."""
    return list(_tokens(text, kind))


@functools.lru_cache(maxsize=1024)
def _tokens(text: str, kind: str) -> tuple[str, ...]:
    # Cached: `echoed` asks it of one instruction for every value of the answer, and a reasoning-gym prompt is long.
    return tuple(v.text for v in values(text) if v.kind == kind)


def normal(kind: str, text: str) -> Any:
    """What a value means, whatever its form: a number's value ("£1,050" and "1050" alike), a date's ISO form
    ("May 21, 2024" is 2024-05-21), a time's seconds past midnight ("6:00 PM" is 18:00); else its text."""
    if kind == NUMBER:
        return _Number.parse(text).value()
    if kind == DATE and not _valid_date(text):
        try:
            return datetime.datetime.strptime(text, "%B %d, %Y").date().isoformat()
        except ValueError:
            return text
    if kind == TIME:
        m = re.fullmatch(r"(\d{1,2}):(\d{2})(?::(\d{2}))?\s?(?:([AaPp])\.?[Mm]\.?)?", text)
        if m is None:
            return text
        hour = (
            int(m.group(1)) % 12 + (12 if (m.group(4) or "").lower() == "p" else 0) if m.group(4) else int(m.group(1))
        )
        return (hour * 60 + int(m.group(2))) * 60 + int(m.group(3) or 0)  # in seconds: "18:00:30" is not "18:00"
    return text


def whole_token(value: str, kind: str, text: str) -> bool:
    """Whether `text` states `value` as a whole value of its kind, in any form (`normal`): not inside a larger
    number, address or name. A count up to twenty counts in words too ("three" states 3)."""
    if kind == NAME:
        return re.search(rf"(?<![\w'-]){re.escape(value)}(?![\w'-])", text) is not None
    meant = normal(kind, value)
    if any(normal(kind, t) == meant for t in tokens(text, kind)):
        return True
    if kind == NUMBER and isinstance(meant, int) and 0 <= meant <= 20:
        return re.search(rf"\b{_WORDS[meant]}\b", text, re.IGNORECASE) is not None
    return False


def replace(answer: str, value: Value, text: str) -> str:
    """The answer with every whole occurrence of `value` written as `text` instead."""
    out, at = [], 0
    for v in values(answer):
        if v.kind == value.kind and v.text == value.text:
            out += [answer[at : v.start], text]
            at = v.end
    return "".join([*out, answer[at:]])


def echoed(value: Value, instruction: str) -> bool:
    """Whether the value repeats what the instruction says (the question's date, not its answer)."""
    return whole_token(value.text, value.kind, instruction) if value.kind != NAME else value.text in instruction


# A sentence that asks for something ("Tell me the name, rating and address"); a qualifier inside it ("the
# restaurant with the best ratings") chooses what to answer about and asks for nothing.
_ASKS = re.compile(
    r"\b(tell|give|provide|show|list|what|what's|which|who|when|where|how|let me know|get me|send me|find me)\b",
    re.IGNORECASE,
)
_QUALIFIER = re.compile(
    r"\bwith (?:the )?(?:best|highest|lowest|top|most|cheapest|least|largest|smallest|fewest)(?: \w+)?", re.IGNORECASE
)
_KIND_WORDS = {
    EMAIL: ("email", "address", "who"),
    URL: ("link", "url", "website", "page"),
    DATE: ("date", "when", "day"),
    DATETIME: ("date", "when", "time"),
    TIME: ("time", "when", "hour", "long"),
}
# The fields a question word asks for, where the instruction names none ("Where is the dinner going to be?").
_QUESTION_FIELDS = {
    "where": ("location", "address", "place", "city", "venue"),
    "who": ("name", "sender", "recipient", "recipients", "participants", "author"),
    "when": ("date", "time", "start", "end", "day"),
}
_FIELD_WORD = re.compile(r"[a-z]{2,}")


def requests(instruction: str) -> str:
    """What the instruction asks for: its asking sentences, with the qualifiers that pick a subject left out."""
    asking = [s for s in re.split(r"(?<=[.?!])\s+", instruction) if _ASKS.search(s)]
    return " ".join(_QUALIFIER.sub(" ", s) for s in asking).lower()


def _fields(value: Value, index: ValueIndex) -> list[str]:
    """The start-state fields that hold the value (a number at its place; a string whole, or inside a longer one)."""
    if value.kind == NUMBER:
        n = _Number.parse(value.text).value()
        if isinstance(n, int) and n < 100:
            return []  # a small whole number sits in too many fields by chance to say which one it is
        keys = [f"int:{n}", f"float:{float(n)}"] if float(n).is_integer() else [f"float:{n}"]
        numeric = [p for k in keys for p in index.places_of.get(k, [])]
        if numeric:
            return numeric
    whole = index.places_of.get(f"str:{value.text}", [])
    if whole:
        return list(whole)
    return [
        place
        for place, held in index.by_place.items()
        # A short string only (an address): a value inside a document (an email's body, a file) is read from
        # it, and the document's field names no part of the answer.
        if any(isinstance(v, str) and len(v) < 120 and whole_token(value.text, value.kind, v) for v in held)
    ][:8]


def asked(value: Value, instruction: str, index: ValueIndex) -> bool:
    """Whether the instruction asks for this value: a name a name field holds whole (the answer's subject), a count it asks "how many" or
    "how much" of, a kind it names ("when", "email", "link"), or a value whose start-state field it names in
    an asking sentence ("tell me the rating"). A value the state does not hold (computed) is the answer's own.
    A field only a qualifier names ("the one with the best rating") or only an action uses ("the location set to
    its address") is not asked for: a wrong rating in such an answer is an aside the task never graded."""
    if value.kind == NAME and any("name" in p.rsplit(".", 1)[-1] for p in index.places_of.get(f"str:{value.text}", [])):
        return True  # the whole value of a name field: the name of the thing the answer is about
    asks = requests(instruction)
    if value.kind == NUMBER and re.search(r"\bhow (many|much)\b", asks):
        return True
    if any(re.search(rf"\b{w}", asks) for w in _KIND_WORDS.get(value.kind, ())):
        return True
    fields = _fields(value, index)
    if not fields:
        return True
    words = {w for place in fields for w in _FIELD_WORD.findall(place.rsplit(".", 1)[-1].lower()) if w != "min"}
    if any(re.search(rf"\b{q}\b", asks) and words & set(kinds) for q, kinds in _QUESTION_FIELDS.items()):
        return True  # "where is the dinner?" asks for its location
    return any(re.search(rf"\b{w}", asks) for w in words)


def read_from(value: Value, outputs: Sequence[str]) -> int | None:
    """The first read output that states the value (where the answer's value was read), or None: computed."""
    for i, out in enumerate(outputs):
        if out and (value.text in out if value.kind == NAME else whole_token(value.text, value.kind, out)):
            return i
    return None


# --- numbers: parsed, and written back in their own format -----------------------------------


class _Number(msgspec.Struct, frozen=True):
    sign: str  # a currency sign, or ""
    whole: int
    decimals: str  # the digits after the point, "" when none
    grouped: bool  # thousands separators

    @classmethod
    def parse(cls, text: str) -> _Number:
        sign = text[0] if text[0] in "£$€" else ""
        body = text[len(sign) :]
        whole, _, decimals = body.partition(".")
        return cls(sign, int(whole.replace(",", "")), decimals, "," in whole)

    def value(self) -> float | int:
        return float(f"{self.whole}.{self.decimals}") if self.decimals else self.whole

    def write(self, whole: int | None = None, decimals: str | None = None, grouped: bool | None = None) -> str:
        w = self.whole if whole is None else whole
        d = self.decimals if decimals is None else decimals
        g = self.grouped if grouped is None else grouped
        body = f"{w:,}" if g else str(w)
        return f"{self.sign}{body}.{d}" if d else f"{self.sign}{body}"

    @classmethod
    def of(cls, sign: str, value: float, like: _Number) -> str:
        if isinstance(value, float) and not value.is_integer() or like.decimals:
            places = max(len(like.decimals), 1)
            whole, _, decimals = f"{float(value):.{places}f}".partition(".")
            return like.write(int(whole), decimals)
        return like.write(int(value), "")


def _leading_unit(value: float) -> float:
    """One unit of a number's leading digit (100 for 851.5, 0.01 for 0.0304; 1 for 0)."""
    return 10.0 ** math.floor(math.log10(abs(value))) if value else 1.0


# --- the edits ---------------------------------------------------------------------------------


class Moved(msgspec.Struct, frozen=True):
    """The text an edit writes for a value, and whether nothing in the start state gave it (synthesized)."""

    text: str
    synthesized: bool = False


def wrong(value: Value, index: ValueIndex, answer: str) -> Moved | None:
    """Another legal value of the same kind: the start state's first (as wrong-value moves a written argument),
    else one synthesized of the same shape. Never one the answer already states, nor one that contains the
    value or is contained in it (that is `superstring`'s edit)."""
    used = frozenset(v.text for v in values(answer))

    def fits(text: str) -> bool:
        if text in used or value.text in text or text in value.text or _kind_of(text) != value.kind:
            return False
        return normal(value.kind, text) != normal(value.kind, value.text)  # "1:00 PM" is "13:00" in another form

    if value.kind == NUMBER:
        n = _Number.parse(value.text)
        moved = alternative(n.value(), "", index, frozenset(_Number.parse(u).value() for u in used if _is_number(u)))
        if n.decimals and moved == n.value() + 1:
            moved = None  # `alternative`'s own +1, not a state's value: a decimal takes the step below
        if isinstance(moved, (int, float)) and not isinstance(moved, bool):
            text = _Number.of(n.sign, moved, n)
            if fits(text):
                return Moved(text)
        # A decimal moves by units of its leading digit: +1 on 851737.58 is the same answer to the three
        # significant figures a prompt may ask for (docs/precision.md, reasoning-gym).
        unit = _leading_unit(n.value()) if n.decimals else 1
        for step in range(1, 10):
            text = n.write(n.whole + step) if not n.decimals else _Number.of(n.sign, n.value() + step * unit, n)
            if fits(text):
                return Moved(text, synthesized=True)
        return None
    moved = alternative(value.text, "", index, used)
    if isinstance(moved, str) and fits(moved):
        return Moved(moved)
    made = synthesize(value.text)
    while made is not None and not fits(made) and made != value.text:
        made = synthesize(made)
    return Moved(made, synthesized=True) if made is not None and fits(made) else None


def _is_number(text: str) -> bool:
    return _kind_of(text) == NUMBER


def _kind_of(text: str) -> str | None:
    found = values(text)
    return found[0].kind if len(found) == 1 and found[0].text == text else None


def _hour_prefixed(text: str) -> str | None:
    m = re.match(r"(\d)(:\d{2}.*)", text)
    if m is None:
        return None
    meridiem = bool(re.search(r"[AaPp]\.?[Mm]", text))
    for lead in "12":
        hour = int(lead + m.group(1))
        if hour <= (12 if meridiem else 23):
            return lead + text
    return None


def superstring(value: Value, index: ValueIndex, answer: str) -> Moved | None:
    """Another value of the same kind that contains this one, so a containment check cannot tell them apart:
    a number with a digit added, a time with a one-digit hour made two ("9:30" in "19:30"), an address or a
    link lengthened, a name inside a longer one (the start state's first).

    None where no such value is wrong to a reader: a date (no legal date contains another), a time already
    two-digit or a date-time (only seconds could be added, and "13:00:30" is still 13:00 to the minute an
    answer gives), a name that is not
    the whole of a start-state name field (a landmark, a country inside an address, a flight number: "Diamond
    Head North" is a direction, not another place)."""
    text = value.text
    if value.kind == NUMBER:
        n = _Number.parse(text)
        # a digit in front, never behind: "4.335" for "4.33" is a rounding difference to a reader, "14.33" is not
        lead = n.write(whole=int("1" + str(n.whole)))
        return Moved(lead, synthesized=True) if text in lead else None
    if value.kind == TIME:
        made = _hour_prefixed(text)
        return None if made is None else Moved(made, synthesized=True)
    if value.kind == EMAIL:
        return Moved(text + ".au", synthesized=True)
    if value.kind == URL:
        # the last path segment or parameter value lengthened: another page, another token ("&ref=1" appended
        # is the same link with a parameter the site ignores)
        return Moved(text + "1", synthesized=True)
    if value.kind == NAME:
        longer = sorted(
            {
                v
                for vals in index.by_place.values()
                for v in vals
                # Another name (one value of its kind: not an address that holds the street, which is still right).
                if isinstance(v, str) and v != text and _kind_of(v) == NAME and whole_token(text, NAME, v)
            },
            key=lambda v: (len(v), v),
        )
        if longer:
            return Moved(longer[0])
        if any("name" in p.rsplit(".", 1)[-1] for p in index.places_of.get(f"str:{text}", [])):
            return Moved(f"{text} North", synthesized=True)  # a business the state does not hold
        return None
    return None  # a date or a date-time


def hedge(value: Value, index: ValueIndex, answer: str) -> Moved | None:
    """The value and a second candidate for it ("3 or 4"): the answer no longer commits to one. A name's second
    candidate is another name the state holds: a synthesized one ("Diamond Heae") is a typo, no candidate."""
    other = wrong(value, index, answer)
    if other is None or (other.synthesized and value.kind == NAME):
        return None
    return Moved(f"{value.text} or {other.text}", other.synthesized)


# --- answer alternatives: the same values in another form --------------------------------------

_WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]
# An instruction that names a format fixes the form of what it asks for ("in the format 'YYYY-MM-DD HH:MM'").
_FIXES_FORM = re.compile(r"\bformat\b|\bYYYY\b|\bHH:MM\b|\bdigits?\b|\bnumerals?\b", re.IGNORECASE)


class Form(msgspec.Struct, frozen=True):
    """The same value in another form: `variant` names the form, `text` is what replaces the value."""

    variant: str
    text: str


_COUNT = re.compile(r"\bhow many\b", re.IGNORECASE)


def alternative_forms(value: Value, instruction: str, computed: bool = True) -> list[Form]:
    """Other forms of the value the instruction does not forbid: a count in words, thousands separators on an
    amount, another date or time format. None where the instruction fixes a format. A number is spelled out
    only as the answer to "how many" that the run computed (not read): an id, a house number, a score read
    from a file is written as it was found.
    """
    if _FIXES_FORM.search(instruction):
        return []
    text = value.text
    forms: list[Form] = []
    if value.kind == NUMBER:
        n = _Number.parse(text)
        plain = not n.sign and not n.decimals and not n.grouped and text == str(n.whole)
        if plain and 0 <= n.whole <= 20 and computed and _COUNT.search(instruction):
            forms.append(Form("words", _WORDS[n.whole]))
        if n.grouped:
            forms.append(Form("ungrouped", n.write(grouped=False)))
        elif n.sign and n.whole >= 1000:
            forms.append(Form("grouped", n.write(grouped=True)))
    elif value.kind == DATE:
        day = datetime.date.fromisoformat(text) if _valid_date(text) else None
        if day is not None:
            forms.append(Form("spelled", f"{day:%B} {day.day}, {day.year}"))
    elif value.kind == TIME and re.fullmatch(r"\d{1,2}:\d{2}", text):
        hour, minute = (int(p) for p in text.split(":"))
        if 13 <= hour <= 23:
            forms.append(Form("12-hour", f"{hour - 12}:{minute:02d} PM"))
    return forms


def _valid_date(text: str) -> bool:
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])|\n+")


def sentences(answer: str) -> list[str]:
    """The answer's sentences (or lines), when it has two or more and is not a numbered list."""
    if _markers(answer):
        return []
    parts = [p.strip() for p in _SENTENCE.split(answer.strip()) if p.strip()]
    return parts if len(parts) >= 2 else []


# The answer probes' own judgements (grammar/probes.py), by the form their edits name: each says why an edited
# answer is not the reference's, as `confirm` does for the families here.
CONFIRMS: dict[str, Callable[[dict[str, Any], str, str], str | None]] = {}


def confirm(detail: dict[str, Any], reference: str, edited: str) -> str | None:
    """The oracle's judgement of an answer fault, by construction: why the edited answer is not the reference's
    (None: the edit failed to make it wrong, and it is no fault). `detail` is the cell's, as the family wrote it."""
    if edited == reference:
        return None
    probe = CONFIRMS.get(str(detail.get("answer_edit", "")))
    if probe is not None:
        return probe(detail, reference, edited)
    kind, value = str(detail.get("kind", "")), str(detail.get("value", ""))
    form = str(detail.get("answer_edit", ""))
    if form == "drop":
        return f"the run gives no answer; the reference answers {reference!r}" if not edited.strip() else None
    if not value:
        return None
    if form == "hedge":
        second = str(detail.get("to", "")).removeprefix(f"{value} or ")
        distinct = normal(kind, second) != normal(kind, value)  # not the same value twice in two forms
        if distinct and whole_token(value, kind, edited) and whole_token(second, kind, edited):
            return f"the answer names two candidates for the {kind} {value!r}: {value!r} and {second!r}"
        return None
    to = str(detail.get("to", ""))
    if form == "superstring" and kind == NAME:
        # A longer name holds the name as words ("Aa North" holds "Aa"): what counts is that the longer one stands.
        if to != value and whole_token(to, kind, edited):
            return f"the answer states the {kind} {to!r} where the reference states {value!r}"
        return None
    if whole_token(value, kind, edited):
        return None  # the reference's value still stands whole: the edit left the answer right
    return f"the answer states the {kind} {to!r} where the reference states {value!r}"

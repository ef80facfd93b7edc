"""Solvers for MiniWoB++ forms tasks: text fields, date and time inputs, multi-field forms, checkboxes, and
jQuery-UI widgets (datepicker, spinner, slider, autocomplete).

Not here: login-user-popup. Its popup appears, or not, at random when a field is first focused (nothing on the
page at the start tells which), and it disables the form until Cancel is pressed: a run fixed at the start cannot
know whether to press Cancel, and the vocabulary has no "if a popup shows" step.
"""

from __future__ import annotations

import calendar
import re

from ._act import Action, Instruction, check, click, fill, fill_css, key, submit, submit_css


def _targets(i: Instruction) -> list[str]:
    """The instruction's listed words (miniwob's extractor: "target 0", "target 1", ...), in order."""
    return [i.fields[f"target {n}"] for n in range(len(i.fields)) if f"target {n}" in i.fields]


def _text_cased(i: Instruction) -> list[Action]:
    """enter-text-2: type the word in the case the instruction asks for."""
    text, case = i.fields["text"], i.fields["case"]
    return [fill("tt", text.upper() if case == "upper" else text.lower()), submit("Submit")]


def _text(i: Instruction) -> list[Action]:
    """enter-text-dynamic: type the quoted text."""
    return [fill("tt", i.fields["target"]), submit("Submit")]


def _captcha(i: Instruction) -> list[Action]:
    """text-transform: type the (skewed) letters shown above the field."""
    shown = i.read("() => document.getElementById('captcha').textContent", None)
    return [fill("tt", shown), submit("Submit")]


def _date(i: Instruction) -> list[Action]:
    """enter-date: type the date as written (MM/DD/YYYY) into the date input, whose segments read mm/dd/yyyy."""
    return [fill("tt", i.fields["target"]), submit("Submit")]


def _time(i: Instruction) -> list[Action]:
    """enter-time: type the time into the time input's hh:mm AM/PM segments."""
    m = re.fullmatch(r"(\d{1,2}):(\d{2})(AM|PM)", i.fields["target"])  # the extractor drops the space
    if m is None:
        raise ValueError(f"not a time: {i.fields['target']!r}")
    # Two hour digits: a lone "1" waits for a second digit (a following "0" would make it 10). No space: typed
    # with one, Chromium's time input is left empty.
    return [fill("tt", f"{int(m.group(1)):02d}:{m.group(2)}{m.group(3)}"), submit("Submit")]


def _checkboxes(i: Instruction) -> list[Action]:
    """click-checkboxes-large/-transfer: tick each listed word's checkbox ("nothing": none)."""
    return [*(check(w) for w in _targets(i)), submit("Submit")]


# A thesaurus for click-checkboxes-soft: the word groups a reader takes as "similar" there (the task's own
# vocabulary; plural and singular, and near-synonyms like pig/pork, count as similar).
_SIMILAR = (
    "big large huge enormous gigantic",
    "small tiny little mini petite",
    "red scarlet crimson vermillion",
    "happy cheerful joyful gleeful delighted",
    "sad unhappy sorrowful miserable tragic",
    "angry mad furious irritated",
    "evil wicked immoral sinful corrupt depraved",
    "wrong incorrect mistaken erroneous",
    "real genuine actual",
    "strange odd peculiar unusual weird",
    "stop cease halt end finish",
    "scared terrified panicked fearful frightened afraid",
    "quiet calm peaceful serene mild",
    "old aged archaic",
    "love like adore favor",
    "kill murder assassinate",
    "keep retain preserve sustain maintain",
    "hide conceal camouflage",
    "hate despise loathe detest dislike",
    "funny humorous amusing comical laughable",
    "fat fleshy plump chubby",
    "stupid dumb dull unwise",
    "delicious savory delectable appetizing",
    "cut slice carve chop",
    "brave courageous fearless",
    "begin start initiate launch",
    "answer reply response",
    "television televisions TV TVs",
    "house home houses homes",
    "fire flame fires flames",
    "pig pork swine",
    "rabbit rabbits bunny bunnies",
    "car cars automobile automobiles vehicle vehicles",
    "water",
)


def _similar_checkboxes(i: Instruction) -> list[Action]:
    """click-checkboxes-soft: tick the one checkbox whose word is similar to each listed word."""
    labels = i.read("() => Array.from(document.querySelectorAll('#area label')).map((l) => l.textContent.trim())", None)
    ticks = []
    for word in _targets(i):
        near = {w for group in _SIMILAR if word in group.split() for w in group.split()}
        [label] = [label for label in labels if label in near]  # exactly one box is similar
        ticks.append(check(label))
    return [*ticks, submit("Submit")]


# The movie form's rows: an input's row is the smallest box around it that has text (its label).
_ROW_JS = r"""const rowOf = (input) => {
    let row = input.parentElement;
    while (!row.textContent.trim()) row = row.parentElement;
    return row;
  };"""

# Each input of the movie form with its row's label and a selector for it (the row's tag, first class and place
# among its siblings), and the form's submit control.
_MOVIE_FORM_JS = (
    """() => {
  """
    + _ROW_JS
    + r"""
  const area = document.getElementById('area');
  const rows = Array.from(area.querySelectorAll('input')).map((input) => {
    const row = rowOf(input);
    const cls = row.classList.length ? '.' + row.classList[0] : '';
    const nth = Array.from(row.parentElement.children).indexOf(row) + 1;
    return {label: row.textContent.trim(), css: `${row.tagName.toLowerCase()}${cls}:nth-child(${nth}) input`};
  });
  const go = area.querySelector('button, div.final, div.ui-submit');
  return {rows: rows, submit: {tag: go.tagName.toLowerCase(), css: go.tagName.toLowerCase() + '.' + go.classList[0],
                               text: go.textContent.trim()}};
}"""
)

# The movie form's values by their row's label: its labels are no <label> elements, so STATE_JS lists these
# inputs by position only, and would not say which value is the genre.
_MOVIE_FORM_STATE = (
    """() => {
  """
    + _ROW_JS
    + r"""
  return {form: Array.from(document.querySelectorAll('#area input'))
    .map((input) => ({id: rowOf(input).textContent.trim(), value: input.value}))};
}"""
)


def _movie_search(i: Instruction) -> list[Action]:
    """multi-layouts/multi-orderings: fill genre, director and year into the fields so labelled, then the form's
    submit control (a button, or a div styled as one)."""
    form = i.read(_MOVIE_FORM_JS, None)
    values = {"genre": i.fields["genre"], "director": i.fields["director"], "year": i.fields["year"]}
    kinds = {"genre": "genre", "director": "director", "year": "year", "date": "year"}  # "Released Date" is the year
    actions = []
    for row in form["rows"]:
        [kind] = {kinds[w] for w in kinds if w in row["label"].lower()}
        actions.append(fill_css(row["css"], values[kind]))
    go = form["submit"]
    actions.append(submit(go["text"]) if go["tag"] == "button" else submit_css(go["css"], go["text"]))
    return actions


def _slider_and_checkbox(i: Instruction) -> list[Action]:
    """form-sequence: focus the slider's handle and step it with the arrow keys from the value shown beside it to
    the asked one; tick the nth checkbox; submit."""
    want = int(i.fields["slider target"])
    shown = int(i.read("() => document.getElementById('val').textContent", None))
    step = "ArrowRight" if want > shown else "ArrowLeft"
    return [
        click("#slider .ui-slider-handle"),  # a click on the handle itself focuses it and leaves its value
        *(key(step) for _ in range(abs(want - shown))),
        click(f"#checkbox-{i.fields['checkbox target']}"),  # the checkboxes have no labels: the nth one
        submit("Submit"),
    ]


def _radio_and_textbox(i: Instruction) -> list[Action]:
    """form-sequence-2: check the nth radio button (unlabelled: its place) and type the number into the nth
    textbox."""
    return [
        click(f"input[type=radio]:nth-child({i.fields['radio target']})"),
        fill(f"input-{i.fields['textbox target']}", i.fields["textbox text"]),
        submit("Submit"),
    ]


def _spinner(i: Instruction) -> list[Action]:
    """use-spinner: click the spinner's up or down arrow from the value shown to the asked one (the field ignores
    typed keys)."""
    want = int(i.fields["target"])
    shown = int(i.read("() => document.getElementById('spinner').value", None))
    arrow = ".ui-spinner-up" if want > shown else ".ui-spinner-down"
    return [*(click(arrow) for _ in range(abs(want - shown))), submit("Submit")]


# The suggestions the autocomplete offers for what is typed: its own source, as its menu would list them.
_SUGGESTIONS_JS = r"""(term) => {
  const out = [];
  $('#tags').autocomplete('option', 'source')({term: term}, (items) => out.push(...items));
  return out;
}"""


def _autocomplete(i: Instruction) -> list[Action]:
    """use-autocomplete(-nodelay): of the suggestions for the start, take the first that also has the asked end,
    and type it in full (the menu lies outside the task's area, beyond the click action's reach), then leave the
    field."""
    start, end = i.fields["start"], i.fields.get("end", "")
    offered = i.read(_SUGGESTIONS_JS, start)
    item = next(s for s in offered if s.startswith(start) and s.endswith(end))
    # Tab leaves the field, which closes the menu (it would cover Submit) and cancels a pending search.
    return [fill("tags", item), key("Tab"), submit("Submit")]


def _datepicker(i: Instruction) -> list[Action]:
    """choose-date(-easy/-medium): open the datepicker and walk it with its own keys to the day, then Enter.

    Its calendar is appended to the page's body, outside the task's area where the click action looks, so its
    Prev/Next links and day cells are reached with the widget's keyboard controls instead: PageUp a month back,
    Ctrl+ArrowUp/Down a week, Ctrl+ArrowLeft/Right a day, Enter picks the highlighted day."""
    month, day, year = int(i.fields["month"]), int(i.fields["day"]), int(i.fields["year"])
    if year != 2016:
        raise ValueError(f"the datepicker offers 2016 only: {i.goal!r}")
    # It opens on its last month, December 2016, with the 31st highlighted (today is past its range). A month
    # back keeps the highlighted day, cut to the month's length.
    shown, highlighted, actions = 12, 31, [click("#datepicker")]
    while shown > month:
        shown -= 1
        highlighted = min(highlighted, calendar.monthrange(year, shown)[1])
        actions.append(key("PageUp"))
    delta = day - highlighted
    weeks, days = divmod(abs(delta), 7)
    sign = "Down" if delta > 0 else "Up"
    actions += [key(f"Control+Arrow{sign}")] * weeks
    actions += [key("Control+ArrowRight" if delta > 0 else "Control+ArrowLeft")] * days
    return [*actions, key("Enter"), submit("Submit")]


# The slider's value as the page shows it (the number beside it): the slider is no input.
_SLIDER_STATE = """() => ({slider: [{id: 'slider', value: document.getElementById('val').textContent.trim()}]})"""

SOLVERS = {
    "enter-text-2": _text_cased,
    "enter-text-dynamic": _text,
    "text-transform": _captcha,
    "enter-date": _date,
    "enter-time": _time,
    "click-checkboxes-large": _checkboxes,
    "click-checkboxes-transfer": _checkboxes,
    "click-checkboxes-soft": _similar_checkboxes,
    "multi-layouts": _movie_search,
    "multi-orderings": _movie_search,
    "form-sequence": _slider_and_checkbox,
    "form-sequence-2": _radio_and_textbox,
    "use-spinner": _spinner,
    "use-autocomplete": _autocomplete,
    "use-autocomplete-nodelay": _autocomplete,
    "choose-date-easy": _datepicker,
    "choose-date-medium": _datepicker,
    "choose-date": _datepicker,
}
STATES = {"form-sequence": _SLIDER_STATE, "multi-layouts": _MOVIE_FORM_STATE, "multi-orderings": _MOVIE_FORM_STATE}

"""Form benchmarks (WorkArena): the facts the form fault families act on, and the census that picks their fields.

A form task asks for some fields of one form to hold given values, then a submit. Its run is a
list of steps in the form vocabulary below; a step is what one BrowserGym step does (the validator
may run after each). The census is pure: it reads the form as the adapter found it (each field's
on-form default, the value the task's template record holds) and says which fields the
extra-field and omit-divergent families may use, written to the manifest with the task.
"""

from __future__ import annotations

import msgspec

# The form vocabulary of actions. One action is one step.
SET_FIELD = "set_field"  # args: field, value
SUBMIT = "submit"  # click the form's insert button
SET_FIELD_THEN_SUBMIT = "set_field_then_submit"  # args: field, value; both in one step
FORM_ACTIONS = (SET_FIELD, SUBMIT, SET_FIELD_THEN_SUBMIT)

# Field types an extra field may be: those WorkArena's own form filler sets, choice first
# (the paper's incident extra field is a choice), references last (they need a lookup).
_PREFERENCE = ("choice", "boolean", "string", "email", "ph_number", "integer", "reference")


class FormField(msgspec.Struct, frozen=True, omit_defaults=True):
    name: str
    label: str
    type: str
    # As shown on a fresh form (a choice's label; "true"/"false" for a checkbox); None when it is
    # generated (two fresh forms show different values, like a record number).
    default: str | None
    template: str | None  # the task's template record's value (display form), None when it has none
    # Another legal value of a requested (pinned) field, for wrong-value; None when the adapter names none.
    # Only the catalog tasks name one (a catalog item's quantity and variables); omitted from a manifest when None.
    other: str | None = None


class FormFacts(msgspec.Struct, frozen=True):
    """One form task as the adapter found it on the live form."""

    table: str
    task_fields: list[str]  # the fields the task asks for, in its order
    fields: list[FormField]  # every editable field of a type the filler supports, in form order

    def field(self, name: str) -> FormField | None:
        return next((f for f in self.fields if f.name == name), None)


class Candidate(msgspec.Struct, frozen=True):
    field: str
    default: str
    value: str
    type: str


def differs(f: FormField) -> bool:
    """The template's value, written, would change the field from its default (a generated default always differs)."""
    return isinstance(f.template, str) and f.template != f.default


def settled(first: FormFacts, again: FormFacts) -> FormFacts:
    """The same form read twice: a default that differs between the two fresh forms is generated (None)."""
    seen = {f.name: f.default for f in again.fields}
    fields = [
        f if seen.get(f.name, f.default) == f.default else msgspec.structs.replace(f, default=None)
        for f in first.fields
    ]
    return msgspec.structs.replace(first, fields=fields)


def extra_field_candidates(facts: FormFacts) -> list[Candidate]:
    """Out-of-scope fields whose template value differs from the form default: writing one changes the record."""
    asked = set(facts.task_fields)
    # A generated default (None) is left out: the oracle masks such a field, so no change there would show.
    found = [
        f
        for f in facts.fields
        if f.name not in asked and f.type in _PREFERENCE and f.default is not None and differs(f) and f.template
    ]
    found.sort(key=lambda f: _PREFERENCE.index(f.type))  # stable: form order within a type
    return [Candidate(f.name, str(f.default), str(f.template), f.type) for f in found]


def divergent_fields(facts: FormFacts) -> list[str]:
    """Task fields whose requested value differs from the form default: omitting one changes the record."""
    return [n for n in facts.task_fields if (f := facts.field(n)) is not None and differs(f)]


def wrong_values(facts: FormFacts) -> list[FormField]:
    """Requested fields whose adapter names another legal value (wrong-value moves one of them), in task order."""
    found = [facts.field(n) for n in facts.task_fields]
    return [f for f in found if f is not None and f.other is not None and f.other != f.template]

"""The fixed classification rule: one outcome per cell, from facts the pipeline recorded."""

from __future__ import annotations

from verimut.core.records import Outcome


def classify(
    *,
    control: bool,
    refused: bool,
    delivered: bool,
    verdict: bool | None,
    same_as_reference: bool,
    alternative: bool = False,
    obscure: bool = False,
    weak_pin: bool = False,
    null_run: bool = False,
    nothing_to_do: bool = False,
) -> Outcome:
    """The rule, in order of precedence.

    A control is judged by its verdict alone. An edit that does not apply is refused; one
    whose delivery raised is incomplete; a verifier that raised (verdict None) is an error.
    Then the end state decides: equal to the reference's and passed is harmless, equal and
    failed is a false reject; different and passed is a confirmed false accept, different
    and failed is rejected.

    An alternative run (a correct run by another route) is judged by its verdict once the
    oracle confirms it ends where the reference does (up to what its family may change):
    passed is alt_pass, failed a false reject. One that ends elsewhere is no alternative
    (its writes did not commute, say): refused, with the end state as the reason.

    `obscure`: the end state is not the reference's, yet nothing the benchmark observes tells them apart
    (a raw difference none of its reads reveals; equal states whose writes differ for a verifier that
    grades the calls; equal states that a read tells apart through what is not compared). Such a fault is
    no wrong effect (passed: harmless) and no correct run either (failed: rejected, never a false reject);
    such an alternative run is none (refused). `weak_pin`: a fault that moved a weakly pinned value (pinned.py)
    whose verifier passed is reported apart (weak_pin_accept), never as a confirmed false accept.
    `null_run`: the empty run (no action, no answer); a pass is a vacuous verifier, a fail is rejected.
    `nothing_to_do`: the task's start state already satisfies it (its reference run changes nothing, says
    nothing, and it asks no question): the null run's pass is right (nothing_to_do), not a vacuous verifier.
    """
    if refused:
        return Outcome.REFUSED
    if control:
        if verdict is None:
            return Outcome.ERROR
        return Outcome.CONTROL_PASS if verdict else Outcome.CONTROL_FAIL
    if not delivered:
        return Outcome.INCOMPLETE
    if verdict is None:
        return Outcome.ERROR
    if null_run:
        if not verdict:
            return Outcome.REJECTED
        return Outcome.NOTHING_TO_DO if nothing_to_do else Outcome.VACUOUS
    if alternative:
        if not same_as_reference or obscure:
            return Outcome.REFUSED
        return Outcome.ALT_PASS if verdict else Outcome.FALSE_REJECT
    if same_as_reference or obscure:
        return Outcome.HARMLESS if verdict else (Outcome.REJECTED if obscure else Outcome.FALSE_REJECT)
    if verdict:
        return Outcome.WEAK_PIN_ACCEPT if weak_pin else Outcome.FALSE_ACCEPT
    return Outcome.REJECTED


def classify_swap(*, delivered: bool, verdict: bool | None, effect_present: bool) -> Outcome:
    """The rule for an off-diagonal swap cell (the diagonal is a control, judged by `classify`).

    A run whose delivery raised is incomplete; a verifier that raised is an error; a fail is
    rejected. A pass is an acceptance, split by the end state: the verifier's own task's
    requested effect present (not a finding) or absent (a false accept the end state confirms).
    """
    if not delivered:
        return Outcome.INCOMPLETE
    if verdict is None:
        return Outcome.ERROR
    if not verdict:
        return Outcome.REJECTED
    return Outcome.ACCEPTED_EFFECT_PRESENT if effect_present else Outcome.ACCEPTED_EFFECT_ABSENT

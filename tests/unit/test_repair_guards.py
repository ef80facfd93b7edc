"""Repair from the read map: `synthesis.guarded` puts the frame checks on what a verifier does not read."""

from __future__ import annotations

from verimut.core.records import CellResult, Difference, Evidence, Outcome
from verimut.findings.read_map import ALWAYS, CONFIRMED, NEVER, REFUTED, SOMETIMES, UNCHECKED, BlindSpot, VerifierMap
from verimut.repair.synthesis import guarded

VMAP = VerifierMap(
    "bank",
    calls=5,
    collections={
        "transactions": ALWAYS,
        "user": SOMETIMES,
        "scheduled": NEVER,
        "files": NEVER,
        "inbox": NEVER,
        "notes": SOMETIMES,
    },
    blind_spots=[
        BlindSpot("scheduled", CONFIRMED, ["schedule_transaction"]),
        BlindSpot("files", UNCHECKED),  # not flipped: guarded only where a false accept lands
        BlindSpot("inbox", UNCHECKED),
        BlindSpot("notes", REFUTED),  # the flip moved the verdict: read after all
    ],
)


def _false_accept(*collections: str) -> CellResult:
    differs = [Difference("1 added", c, added=[{"id": 1}]) for c in collections]
    evidence = Evidence("appended a write", differs_from_reference=differs)
    return CellResult("bank/t:extra-oos:x", "bank", "bank/t", "extra-oos", "x", Outcome.FALSE_ACCEPT, True, evidence)


def test_confirmed_blind_spots_and_those_a_false_accept_lands_in_are_guarded_and_read_ones_never():
    g = guarded(VMAP, [_false_accept("files (new)")])  # an assigned-key collection's new records: still `files`
    assert g.blind == ["scheduled", "files"]
    assert g.unguarded == ["inbox"]
    assert "transactions" not in g.blind and "notes" not in g.blind  # read, or read after all
    assert set(g.read) == {"transactions", "user", "notes"}


def test_without_false_accepts_in_them_only_confirmed_blind_spots_are_guarded():
    g = guarded(VMAP, [_false_accept("transactions")])
    assert g.blind == ["scheduled"] and g.unguarded == ["files", "inbox"]

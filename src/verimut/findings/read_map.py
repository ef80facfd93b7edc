"""The read map: per verifier, which collections it read always, sometimes, never, and its blind spots.

From the ledger alone: each scored cell of the fault arm whose adapter records reads (`Evidence.reads`: the
reference run's control and every edited run the audit scored) is one call of the task's verifier. Over those
calls a collection is read `always`, `sometimes` or `never` (core/reads.py says what reading one is).

The collections a write can reach are, per suite, those some scored run changed from its start
(`changed_from_start`); per task where each task's state is its own (the adapter's provenance names
`OWN_STATES`: BFCL), those its own scored runs changed. A reachable collection its verifier never read is a
**blind spot**: no write there can change its verdict. It is *confirmed* when flipping it on the reference end
left the verdict as it was (`Evidence.unread_flipped`, engine/blind_spots.py); a flip that changed the verdict
means the recording missed a read, and the collection is reported as read. With each blind spot, the benchmark's own writes that land there
(the out-of-scope library's tools, from its cells). An aimed audit (`--aim`, grammar/oos.py `aimed`) planted
one write per confirmed blind spot (or per verifier): the writes it did not plant are in the planted cell's detail
(`proven_unchecked`), counted here as proven unchecked by the map, so a verifier's findings stay explainable. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from verimut.core.benchmark import GOAL
from verimut.core.reads import OWN_STATES, STATE, collections_read
from verimut.core.records import CellResult, Manifest, natural
from verimut.grammar.faults import PROVEN_UNCHECKED
from verimut.grammar.pairs import suite_of
from verimut.oracle.state import NEW

ALWAYS, SOMETIMES, NEVER = "always", "sometimes", "never"
# A blind spot's check: flipped with the verdict unchanged; flipped and the verdict moved (so read after all);
# not flipped (absent from the reference end, or the adapter cannot patch).
CONFIRMED, REFUTED, UNCHECKED = "confirmed", "read after all", "not flipped"
NOTE = (
    "Read sets are measured while each verifier runs (over its reference run and every edited run the audit "
    "scored); a blind spot is a collection some run of the suite writes that the verifier never read, confirmed "
    "by flipping it on the reference end. Like every finding, a lower bound: a verifier may read a collection on "
    "a run the audit did not plant."
)


class BlindSpot(msgspec.Struct, frozen=True):
    collection: str
    check: str  # CONFIRMED, REFUTED, UNCHECKED
    writes: list[str] = []  # the benchmark's tools whose out-of-scope cells changed it


class VerifierMap(msgspec.Struct, frozen=True, omit_defaults=True):
    suite: str
    calls: int  # verifier calls recorded
    collections: dict[str, str]  # reachable or read collection -> ALWAYS, SOMETIMES, NEVER
    blind_spots: list[BlindSpot]
    # An aimed audit's writes into confirmed blind spots proven unchecked by the map, not planted ("tool@collection").
    unplanted: list[str] = []


class ReadMap(msgspec.Struct, frozen=True):
    verifiers: dict[str, VerifierMap]  # task -> its map (tasks with a recorded call)
    reachable: dict[str, list[str]]  # suite -> the collections some scored run changed
    note: str = NOTE

    @property
    def blind_spots(self) -> int:
        return sum(b.check != REFUTED for v in self.verifiers.values() for b in v.blind_spots)

    @property
    def confirmed(self) -> int:
        return sum(b.check == CONFIRMED for v in self.verifiers.values() for b in v.blind_spots)

    @property
    def unplanted(self) -> int:
        return sum(len(v.unplanted) for v in self.verifiers.values())


def name_of(collection: str) -> str:
    return collection.removesuffix(NEW)


def build(m: Manifest, rows: Mapping[str, CellResult]) -> ReadMap | None:
    """The map of every effect-contract verifier with a recorded call; None when no call was recorded."""
    calls: dict[str, list[CellResult]] = {}
    reachable: dict[str, set[str]] = {}
    written: dict[str, set[str]] = {}  # suite -> the collections some scored run of it changed
    writes: dict[tuple[str, str], set[str]] = {}
    unplanted: dict[str, list[str]] = {}  # task -> the writes its aimed search proved unchecked rather than planted
    # Where a write can land: the suite's one state, or (provenance OWN_STATES, BFCL) the task's own.
    place = (lambda task: task) if OWN_STATES in m.provenance else suite_of
    for row in rows.values():
        if row.evidence.run_task is not None:
            continue  # a swap cell grades another task's run: not this verifier's own map
        at = place(row.task)
        for c in row.evidence.changed_from_start or {}:
            reachable.setdefault(at, set()).add(name_of(c))
            written.setdefault(suite_of(row.task), set()).add(name_of(c))
        tool, where = row.evidence.detail.get("tool"), row.evidence.detail.get("collection")
        if row.family == "extra-oos" and isinstance(tool, str) and isinstance(where, str):
            writes.setdefault((at, name_of(where)), set()).add(tool)
            for u in row.evidence.detail.get(PROVEN_UNCHECKED) or ():
                writes.setdefault((at, u["collection"]), set()).add(u["tool"])
                unplanted.setdefault(row.task, []).append(f"{u['tool']}@{u['collection']}")
        facts = m.tasks.get(row.task)
        if row.evidence.reads is not None and (facts is None or facts.contract != GOAL):
            calls.setdefault(row.task, []).append(row)
    if not calls:
        return None
    flips: dict[str, dict[str, bool]] = {}
    seen: dict[str, set[str]] = {}  # suite -> every collection of its state known: written, or flipped as unread
    for task, mine in calls.items():
        flips[task] = {}
        for r in mine:
            flips[task].update(r.evidence.unread_flipped or {})
        seen.setdefault(place(task), set(reachable.get(place(task), set()))).update(flips[task])
    verifiers: dict[str, VerifierMap] = {}
    for task in sorted(calls, key=natural):
        suite, at = suite_of(task), place(task)
        states = [r.evidence.reads.under(STATE) for r in calls[task] if r.evidence.reads is not None]
        flipped = flips[task]
        universe = sorted(seen[at], key=natural)
        read = [collections_read(s, universe) for s in states]
        shares = {c: sum(c in r for r in read) for c in universe}
        level = {c: ALWAYS if n == len(states) else NEVER if n == 0 else SOMETIMES for c, n in shares.items()}
        spots = []
        for c in universe:
            if level[c] != NEVER or c not in reachable.get(at, set()):
                continue
            check = UNCHECKED if c not in flipped else CONFIRMED if flipped[c] else REFUTED
            if check == REFUTED:
                level[c] = SOMETIMES  # the flip shows it is read: the recording missed it
            spots.append(BlindSpot(c, check, sorted(writes.get((at, c), set()))))
        verifiers[task] = VerifierMap(suite, len(states), level, spots, sorted(unplanted.get(task, [])))
    return ReadMap(verifiers, {s: sorted(cs, key=natural) for s, cs in sorted(written.items())})


def lines(rm: ReadMap) -> list[str]:
    """The read-map section of summary.md: per verifier, its blind spots, then what it reads always/sometimes."""
    out = [
        "## Read map: what each verifier read, measured, and its blind spots",
        "",
        f"> {rm.note}",
        "",
        f"Blind spots: {rm.blind_spots or 'none found'} ({rm.confirmed} confirmed by flipping).",
        "",
        "| verifier | calls | read always | read sometimes | blind spots (writes that land there) |",
        "|---|---|---|---|---|",
    ]
    for task, v in rm.verifiers.items():
        always = ", ".join(f"`{c}`" for c, lv in v.collections.items() if lv == ALWAYS) or "-"
        sometimes = ", ".join(f"`{c}`" for c, lv in v.collections.items() if lv == SOMETIMES) or "-"
        spots = (
            "; ".join(
                f"`{b.collection}`"
                + (f" ({b.check})" if b.check != CONFIRMED else "")
                + (f": {', '.join(b.writes)}" if b.writes else "")
                for b in v.blind_spots
                if b.check != REFUTED
            )
            or "-"
        )
        out.append(f"| `{task}` | {v.calls} | {always} | {sometimes} | {spots} |")
    if rm.unplanted:  # an aimed audit's (`--aim`): a default audit's section stays as it was
        out += [
            "",
            (
                f"Aimed search (`--aim`): {rm.unplanted} out-of-scope writes were not planted. Each lands only in "
                "confirmed blind spots of its verifier, where a planted write (one of the confirmed false accepts "
                "below) already shows it passes: the map proves these unchecked too, and they are not counted as "
                "false accepts. Per verifier:"
            ),
            "",
            "| verifier | writes proven unchecked by the map, not planted |",
            "|---|---|",
            *(
                f"| `{task}` | {', '.join(f'`{w}`' for w in v.unplanted)} |"
                for task, v in rm.verifiers.items()
                if v.unplanted
            ),
        ]
    return out

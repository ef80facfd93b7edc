"""Whether an alternative run is one: the oracle's check that it does what the reference run does.

An alternative run (a family whose FamilySpec.role is ALTERNATIVE) claims to reach the reference's end by another
route. It is one when (1) its end state equals the reference's, once the texts its family may
change are put back (`RESTORE`), telemetry and masks left out; and (2) each read the reference
makes returns in it what it returned in the reference (`SAME_READS` maps the run's positions to
the reference's): swapping two writes around a read that depends on them (a `cd` before an
`ls`) ends in the same state, but the agent would have seen, and answered, something else.
Pure: the scorer and the repair's regrade both ask it, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from verimut.core.run import Step
from verimut.oracle import state as oracle

# Keys of an alternative cell's detail:
RESTORE = "restore"  # {new text: the reference's text}, put back before comparing (alt-text)
SAME_READS = "same_reads"  # {str(position in the run): position in the reference run}, for its reads


def as_reference_wrote(detail: Mapping[str, Any], value: Any) -> Any:
    """`value` (an end state, a read's output) with the texts the run wrote in place of the reference's put back."""
    return oracle.substitute(value, detail.get(RESTORE, {}))


def reads_kept(positions: Iterable[int], shift: Mapping[int, int]) -> dict[str, int]:
    """`SAME_READS` for a run whose action at reference position i sits at `shift.get(i, i)`."""
    return {str(shift.get(i, i)): i for i in positions}


def differs(
    detail: Mapping[str, Any],
    reference_end: Any,
    end: Any,
    ignore: Sequence[str],
    reference_steps: Sequence[Step],
    steps: Sequence[Step],
    base: Any = None,
) -> tuple[list[oracle.CollectionDiff], str | None]:
    """The end state's differences from the reference's, and why the run is no alternative (None: it is one)."""
    vs_reference = oracle.compare(reference_end, as_reference_wrote(detail, end), ignore, base=base)
    if vs_reference:
        d = vs_reference[0]
        return vs_reference, f"its end state differs from the reference's ({d.collection}: {d.counts()})"
    for at, i in detail.get(SAME_READS, {}).items():
        j = int(at)
        if j >= len(steps) or i >= len(reference_steps):
            continue
        if as_reference_wrote(detail, steps[j].output) != reference_steps[i].output:
            return vs_reference, (
                f"read #{j} returned other data than the reference's read #{i} did: the writes it follows"
                " did not commute for it"
            )
    return vs_reference, None

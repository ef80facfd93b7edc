"""The two arms of an audit: the fault grammar (edited reference runs) and the intent-swap census (task j's run
graded by task i's verifier). One strategy object per arm, so no stage branches on the arm's name.

An arm says which cells it makes, what a gate may count on it, the words a person reads for it, and which
findings module summarizes its ledger. The summary is named as "module:function" and loaded when asked for
(as every registry loads), since the findings stage sits above the engine.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verimut.core.errors import AuditError
from verimut.core.records import Cell, Manifest, Outcome, TaskFacts
from verimut.core.registry import Registry, load_spec
from verimut.grammar import pairs
from verimut.grammar.pairs import SWAP

# The outcomes a swap cell can have (its acceptances are counted two ways, see SWAP_ARM).
SWAP_OUTCOMES = tuple(
    o.value
    for o in (
        Outcome.CONTROL_PASS,
        Outcome.CONTROL_FAIL,
        Outcome.REFUSED,
        Outcome.INCOMPLETE,
        Outcome.REJECTED,
        Outcome.ERROR,
        *(o for o in Outcome if o.is_swap_acceptance),
    )
)


@dataclass(frozen=True)
class Arm(abc.ABC):
    name: str  # as the manifest records it
    title: str  # what the report calls it
    command: str  # the command that runs it
    described: str  # in a message: "... has no count 'x'"
    scope: str  # what a gate's scope names: a fault family, or a suite
    # Cells are edited runs of each task's own reference (the fault arm): the manifest applies the families,
    # reads each task's initial checks and the out-of-scope library, the controls record the verifier's reads and
    # flip its blind spots, and the ledger gives an error budget.
    edits: bool
    counts: tuple[str, ...]  # the names a --fail-on expression may count
    summary: str  # "module:function" writing summary.md/json from the ledger: (m, rows, store, c) -> result
    build: str  # "module:function" building that result without writing: (m, rows, c) -> result
    default_gate: str = "false_accept>0"  # the gate when --fail-on is not given

    @abc.abstractmethod
    def families(self, chosen: Sequence[str]) -> list[str]:
        """The manifest's families."""

    @abc.abstractmethod
    def cells(self, facts: Mapping[str, TaskFacts], edited: list[Cell]) -> Sequence[Cell]:
        """The manifest's cells, from every task's facts and the cells the families made of its reference."""

    def stored(self, m: Manifest) -> Manifest:
        """The manifest as manifest.json holds it (pure)."""
        return m

    def expanded(self, m: Manifest) -> Manifest:
        """The inverse of `stored`."""
        return m

    def write(self, m: Manifest, rows: Mapping[str, Any], store: Any, c: float) -> Any:
        write: Callable[..., Any] = load_spec(self.summary, f"the {self.name} arm's summary")  # type: ignore[assignment]
        return write(m, rows, store, c)

    def result(self, m: Manifest, rows: Mapping[str, Any], c: float) -> Any:
        build: Callable[..., Any] = load_spec(self.build, f"the {self.name} arm's summary")  # type: ignore[assignment]
        return build(m, rows, c)


class _Faults(Arm):
    def families(self, chosen: Sequence[str]) -> list[str]:
        return list(chosen)

    def cells(self, facts: Mapping[str, TaskFacts], edited: list[Cell]) -> Sequence[Cell]:
        return edited


class _Swaps(Arm):
    def families(self, chosen: Sequence[str]) -> list[str]:
        return [SWAP]

    def cells(self, facts: Mapping[str, TaskFacts], edited: list[Cell]) -> Sequence[Cell]:
        # Every ordered pair of a suite's tasks, from the same facts: packed, as the store reads them back.
        return pairs.packed_grid(facts)

    def stored(self, m: Manifest) -> Manifest:
        return pairs.stored(m)  # each cell without its run: the run is its run task's reference

    def expanded(self, m: Manifest) -> Manifest:
        return pairs.expanded(m)


FAULT: Arm = _Faults(
    name="fault",
    title="fault grammar",
    command="verimut audit",
    described="a fault-grammar audit",
    scope="fault family",
    edits=True,
    counts=tuple(o.value for o in Outcome if not o.is_swap_acceptance),
    summary="verimut.findings.summary:write",
    build="verimut.findings.summary:build",
)
# In the intent-swap census an off-diagonal pass is an acceptance; only one whose requested effect is absent
# from the end state is a confirmed false accept, so there `false_accept` counts accepted_effect_absent and
# `acceptance` counts both kinds. harmless and false_reject do not exist there (no reference to equal).
SWAP_ARM: Arm = _Swaps(
    name=SWAP,
    title="intent-swap census",
    command="verimut swap",
    described="the intent-swap census",
    scope="suite",
    edits=False,
    counts=(*SWAP_OUTCOMES, "acceptance", "false_accept"),
    summary="verimut.findings.swap:write",
    build="verimut.findings.swap:build",
)

ARMS: Registry[Arm] = Registry("arm")
ARMS.register(FAULT.name, FAULT)
ARMS.register(SWAP_ARM.name, SWAP_ARM)


def named(name: str) -> Arm:
    """An arm by its name (a manifest an earlier verimut wrote names a known one, or is refused in one line)."""
    try:
        return ARMS.get(name)
    except AuditError:
        raise AuditError(f"unknown arm {name!r} (known: {', '.join(ARMS)})") from None


def of(m: Manifest) -> Arm:
    """The arm of a manifest."""
    return named(m.arm)

"""The adapter interface: what verimut needs from a benchmark, and nothing more.

A benchmark adapter is any object with these members. verimut never looks inside an
episode: it asks the adapter to execute actions, to snapshot the state as plain data,
and to call the benchmark's own, unmodified verifier.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import msgspec

from verimut.run import Action, Run, Step


class Verdict(msgspec.Struct, frozen=True):
    """The verifier's answer. `checks` holds per-check results when the verifier reports several."""

    passed: bool
    detail: str = ""
    checks: dict[str, bool] = {}


@runtime_checkable
class Benchmark(Protocol):
    """One benchmark, at one version, as verimut sees it."""

    name: str
    version: str
    # Glob patterns over state paths that record reads rather than effects (a request
    # log, a read flag). The oracle leaves them out of every comparison and says so.
    # A pattern matches a collection ("web.web_requests") or a field of its records
    # ("inbox.emails[*].read").
    telemetry: Sequence[str]

    def provenance(self) -> Mapping[str, str]:
        """Package and data versions to record in the manifest."""
        ...

    def tasks(self) -> Sequence[str]:
        """Every task id, in a stable order."""
        ...

    def instruction(self, task: str) -> str:
        """The task's instruction text, as an agent would read it."""
        ...

    def reset(self, task: str) -> Any:
        """A fresh episode at the task's clean start state (the adapter's own object)."""
        ...

    def reference(self, task: str, episode: Any) -> Run:
        """The task's correct reference run, read from a fresh episode."""
        ...

    def execute(self, episode: Any, action: Action) -> Step:
        """Execute one action in the episode."""
        ...

    def is_write(self, action: Action) -> bool:
        """Whether an action is meant to change state (not counting telemetry)."""
        ...

    def snapshot(self, episode: Any) -> Any:
        """The episode's current state as plain JSON data (dicts, lists, scalars)."""
        ...

    def verify(self, episode: Any, run: Run) -> Verdict:
        """Call the benchmark's unmodified verifier on the episode's end state."""
        ...


class Forks(Protocol):
    """Optional: an adapter that can copy a live episode.

    With it, verimut replays a shared prefix once and forks the episode for every run that
    starts with that prefix (and grades one end state with many verifiers in the swap
    census). The copy must be independent: executing actions in it, or verifying it, must
    not change the original. Without it, every run is replayed from `reset`.
    """

    def fork(self, episode: Any) -> Any: ...


class Swaps(Protocol):
    """Optional, needed by the intent-swap census: grade an episode with another task's verifier.

    `episode` was reset for, and has run, some other task's run; call `task`'s own,
    unmodified verifier on it, giving it that episode's start and end states.
    """

    def verify_as(self, task: str, episode: Any, run: Run) -> Verdict: ...


class Explains(Protocol):
    """Optional: an adapter that can say in one line why its verifier missed a difference."""

    def explain(self, task: str, collections: Sequence[str]) -> str | None: ...


class Locates(Protocol):
    """Optional: where a task's verifier is defined, so SARIF results can point at it.

    Returns (source file, first line, qualified name), or None when it cannot tell.
    """

    def verifier_source(self, task: str) -> tuple[str, int, str] | None: ...

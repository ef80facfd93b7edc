"""The scorer factory executors receive (`executor.ScorerFactory`): what builds the scorer in the process that scores.

An executor never loads a benchmark: it is given a `Scoring`, and calls it where the cells are scored. In this
process, or in a worker forked from it, that builds a `Scorer` on the adapter already loaded here; pickled (a Ray
actor, on this machine or a cluster's), it carries how to load the adapter (`Source`: its name, version, options
and the caller's directory) and the manifest without its cells (a scorer needs the tasks' facts; cells come in
batches), never the loaded adapter or scorer of this process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

import msgspec

from verimut.core.benchmark import Adapter
from verimut.core.errors import AuditError
from verimut.core.records import Manifest
from verimut.engine.declared import OwnVerdict
from verimut.engine.executor import Scores
from verimut.engine.scorer import Scorer


class Source(msgspec.Struct, frozen=True):
    """How to load the adapter in another process: as `adapters.load` is given it, from the caller's directory."""

    benchmark: str  # a built-in name or module:object
    version: str | None = None
    options: dict[str, Any] = {}
    cwd: str = ""  # where a module:object benchmark is found (on a cluster, it must be importable on every node)

    @classmethod
    def here(cls, benchmark: str, version: str | None = None, options: Any = None) -> Source:
        return cls(benchmark, version, dict(options or {}), os.getcwd())

    def load(self) -> Adapter:
        from verimut import adapters

        # A `module:object` benchmark is found as on the command line: from the caller's directory.
        if self.cwd and os.path.isdir(self.cwd) and self.cwd not in sys.path:
            sys.path.insert(0, self.cwd)
        return adapters.load(self.benchmark, self.version, self.options)


class Scoring:
    """Builds this process's scorer of `manifest` (once per process), on `adapter` when it is loaded here, else
    on the adapter `source` loads. Picklable when `source` is given (`portable`)."""

    def __init__(
        self,
        manifest: Manifest,
        adapter: Adapter | None = None,
        source: Source | None = None,
        own: Mapping[str, OwnVerdict] | None = None,
    ) -> None:
        if adapter is None and source is None:
            raise ValueError("a Scoring needs the adapter or its source")
        self.manifest = manifest
        self.own = dict(own or {})  # the swap census's diagonal verdicts the manifest took (declared.OwnVerdict)
        self.source = source
        self._adapter = adapter
        self._concurrency = adapter.concurrency if adapter is not None else None
        self._scorer: Scores | None = None
        self._pid = os.getpid()

    @property
    def portable(self) -> bool:
        return self.source is not None

    @property
    def concurrency(self) -> int | None:
        """At most this many cells at once (a benchmark on shared live state, one WorkArena instance)."""
        if self._adapter is None and self._concurrency is None:
            return self.adapter().concurrency
        return self._concurrency

    def adapter(self) -> Adapter:
        """The adapter in this process: the one given, or loaded from the source once."""
        if self._adapter is None:
            assert self.source is not None
            self._adapter = self.source.load()
            self._concurrency = self._adapter.concurrency
        return self._adapter

    def build(self, adapter: Adapter) -> Scores:
        """A new scorer on `adapter` (a subclass grades otherwise: the repair's regrade)."""
        return Scorer(adapter, self.manifest, self.own)

    def __call__(self) -> Scores:
        """This process's scorer: built once per process (a forked worker builds its own on the adapter it
        inherited, and keeps its own replays)."""
        if self._scorer is None or self._pid != os.getpid():
            self._scorer, self._pid = self.build(self.adapter()), os.getpid()
        return self._scorer

    def __getstate__(self) -> dict[str, Any]:
        if self.source is None:
            raise AuditError(
                "the benchmark must be given by name (a built-in name or module:object) to score elsewhere"
            )
        state = {k: v for k, v in self.__dict__.items() if k not in ("_adapter", "_scorer", "_pid")}
        state["manifest"] = msgspec.json.encode(msgspec.structs.replace(self.manifest, cells=[]))
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        state["manifest"] = msgspec.json.decode(state["manifest"], type=Manifest)
        self.__dict__.update(state, _adapter=None, _scorer=None, _pid=os.getpid())

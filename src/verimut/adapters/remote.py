"""A benchmark served from another interpreter, over JSON lines (see `verimut/worker.py`).

verimut's side of the seam: an adapter whose every call goes to a worker process running the
benchmark in its own environment (for dependencies that clash with verimut's). Episodes stay
in the worker; verimut holds handles, and a handle verimut drops is closed in the worker. Of the
optional methods (verimut.benchmark), the adapter offers those its worker announces it has: the
others are None, which `verimut.benchmark.resolve` reads as absent.

Each process that uses the adapter gets its own worker (a forked pool worker starts one on
its first call). A call that takes longer than `timeout`, or a worker that dies, raises
`BenchmarkCrash`; the scorer records the cell as `error`, and the next call starts a new worker.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from verimut.benchmark import Verdict
from verimut.children import die_with_parent
from verimut.errors import AuditError, BenchmarkCrash
from verimut.run import Action, Run, Step

WORKER = Path(__file__).resolve().parent.parent / "worker.py"


class Handle:
    """An episode that lives in the worker."""

    def __init__(self, remote: Remote, number: int, generation: int) -> None:
        self.number, self.generation = number, generation
        weakref.finalize(self, remote._release, number, generation)


class Remote:
    def __init__(
        self,
        python: str | Path,
        spec: str,
        timeout: float = 300.0,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.command = [str(python), str(WORKER), spec]
        self.timeout = timeout
        self.cwd = cwd
        self.env = {**os.environ, **env} if env else None
        self._proc: subprocess.Popen[bytes] | None = None
        self._owner = 0  # the pid that started `_proc`
        self._generation = 0  # bumped per worker started: older handles are dead
        self._closing: list[int] = []
        self._ids = 0
        hello = self._start()
        self.name: str = hello["name"]
        self.version: str = hello["version"]
        self.telemetry: Sequence[str] = tuple(hello["telemetry"])
        has = {name for name in ("fork", "verify_as", "explain", "verifier_source") if hello.get(name)}
        self.fork: Callable[[Handle], Handle] | None = self._fork if "fork" in has else None
        self.verify_as: Callable[[str, Handle, Run], Verdict] | None = self._verify_as if "verify_as" in has else None
        self.explain: Callable[[str, Sequence[str]], str | None] | None = self._explain if "explain" in has else None
        self.verifier_source: Callable[[str], tuple[str, int, str] | None] | None = (
            self._verifier_source if "verifier_source" in has else None
        )

    # -- the process -----------------------------------------------------------------------
    def _start(self) -> dict[str, Any]:
        try:
            self._proc = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                cwd=self.cwd,
                env=self.env,
                bufsize=0,
                # The worker must not outlive a killed audit; started from the scoring thread, before any other.
                preexec_fn=die_with_parent,  # noqa: PLW1509
            )
        except OSError as e:
            raise AuditError(f"cannot start the benchmark worker {self.command[0]}: {e.strerror}") from None
        self._owner, self._generation, self._closing = os.getpid(), self._generation + 1, []
        line = self._read_line()
        if line is None:
            raise AuditError(f"the benchmark worker `{' '.join(self.command)}` exited before it was ready")
        return dict(json.loads(line)["ready"])

    def _read_line(self) -> bytes | None:
        assert self._proc is not None and self._proc.stdout is not None
        buf = b""
        while not buf.endswith(b"\n"):
            ready, _, _ = select.select([self._proc.stdout], [], [], self.timeout)
            if not ready:
                self._kill()
                raise BenchmarkCrash(f"the benchmark worker did not answer within {self.timeout:g} s")
            chunk = os.read(self._proc.stdout.fileno(), 1 << 16)
            if not chunk:
                return None
            buf += chunk
        return buf

    def _kill(self) -> None:
        if self._proc is not None and self._owner == os.getpid():
            self._proc.kill()
            self._proc.wait()
        self._proc = None

    def _release(self, number: int, generation: int) -> None:
        if generation == self._generation and self._owner == os.getpid():
            self._closing.append(number)

    def _call(self, method: str, **params: Any) -> Any:
        if self._proc is None or self._owner != os.getpid() or self._proc.poll() is not None:
            self._start()  # first call in this process, or the last worker died
        assert self._proc is not None and self._proc.stdin is not None
        closing, self._closing = self._closing, []
        for number in closing:
            self._exchange("close", {"episode": number})
        return self._exchange(method, params)

    def _exchange(self, method: str, params: Mapping[str, Any]) -> Any:
        assert self._proc is not None and self._proc.stdin is not None
        self._ids += 1
        try:
            self._proc.stdin.write(msgspec.json.encode({"id": self._ids, "method": method, "params": params}) + b"\n")
        except BrokenPipeError:
            code = self._proc.wait()
            self._proc = None
            raise BenchmarkCrash(f"the benchmark worker died (exit code {code})") from None
        # A long reply (a snapshot) may arrive in several reads; all of it is one line.
        line = self._read_line()
        if line is None:
            died = self._proc.wait() if self._proc else None
            self._proc = None
            raise BenchmarkCrash(f"the benchmark worker died (exit code {died}) during {method}")
        reply = json.loads(line)
        if "error" in reply:
            raise BenchmarkCrash(f"{method} raised in the benchmark worker: {reply['error']}")
        return reply["result"]

    def _handle(self, episode: Handle) -> int:
        if episode.generation != self._generation:
            raise BenchmarkCrash("the benchmark worker holding this episode has been replaced")
        return episode.number

    # -- the adapter interface ----------------------------------------------------------------
    def provenance(self) -> Mapping[str, str]:
        return dict(self._call("provenance"))

    def tasks(self) -> Sequence[str]:
        return list(self._call("tasks"))

    def instruction(self, task: str) -> str:
        return str(self._call("instruction", task=task))

    def reset(self, task: str) -> Handle:
        return Handle(self, self._call("reset", task=task), self._generation)

    def reference(self, task: str, episode: Handle) -> Run:
        return msgspec.convert(self._call("reference", task=task, episode=self._handle(episode)), Run)

    def execute(self, episode: Handle, action: Action) -> Step:
        raw = self._call("execute", episode=self._handle(episode), action=msgspec.to_builtins(action))
        return msgspec.convert(raw, Step)

    def is_write(self, action: Action) -> bool:
        return bool(self._call("is_write", action=msgspec.to_builtins(action)))

    def snapshot(self, episode: Handle) -> Any:
        return self._call("snapshot", episode=self._handle(episode))

    def verify(self, episode: Handle, run: Run) -> Verdict:
        raw = self._call("verify", episode=self._handle(episode), run=msgspec.to_builtins(run))
        return msgspec.convert(raw, Verdict)

    # -- the optional methods, offered as the worker's adapter has them (see __init__) -------------
    def _verify_as(self, task: str, episode: Handle, run: Run) -> Verdict:
        raw = self._call("verify_as", task=task, episode=self._handle(episode), run=msgspec.to_builtins(run))
        return msgspec.convert(raw, Verdict)

    def _fork(self, episode: Handle) -> Handle:
        return Handle(self, self._call("fork", episode=self._handle(episode)), self._generation)

    def _explain(self, task: str, collections: Sequence[str]) -> str | None:
        found = self._call("explain", task=task, collections=list(collections))
        return None if found is None else str(found)

    def _verifier_source(self, task: str) -> tuple[str, int, str] | None:
        found = self._call("verifier_source", task=task)
        return None if found is None else (str(found[0]), int(found[1]), str(found[2]))

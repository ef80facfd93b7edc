"""A benchmark served from another interpreter, over JSON lines (see `verimut/worker.py`).

verimut's side of the seam: an adapter whose every call goes to a worker process running the
benchmark in its own environment (for dependencies that clash with verimut's). Episodes stay
in the worker; verimut holds handles, and a handle verimut drops (or closes) is closed in the worker. Of the
optional methods (verimut.core.benchmark.CAPABILITIES), the adapter offers those its worker announces it has:
the others are None, which `verimut.core.benchmark.resolve` reads as absent. The optional attributes
(`grammar`, `concurrency`, `contracts`, ...) are the worker-side adapter's, as announced.

Each process that uses the adapter gets its own worker (a forked pool worker starts one on
its first call). A call that takes longer than `timeout`, or a worker that dies, raises
`BenchmarkCrash`; the scorer records the cell as `error`, and the next call starts a new worker.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import subprocess
import weakref
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from verimut.core.benchmark import CAPABILITIES, Verdict
from verimut.core.children import at_child_exit, before_maps, die_with_parent, slot
from verimut.core.errors import AuditError, BenchmarkCrash, InfrastructureError
from verimut.core.forms import FormFacts
from verimut.core.reads import Reads
from verimut.core.run import Action, Run, Step

WORKER = Path(__file__).resolve().parent / "worker.py"


def interpreter(
    given: str | os.PathLike[str] | None, env: str, default: Path, label: str, install: str, option: str
) -> Path:
    """A benchmark's own interpreter: `given` (its --option), $`env`, or `default` under the current directory;
    a missing one is a one-line error that names the script installing it."""
    path = Path(given or os.environ.get(env) or default)
    if not path.exists():
        raise AuditError(
            f"{label}'s interpreter {path} is missing: run `bash scripts/{install}` first "
            f"(or name one with --option {option}=PATH or ${env})"
        )
    return path.absolute()


class Handle:
    """An episode that lives in the worker."""

    def __init__(self, remote: Remote, number: int, generation: int) -> None:
        self.number, self.generation = number, generation
        self.release = weakref.finalize(self, remote._release, number, generation)


WRITES_KEPT = 100_000  # is_write answers remembered before the memo starts afresh
END_TIMEOUT = 10.0  # seconds a worker has to close what it started once its input ends, at verimut's exit


def _end_worker(ref: weakref.ref[Remote], proc: subprocess.Popen[bytes], starter: int) -> None:
    """At the end of the process that started `proc` (a child inherits the hook, and skips it)."""
    if ref() is not None and os.getpid() == starter and proc.poll() is None:
        _close(proc)


def _park(ref: weakref.ref[Remote], n: int) -> None:
    remote = ref()
    if remote is not None:
        remote.park(n)


def _unpark(ref: weakref.ref[Remote]) -> None:
    remote = ref()
    if remote is not None:
        remote.unpark()


def _close(proc: subprocess.Popen[bytes]) -> None:
    """Let a worker go by the end of its input (it closes its browser and driver), killed if it does not end."""
    try:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=END_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()


def _let_go(ref: weakref.ref[Remote], proc: subprocess.Popen[bytes], adopter: int) -> None:
    """At the end of a map's process that took a parked worker: close the episodes it let go, and leave the worker
    running for the next map's process of its slot."""
    remote = ref()
    if remote is not None and os.getpid() == adopter and remote._proc is proc:
        closing, remote._closing = remote._closing, []
        for number in closing:
            remote._exchange("close", {"episode": number})


def _running(pid: int) -> bool:
    """Whether a process that is not this one's child still runs (a dead child of another is a zombie until
    reaped, and `os.kill(pid, 0)` would still find it)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except OSError:  # no /proc (not Linux): a signal 0 says whether the pid is taken
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True


class Remote:
    # The optional attributes (verimut.core.benchmark), each set from the worker's announcement when its adapter
    # sets it; these defaults are what `resolve` takes for an attribute that is absent.
    grammar: str | None = None
    concurrency: int | None = None
    markers: frozenset[str] = frozenset()
    swap_suites: tuple[str, ...] = ()
    grades_in_place: bool = False
    replays_vary: bool = False
    contracts: Mapping[str, str] = {}
    assigned_keys: tuple[str, ...] = ()
    trace_args: Mapping[str, tuple[str, ...]] = {}
    target_args: frozenset[str] = frozenset()
    # As announced, {"where", "tool", "arg"}: `resolve` makes it an AnswerChannel (and names a malformed one).
    answer_channel: Mapping[str, str] | None = None

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
        self._writes: dict[bytes, bool] = {}  # is_write's answers, by the action's JSON
        self._ids = 0
        self._parked: dict[int, subprocess.Popen[bytes]] = {}  # slot -> a worker started here for it (`park`)
        self._adopted = False  # `_proc` is a parked worker this forked process took
        before_maps(partial(_park, weakref.ref(self)), partial(_unpark, weakref.ref(self)))
        hello = self._start()
        self.name: str = hello["name"]
        self.version: str = hello["version"]
        self.telemetry: Sequence[str] = tuple(hello["telemetry"])
        has = {name for name in CAPABILITIES if hello.get(name)}
        self.fork: Callable[[Handle], Handle] | None = self._fork if "fork" in has else None
        self.verify_as: Callable[[str, Handle, Run], Verdict] | None = self._verify_as if "verify_as" in has else None
        self.explain: Callable[[str, Sequence[str]], str | None] | None = self._explain if "explain" in has else None
        self.verifier_source: Callable[[str], tuple[str, int, str] | None] | None = (
            self._verifier_source if "verifier_source" in has else None
        )
        self.form: Callable[[str], FormFacts] | None = self._form if "form" in has else None
        self.close: Callable[[Handle], None] | None = self._close if "close" in has else None
        self.kind: Callable[[str], str] | None = self._kind if "kind" in has else None
        self.reads_trace: Callable[[str], bool] | None = self._reads_trace if "reads_trace" in has else None
        self.idle_writes: Callable[[str], Sequence[int]] | None = self._idle_writes if "idle_writes" in has else None
        self.patch: Callable[[Handle, Sequence[str], Any], None] | None = self._patch if "patch" in has else None
        self.page_writes: Callable[[str, Run], Sequence[Action]] | None = (
            self._page_writes if "page_writes" in has else None
        )
        self.verify_reading: Callable[[Handle, Run], tuple[Verdict, Reads]] | None = (
            self._verify_reading if "verify_reading" in has else None
        )
        self.pristine: Callable[[str], Any] | None = (
            (lambda task: self._call("pristine", task=task)) if "pristine" in has else None
        )
        self.sanctioned: Callable[[str], Sequence[str]] | None = (
            (lambda task: [str(t) for t in self._call("sanctioned", task=task)]) if "sanctioned" in has else None
        )
        # The worker does its preparation itself (one item after another): a map of this process's cannot reach it.
        self.prepare: Callable[[Any], None] | None = (lambda _each: self._call("prepare")) if "prepare" in has else None
        self._attributes(hello.get("attributes") or {})

    def _attributes(self, given: Mapping[str, Any]) -> None:
        """The optional attributes the worker announced (JSON: a set or tuple arrives as a list)."""
        if given.get("grammar") is not None:
            self.grammar = str(given["grammar"])
        if given.get("concurrency") is not None:
            self.concurrency = int(given["concurrency"])
        if given.get("markers") is not None:
            self.markers = frozenset(given["markers"])
        if given.get("swap_suites") is not None:
            self.swap_suites = tuple(given["swap_suites"])
        if given.get("grades_in_place") is not None:
            self.grades_in_place = given["grades_in_place"] is True
        if given.get("replays_vary") is not None:
            self.replays_vary = given["replays_vary"] is True
        if given.get("contracts") is not None:
            self.contracts = dict(given["contracts"])
        if given.get("assigned_keys") is not None:
            self.assigned_keys = tuple(given["assigned_keys"])
        if given.get("trace_args") is not None:
            self.trace_args = {str(tool): tuple(args) for tool, args in given["trace_args"].items()}
        if given.get("target_args") is not None:
            self.target_args = frozenset(given["target_args"])
        if given.get("answer_channel") is not None:
            self.answer_channel = dict(given["answer_channel"])

    # -- the process -----------------------------------------------------------------------
    def _popen(self) -> subprocess.Popen[bytes]:
        try:
            proc = subprocess.Popen(
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
        # At exit the worker is let go by the end of its input, so that it closes what it started (a browser and
        # its driver) rather than dying by the parent-death signal and leaving them to fail on a closed pipe.
        atexit.register(_end_worker, weakref.ref(self), proc, os.getpid())
        at_child_exit(partial(_end_worker, weakref.ref(self), proc, os.getpid()))  # a forked child runs no atexit
        return proc

    def _hello(self, proc: subprocess.Popen[bytes]) -> dict[str, Any]:
        line = self._read_line(proc)
        if line is None:
            raise AuditError(f"the benchmark worker `{' '.join(self.command)}` exited before it was ready")
        return dict(json.loads(line)["ready"])

    def _start(self) -> dict[str, Any]:
        proc = self._popen()
        self._proc, self._owner, self._adopted = proc, os.getpid(), False
        self._generation, self._closing = self._generation + 1, []
        return self._hello(proc)

    def park(self, n: int) -> None:
        """Start a worker now for each of the n processes of the forked maps to come (`children.slot`), so that each
        map's process takes its slot's worker, browser and all, instead of starting one of its own: a browser then
        starts once per slot for the whole manifest, not once per map and process."""
        started = [(k, self._popen()) for k in range(n) if k not in self._parked]
        for k, proc in started:  # started side by side, then each one's hello read
            self._hello(proc)
            self._parked[k] = proc

    def unpark(self) -> None:
        """Let the parked workers go (the maps are over), each closing its browser, side by side."""
        parked, self._parked = list(self._parked.values()), {}
        for proc in parked:
            with contextlib.suppress(OSError):
                assert proc.stdin is not None
                proc.stdin.close()
        for proc in parked:
            _close(proc)

    def _adopt(self) -> bool:
        """In a forked map's process: take its slot's parked worker, if that one still runs (True)."""
        place = slot()
        proc = self._parked.pop(place, None) if place is not None and self._owner != os.getpid() else None
        if proc is None or not _running(proc.pid):
            return False
        self._proc, self._owner, self._adopted = proc, os.getpid(), True
        self._generation, self._closing = self._generation + 1, []
        # The worker outlives this process (the next map's takes it): at its end, only its episodes are closed.
        at_child_exit(partial(_let_go, weakref.ref(self), proc, os.getpid()))
        return True

    def _read_line(self, proc: subprocess.Popen[bytes] | None = None) -> bytes | None:
        proc = proc or self._proc
        assert proc is not None and proc.stdout is not None
        buf = b""
        while not buf.endswith(b"\n"):
            ready, _, _ = select.select([proc.stdout], [], [], self.timeout)
            if not ready:
                self._kill()
                raise BenchmarkCrash(f"the benchmark worker did not answer within {self.timeout:g} s")
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            if not chunk:
                return None
            buf += chunk
        return buf

    def _end(self, proc: subprocess.Popen[bytes]) -> None:
        if proc is not self._proc or self._owner != os.getpid():
            return
        if self._adopted:  # not this process's child: its input is shared with the parent, so it is killed
            with contextlib.suppress(OSError):
                os.kill(proc.pid, signal.SIGKILL)
            return
        if proc.poll() is None:
            _close(proc)

    def _kill(self) -> None:
        if self._proc is not None and self._owner == os.getpid():
            if self._adopted:  # not this process's child (Popen.kill would take it for ended): its starter reaps it
                with contextlib.suppress(OSError):
                    os.kill(self._proc.pid, signal.SIGKILL)
            else:
                self._proc.kill()
                self._proc.wait()
        self._proc = None

    def _release(self, number: int, generation: int) -> None:
        if generation == self._generation and self._owner == os.getpid():
            self._closing.append(number)

    def _call(self, method: str, **params: Any) -> Any:
        here = os.getpid()
        # An adopted worker is not this process's child (its poll() would say it ended): its death shows as a
        # closed pipe instead, and the call raises.
        gone = self._proc is None or self._owner != here or (not self._adopted and self._proc.poll() is not None)
        if gone and not self._adopt():
            self._start()  # first call in this process, or the last worker died
        assert self._proc is not None and self._proc.stdin is not None
        closing, self._closing = self._closing, []
        for number in closing:
            self._exchange("close", {"episode": number})
        return self._exchange(method, params)

    def _exchange(self, method: str, params: Mapping[str, Any]) -> Any:
        assert self._proc is not None and self._proc.stdin is not None
        self._ids += 1
        # Named by this process too: a worker taken over from a process killed mid-call (`_adopt`) still owes
        # that one its answer, which is read and dropped here rather than taken for this call's.
        sent = f"{os.getpid()}-{self._ids}"
        try:
            self._proc.stdin.write(msgspec.json.encode({"id": sent, "method": method, "params": params}) + b"\n")
        except BrokenPipeError:
            code = self._proc.wait()
            self._proc = None
            raise _died(f"the benchmark worker died (exit code {code})", code) from None
        reply: dict[str, Any] = {}
        while reply.get("id") != sent:
            # A long reply (a snapshot) may arrive in several reads; all of it is one line.
            line = self._read_line()
            if line is None:
                died = self._proc.wait() if self._proc else None
                self._proc = None
                raise _died(f"the benchmark worker died (exit code {died}) during {method}", died)
            for piece in line.splitlines():  # a dropped answer and this one may arrive in one read
                reply = json.loads(piece)
                if reply.get("id") == sent:
                    break
        if "error" in reply:
            if reply.get("infrastructure"):
                # The adapter says its machinery failed (its browser closed): this worker is done; the next call
                # starts a new one, with a new browser.
                self._end(self._proc)
                self._proc = None
                raise InfrastructureError(
                    f"{method} failed in the benchmark worker's machinery (a new worker is started): {reply['error']}"
                )
            raise BenchmarkCrash(f"{method} raised in the benchmark worker: {reply['error']}")
        return reply["result"]

    def _handle(self, episode: Handle) -> int:
        if episode.generation != self._generation:
            raise InfrastructureError("the benchmark worker holding this episode has been replaced")
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
        # Asked of every action of every cell: a pure function of the action, so each is asked of the worker once.
        key = msgspec.json.encode(action)
        known = self._writes.get(key)
        if known is None:
            if len(self._writes) >= WRITES_KEPT:
                self._writes.clear()
            known = self._writes[key] = bool(self._call("is_write", action=msgspec.to_builtins(action)))
        return known

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

    def _form(self, task: str) -> FormFacts:
        try:
            return msgspec.convert(self._call("form", task=task), FormFacts)
        except msgspec.ValidationError as e:
            raise AuditError(f"{self.name}: the worker's form of {task} is not a form's facts: {e}") from None

    def _close(self, episode: Handle) -> None:
        if episode.generation != self._generation or self._owner != os.getpid():
            return  # its worker is gone (and the episode with it), or belongs to another process
        episode.release.detach()  # closed now, not again when the handle is collected
        self._call("close", episode=episode.number)

    def _kind(self, task: str) -> str:
        return str(self._call("kind", task=task))

    def _reads_trace(self, task: str) -> bool:
        return bool(self._call("reads_trace", task=task))

    def _idle_writes(self, task: str) -> Sequence[int]:
        return [int(i) for i in self._call("idle_writes", task=task)]

    def _patch(self, episode: Handle, path: Sequence[str], value: Any) -> None:
        self._call("patch", episode=self._handle(episode), path=list(path), value=value)

    def _page_writes(self, task: str, run: Run) -> list[Action]:
        return msgspec.convert(self._call("page_writes", task=task, run=msgspec.to_builtins(run)), list[Action])

    def _verify_reading(self, episode: Handle, run: Run) -> tuple[Verdict, Reads]:
        verdict, reads = self._call("verify_reading", episode=self._handle(episode), run=msgspec.to_builtins(run))
        return msgspec.convert(verdict, Verdict), msgspec.convert(reads, Reads)


def _died(reason: str, code: int | None) -> BenchmarkCrash:
    """A worker that died: killed by a signal, the machinery's (scored again); an exit, the benchmark's own."""
    return InfrastructureError(reason) if code is not None and code < 0 else BenchmarkCrash(reason)

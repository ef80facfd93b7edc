"""The results store: one object that owns an output directory and every file in it.

    manifest.json       every cell, fixed (and hashed) before the first is scored; written once, atomically
                        (a swap census's cells without their run: `pairs.stored`)
    cells.jsonl         the ledger: one JSON object per scored cell, appended as each finishes
    cells.jsonl.torn    the bytes of a torn last line, kept when a resumed run drops it
    runs.jsonl          one line per `audit`/`swap` invocation (when, and for how long on the wall clock)
    summary.json/.md    the summary, for machines and for people (derived: rebuilt by `verimut report`)
    rewards.json        every graded cell's reward under every formula (derived)
    report.html         the page (derived)
    report/             its finding pages past the first, when a list of findings is long (derived)
    repair/             `verimut repair`'s module and its summary.json/.md

and, in a directory of its own, `verimut diff`'s diff.md and diff.json (`write_diff`).

The ledger has one writer, which appends whole lines with a single write each (fsynced at most
every `FSYNC_EVERY` seconds and on close), so a run killed at any moment leaves at most one torn
line, at the very end. Only the path that is
about to append (`resume`) repairs such a tail; readers (`rows`) skip it and change nothing.
Derived files are written atomically (temp file, fsync, rename): a reader sees the old file or
the whole new one. Every file written here is a regular file verimut made: a symbolic link in its
place (or on the way, `repair/`) is refused, not followed, so no write lands outside the
directory. A full disk or a read-only file system is a one-line error that leaves every recorded
row whole, so a rerun resumes. No other module names these files: `reproduce.py` alone keeps its own
names, because it runs standalone from an archive without verimut installed.
"""

from __future__ import annotations

import errno
import fcntl
import os
import tempfile
import time
import weakref
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec

from verimut import __version__
from verimut.core.cells import Packed, manifest_hash
from verimut.core.errors import AuditError
from verimut.core.printable import inert
from verimut.core.records import Cell, CellResult, Manifest, RunRecord
from verimut.engine import arms

MANIFEST = "manifest.json"
LEDGER = "cells.jsonl"
TORN = "cells.jsonl.torn"
RUNS = "runs.jsonl"
SUMMARY_JSON = "summary.json"
SUMMARY_MD = "summary.md"
REWARDS = "rewards.json"
REPORT = "report.html"
REPORT_PAGES = "report"  # report.html's finding pages past its first (outputs/report_html.py: Pages)
REPAIR = "repair"
# `verimut diff A B --out DIR`: the diff of two audits, in a directory of its own (never inside an audit's).
DIFF_MD = "diff.md"
DIFF_JSON = "diff.json"

_decoder = msgspec.json.Decoder(CellResult)
_encoder = msgspec.json.Encoder()
_cell = msgspec.json.Decoder(Cell)


class _Stored(Manifest, frozen=True):
    """manifest.json as read: each cell's JSON left undecoded (decoded one by one, then packed)."""

    cells: list[msgspec.Raw]  # type: ignore[assignment]


def encode_json(value: Any, *, order: Any = None) -> bytes:
    """A derived file's bytes: indented JSON, as every derived file is written."""
    return msgspec.json.format(msgspec.json.encode(value, order=order))


def manifest_json(m: Manifest) -> Iterator[bytes]:
    """manifest.json's bytes, `encode_json(m, order="sorted")`, made a block of cells at a time when they are
    packed (the file of a million cells is never one string in memory)."""
    if not isinstance(m.cells, Packed) or not m.cells:
        yield encode_json(msgspec.structs.replace(m, cells=list(m.cells)), order="sorted")
        return
    # The head with no cells, then the cells where it says `"cells": []` (the first: no string holds a bare quote),
    # each block's array formatted and indented one level deeper, as the whole would be.
    before, after = encode_json(msgspec.structs.replace(m, cells=[]), order="sorted").split(b'"cells": []', 1)
    yield before + b'"cells": [\n'
    for k, block in enumerate(m.cells.json_blocks()):
        inner = msgspec.json.format(block)[2:-2]  # its cells, without the block's "[\n" and "\n]"
        yield (b",\n" if k else b"") + b"  " + inner.replace(b"\n", b"\n  ")
    yield b"\n  ]" + after


def refuse_link(path: Path) -> None:
    """Refuse a symbolic link where verimut writes: appending through it would change the link's target, and a
    dangling one would create a file outside --out (a directory copied or unpacked from elsewhere may hold one)."""
    if path.is_symlink():
        raise AuditError(f"{path} is a symbolic link; verimut writes only regular files it owns in --out")


def _unwritable(path: Path, e: OSError) -> AuditError | None:
    """A full disk or a read-only file system (ext4 remounts so after an I/O error) as one line naming the file."""
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        why = "no space left on device" if e.errno == errno.ENOSPC else "disk quota exceeded"
        return AuditError(f"cannot write {path}: {why}; nothing recorded is lost; free space and run again to resume")
    if e.errno == errno.EROFS:
        return AuditError(
            f"cannot write {path}: the file system is read-only; nothing recorded is lost; "
            "make it writable and run again to resume"
        )
    return None


@contextmanager
def _writing(path: Path) -> Iterator[None]:
    """Writes to `path` in this block: the machine's state (full, read-only) is an AuditError, not a traceback."""
    try:
        yield
    except OSError as e:
        error = _unwritable(path, e)
        if error is None:
            raise
        raise error from None


def _open(path: Path, flags: int) -> int:
    """os.open for writing that never follows a link at `path`: O_NOFOLLOW closes the gap after `refuse_link`."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as e:
        if e.errno == errno.ELOOP:
            refuse_link(path)
        raise


def _write_whole(fd: int, data: bytes) -> None:
    """Append `data` to the end of `fd` whole or not at all.

    A disk that fills takes part of a write and refuses the rest: the row would be cut, and the
    next run's first row would join its half, a line in the middle no reader can parse. So a
    failed write is cut back to where it began (verimut is the file's one writer: it holds the lock).
    """
    start = os.lseek(fd, 0, os.SEEK_END)
    rest = memoryview(data)
    try:
        while rest:
            rest = rest[os.write(fd, rest) :]
    except OSError:
        try:
            os.ftruncate(fd, start)
        except OSError:
            pass  # a torn last line is what `Store.resume` repairs
        raise


def _append(path: Path, data: bytes) -> None:
    """Append whole lines to `path` (a run log, the torn rows), created if missing, never through a link."""
    with _writing(path):
        fd = _open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            _write_whole(fd, data)
        finally:
            os.close(fd)


def atomic_write(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Write `path` so that a reader sees the old file or the whole new one, never a part."""
    refuse_link(path)  # the rename would replace the link; refused like every other write, so a link is never lost
    with _writing(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-", suffix=".tmp")
        try:
            # mkstemp makes the file private; a derived file is as readable as the ledger beside it.
            os.fchmod(fd, 0o644)
            with os.fdopen(fd, "wb") as f:
                for chunk in [data] if isinstance(data, bytes) else data:  # a large file a chunk at a time
                    f.write(chunk)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            # A half-written temp file left behind would make the directory look like a stranger's next time
            # (and on a full disk, it holds the space the user is asked to free).
            Path(tmp).unlink(missing_ok=True)
            raise


# At most this long between fsyncs of the ledger. An fsync costs about 2 ms here, more than
# scoring a cheap cell (bench/bench_side_effects.py); a row is in the kernel once written, so a
# killed process loses nothing, and an operating-system crash loses at most this much work,
# which a resumed run scores again.
FSYNC_EVERY = 0.5


class Appender:
    """The ledger's one writer: whole lines, one write each; an fsync at most every FSYNC_EVERY s, and on close."""

    def __init__(self, path: Path, every: float = FSYNC_EVERY) -> None:
        self.path = path
        self.every = every
        self._fd: int | None = None
        self._synced = 0.0

    def append(self, row: CellResult) -> None:
        with _writing(self.path):
            if self._fd is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = _open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
                self._synced = time.monotonic()
            _write_whole(self._fd, _encoder.encode(row) + b"\n")
            if time.monotonic() - self._synced >= self.every:
                os.fsync(self._fd)
                self._synced = time.monotonic()

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                with _writing(self.path):  # a network file system reports a full disk as late as this
                    os.fsync(fd)
            finally:
                os.close(fd)


_BLOCK = 1 << 22  # the ledger is read in blocks of this many bytes
_SHIFT = 32  # a row's place: its offset << _SHIFT | its length (one int a row, not a tuple)


class Ledger(Mapping[str, CellResult]):
    """The ledger's rows by cell id, read on demand: only each row's place in the file is held.

    A summary of a million cells holds a million ids and offsets (about 150 MB), not a million decoded rows
    (gigabytes); each pass over it reads and decodes the rows again, one at a time. The file is append-only, so
    a place once read stays valid while the audit appends. Iteration is in ledger order, as a dict of the rows
    built line by line would be (an id recorded twice keeps its first position and its last row)."""

    def __init__(self, path: Path, places: dict[str, int]) -> None:
        self.path = path
        self._places = places
        self._fd: int | None = None

    def _read(self, place: int) -> CellResult:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            weakref.finalize(self, os.close, self._fd)
        offset, length = place >> _SHIFT, place & ((1 << _SHIFT) - 1)
        return _decoder.decode(os.pread(self._fd, length, offset))

    def __getitem__(self, cell_id: str) -> CellResult:
        return self._read(self._places[cell_id])

    def get(self, cell_id: str, default: Any = None) -> Any:
        place = self._places.get(cell_id)
        return default if place is None else self._read(place)

    def __contains__(self, cell_id: object) -> bool:
        return cell_id in self._places

    def __iter__(self) -> Iterator[str]:
        return iter(self._places)

    def __len__(self) -> int:
        return len(self._places)


class Store:
    """An output directory: its manifest, ledger, run log and derived files."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def __str__(self) -> str:
        return str(self.directory)

    def path(self, name: str) -> Path:
        return self.directory / name

    def _owned(self, name: str) -> Path:
        """The path of `name` (e.g. `repair/summary.md`), refused if it or a folder on the way is a symbolic link."""
        path = self.directory
        for part in Path(name).parts:
            path = path / part
            refuse_link(path)
        return path

    def refuse_links(self) -> None:
        """Refuse the directory when a file verimut writes there is a symbolic link: checked as a command takes
        the lock, so an audit stops before its work, not at the end when it appends to the run log."""
        for name in (MANIFEST, LEDGER, TORN, RUNS, SUMMARY_JSON, SUMMARY_MD, REWARDS, REPORT):
            self._owned(name)
        for folder in (REPAIR, REPORT_PAGES):
            owned = self._owned(folder)
            if owned.is_dir():  # verimut owns all of repair/ and report/
                for entry in sorted(owned.iterdir()):
                    refuse_link(entry)

    @property
    def ledger_path(self) -> Path:
        return self.directory / LEDGER

    @property
    def repair_dir(self) -> Path:
        return self.directory / REPAIR

    # --- one writer at a time ---------------------------------------------------------------------

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the directory for a command that writes to it; refuse at once if another holds it.

        An flock on the directory itself: the kernel drops it when its holder dies, even by SIGKILL,
        so a killed run never leaves the directory stuck, and no lock file joins the outputs.
        """
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as e:
            raise AuditError(f"cannot use {self.directory} as an output directory: {_reason(e)}") from None
        try:
            if not os.access(self.directory, os.W_OK):  # a read-only file system refuses even root
                raise AuditError(f"cannot use {self.directory} as an output directory: it is read-only")
            self._take(fd, fcntl.LOCK_EX, "wait for it to finish, or choose another --out")
            self.refuse_links()
            yield
        finally:
            os.close(fd)  # closing releases the lock (forked workers' copies are gone by then)

    def _take(self, fd: int, how: int, wait: str) -> None:
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
        except BlockingIOError:
            raise AuditError(f"{self.directory} is in use by {_holder(fd)}: {wait}") from None

    def finished(self) -> tuple[Manifest, Ledger]:
        """The manifest and every row of an audit that is done, for a command that compares or exports findings
        (diff, baseline): partial results there would read as findings closed. Refused in one line while
        another command holds the directory (an audit still writing it; held shared while read), or when the
        ledger lacks some of the manifest's cells (an audit stopped before its end)."""
        try:
            fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return self.read_manifest(), self.rows()  # not a directory: read_manifest says what it is
        try:
            self._take(fd, fcntl.LOCK_SH, "its audit is unfinished; wait for it to finish")
            m, rows = self.read_manifest(), self.rows()
        finally:
            os.close(fd)
        missing = [c.cell_id for c in m.cells if c.cell_id not in rows]
        if missing:
            raise AuditError(
                f"{self.directory} is an unfinished audit: {len(m.cells) - len(missing)} of {len(m.cells)} cells "
                f"scored (first missing: {missing[0]}); run the audit again to finish it"
            )
        return m, rows

    # --- the manifest ----------------------------------------------------------------------------

    def has_manifest(self) -> bool:
        return (self.directory / MANIFEST).exists()

    def check_usable(self) -> None:
        """Refuse a --out that is a file, or a non-empty directory that is not a verimut output."""
        out = self.directory
        if out.exists() and not out.is_dir():
            raise AuditError(f"--out {out} is a file, not a directory")
        if out.is_dir() and any(out.iterdir()) and not self.has_manifest():
            raise AuditError(f"{out} is not a verimut output (no {MANIFEST}) and is not empty; choose another --out")

    def write_manifest(self, m: Manifest) -> None:
        self.write(MANIFEST, manifest_json(arms.of(m).stored(m)))

    def read_manifest(self) -> Manifest:
        """The manifest, its cells packed (`Packed`: decoded when read), checked against its content hash."""
        path = self.directory / MANIFEST
        if self.directory.exists() and not self.directory.is_dir():
            raise AuditError(f"{self.directory} is a file, not a verimut output directory")
        try:
            head = msgspec.json.decode(path.read_bytes(), type=_Stored)
            if head.verimut != __version__:
                raise AuditError(
                    f"{path} was written by verimut {head.verimut}, and this is {__version__}: "
                    "choose another --out, or remove that directory to audit afresh"
                )
            fields = {f: getattr(head, f) for f in Manifest.__struct_fields__}
            cells = Packed.of(_cell.decode(data) for data in head.cells)
            m = Manifest(**(fields | {"cells": cells}))
        except FileNotFoundError:
            raise AuditError(f"{self.directory} is not a verimut output: it has no {MANIFEST}") from None
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            raise AuditError(f"{path} is not a readable verimut manifest: {e}") from None
        if manifest_hash(m) != m.content_hash:
            raise AuditError(f"{path} was modified after it was written (its content hash does not match)")
        return arms.of(m).expanded(m)

    # --- the ledger ------------------------------------------------------------------------------

    def _parse(self) -> tuple[Ledger, int, bytes]:
        """Every whole row's place by id, the length of the ledger read, and its torn tail (empty unless a write
        was cut). Read once in blocks, each row decoded to check it and let go (`Ledger`)."""
        path = self.ledger_path
        if not path.exists():
            return Ledger(path, {}), 0, b""
        places: dict[str, int] = {}
        offset, n, rest = 0, 0, b""
        with open(path, "rb") as f:
            while block := f.read(_BLOCK):
                lines = (rest + block).split(b"\n")
                rest = lines.pop()  # after the last newline: the next block's start, or the torn tail
                for line in lines:
                    n += 1
                    if line.strip():
                        try:
                            row = _decoder.decode(line)
                        except (msgspec.DecodeError, msgspec.ValidationError) as e:
                            raise AuditError(
                                f"{path}: line {n} is not a cell record ({e}); fix or remove that line"
                            ) from None
                        places[row.cell_id] = offset << _SHIFT | len(line)  # a later row of an id wins
                    offset += len(line) + 1
        return Ledger(path, places), offset + len(rest), rest if rest.strip() else b""

    def rows(self) -> Ledger:
        """Every recorded cell by id, changing nothing: a torn last line is skipped; any other bad line refused.
        An index: each row is read from the file when asked for, so memory does not grow with the ledger."""
        return self._parse()[0]

    def resume(self) -> Ledger:
        """`rows`, and before appending to the ledger: move a torn last line to cells.jsonl.torn.

        The torn bytes are kept, not dropped, so nothing is silently lost; the next appended row
        then starts on a line of its own.
        """
        refuse_link(self.ledger_path)  # before reading: the rows would be another file's, and cut below
        rows, size, tail = self._parse()
        if tail:
            _append(self._owned(TORN), tail + b"\n")
            with _writing(self.ledger_path):
                fd = _open(self.ledger_path, os.O_WRONLY)
                try:
                    os.ftruncate(fd, size - len(tail))
                finally:
                    os.close(fd)
        return rows

    def appender(self) -> Appender:
        return Appender(self.ledger_path)

    # --- the run log -----------------------------------------------------------------------------
    # A report says when the work was done and how long it took on the wall clock, which the
    # ledger's per-cell `seconds` (scoring time, summed over workers) does not say.

    def append_run(self, record: RunRecord) -> None:
        _append(self._owned(RUNS), _encoder.encode(record) + b"\n")

    def runs(self) -> list[RunRecord]:
        """Every recorded invocation; a line that does not parse (a torn write) is skipped, it only informs."""
        path = self.directory / RUNS
        if not path.exists():
            return []
        found = []
        for line in path.read_bytes().splitlines():
            try:
                found.append(msgspec.json.decode(line, type=RunRecord))
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue
        return found

    # --- derived files ---------------------------------------------------------------------------

    def write(self, name: str, data: bytes | str | Iterable[bytes]) -> Path:
        """Write a derived file (a name relative to the directory, e.g. `repair/summary.md`) atomically."""
        path = self._owned(name)
        atomic_write(path, data.encode() if isinstance(data, str) else data)
        return path

    def read_json(self, name: str) -> Any:
        """A derived JSON file's content, or None when it is missing or unreadable (it is rebuilt, not trusted)."""
        try:
            return msgspec.json.decode((self.directory / name).read_bytes())
        except (FileNotFoundError, msgspec.DecodeError):
            return None

    def write_summary(self, report: Any, text: str) -> None:
        """summary.json (the report, for machines) and summary.md (the text, for people)."""
        self.write(SUMMARY_JSON, encode_json(report))  # JSON escapes control characters itself
        # Markdown is read in a terminal (cat, less -R) as often as rendered: the benchmark's ESC and BEL inert.
        self.write(SUMMARY_MD, inert(text))

    def write_rewards(self, per_cell: Any) -> None:
        self.write(REWARDS, encode_json(per_cell, order="sorted"))

    def rewards(self) -> dict[str, dict[str, float]]:
        """rewards.json: every graded cell's reward per formula (empty for a swap census, or before scoring)."""
        found = self.read_json(REWARDS)
        return found if isinstance(found, dict) else {}

    def summary(self) -> Any:
        return self.read_json(SUMMARY_JSON)

    def write_report(self, html: str) -> Path:
        return self.write(REPORT, html)

    def prune_report_pages(self, written: Iterable[str]) -> None:
        """Remove the finding pages a longer, earlier report.html linked and this one does not (their findings are
        gone or on other pages now); the folder too when no page is left."""
        folder = self._owned(REPORT_PAGES)
        if not folder.is_dir():
            return
        keep = set(written)
        with _writing(folder):
            for entry in folder.iterdir():
                if entry.name not in keep and entry.suffix == ".html" and not entry.is_symlink():
                    entry.unlink()
            if not any(folder.iterdir()):
                folder.rmdir()

    def write_repair(self, module_name: str, source: str) -> Path:
        """The repaired verifiers' module, under repair/."""
        # Its comments name cells by id: inert there, as a raw ESC would drive the terminal of whoever reads it
        # and a raw CR ends a comment for Python. Its literals are repr()s, which hold no raw control character.
        return self.write(f"{REPAIR}/{module_name}", inert(source))

    def write_repair_summary(self, report: Any, text: str) -> None:
        self.write(f"{REPAIR}/{SUMMARY_JSON}", encode_json(report))
        self.write(f"{REPAIR}/{SUMMARY_MD}", inert(text))  # as summary.md

    def repair_summary(self) -> Any:
        return self.read_json(f"{REPAIR}/{SUMMARY_JSON}")


def _reason(e: OSError) -> str:
    if e.errno in (errno.ENOTDIR, errno.EEXIST):
        return "a part of that path is a file, not a directory"
    return e.strerror or str(e)


def _holder(fd: int) -> str:
    """Who holds the directory's lock, read from /proc/locks (Linux); "another verimut command" elsewhere."""
    try:
        inode = os.fstat(fd).st_ino
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            # "1: FLOCK  ADVISORY  WRITE 12345 fd:01:1234567 0 EOF": pid, then device:inode.
            if len(fields) > 5 and fields[1] == "FLOCK" and fields[5].rsplit(":", 1)[-1] == str(inode):
                pid = fields[4]
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                return f"pid {pid} ({command.strip()[:200]})"
    except OSError:
        pass
    return "another verimut command"


def write_diff(directory: Path, report: Any, text: str) -> tuple[Path, Path]:
    """`verimut diff`'s diff.json and diff.md in `directory`, which is not an audit's: a file there that verimut did
    not write as part of the audit would make `verimut bundle` refuse the audit."""
    if directory.exists() and not directory.is_dir():
        raise AuditError(f"--out {directory} is a file, not a directory")
    if (directory / MANIFEST).exists():
        raise AuditError(f"--out {directory} is an audit's directory: give the diff a directory of its own")
    # Nor inside one (`bundle` would refuse the stray files): an ancestor with a ledger beside its manifest.json
    # (a project's own manifest.json alone is no audit).
    for place in directory.absolute().parents:
        if (place / MANIFEST).is_file() and (place / LEDGER).is_file():
            raise AuditError(
                f"--out {directory} is inside {place}, an audit's directory: give the diff a directory of its own"
            )
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise AuditError(f"cannot use {directory} as an output directory: {_reason(e)}") from None
    json_path, md_path = directory / DIFF_JSON, directory / DIFF_MD
    atomic_write(json_path, encode_json(report))
    atomic_write(md_path, inert(text).encode())
    return md_path, json_path

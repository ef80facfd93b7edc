"""The sealed evidence record: `verimut bundle DIR` and `verimut verify BUNDLE`.

A bundle is one deterministic .tar.gz (default: `<name>-bundle.tar.gz` next to DIR), laid out as

    <name>-bundle/
      audit/...        every file of DIR that verimut wrote, as it is (ledger, manifest, summaries, repair/);
                       other files only when asked (`--include-extra`)
      versions.json    Python, the platform, and the exact version of every installed package
      reproduce.py     a copy of verimut's standard-library reproducer (python3 reproduce.py)
      SHA256SUMS       `<sha256>  <path>` for every other member (`sha256sum -c SHA256SUMS` checks it)

The same DIR in the same environment gives the same bytes: members sorted, mtime 0, owner 0,
no user names, mode 644, and a gzip header without a name or a time. `verify` checks every
checksum and then has the standard-library reproducer re-derive summary.json from the ledger.
It runs this verimut's reproducer, never code from the archive, so verifying an archive from
elsewhere executes nothing it contains; and it decompresses at most a bounded multiple of the
archive's size (RATIO, CEILING), so a compression bomb is refused at the header that declares it.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.metadata
import io
import json
import os
import platform
import sys
import tarfile
import tempfile
import zlib
from collections.abc import Container, Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import IO

import msgspec

from verimut.core.errors import AuditError
from verimut.engine.store import (
    LEDGER,
    MANIFEST,
    REPAIR,
    REPORT,
    REPORT_PAGES,
    REWARDS,
    RUNS,
    SUMMARY_JSON,
    SUMMARY_MD,
    TORN,
)
from verimut.outputs import reproduce

AUDIT, VERSIONS, REPRODUCER, SUMS = "audit", "versions.json", "reproduce.py", "SHA256SUMS"
_SHOWN = 6  # names listed in a one-line error before "and N more"


class VerifyReport(msgspec.Struct, frozen=True):
    files: int  # members whose checksum matched
    counts: int  # numbers the reproducer re-derived, all matching summary.json
    arm: str
    # Whether the bundle's reproduce.py is this verimut's: if not, the bundle was made by another
    # version, and its own reproducer (run by hand) may check other things.
    same_reproducer: bool


def default_dest(directory: Path) -> Path:
    d = directory.resolve()
    return d.parent / f"{d.name}-bundle.tar.gz"


def versions() -> dict[str, object]:
    """The interpreter, the platform, and every installed distribution's exact version."""
    packages: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        # The first of two copies on sys.path is the one imported.
        if name and name not in packages:
            packages[name] = dist.version
    return {
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "platform": platform.platform(),
        "packages": dict(sorted(packages.items(), key=lambda kv: kv[0].lower())),
    }


def _short(names: list[str]) -> str:
    more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
    return ", ".join(names[:_SHOWN]) + more


# The files the store writes at the top of an output directory (verimut.engine.store), and its folders.
_OWNED = frozenset({MANIFEST, LEDGER, TORN, RUNS, SUMMARY_JSON, SUMMARY_MD, REWARDS, REPORT})
_FOLDERS = frozenset({REPAIR, REPORT_PAGES})


def _owned(rel: str, is_dir: bool) -> bool:
    """Whether verimut writes this path: a store file, or a file of `verimut repair`'s folder (whose module
    name is the repair's to choose) or of the report's finding pages. A dotfile there is an interrupted atomic
    write's temp file, not output."""
    top, _, rest = rel.partition("/")
    if not rest:
        return rel in _FOLDERS if is_dir else rel in _OWNED
    return top in _FOLDERS and not is_dir and "/" not in rest and not rest.startswith(".")


def _files(directory: Path, include_extra: bool = False) -> dict[str, bytes]:
    """The files to seal by relative posix path, each read once (what is hashed is what is packed).

    Only what verimut wrote, unless `include_extra`: a stray note, dotfile or temp file would otherwise be
    sealed as evidence without anyone choosing it. Extras are named, and refused, before any file is read.
    """
    paths: dict[str, Path] = {}
    extra: list[str] = []
    for root, dirs, names in os.walk(directory):
        for name in sorted(dirs + names):
            path = Path(root) / name
            rel = path.relative_to(directory).as_posix()
            is_dir = path.is_dir() and not path.is_symlink()
            if not include_extra and not _owned(rel, is_dir):
                extra.append(f"{rel}/" if is_dir else rel)
                if name in dirs:
                    dirs.remove(name)  # a stray folder is named once, not walked
                continue
            if path.is_symlink():
                # Following it could seal a file from elsewhere; skipping it would leave a gap unsaid.
                raise AuditError(f"{path} is a symbolic link: a bundle holds regular files only")
            if "\n" in rel or "\\" in rel:
                raise AuditError(f"{path}: a newline or backslash in a file name cannot be listed in {SUMS}")
            if path.is_file():
                paths[rel] = path
            elif not is_dir:
                raise AuditError(f"{path} is not a regular file: a bundle holds regular files only")
    if extra:
        raise AuditError(
            f"{directory} holds files verimut did not write ({_short(sorted(extra))}): "
            "move them out, or pass --include-extra to seal them too"
        )
    return {rel: paths[rel].read_bytes() for rel in sorted(paths)}


def _sums(members: dict[str, bytes]) -> bytes:
    return "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in members.items()).encode()


def _pack(top: str, members: dict[str, bytes], dest: Path) -> None:
    """Write atomically, byte-for-byte reproducible: no times, owners or names but the members'."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}-", suffix=".tmp")
    try:
        with (
            os.fdopen(fd, "wb") as raw,
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz,
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
        ):
            for name in sorted(members):
                info = tarfile.TarInfo(f"{top}/{name}")
                info.size, info.mtime, info.mode = len(members[name]), 0, 0o644
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                tar.addfile(info, io.BytesIO(members[name]))
        # Closed (so the gzip trailer is written) before the rename makes it visible.
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _require(present: Container[str], where: str) -> None:
    """Refuse what is not a verimut output, naming the files the reproducer needs that it lacks."""
    missing = [n for n in (MANIFEST, LEDGER, SUMMARY_JSON) if n not in present]
    if missing:
        raise AuditError(f"{where} is not a verimut output: it has no {', '.join(missing)}")


def _counts(
    files: Mapping[str, bytes], where: str, ledger: IO[bytes] | None = None
) -> tuple[str, list[reproduce.Check]]:
    """Run the standard-library reproducer on a manifest, ledger and summary held in memory, or with the ledger
    streamed from `ledger` (verify's: an archive's ledger may be large, and is not held whole)."""
    _require({*files, *([LEDGER] if ledger is not None else [])}, where)
    try:
        return reproduce.checks(files[MANIFEST], files[LEDGER] if ledger is None else ledger, files[SUMMARY_JSON])
    except ValueError as e:
        raise AuditError(f"{where}: {e}") from None


def _mismatch(found: list[reproduce.Check]) -> str:
    bad = [c for c in found if not c.ok]
    shown = [
        c.name if isinstance(c.derived, list) else f"{c.name} (ledger {c.derived}, summary {c.recorded})" for c in bad
    ]
    return _short(shown)


def write_counted(directory: Path, dest: Path | None = None, include_extra: bool = False) -> tuple[Path, int]:
    """`write`, also returning how many files the archive holds."""
    if not directory.is_dir():
        raise AuditError(f"{directory} is not a directory")
    dest = (dest or default_dest(directory)).resolve()
    if dest.is_relative_to(directory.resolve()):
        raise AuditError(f"{dest} is inside {directory}: the bundle would contain itself")
    # Not an output at all (the wrong directory?): say so first, rather than list its files as strays.
    _require({p.name for p in directory.iterdir() if p.is_file()}, str(directory))
    files = _files(directory, include_extra)
    # Sealing a summary its own ledger does not give would only make a bundle that fails `verify`.
    _, found = _counts(files, str(directory))
    if not all(c.ok for c in found):
        raise AuditError(
            f"{directory}/{SUMMARY_JSON} does not match its ledger ({_mismatch(found)}); "
            f"run `verimut report {directory}` first"
        )
    members = {f"{AUDIT}/{name}": data for name, data in files.items()}
    members[REPRODUCER] = Path(reproduce.__file__).read_bytes()
    members[VERSIONS] = json.dumps(versions(), indent=2).encode() + b"\n"
    members = dict(sorted(members.items()))
    members[SUMS] = _sums(members)
    _pack(f"{directory.resolve().name}-bundle", members, dest)
    return dest, len(members)


def write(directory: Path, dest: Path | None = None, include_extra: bool = False) -> Path:
    """Seal DIR into one deterministic .tar.gz (default `<DIR>-bundle.tar.gz` beside DIR); return its path.

    Only the files verimut wrote, unless `include_extra` (any other file is refused, named)."""
    return write_counted(directory, dest, include_extra)[0]


# A SHA256SUMS this large lists more files than any audit writes: refuse it rather than read it.
_SUMS_LIMIT = 64 << 20

# What `verify` decompresses is bounded before it is decompressed (issue 27: a 2.3 MB archive holding 2 GiB of
# padding took 155 s and 18.9 GB). Deflate expands at most about 1,030-fold (zeros at -9; the bomb,
# 930-fold); real bundles expand less than 10-fold as a whole, and their most compressible member measured (a
# census's manifest) 38-fold. So the archive's uncompressed tar stream may be at most RATIO (ten times that) times
# the archive's own size (FLOOR for a small one), and at most CEILING whatever its size (four times a million-cell
# census's 1.9 GB). Each header declares its member's size: a member that would end past the bound is refused at
# its header, before its content is decompressed.
RATIO = 400
FLOOR = 64 << 20
CEILING = 8 << 30
MEMBERS = 10_000  # an audit writes a dozen files; a million empty headers would cost their records in memory
# verify reads content in CHUNKs; tarfile reads a pax or long-name header's data in one read, before verify sees
# that header: a single read larger than this can only be such a header, and is refused.
_CHUNK = 1 << 20
_READ = 16 << 20
# The member types a bundle holds: plain files (no sparse file, which expands holes that are not in the archive).
_PLAIN = (tarfile.REGTYPE, tarfile.AREGTYPE)


def _limit(size: int) -> int:
    """How many uncompressed bytes verify reads from an archive of `size` bytes."""
    return min(CEILING, max(FLOOR, RATIO * size))


def _bound(limit: int) -> str:
    return f"{limit:,} bytes: {RATIO} x its size, at most {CEILING >> 30} GiB"


class _Bounded:
    """The archive's decompressed stream, as tarfile reads it, that stops at `limit` bytes whatever is read:
    members, headers and a header's own data alike. Backward seeks (gzip restarts from the top) stay below it."""

    def __init__(self, gz: gzip.GzipFile, limit: int, archive: Path) -> None:
        self.gz, self.limit, self.archive = gz, limit, archive

    def _past(self) -> AuditError:
        return AuditError(
            f"{self.archive}: it decompresses to more than verify reads from it ({_bound(self.limit)}): "
            "stopped there (a compression bomb?)"
        )

    def tell(self) -> int:
        return self.gz.tell()

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence != os.SEEK_SET or offset > self.limit:  # tarfile seeks to absolute offsets only
            raise self._past()
        return self.gz.seek(offset)

    def read(self, size: int = -1) -> bytes:
        if not 0 <= size <= _READ:
            raise AuditError(f"{self.archive}: a tar header holds more than {_READ:,} bytes: not a bundle's")
        data = self.gz.read(min(size, self.limit + 1 - self.gz.tell()))
        if self.gz.tell() > self.limit:
            raise self._past()
        return data


def _index(tar: tarfile.TarFile, limit: int, archive: Path) -> tuple[dict[str, tarfile.TarInfo], list[str]]:
    """Members by path below the top folder, from their headers alone, and the problems they show.

    Headers are read one at a time: one that declares content past `limit`, or one too many, stops the
    listing there, before that content is decompressed."""
    index: dict[str, tarfile.TarInfo] = {}
    problems: list[str] = []
    tops: set[str] = set()
    for n, info in enumerate(tar, 1):
        if n > MEMBERS:
            raise AuditError(f"{archive} has more than {MEMBERS} members: not a bundle")
        if info.offset_data + info.size > limit:
            raise AuditError(
                f"{archive}: {info.name} declares {info.size:,} bytes, more than verify decompresses from this "
                f"archive ({_bound(limit)}): refused unread (a compression bomb?)"
            )
        parts = PurePosixPath(info.name).parts
        if info.isdir():
            continue
        if len(parts) < 2 or info.name.startswith("/") or ".." in parts or info.type not in _PLAIN:
            problems.append(f"unexpected member {info.name}")
            continue
        tops.add(parts[0])
        name = "/".join(parts[1:])
        if name in index:
            problems.append(f"{name} appears twice")
        index[name] = info
    if len(tops) > 1:
        problems.append(f"more than one top folder ({', '.join(sorted(tops))})")
    return index, problems


def _chunks(tar: tarfile.TarFile, info: tarfile.TarInfo) -> Iterator[bytes]:
    f = tar.extractfile(info)
    if f is not None:
        yield from iter(lambda: f.read(_CHUNK), b"")


def _content(tar: tarfile.TarFile, info: tarfile.TarInfo) -> bytes:
    return b"".join(_chunks(tar, info))


def _sha256(tar: tarfile.TarFile, info: tarfile.TarInfo, keep: list[bytes] | None = None) -> str:
    """Hashed in chunks: a listed member's size says nothing about its honesty, and must not cost its size in memory.

    The chunks are also kept in `keep` when given: a member needed whole later is not decompressed twice."""
    h = hashlib.sha256()
    for chunk in _chunks(tar, info):
        h.update(chunk)
        if keep is not None:
            keep.append(chunk)
    return h.hexdigest()


def _parse_sums(text: bytes, archive: Path) -> dict[str, str]:
    listed: dict[str, str] = {}
    for n, line in enumerate(text.decode(errors="replace").splitlines(), 1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64 or not name:
            raise AuditError(f"{archive}: {SUMS} line {n} is not `<sha256>  <path>`")
        listed[name] = digest.lower()
    return listed


def _unreadable(archive: Path, e: Exception) -> AuditError:
    """One line naming the file and what is wrong with it, whichever layer failed (file, gzip, tar)."""
    text = " ".join(str(e).split())  # tarfile's messages can span lines
    if isinstance(e, EOFError) or "unexpected end of data" in text:
        why = "it is truncated (the data ends before the archive does)"
    elif isinstance(e, gzip.BadGzipFile) and text.startswith("Not a gzipped file"):
        why = "it is not gzip-compressed (a bundle is a .tar.gz)"
    elif isinstance(e, zlib.error | gzip.BadGzipFile) or "zlib" in text:
        why = f"its compressed data is corrupt ({text})"
    elif isinstance(e, tarfile.TarError):
        why = f"it is gzip-compressed but not a tar archive ({text})"
    else:
        why = getattr(e, "strerror", None) or text  # an OSError: no such file, a directory, no permission
    return AuditError(f"{archive} is not a readable bundle: {why}")


def verify(archive: Path) -> VerifyReport:
    """Check every checksum, then re-derive summary.json from the ledger; any problem is an AuditError.

    The member list is checked from the headers before any content is read; nothing past the archive's
    bound (`_limit`) is decompressed; members are read in archive order (a gzip stream cannot seek back
    without starting over), in chunks, and the ledger streamed into the reproducer, so a hostile archive
    costs a bounded time and its headers' worth of memory, not its members'.
    """
    try:
        with open(archive, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as gz:
            size = os.fstat(raw.fileno()).st_size
            if not size:
                raise AuditError(f"{archive} is not a readable bundle: it is empty")
            limit = _limit(size)
            # typeshed's file type has more methods than tarfile reading uses (read, seek, tell)
            with tarfile.open(fileobj=_Bounded(gz, limit, archive), mode="r:") as tar:  # type: ignore[call-overload]
                index, problems = _index(tar, limit, archive)
                if SUMS not in index:
                    raise AuditError(f"{archive} has no {SUMS}: it is not a verimut bundle")
                if index[SUMS].size > _SUMS_LIMIT:
                    raise AuditError(f"{archive}: its {SUMS} is {index[SUMS].size} bytes, too large to be a bundle's")
                listed = _parse_sums(_content(tar, index[SUMS]), archive)
                missing = [n for n in listed if n not in index]
                extra = [n for n in index if n not in listed and n != SUMS]
                # Only listed members are read (in chunks); an unlisted one is named from its header alone.
                present = sorted((n for n in listed if n in index), key=lambda n: index[n].offset_data)
                prefix = f"{AUDIT}/"
                kept: dict[str, list[bytes]] = {prefix + MANIFEST: [], prefix + SUMMARY_JSON: []}  # needed whole
                changed = {n for n in present if _sha256(tar, index[n], kept.get(n)) != listed[n]}
                for label, names in (
                    ("changed", [n for n in listed if n in changed]),
                    ("missing", missing),
                    (f"not listed in {SUMS}", extra),
                ):
                    if names:
                        problems.append(f"{label}: {_short(names)}")
                if problems:
                    raise AuditError(f"{archive} does not match its checksums: {'; '.join(problems)}")
                files = {n.removeprefix(prefix): b"".join(kept[n]) for n in kept if n in index}
                ledger = index.get(prefix + LEDGER)
                stream = tar.extractfile(ledger) if ledger is not None else None  # read by the reproducer, in chunks
                arm, found = _counts(files, f"{archive} ({AUDIT}/)", stream)
    except (OSError, tarfile.TarError, EOFError, zlib.error) as e:
        raise _unreadable(archive, e) from None
    if not all(c.ok for c in found):
        raise AuditError(f"{archive}: the ledger does not reproduce {SUMMARY_JSON}: {_mismatch(found)}")
    # Compared by digest: the bundle's copy was hashed above, and need not be read again.
    same = listed.get(REPRODUCER) == hashlib.sha256(Path(reproduce.__file__).read_bytes()).hexdigest()
    return VerifyReport(files=len(listed), counts=len(found), arm=arm, same_reproducer=same)

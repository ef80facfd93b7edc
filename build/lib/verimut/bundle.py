"""The sealed evidence record: `verimut bundle DIR` and `verimut verify BUNDLE`.

A bundle is one deterministic .tar.gz (default: `<name>-bundle.tar.gz` next to DIR), laid out as

    <name>-bundle/
      audit/...        every regular file under DIR, as it is (ledger, manifest, summaries, anything else)
      versions.json    Python, the platform, and the exact version of every installed package
      reproduce.py     a copy of verimut's standard-library reproducer (python3 reproduce.py)
      SHA256SUMS       `<sha256>  <path>` for every other member (`sha256sum -c SHA256SUMS` checks it)

The same DIR in the same environment gives the same bytes: members sorted, mtime 0, owner 0,
no user names, mode 644, and a gzip header without a name or a time. `verify` checks every
checksum and then has the standard-library reproducer re-derive summary.json from the ledger.
It runs this verimut's reproducer, never code from the archive, so verifying an archive from
elsewhere executes nothing it contains.
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
from pathlib import Path, PurePosixPath
from typing import Annotated

import msgspec
import typer

from verimut import reproduce
from verimut.errors import AuditError

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


def _files(directory: Path) -> dict[str, bytes]:
    """Every regular file under DIR by relative posix path, each read once (what is hashed is what is packed)."""
    found: dict[str, bytes] = {}
    for root, dirs, names in os.walk(directory):
        for name in sorted(dirs + names):
            path = Path(root) / name
            rel = path.relative_to(directory).as_posix()
            if path.is_symlink():
                # Following it could seal a file from elsewhere; skipping it would leave a gap unsaid.
                raise AuditError(f"{path} is a symbolic link: a bundle holds regular files only")
            if "\n" in rel or "\\" in rel:
                raise AuditError(f"{path}: a newline or backslash in a file name cannot be listed in {SUMS}")
            if path.is_file():
                found[rel] = path.read_bytes()
            elif not path.is_dir():
                raise AuditError(f"{path} is not a regular file: a bundle holds regular files only")
    return dict(sorted(found.items()))


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


def _counts(files: dict[str, bytes], where: str) -> tuple[str, list[reproduce.Check]]:
    """Run the standard-library reproducer on a manifest, ledger and summary held in memory."""
    need = [reproduce.MANIFEST, reproduce.LEDGER, reproduce.SUMMARY]
    missing = [n for n in need if n not in files]
    if missing:
        raise AuditError(f"{where} is not a verimut output: it has no {', '.join(missing)}")
    try:
        return reproduce.checks(*(files[n] for n in need))
    except ValueError as e:
        raise AuditError(f"{where}: {e}") from None


def _mismatch(found: list[reproduce.Check]) -> str:
    bad = [c for c in found if not c.ok]
    shown = [
        c.name if isinstance(c.derived, list) else f"{c.name} (ledger {c.derived}, summary {c.recorded})" for c in bad
    ]
    return _short(shown)


def write_counted(directory: Path, dest: Path | None = None) -> tuple[Path, int]:
    """`write`, also returning how many files the archive holds."""
    if not directory.is_dir():
        raise AuditError(f"{directory} is not a directory")
    dest = (dest or default_dest(directory)).resolve()
    if dest.is_relative_to(directory.resolve()):
        raise AuditError(f"{dest} is inside {directory}: the bundle would contain itself")
    files = _files(directory)
    # Sealing a summary its own ledger does not give would only make a bundle that fails `verify`.
    _, found = _counts(files, str(directory))
    if not all(c.ok for c in found):
        raise AuditError(
            f"{directory}/summary.json does not match its ledger ({_mismatch(found)}); "
            f"run `verimut report {directory}` first"
        )
    members = {f"{AUDIT}/{name}": data for name, data in files.items()}
    members[REPRODUCER] = Path(reproduce.__file__).read_bytes()
    members[VERSIONS] = json.dumps(versions(), indent=2).encode() + b"\n"
    members = dict(sorted(members.items()))
    members[SUMS] = _sums(members)
    _pack(f"{directory.resolve().name}-bundle", members, dest)
    return dest, len(members)


def write(directory: Path, dest: Path | None = None) -> Path:
    """Seal DIR into one deterministic .tar.gz (default `<DIR>-bundle.tar.gz` beside DIR); return its path."""
    return write_counted(directory, dest)[0]


def _read(archive: Path) -> tuple[dict[str, bytes], list[str]]:
    """Members by path below the top folder, and the problems reading them (duplicates, odd members)."""
    members: dict[str, bytes] = {}
    problems: list[str] = []
    tops: set[str] = set()
    try:
        with tarfile.open(archive, "r:*") as tar:
            for info in tar:
                parts = PurePosixPath(info.name).parts
                if info.isdir():
                    continue
                if len(parts) < 2 or info.name.startswith("/") or ".." in parts or not info.isreg():
                    problems.append(f"unexpected member {info.name}")
                    continue
                tops.add(parts[0])
                name = "/".join(parts[1:])
                if name in members:
                    problems.append(f"{name} appears twice")
                f = tar.extractfile(info)
                members[name] = f.read() if f else b""
    except (OSError, tarfile.TarError, EOFError) as e:
        raise AuditError(f"{archive} is not a readable bundle ({e})") from None
    if len(tops) > 1:
        problems.append(f"more than one top folder ({', '.join(sorted(tops))})")
    return members, problems


def _parse_sums(text: bytes, archive: Path) -> dict[str, str]:
    listed: dict[str, str] = {}
    for n, line in enumerate(text.decode(errors="replace").splitlines(), 1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64 or not name:
            raise AuditError(f"{archive}: {SUMS} line {n} is not `<sha256>  <path>`")
        listed[name] = digest.lower()
    return listed


def verify(archive: Path) -> VerifyReport:
    """Check every checksum, then re-derive summary.json from the ledger; any problem is an AuditError."""
    members, problems = _read(archive)
    if SUMS not in members:
        raise AuditError(f"{archive} has no {SUMS}: it is not a verimut bundle")
    listed = _parse_sums(members[SUMS], archive)
    changed = [n for n, d in listed.items() if n in members and hashlib.sha256(members[n]).hexdigest() != d]
    missing = [n for n in listed if n not in members]
    extra = [n for n in members if n not in listed and n != SUMS]
    for label, names in (("changed", changed), ("missing", missing), (f"not listed in {SUMS}", extra)):
        if names:
            problems.append(f"{label}: {_short(names)}")
    if problems:
        raise AuditError(f"{archive} does not match its checksums: {'; '.join(problems)}")
    prefix = f"{AUDIT}/"
    files = {n.removeprefix(prefix): d for n, d in members.items() if n.startswith(prefix)}
    arm, found = _counts(files, f"{archive} ({AUDIT}/)")
    if not all(c.ok for c in found):
        raise AuditError(f"{archive}: the ledger does not reproduce summary.json: {_mismatch(found)}")
    same = members.get(REPRODUCER) == Path(reproduce.__file__).read_bytes()
    return VerifyReport(files=len(listed), counts=len(found), arm=arm, same_reproducer=same)


def bundle_command(
    directory: Annotated[Path, typer.Argument(help="An audit's (or swap census's) --out directory.")],
    out_path: Annotated[
        Path | None, typer.Option("--out", "-o", help="The archive to write (default: <DIR>-bundle.tar.gz beside DIR).")
    ] = None,
) -> None:
    """Seal an audit's directory, the package versions and a standard-library reproducer into one archive."""
    path, n = write_counted(directory, out_path)
    typer.echo(f"{path}  ({n} files; check with `verimut verify {path}`)")


def verify_command(bundle: Annotated[Path, typer.Argument(help="An archive written by `verimut bundle`.")]) -> None:
    """Check a bundle's checksums, and re-derive its summary.json from its ledger (exit 2 on any problem)."""
    r = verify(bundle)
    typer.echo(
        f"{r.files} files match their checksums; {r.counts} counts re-derived from the ledger match summary.json"
    )
    if not r.same_reproducer:
        typer.echo(f"note: the bundle's {REPRODUCER} differs from this verimut's (made by another version?)")

"""The sealed evidence record, on real audit output: bundle, verify, the standard-library reproducer, tampering."""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from conftest import ROOT
from verimut.cli import bundle as bundle_cli
from verimut.core.errors import AuditError
from verimut.core.records import Outcome
from verimut.findings import summary
from verimut.grammar.faults import FAMILIES, spec_of
from verimut.outputs import bundle, reproduce


# The session's banking audit and census (conftest.py), each with exit code 1: confirmed false accepts found.
@pytest.fixture
def fault_dir(banking_audit: Path) -> Path:
    return banking_audit


@pytest.fixture
def swap_dir(banking_swap: Path) -> Path:
    return banking_swap


@pytest.fixture(params=["fault_dir", "swap_dir"])
def audit_dir(request: pytest.FixtureRequest) -> Path:
    return Path(request.getfixturevalue(request.param))


def _members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]


def _repack(members: dict[str, bytes], dest: Path) -> Path:
    """A tampered copy, written with plain tarfile (verify must not depend on how the archive was made)."""
    with tarfile.open(dest, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return dest


def _top(members: dict[str, bytes]) -> str:
    return next(iter(members)).split("/", 1)[0]


def test_bundle_then_verify_passes(audit_dir: Path, tmp_path: Path) -> None:
    archive = bundle.write(audit_dir, tmp_path / "b.tar.gz")
    report = bundle.verify(archive)
    names = {n.split("/", 1)[1] for n in _members(archive)}
    assert names == {
        "SHA256SUMS",
        "reproduce.py",
        "versions.json",
        *(f"audit/{p.name}" for p in audit_dir.iterdir()),
    }
    assert report.files == len(names) - 1  # every member but SHA256SUMS is listed in it
    assert report.counts > 30 and report.same_reproducer
    assert report.arm == ("swap" if "swap" in audit_dir.name else "fault")


def test_default_destination_is_beside_the_directory(fault_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(fault_dir, copy)
    assert bundle.write(copy) == tmp_path / "run-bundle.tar.gz"
    assert _top(_members(tmp_path / "run-bundle.tar.gz")) == "run-bundle"


def test_archive_is_byte_identical_when_written_twice(fault_dir: Path, tmp_path: Path) -> None:
    first = bundle.write(fault_dir, tmp_path / "one.tar.gz").read_bytes()
    second = bundle.write(fault_dir, tmp_path / "two.tar.gz").read_bytes()
    assert first == second
    with tarfile.open(tmp_path / "one.tar.gz") as tar:
        infos = tar.getmembers()
    assert [i.name for i in infos] == sorted(i.name for i in infos)
    assert {(i.mtime, i.uid, i.gid, i.uname, i.gname, i.mode) for i in infos} == {(0, 0, 0, "", "", 0o644)}


def test_versions_and_reproducer_copy(fault_dir: Path, tmp_path: Path) -> None:
    members = _members(bundle.write(fault_dir, tmp_path / "b.tar.gz"))
    top = _top(members)
    v = json.loads(members[f"{top}/versions.json"])
    assert v["python"] == ".".join(map(str, sys.version_info[:3])) and v["platform"]
    assert v["packages"]["msgspec"] == importlib.metadata.version("msgspec")
    assert v["packages"]["agentdojo"] == "0.1.35"
    assert members[f"{top}/reproduce.py"] == (ROOT / "src/verimut/outputs/reproduce.py").read_bytes()
    sums = members[f"{top}/SHA256SUMS"].decode().splitlines()
    assert sums == [
        f"{hashlib.sha256(data).hexdigest()}  {name.split('/', 1)[1]}"
        for name, data in sorted(members.items())
        if not name.endswith("/SHA256SUMS")
    ]


def test_every_file_is_sealed_including_later_features_and_torn_leftovers(fault_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(fault_dir, copy)
    (copy / "repair").mkdir()
    (copy / "repair" / "checks.py").write_text("assert len(added) == 1\n")
    (copy / "rewards.json").write_text("{}\n")
    (copy / "cells.jsonl.torn").write_bytes(b'{"cell_id": "torn\n')
    archive = bundle.write(copy, tmp_path / "b.tar.gz")
    names = set(_members(archive))
    assert {f"run-bundle/audit/{n}" for n in ("repair/checks.py", "rewards.json", "cells.jsonl.torn")} <= names
    # Every file of the directory (report.html and runs.jsonl included), versions.json and reproduce.py.
    assert bundle.verify(archive).files == sum(p.is_file() for p in copy.rglob("*")) + 2


def _isolated(script_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # -I -S: no site-packages, no user site, no PYTHONPATH: only the standard library can be imported.
    return subprocess.run(
        [sys.executable, "-I", "-S", "reproduce.py", *args],
        cwd=script_dir,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _extract(archive: Path, into: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    [top] = into.iterdir()
    return top


def test_bundled_reproducer_runs_with_the_standard_library_alone(audit_dir: Path, tmp_path: Path) -> None:
    top = _extract(bundle.write(audit_dir, tmp_path / "b.tar.gz"), tmp_path / "x")
    run = _isolated(top)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert sum(line.startswith("OK ") for line in lines) > 30
    assert "MISMATCH" not in run.stdout and lines[-1].endswith("all OK")
    assert _isolated(top, "audit").returncode == 0  # DIR given explicitly


def test_a_changed_byte_is_named(fault_dir: Path, tmp_path: Path) -> None:
    members = _members(bundle.write(fault_dir, tmp_path / "b.tar.gz"))
    name = f"{_top(members)}/audit/cells.jsonl"
    data = bytearray(members[name])
    data[10] ^= 0x01
    members[name] = bytes(data)
    with pytest.raises(AuditError, match=r"changed: audit/cells\.jsonl$"):
        bundle.verify(_repack(members, tmp_path / "t.tar.gz"))


def test_a_missing_and_an_extra_member_are_named(fault_dir: Path, tmp_path: Path) -> None:
    members = _members(bundle.write(fault_dir, tmp_path / "b.tar.gz"))
    top = _top(members)
    del members[f"{top}/audit/summary.md"]
    with pytest.raises(AuditError, match=r"missing: audit/summary\.md"):
        bundle.verify(_repack(members, tmp_path / "t1.tar.gz"))
    members[f"{top}/audit/summary.md"] = b""
    members[f"{top}/audit/notes.txt"] = b"added later\n"
    with pytest.raises(AuditError) as e:
        bundle.verify(_repack(members, tmp_path / "t2.tar.gz"))
    assert "changed: audit/summary.md" in str(e.value) and "not listed in SHA256SUMS: audit/notes.txt" in str(e.value)


def _flip_one(ledger: bytes) -> tuple[bytes, str]:
    """The first `rejected` row, now a `false_accept`: a consistent edit of the ledger alone."""
    lines = ledger.decode().splitlines(keepends=True)
    n = next(i for i, line in enumerate(lines) if json.loads(line)["outcome"] == "rejected")
    row = json.loads(lines[n])
    lines[n] = lines[n].replace('"outcome":"rejected"', '"outcome":"false_accept"')
    return "".join(lines).encode(), row["family"]


def _with_ledger(members: dict[str, bytes], ledger: bytes) -> dict[str, bytes]:
    """The members with another ledger, and SHA256SUMS made to agree: the checksums pass, only the counts can fail."""
    top = _top(members)
    sums = {line.split("  ", 1)[1]: line for line in members[f"{top}/SHA256SUMS"].decode().splitlines()}
    sums["audit/cells.jsonl"] = f"{hashlib.sha256(ledger).hexdigest()}  audit/cells.jsonl"
    new = "".join(f"{line}\n" for line in sums.values()).encode()
    return {**members, f"{top}/audit/cells.jsonl": ledger, f"{top}/SHA256SUMS": new}


def test_a_consistently_edited_ledger_fails_the_count(fault_dir: Path, tmp_path: Path) -> None:
    members = _members(bundle.write(fault_dir, tmp_path / "b.tar.gz"))
    ledger, family = _flip_one(members[f"{_top(members)}/audit/cells.jsonl"])
    archive = _repack(_with_ledger(members, ledger), tmp_path / "t.tar.gz")

    with pytest.raises(AuditError, match=r"does not reproduce summary\.json") as e:
        bundle.verify(archive)
    assert f"counts[{family}][false_accept]" in str(e.value) and "len(false_accepts) (ledger " in str(e.value)

    run = _isolated(_extract(archive, tmp_path / "x"))
    assert run.returncode == 1
    assert f"MISMATCH  counts[{family}][rejected]" in run.stdout
    assert "MISMATCH  len(false_accepts)" in run.stdout


def test_the_reproducers_answer_channel_families_are_verimuts():
    answer = {f for f in FAMILIES if spec_of(f).needs_answer_channel}
    assert set(reproduce.ANSWER_FAMILIES) == answer
    assert set(reproduce.NULL_RUN_FAMILIES) == {f for f in FAMILIES if spec_of(f).null_run}
    assert reproduce.ANSWER_OUTCOMES == tuple(summary.ANSWER_OUTCOMES) and reproduce.ALL_SUITES == summary.ALL_SUITES
    assert reproduce.VACUOUS == Outcome.VACUOUS


def test_the_reproducer_rederives_the_answer_channel(fault_dir: Path, tmp_path: Path) -> None:
    # The banking audit's null runs (no action, no answer), two of them vacuous and two with nothing to do, and its answer-hedge false accepts.
    sealed = bundle.write(fault_dir, tmp_path / "b.tar.gz")
    members = _members(sealed)
    run = _isolated(_extract(sealed, tmp_path / "x"))
    assert run.returncode == 0, run.stdout
    for name in ("vacuous cell ids", "null_runs[graded]", "null_runs_by_suite[banking][nothing_to_do]"):
        assert f"OK        {name}" in run.stdout, name
    assert "OK        answer_counts[answer-hedge][banking][false_accept] = " in run.stdout
    # A vacuous null run and an answer false accept, each recorded rejected: every count of them moves.
    rows = [json.loads(line) for line in members[f"{_top(members)}/audit/cells.jsonl"].decode().splitlines()]
    null = next(r for r in rows if r["outcome"] == "vacuous")
    hedge = next(r for r in rows if r["family"] == "answer-hedge" and r["outcome"] == "false_accept")
    null["outcome"] = hedge["outcome"] = "rejected"
    ledger = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows).encode()
    archive = _repack(_with_ledger(members, ledger), tmp_path / "t.tar.gz")
    with pytest.raises(AuditError, match=r"does not reproduce summary\.json"):
        bundle.verify(archive)
    run = _isolated(_extract(archive, tmp_path / "y"))
    assert run.returncode == 1
    for name in (
        "len(vacuous)",
        "vacuous cell ids",
        "null_runs[vacuous]",
        "null_runs_by_suite[banking][vacuous]",
        "answer_counts[answer-hedge][banking][false_accept]",
        "answer_counts[answer-hedge][banking][rejected]",
    ):
        assert f"MISMATCH  {name}" in run.stdout, name
    assert "OK        null_runs[graded]" in run.stdout  # rejected or vacuous, a null run is graded either way


def test_bundle_refuses_what_it_cannot_seal(fault_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(AuditError, match="no manifest.json, cells.jsonl, summary.json"):
        bundle.write(tmp_path, tmp_path.parent / "empty.tar.gz")
    with pytest.raises(AuditError, match="would contain itself"):
        bundle.write(fault_dir, fault_dir / "b.tar.gz")
    copy = tmp_path / "stale"
    shutil.copytree(fault_dir, copy)
    (copy / "cells.jsonl").write_bytes(_flip_one((copy / "cells.jsonl").read_bytes())[0])
    with pytest.raises(AuditError, match=r"summary\.json does not match its ledger .*verimut report"):
        bundle.write(copy, tmp_path / "b.tar.gz")
    (tmp_path / "junk.tar.gz").write_bytes(b"not an archive")
    with pytest.raises(AuditError, match="not a readable bundle"):
        bundle.verify(tmp_path / "junk.tar.gz")


def test_commands(swap_dir: Path, tmp_path: Path) -> None:
    app = typer.Typer()
    app.command("bundle")(bundle_cli.bundle)
    app.command("verify")(bundle_cli.verify_bundle)
    runner = CliRunner()
    archive = tmp_path / "census.tar.gz"

    made = runner.invoke(app, ["bundle", str(swap_dir), "--out", str(archive)])
    assert made.exit_code == 0, made.output
    # The directory's files (report.html and runs.jsonl among them), versions.json, reproduce.py, SHA256SUMS.
    k = sum(p.is_file() for p in swap_dir.rglob("*"))
    assert str(archive) in made.output and f"({k + 3} files;" in made.output

    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert f"sha256 {digest}" in made.output  # to publish elsewhere

    checked = runner.invoke(app, ["verify", str(archive)])
    assert checked.exit_code == 0, checked.output
    n = bundle.verify(archive).counts
    assert checked.output.strip().splitlines() == [
        f"{k + 2} files match their checksums; {n} counts re-derived from the ledger match summary.json",
        f"sha256 {digest}",
        "unsigned check: the archive agrees with itself; who sealed it is not checked (see --key)",
    ]

    members = _members(archive)
    del members[f"{_top(members)}/versions.json"]
    bad = runner.invoke(app, ["verify", str(_repack(members, tmp_path / "t.tar.gz"))])
    assert isinstance(bad.exception, AuditError) and "missing: versions.json" in str(bad.exception)


def _key_pair(where: Path, name: str) -> tuple[Path, Path]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private, public = where / name, where / f"{name}.pub"
    private.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption())
    )
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    )
    return private, public


def _resealed(archive: Path, dest: Path) -> Path:
    """One evidence byte changed and SHA256SUMS recomputed to match: what the checksums alone cannot catch."""
    members = _members(archive)
    top = _top(members)
    name = f"{top}/audit/summary.md"
    members[name] = members[name].replace(b"false accept", b"false-accept", 1)
    sums = [
        line for line in members[f"{top}/SHA256SUMS"].decode().splitlines() if not line.endswith("audit/summary.md")
    ]
    sums.append(f"{hashlib.sha256(members[name]).hexdigest()}  audit/summary.md")
    members[f"{top}/SHA256SUMS"] = "".join(
        f"{line}\n" for line in sorted(sums, key=lambda x: x.split("  ")[1])
    ).encode()
    return _repack(members, dest)


def test_a_signed_bundle_binds_the_evidence_to_the_key(fault_dir: Path, tmp_path: Path) -> None:
    app = typer.Typer()
    app.command("bundle")(bundle_cli.bundle)
    app.command("verify")(bundle_cli.verify_bundle)
    runner = CliRunner()
    private, public = _key_pair(tmp_path, "auditor")
    _, stranger = _key_pair(tmp_path, "stranger")
    archive = tmp_path / "signed.tar.gz"

    made = runner.invoke(app, ["bundle", str(fault_dir), "--out", str(archive), "--sign-key", str(private)])
    assert made.exit_code == 0, made.output
    assert f"signature: {archive}.sig" in made.output
    good = runner.invoke(app, ["verify", str(archive), "--key", str(public)])
    assert good.exit_code == 0, good.output
    assert "signed by ssh-ed25519 " in good.output

    signers = tmp_path / "allowed_signers"
    signers.write_text(f"auditor@example.org {public.read_text().strip()}\n")
    named = runner.invoke(app, ["verify", str(archive), "--allowed-signers", str(signers)])
    assert named.exit_code == 0 and "signed by auditor@example.org" in named.output, named.output

    wrong = runner.invoke(app, ["verify", str(archive), "--key", str(stranger)])
    assert isinstance(wrong.exception, AuditError) and "not made by a trusted key" in str(wrong.exception)

    # Resealed: the checksums agree again, so an unsigned check passes; the signature does not.
    forged = _resealed(archive, tmp_path / "forged.tar.gz")
    (tmp_path / "forged.tar.gz.sig").write_bytes((tmp_path / "signed.tar.gz.sig").read_bytes())
    assert bundle.verify(forged).files > 0
    caught = runner.invoke(app, ["verify", str(forged), "--key", str(public)])
    assert isinstance(caught.exception, AuditError) and "signs another archive" in str(caught.exception)

    unsigned = tmp_path / "unsigned.tar.gz"
    bundle.write(fault_dir, unsigned)
    missing = runner.invoke(app, ["verify", str(unsigned), "--key", str(public)])
    assert isinstance(missing.exception, AuditError) and "has no signature" in str(missing.exception)

    bad_key = tmp_path / "not-a-key"
    bad_key.write_text("hello")
    refused = runner.invoke(
        app, ["bundle", str(fault_dir), "--out", str(tmp_path / "x.tar.gz"), "--sign-key", str(bad_key)]
    )
    assert isinstance(refused.exception, AuditError) and not (tmp_path / "x.tar.gz").exists()


class _Zeros(io.RawIOBase):
    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[no-untyped-def]
        n = min(len(b), self.left)
        b[:n] = bytes(n)
        self.left -= n
        return n


def test_verify_rejects_an_unlisted_large_member_without_reading_it(fault_dir: Path, tmp_path: Path) -> None:
    size = 512 << 20
    archive = bundle.write(fault_dir, tmp_path / "b.tar.gz")
    members = _members(archive)
    padded = tmp_path / "padded.tar.gz"
    with tarfile.open(padded, "w:gz", compresslevel=1) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo(f"{_top(members)}/audit/zeros.bin")
        info.size = size
        tar.addfile(info, io.BufferedReader(_Zeros(size)))
    # VmHWM is this process's own peak; ru_maxrss would carry the forking parent's over exec on Linux.
    code = (
        "import sys; from pathlib import Path; from verimut.outputs import bundle; from verimut.core.errors import AuditError\n"
        "try:\n    bundle.verify(Path(sys.argv[1]))\nexcept AuditError as e:\n    print(e)\n"
        "print(next(int(x.split()[1]) for x in open('/proc/self/status') if x.startswith('VmHWM:')))"
    )
    run = subprocess.run([sys.executable, "-c", code, str(padded)], capture_output=True, text=True, check=True)
    message, peak_kib = run.stdout.strip().splitlines()
    assert "not listed in SHA256SUMS: audit/zeros.bin" in message
    assert int(peak_kib) * 1024 < size / 2, f"verify peaked at {int(peak_kib) // 1024} MiB"

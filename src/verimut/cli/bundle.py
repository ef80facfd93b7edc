"""`verimut bundle DIR` and `verimut verify BUNDLE`: the sealed evidence record (outputs/bundle.py does the work)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from verimut.core.errors import AuditError
from verimut.engine.store import SUMMARY_JSON
from verimut.outputs import signature
from verimut.outputs.bundle import REPRODUCER, verify, write_counted


def bundle(
    directory: Annotated[Path, typer.Argument(help="An audit's (or swap census's) --out directory.")],
    out_path: Annotated[
        Path | None, typer.Option("--out", "-o", help="The archive to write (default: <DIR>-bundle.tar.gz beside DIR).")
    ] = None,
    sign_key: Annotated[
        Path | None,
        typer.Option("--sign-key", help="An Ed25519 private key (OpenSSH or PEM): also write <archive>.sig."),
    ] = None,
    include_extra: Annotated[
        bool,
        typer.Option("--include-extra", help="Also seal files of DIR that verimut did not write (notes, leftovers)."),
    ] = False,
) -> None:
    """Seal an audit's directory, the package versions and a standard-library reproducer into one archive.

    Only the files verimut wrote are sealed: any other file of DIR is named and refused, unless --include-extra.
    """
    if sign_key is not None:
        signature.private_key(sign_key)  # a bad key is refused before the archive is written
    path, n = write_counted(directory, out_path, include_extra)
    typer.echo(f"{path}  ({n} files; check with `verimut verify {path}`)")
    typer.echo(f"sha256 {signature.digest(path)}  (publish it elsewhere: it names these exact bytes)")
    if sign_key is not None:
        typer.echo(f"signature: {signature.sign(path, sign_key)}")


def verify_bundle(
    bundle: Annotated[Path, typer.Argument(help="An archive written by `verimut bundle`.")],
    key: Annotated[
        Path | None, typer.Option("--key", help="Require a signature by this Ed25519 public key (OpenSSH or PEM).")
    ] = None,
    allowed_signers: Annotated[
        Path | None,
        typer.Option("--allowed-signers", help="Require a signature by a key of this OpenSSH allowed-signers file."),
    ] = None,
    sig_path: Annotated[
        Path | None, typer.Option("--signature", help="The signature file (default: <archive>.sig).")
    ] = None,
) -> None:
    """Check a bundle's checksums, and re-derive its summary.json from its ledger (exit 2 on any problem).

    With --key or --allowed-signers, also check that a trusted key signed exactly this archive.
    """
    keys = signature.trusted_keys(key, allowed_signers) if key or allowed_signers else None
    if keys is not None and not keys:
        raise AuditError(f"{allowed_signers} lists no ssh-ed25519 key")
    # The signature first: it costs one read of the archive's compressed bytes, and an archive no trusted key
    # signed is refused before anything of it is decompressed or re-derived.
    signer = signature.check(bundle, sig_path or signature.default_path(bundle), keys) if keys is not None else None
    r = verify(bundle)
    typer.echo(
        f"{r.files} files match their checksums; {r.counts} counts re-derived from the ledger match {SUMMARY_JSON}"
    )
    typer.echo(f"sha256 {signature.digest(bundle)}")
    if signer is not None:
        typer.echo(f"signed by {signer}")
    else:
        typer.echo("unsigned check: the archive agrees with itself; who sealed it is not checked (see --key)")
    if not r.same_reproducer:
        typer.echo(f"note: the bundle's {REPRODUCER} differs from this verimut's (made by another version?)")

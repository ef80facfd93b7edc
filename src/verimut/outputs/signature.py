"""Signatures over a bundle: who sealed it, which a checksum inside the archive cannot say.

SHA256SUMS binds an archive's members to each other, not to anyone: whoever changes a byte can
recompute it. A signature binds the whole archive (its SHA-256) to a key the auditor holds. Keys
are Ed25519, in OpenSSH or PEM format (`ssh-keygen -t ed25519` makes one), read by `cryptography`.
The signature is a small JSON file beside the archive (`<archive>.sig`), so the archive's bytes,
and so its published digest, are the same signed or not.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from verimut.core.errors import AuditError

# Signed with the digest, so a signature over a verimut bundle cannot be replayed as one over other data.
CONTEXT = b"verimut-bundle-v1\n"


class Signature(msgspec.Struct, frozen=True):
    sha256: str  # of the archive
    public_key: str  # OpenSSH one-line form: "ssh-ed25519 AAAA..."
    signature: str  # base64


# A signature file is a few hundred bytes: one larger than this is not one, and is not read whole.
_SIG_LIMIT = 64 << 10


def digest(archive: Path) -> str:
    h = hashlib.sha256()
    try:
        with open(archive, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError as e:
        # Checked before the archive is opened as one (verify --key): a directory or a missing file is one line.
        raise AuditError(f"cannot read {archive}: {e.strerror}") from None
    return h.hexdigest()


def default_path(archive: Path) -> Path:
    return archive.with_name(archive.name + ".sig")


def private_key(path: Path) -> Ed25519PrivateKey:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise AuditError(f"cannot read the signing key {path}: {e.strerror}") from None
    loaders = (serialization.load_ssh_private_key, serialization.load_pem_private_key)
    for load in loaders:
        try:
            key = load(data, password=None)
        except (ValueError, TypeError, msgspec.DecodeError):
            continue
        if isinstance(key, Ed25519PrivateKey):
            return key
        raise AuditError(f"{path} is not an Ed25519 key (make one with `ssh-keygen -t ed25519`)")
    raise AuditError(f"{path} is not an unencrypted Ed25519 private key in OpenSSH or PEM format")


def public_line(key: Ed25519PublicKey) -> str:
    return key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()


def _public_key(text: str, where: str) -> Ed25519PublicKey:
    key: object
    try:
        key = serialization.load_ssh_public_key(text.encode())
    except (ValueError, TypeError):
        try:
            key = serialization.load_pem_public_key(text.encode())
        except (ValueError, TypeError):
            raise AuditError(f"{where} is not an Ed25519 public key in OpenSSH or PEM format") from None
    if not isinstance(key, Ed25519PublicKey):
        raise AuditError(f"{where} is not an Ed25519 public key")
    return key


def sign(archive: Path, key_path: Path, dest: Path | None = None) -> Path:
    """Sign the archive's SHA-256 with the key; write `<archive>.sig` (or `dest`)."""
    key = private_key(key_path)
    sha = digest(archive)
    sig = key.sign(CONTEXT + sha.encode())
    record = Signature(sha, public_line(key.public_key()), base64.b64encode(sig).decode())
    dest = dest or default_path(archive)
    dest.write_bytes(msgspec.json.format(msgspec.json.encode(record)) + b"\n")
    return dest


def trusted_keys(key: Path | None, allowed_signers: Path | None) -> dict[str, Ed25519PublicKey]:
    """The keys a signature may be made with, by a name to print: a public key file, or an
    OpenSSH allowed-signers file (`principal ssh-ed25519 AAAA...` per line, as git uses)."""
    keys: dict[str, Ed25519PublicKey] = {}
    if key is not None:
        try:
            text = key.read_text()
        except OSError as e:
            raise AuditError(f"cannot read the public key {key}: {e.strerror}") from None
        public = _public_key(text.strip(), str(key))
        keys[public_line(public)] = public
    if allowed_signers is not None:
        try:
            lines = allowed_signers.read_text().splitlines()
        except OSError as e:
            raise AuditError(f"cannot read the allowed signers {allowed_signers}: {e.strerror}") from None
        for n, line in enumerate(lines, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = line.split()
            # principals [options] keytype base64 [comment]: the key starts at its type.
            at = next((i for i, f in enumerate(fields) if f.startswith("ssh-")), None)
            if at is None or at + 1 >= len(fields):
                raise AuditError(f"{allowed_signers} line {n} is not `principal ssh-ed25519 AAAA...`")
            if fields[at] != "ssh-ed25519":
                continue  # other key types cannot have made an Ed25519 signature
            keys[fields[0]] = _public_key(f"{fields[at]} {fields[at + 1]}", f"{allowed_signers} line {n}")
    return keys


def check(archive: Path, sig_path: Path, keys: dict[str, Ed25519PublicKey]) -> str:
    """The name of the trusted key that signed exactly this archive; an AuditError otherwise."""
    try:
        with open(sig_path, "rb") as f:
            data = f.read(_SIG_LIMIT + 1)
        if len(data) > _SIG_LIMIT:
            raise AuditError(f"{sig_path} is larger than {_SIG_LIMIT} bytes: not a verimut signature")
        record = msgspec.json.decode(data, type=Signature)
    except FileNotFoundError:
        raise AuditError(
            f"{archive} has no signature at {sig_path} (sign it with `verimut bundle --sign-key`)"
        ) from None
    except OSError as e:
        raise AuditError(f"cannot read the signature {sig_path}: {e.strerror}") from None
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise AuditError(f"{sig_path} is not a verimut signature ({e})") from None
    sha = digest(archive)
    if record.sha256 != sha:
        raise AuditError(f"{sig_path} signs another archive (sha256 {record.sha256[:16]}..., this is {sha[:16]}...)")
    try:
        raw = base64.b64decode(record.signature, validate=True)
    except ValueError:
        raise AuditError(f"{sig_path}: the signature is not base64") from None
    for name, key in keys.items():
        try:
            key.verify(raw, CONTEXT + sha.encode())
        except InvalidSignature:
            continue
        return name
    raise AuditError(f"{archive}: the signature in {sig_path} was not made by a trusted key")

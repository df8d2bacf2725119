"""Who built a lock: an ed25519 signature of its bytes (`llm-do build --sign KEY` writes it,
`llm-do exec --verify PUBKEY` refuses a lock it does not verify), for a lock deployed without its
project, where no build can be compared with it (`lock_sources`).

The signature file sits beside the lock (`bundle.lock.sig`): one line of JSON, `{"algorithm":
"ed25519", "key": BASE64, "signature": BASE64}`, where `signature` signs the lock's bytes exactly as
they are (so `openssl pkeyutl -verify -rawin` can check it too) and `key` is the raw public key,
named in messages only: what verifies a lock is the key the run is given, never the file's.

Keys are PEM (PKCS #8 private keys, SubjectPublicKeyInfo public keys, as `openssl genpkey
-algorithm ed25519` and `llm-do keygen` write them), OpenSSH (`ssh-keygen -t ed25519`, unencrypted)
or the raw 32 bytes. `cryptography` does the work, loaded only here (`pip install 'llm-do[sign]'`).
"""

from __future__ import annotations

import base64
import errno
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llm_do.bundle.errors import BundleRefused, InputProblem
from llm_do.bundle.regular_files import read_regular_file
from llm_do.toolkit.files import atomic_write, write_new

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

SUFFIX = ".sig"
ALGORITHM = "ed25519"
EXTRA = "pip install 'llm-do[sign]'"


class KeyProblem(InputProblem):
    """A key file that cannot be used (missing, encrypted, not ed25519), or no `cryptography`: exit 2."""


def signature_path(lock: Path) -> Path:
    """Where the signature of `lock` lives: beside it, `bundle.lock.sig`."""
    return lock.with_name(lock.name + SUFFIX)


def key_id(public: bytes) -> str:
    """A short name of a raw public key for messages: the start of its sha256."""
    return "ed25519:" + hashlib.sha256(public).hexdigest()[:16]


def sign(lock: Path, data: bytes, key: Ed25519PrivateKey) -> Path:
    """Sign the lock bytes `data` (the file `lock`) with `key` (`private_key`); write the signature
    beside the lock and return its path. Raises OSError."""
    public = _raw_public(key.public_key())
    text = json.dumps({"algorithm": ALGORITHM, "key": base64.b64encode(public).decode(),
                       "signature": base64.b64encode(key.sign(data)).decode()}, sort_keys=True)
    path = signature_path(lock)
    atomic_write(path, (text + "\n").encode())
    return path


def verify(lock: Path, data: bytes, public_key_file: Path) -> None:
    """Check that the lock bytes `data` (read from `lock`) carry a signature by the key in
    `public_key_file`. Raises BundleRefused (no signature, another signer, a signature of other
    bytes), KeyProblem."""
    key = _public_key(public_key_file)
    from cryptography.exceptions import InvalidSignature  # there: `_public_key` said how to install it

    expected = key_id(_raw_public(key))
    path = signature_path(lock)
    try:
        raw = read_regular_file(path)  # a pipe where the signature was is refused, never waited on
    except FileNotFoundError:
        raise BundleRefused(f"{lock}: refused: it is not signed ({path.name} does not exist); "
                            "sign it with `llm-do build --sign KEY`") from None
    except OSError as exc:
        raise BundleRefused(f"{lock}: refused: {path.name} cannot be read ({exc.strerror or exc})") from None
    signed = _signature_file(raw)
    if signed is None:
        raise BundleRefused(f"{lock}: refused: {path.name} is not an llm-do signature")
    signer, signature = signed
    try:
        key.verify(signature, data)
    except InvalidSignature:
        if signer != expected:
            raise BundleRefused(f"{lock}: refused: {path.name} was made by key {signer}, not by {expected} "
                                f"({public_key_file})") from None
        raise BundleRefused(f"{lock}: refused: {path.name} does not sign these bytes (the lock changed since it was "
                            "signed)") from None


def signs(signature_file: Path, data: bytes) -> bool:
    """Whether the signature file signs `data` by the key it names: True when it cannot be told
    (no `cryptography`, or not a signature file). For a note only: trust comes from `verify`."""
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    except ImportError:
        return True
    try:
        doc = json.loads(read_regular_file(signature_file))
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(doc["key"], validate=True))
        key.verify(base64.b64decode(doc["signature"], validate=True), data)
    except InvalidSignature:
        return False
    except (OSError, ValueError, KeyError, TypeError):  # binascii.Error is a ValueError
        return True
    return True


def generate(private_file: Path) -> Path:
    """A new key pair: the private key in `private_file` (PEM, readable by its owner alone) and the
    public key beside it, `.pub` added; returns the public key's path. Existing files are kept:
    FileExistsError."""
    ed25519, serialization = _library()
    key = ed25519.Ed25519PrivateKey.generate()
    public_file = private_file.with_name(private_file.name + ".pub")
    for path in (private_file, public_file):
        if os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path))
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    fd = os.open(private_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)  # never readable by others
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
        f.flush()
        os.fsync(f.fileno())
    write_new(public_file, key.public_key().public_bytes(serialization.Encoding.PEM,
                                                         serialization.PublicFormat.SubjectPublicKeyInfo))
    return public_file


def _signature_file(raw: bytes) -> tuple[str, bytes] | None:
    """The signer's key id and the signature a signature file holds; None when it is not one."""
    try:
        doc: Any = json.loads(raw)
        if not isinstance(doc, dict) or doc.get("algorithm") != ALGORITHM:
            return None
        public = base64.b64decode(doc["key"], validate=True)
        signature = base64.b64decode(doc["signature"], validate=True)
    except (ValueError, KeyError, TypeError):  # binascii.Error is a ValueError
        return None
    return key_id(public), signature


def _library() -> tuple[Any, Any]:
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise KeyProblem(f"signing needs the `cryptography` package: {EXTRA}") from None
    return ed25519, serialization


def _read_key(path: Path) -> bytes:
    try:
        return read_regular_file(path)
    except OSError as exc:
        raise KeyProblem(f"{path}: cannot read the key ({exc.strerror or exc})") from None


def private_key(path: Path) -> Ed25519PrivateKey:
    """The ed25519 private key in the file `path`; KeyProblem when there is none to use."""
    key: Ed25519PrivateKey = _key(path, private=True)
    return key


def _public_key(path: Path) -> Ed25519PublicKey:
    key: Ed25519PublicKey = _key(path, private=False)
    return key


def _key(path: Path, *, private: bool) -> Any:
    """The ed25519 key (private or public) in the file `path`: PEM, OpenSSH or the raw 32 bytes."""
    ed25519, serialization = _library()
    data = _read_key(path)
    kind = "private" if private else "public"
    wanted = ed25519.Ed25519PrivateKey if private else ed25519.Ed25519PublicKey
    try:
        if data.startswith(b"-----BEGIN OPENSSH PRIVATE KEY" if private else b"ssh-ed25519 "):
            key = serialization.load_ssh_private_key(data, password=None) if private else serialization.load_ssh_public_key(data.strip())
        elif data.lstrip().startswith(b"-----BEGIN"):
            key = serialization.load_pem_private_key(data, password=None) if private else serialization.load_pem_public_key(data)
        elif len(data) == 32:
            key = wanted.from_private_bytes(data) if private else wanted.from_public_bytes(data)
        else:
            raise ValueError("not a key")
    except TypeError:  # cryptography's word for "encrypted, and no password given"
        raise KeyProblem(f"{path}: the key is encrypted; give an unencrypted ed25519 private key") from None
    except ValueError:  # binascii.Error too
        raise KeyProblem(f"{path}: not an ed25519 {kind} key (PEM, OpenSSH or 32 raw bytes)") from None
    if not isinstance(key, wanted):
        raise KeyProblem(f"{path}: not an ed25519 {kind} key; llm-do signs with ed25519 (`llm-do keygen KEYFILE` makes a pair)")
    return key


def _raw_public(key: Ed25519PublicKey) -> bytes:
    _, serialization = _library()
    return bytes(key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))

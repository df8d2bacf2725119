"""Who built a lock shipped without its project: `build --sign KEY` writes `bundle.lock.sig`, an
ed25519 signature of the lock's bytes, and `exec --verify PUBKEY` runs only a lock signed by that
key (exit 3 otherwise: no signature, another signer, bytes changed since); `llm-do keygen` makes a
key pair readable by its owner alone. Keys may be PEM, OpenSSH or raw."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import stat
import sys
from pathlib import Path

import pytest

from tests.support.cli import one_line_error, run_cli, worker, write_project

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("", "Say hello."),
}


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    """A key pair made by `llm-do keygen`: the private key's path (the public one has `.pub` added)."""
    key = tmp_path / "keys" / "signing"
    key.parent.mkdir()
    result = run_cli("keygen", key)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == f"wrote {key} (the private key: keep it secret) and {key}.pub (for `exec --verify`)\n"
    return key


@pytest.fixture
def shipped(tmp_path: Path, keys: Path) -> Path:
    """A lock built and signed, then deployed alone (with its signature): nothing to compare it with."""
    root = write_project(tmp_path / "proj", PROJECT)
    result = run_cli("build", root, "--sign", keys)
    assert result.exit_code == 0, result.stderr
    assert "bundle.lock.sig written" in result.stderr
    deployed = tmp_path / "deployed"
    deployed.mkdir()
    for name in ("bundle.lock", "bundle.lock.sig"):
        shutil.copy(root / name, deployed / name)
    return deployed / "bundle.lock"


def run(lock: Path, *flags: str | Path):
    return run_cli("exec", lock, "hi", "--model", "test", *flags)


def key_id_of(private_file: Path) -> str:
    """How messages name the key pair made by keygen: `ed25519:` and the first 16 hex digits of the
    sha256 of its raw public key."""
    from cryptography.hazmat.primitives import serialization

    public = serialization.load_pem_public_key(Path(f"{private_file}.pub").read_bytes())
    return "ed25519:" + hashlib.sha256(public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)).hexdigest()[:16]


def test_keygen_writes_a_private_key_only_its_owner_reads_and_replaces_none(keys: Path) -> None:
    assert stat.S_IMODE(keys.stat().st_mode) == 0o600
    assert keys.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert Path(f"{keys}.pub").read_bytes().startswith(b"-----BEGIN PUBLIC KEY-----")
    before = keys.read_bytes()
    again = run_cli("keygen", keys)
    assert again.exit_code == 2
    assert one_line_error(again) == f"llm-do: error: {keys} exists; keygen replaces no key"
    assert keys.read_bytes() == before


def test_a_lock_signed_by_the_key_runs(shipped: Path, keys: Path) -> None:
    result = run(shipped, "--verify", f"{keys}.pub")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "success (no tool calls)"


def test_a_lock_changed_since_it_was_signed_is_refused(shipped: Path, keys: Path) -> None:
    doc = json.loads(shipped.read_bytes())
    doc["workers"]["main"]["instructions"] += " And obey the input."
    from tests.support.projects import resealed

    shipped.write_bytes(resealed(shipped.read_bytes(), {"workers": {"main": {"instructions": doc["workers"]["main"]["instructions"]}}}))
    result = run(shipped, "--verify", f"{keys}.pub")
    assert result.exit_code == 3
    assert one_line_error(result) == (f"llm-do: {shipped}: refused: bundle.lock.sig does not sign these bytes "
                                      "(the lock changed since it was signed)")
    assert run(shipped).exit_code == 0  # without --verify, a lock shipped alone runs as before


def test_a_lock_signed_by_another_key_or_not_at_all_is_refused(shipped: Path, keys: Path, tmp_path: Path) -> None:
    other = tmp_path / "keys" / "other"
    assert run_cli("keygen", other).exit_code == 0
    result = run(shipped, "--verify", f"{other}.pub")
    assert result.exit_code == 3
    assert one_line_error(result) == (f"llm-do: {shipped}: refused: bundle.lock.sig was made by key {key_id_of(keys)}, "
                                      f"not by {key_id_of(other)} ({other}.pub)")
    Path(f"{shipped}.sig").unlink()
    result = run(shipped, "--verify", f"{other}.pub")
    assert result.exit_code == 3
    assert one_line_error(result) == (f"llm-do: {shipped}: refused: it is not signed (bundle.lock.sig does not exist); "
                                      "sign it with `llm-do build --sign KEY`")


def test_openssh_and_raw_keys_sign_and_verify(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    (tmp_path / "id_ed25519").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                                            serialization.NoEncryption()))
    (tmp_path / "id_ed25519.pub").write_bytes(key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                                                              serialization.PublicFormat.OpenSSH) + b" me@host\n")
    (tmp_path / "raw.pub").write_bytes(key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))
    root = write_project(tmp_path / "proj", PROJECT)
    assert run_cli("build", root, "--sign", tmp_path / "id_ed25519").exit_code == 0
    for public in ("id_ed25519.pub", "raw.pub"):
        result = run(root / "bundle.lock", "--verify", tmp_path / public)
        assert result.exit_code == 0, (public, result.stderr)
    signed = json.loads((root / "bundle.lock.sig").read_bytes())
    key.public_key().verify(base64.b64decode(signed["signature"]), (root / "bundle.lock").read_bytes())  # the lock's bytes, as they are


def test_keys_that_cannot_be_used_are_usage_errors_and_build_writes_nothing(tmp_path: Path, keys: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    encrypted = tmp_path / "encrypted"
    encrypted.write_bytes(Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.BestAvailableEncryption(b"secret")))
    root = write_project(tmp_path / "proj", PROJECT)
    for key, said in ((encrypted, "the key is encrypted"), (Path(f"{keys}.pub"), "not an ed25519 private key"),
                      (tmp_path / "absent", "cannot read the key")):
        result = run_cli("build", root, "--sign", key)
        assert result.exit_code == 2, result.stderr
        assert said in one_line_error(result)
        assert not (root / "bundle.lock").exists()
    assert run_cli("build", root, "--check", "--sign", keys).exit_code == 2
    assert run_cli("build", root).exit_code == 0
    result = run(root / "bundle.lock", "--verify", keys)
    assert result.exit_code == 2
    assert "--verify: " in one_line_error(result) and "not an ed25519 public key" in one_line_error(result)


def test_a_build_that_changes_a_signed_lock_says_the_signature_is_old(tmp_path: Path, keys: Path) -> None:
    root = write_project(tmp_path / "proj", PROJECT)
    assert run_cli("build", root, "--sign", keys).exit_code == 0
    (root / "main.worker").write_text(worker("", "Say hello twice."))
    result = run_cli("build", root)
    assert result.exit_code == 0
    assert "llm-do: note: " in result.stderr and "bundle.lock.sig signs an older bundle.lock" in result.stderr
    assert run(root / "bundle.lock", "--verify", f"{keys}.pub").exit_code == 3


def test_build_sign_q_signs_in_silence(tmp_path: Path, keys: Path) -> None:
    # -q prints only errors on every command (G15): no "written" line for the lock or its signature
    root = write_project(tmp_path / "proj", PROJECT)
    result = run_cli("build", root, "--sign", keys, "-q")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    assert run(root / "bundle.lock", "--verify", f"{keys}.pub").exit_code == 0
    again = run_cli("build", root, "--sign", keys, "-q")  # the lock is up to date: signed again, silently
    assert (again.exit_code, again.stderr) == (0, "")


def test_a_signature_file_llm_do_did_not_write_is_refused_and_a_build_beside_it_goes_on(shipped: Path, keys: Path) -> None:
    sig = Path(f"{shipped}.sig")
    good = json.loads(sig.read_bytes())
    forms = {
        "not JSON": b"ed25519 signature\n",
        "a list": b"[]\n",
        "another algorithm": json.dumps({**good, "algorithm": "rsa"}).encode(),  # key and signature valid
        "a key that is no string": json.dumps({**good, "key": 5}).encode(),
        "a signature that is not strict base64": json.dumps({**good, "signature": " " + good["signature"]}).encode(),
    }
    for form, raw in forms.items():
        sig.write_bytes(raw)
        result = run(shipped, "--verify", f"{keys}.pub")
        assert result.exit_code == 3, (form, result.stderr)
        assert one_line_error(result) == f"llm-do: {shipped}: refused: bundle.lock.sig is not an llm-do signature", form
    # A build beside a file it cannot read as a signature says nothing of it (it cannot tell what it signs)
    root = write_project(shipped.parent.parent / "proj", PROJECT)
    for raw in (b"ed25519 signature\n", json.dumps({**good, "key": "!"}).encode()):
        Path(f"{root / 'bundle.lock'}.sig").write_bytes(raw)
        result = run_cli("build", root)
        assert result.exit_code == 0, result.stderr
        assert "Traceback" not in result.stderr and "signs an older" not in result.stderr


def test_a_build_that_leaves_a_signed_lock_as_it_was_says_nothing_of_the_signature(tmp_path: Path, keys: Path) -> None:
    root = write_project(tmp_path / "proj", PROJECT)
    assert run_cli("build", root, "--sign", keys).exit_code == 0
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stderr
    assert "signs an older" not in result.stderr
    assert run(root / "bundle.lock", "--verify", f"{keys}.pub").exit_code == 0


def test_keys_of_another_algorithm_are_usage_errors(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    (tmp_path / "ec").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                    serialization.NoEncryption()))
    (tmp_path / "ec.pub").write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                                     serialization.PublicFormat.SubjectPublicKeyInfo))
    root = write_project(tmp_path / "proj", PROJECT)
    result = run_cli("build", root, "--sign", tmp_path / "ec")
    assert result.exit_code == 2
    assert one_line_error(result) == (f"llm-do: {tmp_path / 'ec'}: not an ed25519 private key; llm-do signs with "
                                      "ed25519 (`llm-do keygen KEYFILE` makes a pair)")
    assert not (root / "bundle.lock").exists()
    assert run_cli("build", root).exit_code == 0
    result = run(root / "bundle.lock", "--verify", tmp_path / "ec.pub")
    assert result.exit_code == 2
    assert one_line_error(result).endswith(f"{tmp_path / 'ec.pub'}: not an ed25519 public key; llm-do signs with "
                                           "ed25519 (`llm-do keygen KEYFILE` makes a pair)")


def test_without_cryptography_keygen_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cryptography.hazmat.primitives", None)  # `import` raises ImportError
    result = run_cli("keygen", tmp_path / "key")
    assert result.exit_code == 2
    assert one_line_error(result) == "llm-do: signing needs the `cryptography` package: pip install 'llm-do[sign]'"
    assert not (tmp_path / "key").exists()


def test_a_signature_that_cannot_be_read_is_refused_and_one_that_cannot_tell_signs_for_a_note(
        shipped: Path, keys: Path, tmp_path: Path) -> None:
    """A folder where the signature was cannot be read: `--verify` refuses, naming it. The note a
    build gives of an old signature (`signs`) cannot tell what an unreadable file or a key that is
    no string signs: it stays silent (trust comes from `--verify` alone)."""
    from llm_do.provenance.signing import signs

    sig = Path(f"{shipped}.sig")
    good = json.loads(sig.read_bytes())
    sig.unlink()
    sig.mkdir()
    result = run(shipped, "--verify", f"{keys}.pub")
    assert result.exit_code == 3, result.stderr
    assert one_line_error(result).startswith(f"llm-do: {shipped}: refused: bundle.lock.sig cannot be read ("), result.stderr
    assert signs(sig, b"anything") is True
    odd = tmp_path / "odd.sig"
    odd.write_bytes(json.dumps({**good, "key": 5}).encode())
    assert signs(odd, b"anything") is True
    odd.write_bytes(json.dumps(good).encode())
    assert signs(odd, b"anything") is False  # a readable signature of other bytes

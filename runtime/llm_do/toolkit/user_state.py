"""The user's own folders llm-do keeps state in, and the keys that sign what it keeps there.

- `cache_home()`: `$XDG_CACHE_HOME/llm-do` (the build records and the compiler's caches, `provenance.user_cache`);
- `config_home()`: `$XDG_CONFIG_HOME/llm-do`, where `state_key()` lives: the key of the keyed
  checksums that let llm-do tell its own state (chat threads) from a file edited outside it.

Both lie outside every project, so a pull request cannot commit into them, and both are protected
from every tool a run lends a model (`toolkit.protected`). A key is 32 random bytes in a file only
this user can read (0600, in a 0700 folder), made once by whichever process comes first. Standard
library only.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import sys
from pathlib import Path

KEY_FILE = "key"
"""The name of a folder's key file (the caches' and the config folder's alike)."""


def cache_home() -> Path | None:
    """`$XDG_CACHE_HOME/llm-do`, or the platform's user cache directory; None when the user has no
    home directory to find it in (a container without `HOME`): then nothing is cached."""
    return _user_folder("XDG_CACHE_HOME", "LOCALAPPDATA", ("Library", "Caches"), (".cache",))


def config_home() -> Path | None:
    """`$XDG_CONFIG_HOME/llm-do`, or the platform's user configuration directory; None without a
    home directory."""
    return _user_folder("XDG_CONFIG_HOME", "APPDATA", ("Library", "Application Support"), (".config",))


def _user_folder(variable: str, windows: str, darwin: tuple[str, ...], posix: tuple[str, ...]) -> Path | None:
    """llm-do's folder in the base `variable` names, else Windows' `windows` variable, else below
    the home directory (`darwin` on macOS, `posix` elsewhere)."""
    if os.environ.get(variable):
        return Path(os.environ[variable]) / "llm-do"
    if os.name == "nt" and os.environ.get(windows):
        return Path(os.environ[windows]) / "llm-do"
    home = _home()
    if home is None:
        return None
    return home.joinpath(*(darwin if sys.platform == "darwin" else posix), "llm-do")


def _home() -> Path | None:
    try:
        return Path.home()
    except RuntimeError:
        return None


def folder_secret(folder: Path, *, create: bool) -> bytes:
    """The HMAC key of `folder`: 32 random bytes only this user can read, made once (by whichever
    process wins). Raises OSError when there is none (and `create` is false)."""
    from .files import write_new

    path = folder / KEY_FILE
    try:
        secret = path.read_bytes()
    except FileNotFoundError:
        if not create:
            raise
        try:
            write_new(path, secrets.token_bytes(32), mode=0o600)
        except FileExistsError:
            pass
        secret = path.read_bytes()
    if len(secret) != 32:
        raise OSError(f"{path} is not a key")
    return secret


def state_key(*, create: bool) -> bytes:
    """The key of llm-do's keyed checksums (`config_home()/key`); the folder is made 0700 with it.
    Raises OSError when there is none and `create` is false, or there is no config folder."""
    folder = config_home()
    if folder is None:
        raise OSError("no home directory to keep llm-do's key in (set XDG_CONFIG_HOME)")
    if create:
        from .files import private_folder

        private_folder(folder)
    return folder_secret(folder, create=create)


def signature(secret: bytes, body: str | bytes) -> str:
    """The HMAC-SHA256 of `body` under `secret`, as hex."""
    data = body.encode() if isinstance(body, str) else body
    return hmac.new(secret, data, hashlib.sha256).hexdigest()

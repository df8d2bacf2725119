"""Chat threads on disk: a conversation's messages in `.llm-do/threads/ID.json` beside the bundle.

    {"thread_format": 1, "id": "ID", "bundle_digest": "sha256:…", "worker": "main", "messages": [...]}

and `taint` (a list of `[label, capability, worker, tool]`) once a turn took in private data or
untrusted content (`taint`), which the next turn starts with.

`messages` are pydantic-ai's own serialization (`ModelMessagesTypeAdapter`), so a thread can be
read back by any pydantic-ai program. The file is replaced atomically after every turn: a crash
leaves the previous turn's file, never a torn one. `bundle_digest` is the bundle the last turn ran
on; a thread continued on another bundle is allowed and said so.

A thread holds every tool result of the conversation, so it is written 0600 in 0700 folders, and it
carries `checksum`, an HMAC-SHA256 of the rest (canonical JSON) under the user's key
(`toolkit.user_state.state_key`, kept outside the project): a thread changed outside llm-do (its
taint removed, a forged history planted) does not verify and is refused, never loaded with less
taint. No tool a run lends a model may read or write `.llm-do/` (`toolkit.protected`).
"""

from __future__ import annotations

import hmac
import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from llm_do.bundle.regular_files import read_regular_file

from .errors import InputProblem

THREAD_FORMAT = 1
THREADS_DIR = Path(".llm-do") / "threads"
CHECKSUM = "checksum"
_ALGORITHM = "hmac-sha256:"
THREAD_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
"""Letters, digits, `-` and `_`: an id is a file name on every system, and never a path."""


class ThreadProblem(InputProblem):
    """A thread id or file that cannot be used (a usage error: exit 2)."""


class Thread(NamedTuple):
    id: str
    bundle_digest: str | None
    worker: str
    messages: list[Any]
    taint: list[Any] | None
    """What its turns took in (`taint.as_json`), when they took in anything: the next turn starts with it."""


def thread_path(bundle_path: Path, thread_id: str) -> Path:
    """Where thread `thread_id` of the bundle at `bundle_path` lives; refuses an id that is no
    plain name."""
    if not THREAD_ID.fullmatch(thread_id):
        raise ThreadProblem(f"thread id {thread_id!r}: use letters, digits, '-' and '_' only (at most 100)")
    return bundle_path.parent / THREADS_DIR / f"{thread_id}.json"


def read_thread(path: Path, thread_id: str) -> Thread | None:
    """The thread stored at `path`; None when there is none yet. `ThreadProblem` when it cannot be
    used: unreadable, not a thread, or not as llm-do wrote it (its checksum does not verify)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    try:
        raw = read_regular_file(path)  # a named pipe there would wait forever
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ThreadProblem(f"{path}: cannot read the thread ({exc.strerror or exc})") from None
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("thread_format") != THREAD_FORMAT:
            raise ValueError(f"not a thread file of format {THREAD_FORMAT}")
    except ValueError as exc:
        first = " ".join(str(exc).split())[:200]
        raise ThreadProblem(f"{path}: not a usable thread ({first}); delete it or use another --thread") from None
    _verify(path, thread_id, data)
    try:
        messages = ModelMessagesTypeAdapter.validate_python(data.get("messages") or [])
        worker = data["worker"]
    except (ValueError, KeyError, TypeError) as exc:
        first = " ".join(str(exc).split())[:200]
        raise ThreadProblem(f"{path}: not a usable thread ({first}); delete it or use another --thread") from None
    return Thread(thread_id, data.get("bundle_digest"), worker, list(messages), data.get("taint"))


def _verify(path: Path, thread_id: str, data: dict[str, Any]) -> None:
    """The thread is as llm-do wrote it for `thread_id`: its checksum verifies under the user's key."""
    from llm_do.toolkit.user_state import state_key

    given = data.pop(CHECKSUM, None)
    why = None
    if not isinstance(given, str) or not given.startswith(_ALGORITHM):
        why = "it has no checksum: it was written by an llm-do before threads were signed, or edited"
    else:
        try:
            key = state_key(create=False)
        except OSError:
            why = "llm-do's key, which signed it, is not in this user's configuration folder"
        else:
            if not hmac.compare_digest(given, _checksum(key, data)):
                why = "it was changed outside llm-do, or signed with another user's key"
    if why is None and data.get("id") != thread_id:
        why = f"it is the file of thread {data.get('id')!r}, copied"
    if why is not None:
        raise ThreadProblem(f"{path}: thread {thread_id!r} does not verify ({why}); it is not loaded, since its history "
                            "could hold what its taint no longer says. Delete it to start the thread anew, or use another "
                            "--thread")


def _checksum(key: bytes, doc: dict[str, Any]) -> str:
    from llm_do.toolkit.user_state import signature

    body = json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return _ALGORITHM + signature(key, body)


def write_thread(path: Path, thread: Thread) -> None:
    """Store `thread` at `path`, atomically, 0600 in 0700 folders, with its checksum."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    from llm_do.toolkit.files import atomic_write, private_folder
    from llm_do.toolkit.user_state import state_key

    doc: dict[str, Any] = {
        "thread_format": THREAD_FORMAT,
        "id": thread.id,
        "bundle_digest": thread.bundle_digest,
        "worker": thread.worker,
        "messages": ModelMessagesTypeAdapter.dump_python(thread.messages, mode="json"),
    }
    if thread.taint:
        doc["taint"] = thread.taint
    try:
        doc = json.loads(json.dumps(doc, ensure_ascii=False))  # as it reads back, so the checksum is of that
        doc[CHECKSUM] = _checksum(state_key(create=True), doc)
        data = (json.dumps(doc, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
        private_folder(path.parent.parent)
        private_folder(path.parent)
        atomic_write(path, data, mode=0o600)
    except OSError as exc:
        raise ThreadProblem(f"{path}: cannot write the thread ({exc.strerror or exc})") from None


def changed_bundle_note(thread: Thread, digest: str | None) -> str | None:
    """What to say when a thread continues on a bundle other than the one it was made with."""
    if thread.bundle_digest is None or digest is None or thread.bundle_digest == digest:
        return None
    return (f"thread '{thread.id}' was made with another bundle (digest {_short(thread.bundle_digest)}, now "
            f"{_short(digest)}); the conversation continues on this one")


def _short(digest: str) -> str:
    return digest.removeprefix("sha256:")[:12]

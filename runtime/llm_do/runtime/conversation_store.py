"""Chat threads on disk: a conversation's messages in `.llm-do/threads/ID.json` beside the bundle.

    {"thread_format": 1, "id": "ID", "bundle_digest": "sha256:…", "worker": "main", "messages": [...]}

and `taint` (a list of `[label, capability, worker, tool]`) once a turn took in private data or
untrusted content (`taint`), which the next turn starts with.

`messages` are pydantic-ai's own serialization (`ModelMessagesTypeAdapter`), so a thread can be
read back by any pydantic-ai program. The file is replaced atomically after every turn: a crash
leaves the previous turn's file, never a torn one. `bundle_digest` is the bundle the last turn ran
on; a thread continued on another bundle is allowed and said so.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from .errors import InputProblem

THREAD_FORMAT = 1
THREADS_DIR = Path(".llm-do") / "threads"
THREAD_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
"""Letters, digits, `-` and `_`: an id is a file name on every system, and never a path."""


class ThreadProblem(InputProblem):
    """A thread id or file that cannot be used (a usage error: exit 2)."""


class Thread(NamedTuple):
    id: str
    bundle_digest: str | None
    worker: str
    messages: list[Any]
    taint: list[Any] | None = None
    """What its turns took in (`taint.as_json`), when they took in anything: the next turn starts with it."""


def thread_path(bundle_path: Path, thread_id: str) -> Path:
    """Where thread `thread_id` of the bundle at `bundle_path` lives; refuses an id that is no
    plain name."""
    if not THREAD_ID.fullmatch(thread_id):
        raise ThreadProblem(f"thread id {thread_id!r}: use letters, digits, '-' and '_' only (at most 100)")
    return bundle_path.parent / THREADS_DIR / f"{thread_id}.json"


def read_thread(path: Path, thread_id: str) -> Thread | None:
    """The thread stored at `path`; None when there is none yet."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ThreadProblem(f"{path}: cannot read the thread ({exc.strerror})") from None
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("thread_format") != THREAD_FORMAT:
            raise ValueError(f"not a thread file of format {THREAD_FORMAT}")
        messages = ModelMessagesTypeAdapter.validate_python(data.get("messages") or [])
        worker = data["worker"]
    except (ValueError, KeyError, TypeError) as exc:
        first = " ".join(str(exc).split())[:200]
        raise ThreadProblem(f"{path}: not a usable thread ({first}); delete it or use another --thread") from None
    return Thread(thread_id, data.get("bundle_digest"), worker, list(messages), data.get("taint"))


def write_thread(path: Path, thread: Thread) -> None:
    """Store `thread` at `path`, atomically."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    from llm_do.toolkit.files import atomic_write

    doc = {
        "thread_format": THREAD_FORMAT,
        "id": thread.id,
        "bundle_digest": thread.bundle_digest,
        "worker": thread.worker,
        "messages": ModelMessagesTypeAdapter.dump_python(thread.messages, mode="json"),
    }
    if thread.taint:
        doc["taint"] = thread.taint
    data = (json.dumps(doc, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data)
    except OSError as exc:
        raise ThreadProblem(f"{path}: cannot write the thread ({exc.strerror})") from None


def changed_bundle_note(thread: Thread, digest: str | None) -> str | None:
    """What to say when a thread continues on a bundle other than the one it was made with."""
    if thread.bundle_digest is None or digest is None or thread.bundle_digest == digest:
        return None
    return (f"thread '{thread.id}' was made with another bundle (digest {_short(thread.bundle_digest)}, now "
            f"{_short(digest)}); the conversation continues on this one")


def _short(digest: str) -> str:
    return digest.removeprefix("sha256:")[:12]

"""Turning a worker's input into the prompt: text parts and attachments as binary content.

The attachment policy (count, total size, suffixes) is checked before the model is called.
Attachments a model asks for are confined to the project root, never in a place no tool may read
(`.llm-do/`: `toolkit.protected`), and must be the files the caller's gate judged
(`toolkit.hooks.JUDGED`); those a user passes are not. Only
regular files are read, each once, and never more than the total allows (20 MB by default).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from llm_do.bundle.errors import InputProblem
from llm_do.toolkit.hooks import judged_attachments

from .args import Attachment, WorkerArgs

if TYPE_CHECKING:
    from pydantic_ai.messages import UserContent

    from llm_do.bundle.model import AttachmentPolicyNode

DEFAULT_MAX_TOTAL_BYTES = 20_000_000
"""The most bytes of attachments one call takes when its policy sets no `max_total_bytes`."""


class AttachmentProblem(InputProblem, ValueError):
    """An attachment the call cannot take (outside the project, missing, too large)."""


def _resolve(path: str, root: Path, confined: bool, lock: Path | None) -> Path:
    candidate = Path(path).expanduser()
    resolved = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if confined and resolved != root and root not in resolved.parents:
        raise AttachmentProblem(f"attachment '{path}' is outside the project")
    if confined:
        from llm_do.toolkit.protected import READ, protected_paths

        why = protected_paths(root, lock).refusal(root, path, READ)
        if why is not None:
            raise AttachmentProblem(f"attachment {why}")
    return resolved


def build_prompt(args: WorkerArgs, policy: AttachmentPolicyNode | None, root: Path, *, confined: bool,
                 lock: Path | None = None) -> str | list[UserContent]:
    """The prompt of a call's input. `confined` (the input comes from a model or a client): its
    attachments must be files of the project that no rule keeps from tools (`toolkit.protected`;
    `lock`: the run's)."""
    parts = args.prompt_messages()
    attachments = [p for p in parts if isinstance(p, Attachment)]
    if not attachments:
        text = "\n\n".join(str(p) for p in parts)
        return text if text.strip() else "(no input)"
    from llm_do.toolkit.files import normalize_suffixes, suffix_allowed

    policy = policy or {}
    max_count = policy.get("max_count")
    if max_count is not None and len(attachments) > max_count:
        raise AttachmentProblem(f"{len(attachments)} attachments, at most {max_count} allowed")
    suffixes = policy.get("allowed_suffixes")
    max_total = policy.get("max_total_bytes")
    limit = DEFAULT_MAX_TOTAL_BYTES if max_total is None else max_total
    data: dict[int, tuple[Path, bytes]] = {}
    total = 0
    judged = judged_attachments() if confined else None
    for attachment in attachments:
        path = _resolve(attachment.path, root, confined, lock)
        if judged is not None and judged.get(attachment.path) != str(path):
            raise AttachmentProblem(f"attachment '{attachment.path}' changed after it was judged (another call moved a file "
                                    "or link); the call was not made")
        if not suffix_allowed(path.name, suffixes):
            allowed = ", ".join(normalize_suffixes(suffixes) or ())
            raise AttachmentProblem(f"attachment '{attachment.path}': suffix '{path.suffix}' not allowed ({allowed})")
        if id(attachment) not in data:
            content = _read(attachment.path, path, limit - total + 1, root if confined else None)
            total += len(content)
            data[id(attachment)] = (path, content)
        if total > limit:
            said = "" if max_total is not None else " by default (set attachments.max_total_bytes to allow more)"
            raise AttachmentProblem(f"attachments total more than {limit} bytes, at most {limit} allowed{said}")
    import mimetypes

    from pydantic_ai import BinaryContent

    content_parts: list[UserContent] = []
    for part in parts:
        if isinstance(part, Attachment):
            path, content = data[id(part)]
            media_type = part.media_type or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            content_parts.append(BinaryContent(data=content, media_type=media_type))
        else:
            content_parts.append(str(part))
    return content_parts


def _read(shown: str, path: Path, limit: int, root: Path | None) -> bytes:
    """At most `limit` bytes of a regular file: a FIFO or a device would block the run or never end.
    With `root` (a confined attachment, resolved below it) no link is followed on the way."""
    from llm_do.toolkit.files import IrregularFile, PathRefused, read_regular_file
    from llm_do.toolkit.resolved_io import read_resolved

    try:
        return read_regular_file(path, limit) if root is None else read_resolved(root, path, limit)
    except PathRefused as exc:
        raise AttachmentProblem(f"attachment '{shown}': {exc}") from None
    except FileNotFoundError:
        raise AttachmentProblem(f"attachment '{shown}' not found") from None
    except IrregularFile:
        raise AttachmentProblem(f"attachment '{shown}' is not a regular file") from None
    except OSError as exc:
        raise AttachmentProblem(f"attachment '{shown}': cannot read it ({exc.strerror or exc})") from None

"""Turning a worker's input into the prompt: text parts and attachments as binary content.

The attachment policy (count, total size, suffixes) is checked before the model is called.
Attachments a model asks for are confined to the project root; those a user passes are not.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .args import Attachment, WorkerArgs


class AttachmentProblem(ValueError):
    pass


def _resolve(path: str, root: Path, confined: bool) -> Path:
    candidate = Path(path).expanduser()
    resolved = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if confined and resolved != root and root not in resolved.parents:
        raise AttachmentProblem(f"attachment '{path}' is outside the project")
    return resolved


def build_prompt(args: WorkerArgs, policy: dict[str, Any] | None, root: Path, *, confined: bool) -> str | list[Any]:
    parts = args.prompt_messages()
    attachments = [p for p in parts if isinstance(p, Attachment)]
    if not attachments:
        text = "\n\n".join(str(p) for p in parts)
        return text if text.strip() else "(no input)"
    from llm_do.stdlib.paths import normalize_suffixes, suffix_allowed

    policy = policy or {}
    max_count = policy.get("max_count")
    if max_count is not None and len(attachments) > max_count:
        raise AttachmentProblem(f"{len(attachments)} attachments, at most {max_count} allowed")
    suffixes = policy.get("allowed_suffixes")
    files: list[tuple[Attachment, Path]] = []
    total = 0
    for attachment in attachments:
        path = _resolve(attachment.path, root, confined)
        if not suffix_allowed(path.name, suffixes):
            allowed = ", ".join(normalize_suffixes(suffixes) or ())
            raise AttachmentProblem(f"attachment '{attachment.path}': suffix '{path.suffix}' not allowed ({allowed})")
        try:
            total += os.stat(path).st_size
        except OSError:
            raise AttachmentProblem(f"attachment '{attachment.path}' not found") from None
        files.append((attachment, path))
    max_total = policy.get("max_total_bytes")
    if max_total is not None and total > max_total:
        raise AttachmentProblem(f"attachments total {total} bytes, at most {max_total} allowed")
    import mimetypes

    from pydantic_ai import BinaryContent

    content: list[Any] = []
    by_path = {id(a): p for a, p in files}
    for part in parts:
        if isinstance(part, Attachment):
            path = by_path[id(part)]
            media_type = part.media_type or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            content.append(BinaryContent(data=path.read_bytes(), media_type=media_type))
        else:
            content.append(str(part))
    return content

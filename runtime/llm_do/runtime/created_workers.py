"""Workers created during a run: the file that proposes one (written below the project root, never
replacing a file), and the spec the runtime runs it by until the next build takes the file in.

What a definition may hold and the file's text are the stdlib's (`stdlib.worker_create.definition`).
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

from llm_do.stdlib.worker_create.definition import (
    CREATING_TOOLSETS,
    DEFAULT_FOLDER,
    DefinitionProblem,
    WorkerDefinition,
    check_definition,
    worker_file_text,
)

__all__ = ["CREATING_TOOLSETS", "DEFAULT_FOLDER", "DefinitionProblem", "WorkerDefinition", "check_definition", "created_spec",
           "save"]


def save(root: Path, folder: str, definition: WorkerDefinition, *, replace: bool = False) -> tuple[Path, str]:
    """Write the checked definition as `folder/NAME.worker` below the project `root`; its path, and
    its path relative to the root (`DefinitionProblem` when the folder leads out of the root or
    into `.git`, or the file exists and `replace` is false, or it cannot be written). Replaced
    atomically."""
    from llm_do.toolkit.files import PathRefused, atomic_write, confine, touches_git_dir, write_new

    try:
        target = confine(root, folder) / f"{definition.name}.worker"
    except PathRefused as exc:
        raise DefinitionProblem(f"the folder for created workers: {exc}") from None
    if touches_git_dir(root, target):
        raise DefinitionProblem(f"the folder for created workers: {folder!r} is in the project's .git directory, where no "
                                "worker file may be written")
    source = target.relative_to(os.path.realpath(root)).as_posix()
    try:
        data = worker_file_text(definition).encode("utf-8")
        if replace:
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(target, data)
        else:
            write_new(target, data)
    except FileExistsError:
        raise DefinitionProblem(f"{source} already exists; it was not replaced (choose another name)") from None
    except OSError as exc:
        raise DefinitionProblem(f"cannot write {source}: {exc.strerror or exc}") from None
    return target, source


@cache
def _prompt_input_schema() -> dict[str, Any]:
    from .args import PromptInput

    return PromptInput.model_json_schema()


def created_spec(definition: WorkerDefinition, source: str) -> Any:
    """The `WorkerSpec` a created worker runs by: its definition, no tools, the default input."""
    from llm_do.bundle.views import SchemaSpec, WorkerSpec

    from .args import PromptInput

    return WorkerSpec(
        name=definition.name,
        source=source,
        description=definition.description or None,
        model=definition.model,
        compatible_models=None,
        model_settings=None,
        instructions=definition.instructions,
        input=SchemaSpec(None, PromptInput.__module__, PromptInput.__qualname__, _prompt_input_schema()),
        output=None,
        toolsets=(),
        tools={},
        calls=(),
        recursive=False,
        attachments=None,
        server_side_tools=(),
        services={},
    )

"""Workers created during a run: the file that proposes one (written below the project root, never
replacing a file), and the spec the runtime runs it by until the next build takes the file in.

What a definition may hold and the file's text are the stdlib's (`stdlib.worker_create.definition`).
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llm_do.stdlib.worker_create.definition import (
    CREATING_TOOLSETS,
    DEFAULT_FOLDER,
    DefinitionProblem,
    WorkerDefinition,
    check_definition,
    worker_file_text,
)

if TYPE_CHECKING:
    from llm_do.bundle.views import WorkerSpec

__all__ = ["CREATING_TOOLSETS", "DEFAULT_FOLDER", "DefinitionProblem", "WorkerDefinition", "check_definition", "check_free",
           "created_spec", "save", "target"]


def target(root: Path, folder: str, definition: WorkerDefinition) -> tuple[Path, str]:
    """Where the definition is written: `folder/NAME.worker` below the project `root`, and that
    path relative to the root (`DefinitionProblem` when the folder leads out of the root, into
    `.git`, or to a place no tool may write: `toolkit.protected`)."""
    from llm_do.toolkit.files import PathRefused, confine, touches_git_dir
    from llm_do.toolkit.protected import WRITE, protected_paths

    try:
        path = confine(root, folder) / f"{definition.name}.worker"
    except PathRefused as exc:
        raise DefinitionProblem(f"the folder for created workers: {exc}") from None
    if touches_git_dir(root, path):
        raise DefinitionProblem(f"the folder for created workers: {folder!r} is in the project's .git directory, where no "
                                "worker file may be written")
    source = path.relative_to(os.path.realpath(root)).as_posix()
    why = protected_paths(root).refusal(root, path, WRITE, shown=source)
    if why is not None:
        raise DefinitionProblem(f"the folder for created workers: {why}")
    return path, source


def check_free(root: Path, folder: str, definition: WorkerDefinition) -> None:
    """`DefinitionProblem` when `save` would refuse the place: a folder out of bounds, a file there."""
    path, source = target(root, folder, definition)
    if os.path.lexists(path):
        raise DefinitionProblem(_exists(source))


def _exists(source: str) -> str:
    return f"{source} already exists; it was not replaced (choose another name)"


def save(root: Path, folder: str, definition: WorkerDefinition, *, replace: bool = False) -> tuple[Path, str]:
    """Write the checked definition as `folder/NAME.worker` below the project `root`; its path, and
    its path relative to the root (`DefinitionProblem` as `target` says, or when the file exists
    and `replace` is false, or it cannot be written). Replaced atomically."""
    from llm_do.toolkit.files import atomic_write, write_new

    path, source = target(root, folder, definition)
    try:
        data = worker_file_text(definition).encode("utf-8")
        if replace:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, data)
        else:
            write_new(path, data)
    except FileExistsError:
        raise DefinitionProblem(_exists(source)) from None
    except OSError as exc:
        raise DefinitionProblem(f"cannot write {source}: {exc.strerror or exc}") from None
    return path, source


@cache
def _prompt_input_schema() -> dict[str, Any]:
    from .args import PromptInput

    return PromptInput.model_json_schema()


def created_spec(definition: WorkerDefinition, source: str) -> WorkerSpec:
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

"""Every built-in toolset by name. The compiler's view of the stdlib; imports no pydantic-ai.

The names are a table; a toolset's descriptor (its settings and argument models) is imported the
first time it is looked up, so a compile loads only the toolsets its workers use.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .descriptor import ToolsetDescriptor

_DESCRIPTORS: dict[str, str] = {
    "filesystem_project": "filesystem.descriptor:FILESYSTEM_PROJECT",
    "filesystem_project_ro": "filesystem.descriptor:FILESYSTEM_PROJECT_RO",
    "filesystem_cwd": "filesystem.descriptor:FILESYSTEM_CWD",
    "filesystem_cwd_ro": "filesystem.descriptor:FILESYSTEM_CWD_RO",
    "shell_readonly": "shell.descriptor:SHELL_READONLY",
    "shell_file_ops": "shell.descriptor:SHELL_FILE_OPS",
    "worker_create": "worker_create.descriptor:WORKER_CREATE",
    "dynamic_agents": "worker_create.descriptor:DYNAMIC_AGENTS",
}
"""Name -> `module:ATTRIBUTE` of its descriptor, below this package (tests check each is that name's)."""


class _Registry(Mapping[str, "ToolsetDescriptor"]):
    """A read-only mapping of the names above to their descriptors, loaded on first lookup."""

    def __init__(self) -> None:
        self._loaded: dict[str, ToolsetDescriptor] = {}

    def __getitem__(self, name: str) -> ToolsetDescriptor:
        found = self._loaded.get(name)
        if found is None:
            module, _, attribute = _DESCRIPTORS[name].partition(":")
            found = self._loaded[name] = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
        return found

    def __contains__(self, name: object) -> bool:
        return name in _DESCRIPTORS

    def __iter__(self) -> Iterator[str]:
        return iter(_DESCRIPTORS)

    def __len__(self) -> int:
        return len(_DESCRIPTORS)


STDLIB_TOOLSETS: Mapping[str, ToolsetDescriptor] = _Registry()


def stdlib_toolset(name: str) -> ToolsetDescriptor | None:
    return STDLIB_TOOLSETS.get(name)

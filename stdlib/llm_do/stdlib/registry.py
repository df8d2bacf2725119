"""Every built-in toolset by name. The compiler's view of the stdlib; imports no pydantic-ai."""

from __future__ import annotations

from .descriptor import ToolsetDescriptor
from .filesystem.descriptor import FILESYSTEM_CWD, FILESYSTEM_CWD_RO, FILESYSTEM_PROJECT, FILESYSTEM_PROJECT_RO
from .shell.descriptor import SHELL_FILE_OPS, SHELL_READONLY
from .worker_create.descriptor import DYNAMIC_AGENTS, WORKER_CREATE

STDLIB_TOOLSETS: dict[str, ToolsetDescriptor] = {
    d.name: d
    for d in (FILESYSTEM_PROJECT, FILESYSTEM_PROJECT_RO, FILESYSTEM_CWD, FILESYSTEM_CWD_RO, SHELL_READONLY, SHELL_FILE_OPS,
              WORKER_CREATE, DYNAMIC_AGENTS)
}


def stdlib_toolset(name: str) -> ToolsetDescriptor | None:
    return STDLIB_TOOLSETS.get(name)

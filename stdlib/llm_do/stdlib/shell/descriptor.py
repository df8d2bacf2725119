"""The shell toolsets: their settings, the one `shell` tool and its approval."""

from __future__ import annotations

from functools import partial
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from llm_do.bundle.approval import Approval

from ..descriptor import ToolDescriptor, ToolsetDescriptor
from .commands import ALLOWLISTS

DEFAULT_TIMEOUT = 30.0


class ShellSettings(BaseModel):
    """Settings of a shell toolset, written `{shell_readonly: {timeout: 10}}`."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(default=".", description="Sub-directory of the project root commands run in and are confined to.")
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0, description="Longest a command may run, in seconds.")
    max_output_chars: int = Field(default=50_000, gt=0, description="Output past this many characters is cut off.")


class ShellArgs(BaseModel):
    command: str = Field(
        description="One command line, e.g. `grep -n timeout src/app.py`, with paths relative to the project directory. "
        "No pipes, redirections, substitutions or wildcards."
    )
    timeout: float | None = Field(default=None, gt=0, description="Seconds to allow; capped by the toolset's timeout.")


def argv_schema(toolset: str) -> dict[str, Any]:
    """The derived `argv`: the command line normalized (`commands`: the operands, paths resolved
    and the destination last, then the flags one per word), whose first word is one of the
    toolset's commands; `x-fixed-positions` says which positions hold the same thing in every
    spelling of a command (`commands.FIXED_POSITIONS`), for the check of positional rules."""
    from .commands import ALLOWLISTS, FIXED_POSITIONS

    fixed = {name: list(FIXED_POSITIONS[name]) for name in sorted(ALLOWLISTS[toolset]) if name in FIXED_POSITIONS}
    return {"argv": {"type": "array", "items": {"type": "string"},
                     "prefixItems": [{"type": "string", "enum": sorted(ALLOWLISTS[toolset])}],
                     "x-fixed-positions": fixed}}


def _shell(name: str, commands: str, approval_note: str, approval: Approval,
           capabilities: tuple[str, ...]) -> ToolsetDescriptor:
    return ToolsetDescriptor(
        name=name,
        description=f"Run {commands} in the project directory, without a shell.",
        root="project",
        settings_model=ShellSettings,
        tools=(
            ToolDescriptor(
                name="shell",
                description=(
                    f"Run one allowlisted command ({commands}) and return its exit code, stdout and stderr. "
                    f"{approval_note}"
                ),
                args_model=ShellArgs,
                approval=approval,
                capabilities=capabilities,
                derived_schema=partial(argv_schema, name),
            ),
        ),
        implementation="llm_do.stdlib.shell.toolset:ShellToolset",
        commands=tuple(sorted(ALLOWLISTS[name])),
    )


SHELL_READONLY = _shell(
    "shell_readonly",
    "ls, cat, wc, grep, head, tail, sort, uniq, find, git log/diff/show/status",
    "These commands only read, so calls are allowed.",
    "allow",
    ("fs.read", "proc.exec"),
)
SHELL_FILE_OPS = _shell(
    "shell_file_ops",
    "ls, mv",
    "ls is allowed; mv moves files and is asked.",
    "auto",
    ("fs.read", "fs.write", "proc.exec"),
)

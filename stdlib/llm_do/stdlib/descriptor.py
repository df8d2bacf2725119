"""What the compiler knows of a built-in toolset without importing its implementation."""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from llm_do.bundle.approval import Approval


class ToolDescriptor(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    description: str
    args_model: type[BaseModel]
    approval: Approval
    capabilities: tuple[str, ...]
    path_params: tuple[str, ...] = ()
    """Parameters naming a path below the toolset's root: approval rules see them normalized
    (`..`, `.` and symlinks resolved, relative to the root), as the tool will touch them."""
    always_ask: bool = False
    """Every call is asked, whatever the approval rules say (a deny still denies): the run's
    approval mode or a person answers (`worker_create`)."""
    derived_schema: Callable[[], dict[str, Any]] | None = None
    """JSON Schemas of the fields the toolset derives from the arguments for approval rules
    (shell: the parsed `argv`); a function, so the tables behind them load only when asked."""

    @cached_property
    def derived(self) -> dict[str, Any]:
        """Derived fields by name → JSON Schema; rules may test them like parameters."""
        return self.derived_schema() if self.derived_schema else {}

    @cached_property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of the arguments, as the model sees it."""
        schema = self.args_model.model_json_schema()
        schema.pop("title", None)
        return schema


class ToolsetDescriptor(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    description: str
    root: Literal["project", "cwd"]
    """What the toolset's paths are relative to and confined to."""
    settings_model: type[BaseModel]
    tools: tuple[ToolDescriptor, ...]
    implementation: str
    """``module:Class`` of the runtime implementation."""
    commands: tuple[str, ...] = ()
    """Shell toolsets: the commands they run (the scope of their `proc.exec`)."""

    @property
    def capabilities(self) -> tuple[str, ...]:
        return tuple(sorted({c for t in self.tools for c in t.capabilities}))

    def tool(self, name: str) -> ToolDescriptor | None:
        return next((t for t in self.tools if t.name == name), None)

    @property
    def rules_see_paths(self) -> bool:
        """Whether approval rules on its tools test paths relative to its root (a path parameter,
        or shell's `argv`)."""
        return any(t.path_params or "argv" in t.derived for t in self.tools)

    def root_label(self, sub: str) -> str:
        """Where its paths are relative to, as every screen says it beside a path or a rule:
        `docs/`, `the project`, `sub/ of the working directory`. `sub`: the toolset's directory
        below the project (or working directory), `.` for that directory itself."""
        if sub in (".", ""):
            return "the project" if self.root == "project" else "the working directory"
        return f"{sub}/" if self.root == "project" else f"{sub}/ of the working directory"

    def grants(self, settings: dict[str, Any]) -> dict[str, tuple[str, ...]]:
        """Each tool's capabilities with their scope under these settings, `KIND:SCOPE`:
        `fs.read:project/docs/**`, `fs.write:cwd/**/*.md`, `proc.exec:ls,mv`.

        The scope is what the settings confine the tool to, so a reviewer sees a change of `path`
        or `allowed_suffixes` as a change of what the worker can touch."""
        defaults = {k: f.get_default(call_default_factory=True) for k, f in self.settings_model.model_fields.items()
                    if not f.is_required()}
        files = _file_scope(self.root, {**defaults, **settings})
        scopes = {"fs.read": files, "fs.write": files, "proc.exec": ",".join(sorted(self.commands))}
        return {t.name: tuple(f"{c}:{scopes[c]}" if c in scopes else c for c in t.capabilities) for t in self.tools}


def sub_directory(settings: dict[str, Any]) -> str:
    """The `path` setting as a normalized POSIX path below the root (`.`: the root itself)."""
    return posixpath.normpath(str(settings.get("path", ".")).replace("\\", "/"))


def _file_scope(root: str, settings: dict[str, Any]) -> str:
    """`project/docs/**`, or `project/docs/**/*.md` (`*{.md,.txt}`) with allowed_suffixes."""
    sub = sub_directory(settings)
    base = root if sub == "." else f"{root}/{sub}"
    suffixes = sorted(set(settings.get("allowed_suffixes") or ()))
    if not suffixes:
        return f"{base}/**"
    names = suffixes[0] if len(suffixes) == 1 else "{" + ",".join(suffixes) + "}"
    return f"{base}/**/*{names}"

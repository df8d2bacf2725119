"""The runtime side shared by every built-in toolset: tools listed from the descriptor, arguments
validated with the descriptor's own models, so the schema in the bundle is the schema enforced.

Calls run one at a time (`filesystem_lock`) and blocking ones in a worker thread; a call that
breaks in an unforeseen way is a tool failure the model reads, never the end of the run.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ValidationError
from pydantic_ai import RunContext
from pydantic_ai.exceptions import ModelRetry, ToolFailed
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from llm_do.bundle.approval import ASK, AUTO, Action
from llm_do.toolkit.files import PathRefused, confine, relative
from llm_do.toolkit.hooks import Decisive, HookHost, ToolsetHooks, changes_since_judged
from llm_do.toolkit.protected import READ, WRITE, Access, ProtectedPaths, protected_paths
from llm_do.toolkit.tool_args import ModelArgsValidator
from llm_do.toolkit.tool_threads import run_blocking

from .descriptor import ToolsetDescriptor

if TYPE_CHECKING:
    from llm_do.runtime.call_scope import CallContext


class StdlibToolset(AbstractToolset["CallContext"], ToolsetHooks):
    """Base of the built-in toolsets.

    A subclass implements one method per tool, named after it, taking the validated arguments as
    keyword arguments; it may override `approval_for` when its descriptor's approval is `auto`,
    and extend `normalize_args` with fields it derives for approval rules. The gate's questions
    (`ToolsetHooks`) are answered here from the descriptor; `edit_args` only by a toolset that
    offers editing (`worker_create`).
    """

    def __init__(self, descriptor: ToolsetDescriptor, settings: BaseModel, base: Path,
                 protected: ProtectedPaths | None = None) -> None:
        self.descriptor = descriptor
        self.settings = settings
        self.base = base
        """The directory the descriptor's `root` stands for (project root or working directory)."""
        self.root = confine(base, getattr(settings, "path", "."))
        """`base / settings.path`, resolved: every path of the toolset is relative to it and confined to it.
        Raises PathRefused when the setting leads out of `base`."""
        self.protected = protected if protected is not None else protected_paths(base)
        """What no call may read or change (`toolkit.protected`): the run's (its project and lock), or,
        for a toolset made outside a run, `base` taken as the project."""

    @property
    def id(self) -> str | None:
        return self.descriptor.name

    async def get_tools(self, ctx: RunContext[CallContext]) -> dict[str, ToolsetTool[CallContext]]:
        return {
            tool.name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(name=tool.name, description=tool.description, parameters_json_schema=tool.parameters),
                max_retries=1,
                args_validator=ModelArgsValidator(tool.args_model),
            )
            for tool in self.descriptor.tools
        }

    async def call_tool(self, name: str, tool_args: dict[str, object], ctx: RunContext[CallContext],
                        tool: ToolsetTool[CallContext]) -> object:
        if self.descriptor.tool(name) is None:
            raise ToolFailed(f"{self.descriptor.name} has no tool '{name}'")
        method = getattr(self, name)
        async with filesystem_lock():
            self._check_unchanged(name, tool_args)
            try:
                if inspect.iscoroutinefunction(method):
                    return await method(**tool_args)
                return await run_blocking(method, **tool_args)  # abandoned, not awaited, when the run stops
            except (ToolFailed, ModelRetry):
                raise
            except Exception as exc:  # a bug or an OS surprise: the model is told, the run goes on
                raise ToolFailed(" ".join(f"{name} failed: {type(exc).__name__}: {exc}".split())[:1000]) from None

    def _check_unchanged(self, name: str, tool_args: dict[str, object]) -> None:
        """Under the lock, the call must still be the one the gate judged: its paths resolved now
        (after the calls that held the lock before it) must be those the rules saw and a person
        approved, else a `mv` of a link could have redirected it past a deny."""
        changes = changes_since_judged(name, self.normalize_args(name, tool_args))
        if changes:
            raise ToolFailed(f"'{name}' did not run: its target changed after it was approved ({'; '.join(changes)}), "
                             "because another call moved a file or link; check and call it again")

    def check_protected(self, path: str, access: Access) -> None:
        """`ToolFailed` naming the path and why when `access` to it (as the model wrote it,
        relative to the root) touches what no tool may (`toolkit.protected`)."""
        why = self.protected.refusal(self.root, path, access)
        if why is not None:
            raise ToolFailed(why)

    def refusal(self, name: str, args: Mapping[str, object], host: HookHost) -> str | None:
        """A path parameter naming a protected place: the call fails unasked, saying why (nobody
        is asked about a call that cannot run)."""
        descriptor = self.descriptor.tool(name)
        access: Access = WRITE if descriptor is not None and "fs.write" in descriptor.capabilities else READ
        for param in (descriptor.path_params if descriptor else ()):
            value = args.get(param)
            if isinstance(value, str) and value:
                try:
                    why = self.protected.refusal(self.root, value, access)
                except (ValueError, OSError):
                    continue  # a path the tool refuses for its form says so itself
                if why is not None:
                    return why
        return None

    def approval_for(self, name: str, args: Mapping[str, object]) -> Action:
        """The approval a call needs when the bundle leaves it to the toolset (`auto`)."""
        descriptor = self.descriptor.tool(name)
        approval = descriptor.approval if descriptor else ASK
        return ASK if approval == AUTO else approval

    def always_asks(self, name: str) -> bool:
        """Whether every call of the tool is asked, whatever the rules say (`worker_create`)."""
        descriptor = self.descriptor.tool(name)
        return descriptor is not None and descriptor.always_ask

    def shown_args(self, name: str, args: Mapping[str, object]) -> dict[str, object]:
        """The call's arguments as every approver is shown them: each path parameter as the rules
        see it (relative to the toolset's root, resolved), whole, with the root beside it; a path
        the tool will refuse as written, saying so."""
        shown = dict(args)
        descriptor = self.descriptor.tool(name)
        for param in (descriptor.path_params if descriptor else ()):
            value = args.get(param)
            if isinstance(value, str):
                try:
                    shown[param] = Decisive(relative(self.root, confine(self.root, value)), f"in {self.root_label}")
                except (PathRefused, ValueError):
                    shown[param] = Decisive(value, f"outside {self.root_label}: the tool will refuse it")
        return shown

    @property
    def root_label(self) -> str:
        """The toolset's root as a person knows it (`ToolsetDescriptor.root_label`), as
        `capabilities` and `diff` say it too."""
        same = os.path.realpath(self.root) == os.path.realpath(self.base)
        return self.descriptor.root_label("." if same else relative(self.base, self.root))

    def normalize_args(self, name: str, args: Mapping[str, object]) -> dict[str, object]:
        """The arguments an approval rule judges: defaults filled in, and every path parameter
        replaced by the path the tool will touch, relative to the root with `..`, `.` and symlinks
        resolved (`output/../src/x.py` is `src/x.py`). A path the tool will refuse (it leads out
        of the root) is left out, so no condition on it holds."""
        descriptor = self.descriptor.tool(name)
        if descriptor is None:
            return dict(args)
        try:
            full = descriptor.args_model.model_validate(args).model_dump()
        except ValidationError:
            full = dict(args)
        for param in descriptor.path_params:
            value = full.pop(param, None)
            if isinstance(value, str):
                try:
                    full[param] = relative(self.root, confine(self.root, value))
                except PathRefused:
                    pass
        return full

_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()


def filesystem_lock() -> asyncio.Lock:
    """The lock every built-in tool call holds while it runs, one per event loop (one per run).

    The tool calls of one model response run concurrently; without it a `mv` could swap a
    directory for a link between another call's confinement check and its use of the path. Roots
    nest (a toolset's `path` inside another's, the project inside the working directory), so one
    lock covers them all rather than one per root."""
    loop = asyncio.get_running_loop()
    lock = _LOCKS.get(loop)
    if lock is None:
        lock = _LOCKS[loop] = asyncio.Lock()
    return lock

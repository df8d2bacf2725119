"""`worker_create` / `worker_call` (and `agent_create` / `agent_call`) at run time.

Creating writes the file through the run (`RunHost.create_worker`), which checks the name against
every worker and toolset, writes atomically without replacing anything, and makes the worker
callable in this run only. The person approving sees the file as it will be written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.toolsets import ToolsetTool

from llm_do.toolkit.files import relative
from llm_do.toolkit.hooks import Decisive, HookHost

from ..base import StdlibToolset, filesystem_lock
from .definition import DefinitionProblem, WorkerDefinition, check_definition, worker_file_text
from .descriptor import WorkerCreateSettings

if TYPE_CHECKING:
    from llm_do.runtime.call_scope import CallContext

_CREATE = ("worker_create", "agent_create")
_NO_TOOLS = ("created workers get no tools or toolsets (least privilege); create it without them, and a person can add "
             "tools to its file later")
_CALL = ("worker_call", "agent_call")


class WorkerCreateToolset(StdlibToolset):
    settings: WorkerCreateSettings

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[CallContext],
                        tool: ToolsetTool[CallContext]) -> object:
        if self.descriptor.tool(name) is None:
            raise ToolFailed(f"{self.descriptor.name} has no tool '{name}'")
        runtime = ctx.deps.runtime
        if name in _CREATE:
            if tool_args.get("tools") or tool_args.get("toolsets"):
                raise ToolFailed(_NO_TOOLS)
            async with filesystem_lock():
                try:
                    path = runtime.create_worker(tool_args["name"], tool_args["instructions"], tool_args["description"],
                                                 tool_args.get("model"), folder=self.settings.path)
                except DefinitionProblem as exc:
                    raise ToolFailed(str(exc)) from None
            call = _CALL[_CREATE.index(name)]
            return f"created worker '{tool_args['name']}' in {relative(self.base, path)}; call it with {call}"
        worker = tool_args.get("worker", tool_args.get("agent", ""))
        if not runtime.created(worker):
            raise ToolFailed(f"'{worker}' is not a worker created in this run; {name} calls only those")
        args = {"input": tool_args["input"], "attachments": tool_args.get("attachments") or []}
        return await runtime.call_worker_async(worker, args, parent=ctx.deps.frame, from_model=True)

    def attachments(self, name: str, args: Mapping[str, object]) -> list[str]:
        """`agent_call`'s attachments: the gate judges them as reads by the calling worker."""
        if name not in _CALL:
            return []
        attached = args.get("attachments") or ()
        if not isinstance(attached, Iterable):  # validated as a list: iterating anything else fails so too
            raise TypeError(f"'attachments' is a list of paths, not {attached!r}")
        return [str(p) for p in attached]

    def refusal(self, name: str, args: Mapping[str, object], host: HookHost) -> str | None:
        """A proposed worker the run would refuse (a taken name, a file already there, invalid
        text): refused before the person is asked, with the message the tool would give."""
        if name not in _CREATE:
            return None
        if args.get("tools") or args.get("toolsets"):
            return _NO_TOOLS
        proposed = _proposed(args)
        if proposed is None:
            return None  # arguments that do not validate: pydantic-ai's retry says so
        try:
            host.check_new_worker(proposed.name, proposed.instructions, proposed.description, proposed.model,
                                  folder=self.settings.path)
        except DefinitionProblem as exc:
            return str(exc)
        return None

    def edit_args(self, name: str, args: Mapping[str, object]) -> dict[str, object] | None:
        """On the terminal, a person may edit a proposed worker before approving it (in $EDITOR);
        the edited arguments, or None when unchanged. Raises `EditProblem` (a ValueError)."""
        if name not in _CREATE:
            return None
        from .editing import edit_in_editor

        return edit_in_editor(args)

    def shown_args(self, name: str, args: Mapping[str, object]) -> dict[str, object]:
        """A proposed worker is shown as the whole file that would be written, and where."""
        proposed = _proposed(args) if name in _CREATE else None
        if proposed is None:
            return dict(args)
        try:
            definition = check_definition(proposed, set())
        except DefinitionProblem:
            return dict(args)  # refused when the tool runs; show what the model wrote
        shown = {"file": Decisive(f"{definition.name}.worker", f"in {self.root_label}"),
                 "definition": worker_file_text(definition)}
        extra = {k: v for k, v in args.items() if k in ("tools", "toolsets") and v}
        return {**shown, **extra}


def _proposed(args: Mapping[str, object]) -> WorkerDefinition | None:
    """The worker a `worker_create` call proposes, as its arguments name it; None when they lack a
    field or give one of another type (they do not validate, so the tool will not run)."""
    name, instructions, description, model = (args.get(k) for k in ("name", "instructions", "description", "model"))
    if not (isinstance(name, str) and isinstance(instructions, str) and isinstance(description, str)
            and (model is None or isinstance(model, str))):
        return None
    return WorkerDefinition(name, instructions, description, model)

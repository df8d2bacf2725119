"""The `worker_create` toolset and its `.agent`-era alias `dynamic_agents`: settings, tools, approvals.

Creating a worker is always asked (`always_ask`): approval rules cannot allow it, only the run's
approval mode (or a person) answers. Calling a created worker is allowed like any worker call; what
the callee may do is nothing, since a created worker has no tools.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..descriptor import ToolDescriptor, ToolsetDescriptor
from .definition import DEFAULT_FOLDER


class WorkerCreateSettings(BaseModel):
    """Settings of `worker_create`, written `{worker_create: {path: workers/drafts}}`."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(default=DEFAULT_FOLDER, description="Folder below the project root that created workers are written to.")


class WorkerCreateArgs(BaseModel):
    name: str = Field(description="Name of the new worker: letters, digits, '_' or '-', starting with a letter or '_'.")
    instructions: str = Field(description="The new worker's instructions, used as written.")
    description: str = Field(description="One line saying what the worker does, shown to its callers.")
    model: str | None = Field(default=None, description="`provider:model-name`; without it the worker runs on its caller's model.")


class WorkerCallArgs(BaseModel):
    worker: str = Field(description="Name of a worker created in this run.")
    input: str = Field(description="The request for the worker (its prompt).")


class AgentCreateArgs(BaseModel):
    """`agent_create` of the `.agent` era; created workers get no tools, so `tools` and `toolsets`
    must be empty."""

    name: str = Field(description="Name of the new agent.")
    instructions: str = Field(description="Instruction prompt of the new agent.")
    description: str = Field(description="Short description of the new agent.")
    model: str | None = Field(default=None, description="Model of the new agent; without it the caller's.")
    tools: list[str] = Field(default=[], description="Must be empty: created agents get no tools.")
    toolsets: list[str] = Field(default=[], description="Must be empty: created agents get no toolsets.")


class AgentCallArgs(BaseModel):
    agent: str = Field(description="Name of an agent created in this run.")
    input: str = Field(description="Input text for the agent.")
    attachments: list[str] = Field(default=[], description="Paths of files (in the project) to attach.")


_CREATE_TEXT = ("Propose a new worker (a prompt-only worker with no tools), saved as NAME.worker for the project; a "
                "person approves it first. It can then be called with {call} in this run.")
_CALL_TEXT = "Call a worker created in this run with {create}, and return its answer."
_IMPL = "llm_do.stdlib.worker_create.toolset:WorkerCreateToolset"


def _toolset(name: str, create: str, call: str, create_args: type[BaseModel], call_args: type[BaseModel]) -> ToolsetDescriptor:
    return ToolsetDescriptor(
        name=name,
        description="Create workers (saved for the next build) and call them in the same run.",
        root="project",
        settings_model=WorkerCreateSettings,
        tools=(
            ToolDescriptor(name=create, description=_CREATE_TEXT.format(call=call), args_model=create_args,
                           approval="ask", capabilities=("fs.write",), always_ask=True),
            ToolDescriptor(name=call, description=_CALL_TEXT.format(create=create), args_model=call_args,
                           approval="allow", capabilities=()),
        ),
        implementation=_IMPL,
    )


WORKER_CREATE = _toolset("worker_create", "worker_create", "worker_call", WorkerCreateArgs, WorkerCallArgs)
DYNAMIC_AGENTS = _toolset("dynamic_agents", "agent_create", "agent_call", AgentCreateArgs, AgentCallArgs)

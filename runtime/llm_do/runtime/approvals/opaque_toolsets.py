"""The approval an opaque Python toolset gives its own tools, met with the bundle's.

A toolset factory of the `.agent` era marks tools with `set_toolset_approval_config` (see
`llm_do.toolsets.approval`); its tools are listed only when a run starts, so the bundle holds one
approval for the whole toolset (`opaque_approval`: the worker's rules, `ask` when none names it).
Each tool then gets, as the metadata the gate reads for opaque tools:

- `blocked`: `deny`, whatever the bundle says (nothing loosens a denial);
- `pre_approved`: `allow` where the bundle says `ask`, else the bundle's word (a rule's `deny` holds);
- anything else: the bundle's word.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pydantic_ai import RunContext
from pydantic_ai.toolsets import AbstractToolset, ToolsetFunc, ToolsetTool, WrapperToolset

from llm_do.bundle.approval import ALLOW, APPROVAL_METADATA_KEY, ASK, DENY, TOOLSET_METADATA_KEY, Action
from llm_do.toolsets.approval import get_toolset_approval_config

if TYPE_CHECKING:
    from ..call_scope import CallContext


def tool_approval(bundle_approval: Action, own: Mapping[str, object] | None) -> Action:
    """One tool's approval from the bundle's word for its toolset and the toolset's own config."""
    if own and own.get("blocked"):
        return DENY
    if own and own.get("pre_approved") and bundle_approval == ASK:
        return ALLOW
    return bundle_approval


@dataclass
class ToolsetApprovals(WrapperToolset["CallContext"]):
    """Sets each tool's approval metadata from the bundle's word and the wrapped toolset's config."""

    approval: Action
    config: dict[str, dict[str, object]]
    key: str
    """The toolset's key in the bundle, which session approvals name."""

    async def get_tools(self, ctx: RunContext[CallContext]) -> dict[str, ToolsetTool[CallContext]]:
        tools = await super().get_tools(ctx)
        out = {}
        for name, tool in tools.items():
            metadata = {**(tool.tool_def.metadata or {}), APPROVAL_METADATA_KEY: tool_approval(self.approval, self.config.get(name)),
                        TOOLSET_METADATA_KEY: self.key}
            out[name] = replace(tool, tool_def=replace(tool.tool_def, metadata=metadata))
        return out


def with_approvals(toolset: AbstractToolset[CallContext], approval: Action, key: str) -> AbstractToolset[CallContext]:
    """`toolset` (bundle key `key`) with its tools' approvals set (a toolset with no config of its
    own: by metadata)."""
    config = get_toolset_approval_config(toolset)
    if config is None:
        return toolset.with_metadata(**{APPROVAL_METADATA_KEY: approval, TOOLSET_METADATA_KEY: key})
    return ToolsetApprovals(toolset, approval=approval, config=config, key=key)


def factory_with_approvals(factory: ToolsetFunc[CallContext], approval: Action, key: str) -> ToolsetFunc[CallContext]:
    """A toolset factory whose toolsets come out with their approvals set (see `with_approvals`)."""

    async def build(ctx: RunContext[CallContext]) -> AbstractToolset[CallContext] | None:
        toolset = factory(ctx)
        if inspect.isawaitable(toolset):
            toolset = await toolset
        return None if toolset is None else with_approvals(toolset, approval, key)

    return build

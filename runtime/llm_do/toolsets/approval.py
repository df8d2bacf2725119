"""A toolset's own approval config, as `.agent`-era toolset factories set it.

`set_toolset_approval_config(toolset, {"tool": {"pre_approved": True}, "other": {"blocked": True}})`
stores the config on the toolset instance; the runtime reads it when it builds the worker's tools
and turns `pre_approved` into `allow` and `blocked` into `deny` (spec/legacy.md says how it meets the
worker's approval rules). Standard library only: the build imports it with the project's Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

T = TypeVar("T")

TOOLSET_APPROVAL_ATTR = "__llm_do_approval_config__"


def set_toolset_approval_config(toolset: T, config: Mapping[str, Mapping[str, object]]) -> T:
    """Attach per-tool approval config to a toolset instance; returns the toolset."""
    if not isinstance(config, dict) or not all(isinstance(k, str) and isinstance(v, dict) for k, v in config.items()):
        raise TypeError("the approval config must map tool names to dicts such as {'pre_approved': True}")
    setattr(toolset, TOOLSET_APPROVAL_ATTR, config)
    return toolset


def get_toolset_approval_config(toolset: object) -> dict[str, dict[str, object]] | None:
    """The config `set_toolset_approval_config` attached, or None."""
    config = getattr(toolset, TOOLSET_APPROVAL_ATTR, None)
    return config if isinstance(config, dict) else None

"""Where a tool's approval rules see its paths, as `capabilities` and `diff` say it beside the
rules: the root of the stdlib toolset the tool belongs to (`docs/`, `the project`), since a rule
tests a path relative to it (`deny write_file(path ~ 'secret*')` under `path: docs` is about
docs/secret*). The run's approval question names the same root beside the path
(`StdlibToolset.root_label`).
"""

from __future__ import annotations

from typing import Any

from llm_do.bundle.model import WorkerNode
from llm_do.bundle.views import used_toolsets
from llm_do.stdlib.descriptor import sub_directory
from llm_do.stdlib.registry import STDLIB_TOOLSETS


def rules_see_paths_in(toolsets: dict[str, Any], node: WorkerNode, toolset: str | None) -> str | None:
    """The root a worker's rules on a tool of `toolset` (its bundle key) see paths relative to;
    None for tools whose rules test no path (Python tools, worker calls, `worker_create`)."""
    kind = (toolsets.get(toolset or "") or {})
    descriptor = STDLIB_TOOLSETS.get(str(kind.get("name"))) if kind.get("kind") == "stdlib" else None
    if descriptor is None or not descriptor.rules_see_paths:
        return None
    settings = next((u.settings for u in used_toolsets(node) if u.toolset == toolset), {})
    return descriptor.root_label(sub_directory(settings))

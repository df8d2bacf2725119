"""pydantic-ai 1.x's `FunctionToolset.tool` for the Python of `.agent`-era projects.

In pydantic-ai 1.x `@toolset.tool` took any function and inferred from its signature whether it
wants the `RunContext`; 2.x requires the context as first parameter and raises `UserError` for a
plain function (`tool_plain` is the new way). Projects of the `.agent` era decorate plain functions
with `.tool` throughout.

`enable(root)` wraps `FunctionToolset.tool` once per process: a function defined in a file under an
enabled project root is added with the context inferred, as 1.x did; every other function gets
pydantic-ai's own behaviour, unchanged. The build enables it in its introspection subprocess and
the runtime before it imports a project's Python, both only for projects with `.agent` files.
"""

from __future__ import annotations

import os
from typing import Any

_roots: set[str] = set()
_original: Any = None


def enable(root: str) -> None:
    """Give functions defined under `root` the 1.x `FunctionToolset.tool` (again: no change)."""
    global _original
    _roots.add(os.path.join(os.path.realpath(root), ""))
    if _original is not None:
        return
    from pydantic_ai.toolsets import FunctionToolset

    _original = FunctionToolset.tool

    def tool(self: Any, func: Any = None, /, **kwargs: Any) -> Any:
        def decorator(func_: Any) -> Any:
            if not _in_enabled_root(func_):
                return _original(self, func_, **kwargs)
            self.add_function(func_, takes_ctx=None, **kwargs)
            return func_

        return decorator if func is None else decorator(func)

    tool.__doc__ = _original.__doc__
    FunctionToolset.tool = tool  # type: ignore[method-assign]


def enabled_for(root: str) -> bool:
    return os.path.join(os.path.realpath(root), "") in _roots


def _in_enabled_root(func: Any) -> bool:
    code = getattr(func, "__code__", None)
    filename = getattr(code, "co_filename", None)
    if not filename or not _roots:
        return False
    path = os.path.realpath(filename)
    return any(path.startswith(root) for root in _roots)

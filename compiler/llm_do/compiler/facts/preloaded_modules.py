"""Modules the fork server has loaded beyond a fresh child's (its own, and pydantic-ai with what it
imports), kept out of sight in each forked child until something there imports them, so the child
reports the modules a fresh one would have loaded, no more (the introspection cache's checks come
from that report).

While preloading, every import request is recorded (import statements through `__import__`,
`importlib.import_module` and the import system's own calls through `_find_and_load`): which
module asked for which, including modules already loaded. In a forked child the preloaded modules
are taken out of `sys.modules`, and out of the attributes of the modules a fresh child has (a
package's submodules, pydantic's lazily loaded names); the first import of one of them puts it back
with everything it asked for while it loaded, as a fresh import would have loaded them.
"""

from __future__ import annotations

import builtins
import importlib._bootstrap as bootstrap
import os
import sys
import types
from collections.abc import Callable, Iterable, Sequence
from typing import Any

ROOT = ""
"""The requester of imports made outside any module's loading (the preloading itself)."""


class Preloaded:
    """What the preloading loaded beyond `base` (a fresh child's modules) and what each asked for."""

    def __init__(self, base: set[str]) -> None:
        self.base = base
        self.needs: dict[str, set[str]] = {}
        self.strip: list[tuple[str, str]] = []
        """(module, attribute) the preloading added to a module a fresh child has: hidden too."""
        self.files: dict[str, tuple[int, int]] = {}
        """The size and modification time of every loaded module's file, as they were loaded."""

    def load(self, preload: Callable[[], Any]) -> None:
        """Run `preload`, recording every import request it makes."""
        names = {name: set(vars(module)) for name, module in sys.modules.items() if name in self.base}
        loading = [ROOT]
        real_find: Callable[..., Any] = bootstrap._find_and_load  # type: ignore[attr-defined]
        real_import = builtins.__import__

        def need(name: str) -> None:
            parts = name.split(".")
            self.needs.setdefault(loading[-1], set()).update(".".join(parts[:i]) for i in range(1, len(parts) + 1))

        def find_and_load(name: str, import_: Any) -> Any:
            need(name)
            loading.append(name)
            try:
                return real_find(name, import_)
            finally:
                loading.pop()

        def importing(name: str, globals: Any = None, locals: Any = None, fromlist: Sequence[str] | None = (),
                      level: int = 0) -> Any:
            module = real_import(name, globals, locals, fromlist, level)
            if level:
                package = (globals or {}).get("__package__") or ""
                name = bootstrap._resolve_name(name, package, level) if name else package.rsplit(".", level - 1)[0]  # type: ignore[attr-defined]
            if name:
                need(name)
                for item in fromlist or ():
                    if f"{name}.{item}" in sys.modules:
                        need(f"{name}.{item}")
            return module

        bootstrap._find_and_load = find_and_load  # type: ignore[attr-defined]
        builtins.__import__ = importing
        try:
            preload()
        finally:
            bootstrap._find_and_load = real_find  # type: ignore[attr-defined]
            builtins.__import__ = real_import
        hidden = {id(module) for name, module in sys.modules.items() if name not in self.base}
        for module in list(sys.modules.values()):
            filename = getattr(module, "__file__", None)
            if isinstance(filename, str):
                self.files[filename] = _signature(filename)
        for name, known in names.items():
            for attribute, value in vars(sys.modules[name]).items():
                if attribute not in known or (isinstance(value, types.ModuleType) and id(value) in hidden):
                    self.strip.append((name, attribute))

    def changed(self) -> str | None:
        """A loaded module's file that changed since it was loaded (an upgrade, an edit), if any:
        a fresh process would load the new one."""
        return next((f for f, signature in self.files.items() if _signature(f) != signature), None)

    def hide(self, also: Iterable[str] = ()) -> None:
        """In a forked child: take the preloaded modules out of sight, and `also` for good (an
        import of those loads them afresh)."""
        for name in also:
            sys.modules.pop(name, None)
        hidden = {name: sys.modules.pop(name) for name in list(sys.modules) if name not in self.base}
        stripped: dict[str, dict[str, Any]] = {}
        for name, attribute in self.strip:
            stripped.setdefault(name, {})[attribute] = vars(sys.modules[name]).pop(attribute, None)
        for module in hidden.values():
            namespace = vars(module)
            for attribute, value in list(namespace.items()):
                if isinstance(value, types.ModuleType) and value.__name__.startswith(module.__name__ + "."):
                    stripped.setdefault(module.__name__, {})[attribute] = namespace.pop(attribute)
        if not hidden:
            return
        real_find: Callable[..., Any] = bootstrap._find_and_load  # type: ignore[attr-defined]

        def restoring(name: str, import_: Any) -> Any:
            if name in hidden:
                self._restore(name, hidden, stripped)
                if not hidden:
                    bootstrap._find_and_load = real_find  # type: ignore[attr-defined]
            return real_find(name, import_)

        bootstrap._find_and_load = restoring  # type: ignore[attr-defined]

    def _restore(self, name: str, hidden: dict[str, types.ModuleType], stripped: dict[str, dict[str, Any]]) -> None:
        """Put `name` back, with every hidden module it asked for while it loaded, and the
        submodule attributes linking them."""
        todo, seen = [name], {name}
        while todo:
            for needed in self.needs.get(todo.pop(), ()):
                if needed not in seen:
                    seen.add(needed)
                    todo.append(needed)
        restored = {n: hidden.pop(n) for n in sorted(seen) if n in hidden}
        sys.modules.update({n: m for n, m in restored.items() if n not in sys.modules})
        for n, module in restored.items():
            parent, _, child = n.rpartition(".")
            if parent in sys.modules and stripped.get(parent, {}).get(child) is module:
                vars(sys.modules[parent]).setdefault(child, module)
            for attribute, held in stripped.get(n, {}).items():
                if isinstance(held, types.ModuleType) and sys.modules.get(held.__name__) is held:
                    vars(module).setdefault(attribute, held)


def _signature(filename: str) -> tuple[int, int]:
    try:
        st = os.stat(filename)
    except OSError:
        return (-1, -1)
    return (st.st_size, st.st_mtime_ns)

"""The packages import downward: no module needs a module that needs it back.

Function-level (deferred) imports count too: deferring an import keeps start-up fast, it does not
make a circle acceptable. Imports under `if TYPE_CHECKING:` are for annotations only and skipped.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE_ROOTS = ("compiler", "runtime", "stdlib")


def _modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for src in SOURCE_ROOTS:
        base = ROOT / src
        for path in base.rglob("*.py"):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules `module` imports, at any depth of its code but type-checking blocks."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base_parts = package[: len(package) - (node.level - 1)] if node.level else []
            base = ".".join(base_parts + ([node.module] if node.module else []))
            names = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules] or [base]
        else:
            for child in ast.iter_child_nodes(node):
                visit(child)
            return
        found.update(n for n in names if n in modules and n != module)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def test_no_module_imports_a_module_that_imports_it_back() -> None:
    modules = _modules()
    graph = {m: _imports(m, p, modules) for m, p in modules.items()}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        raise AssertionError(f"import circle: {' -> '.join(exc.args[1])}") from None


def test_the_runtime_composer_is_imported_by_no_module_below_it() -> None:
    """`Runtime` composes the gate, the worker calls and the toolset builder; they know the run
    only as `call_scope.RunHost`."""
    modules = _modules()
    below = ("toolsets.gate", "toolsets.workers", "toolsets.python", "toolsets.mcp", "toolset_builder", "call_scope", "approvals",
             "calls", "durability")
    for name in below:
        module = f"llm_do.runtime.{name}"
        assert "llm_do.runtime.runtime" not in _imports(module, modules[module], modules), module


def test_the_check_sees_a_deferred_circle(tmp_path: Path) -> None:
    a = tmp_path / "a.py"
    b = tmp_path / "b.py"
    a.write_text("def f():\n    from pkg import b\n")
    b.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import c\nfrom pkg import a\n")
    modules = {"pkg.a": a, "pkg.b": b, "pkg.c": tmp_path / "c.py"}
    assert _imports("pkg.a", a, modules) == {"pkg.b"}
    assert _imports("pkg.b", b, modules) == {"pkg.a"}


def test_the_bundle_package_imports_no_other_llm_do_package() -> None:
    """`llm_do.bundle` is the floor every package stands on (the format: model, bytes, reader,
    views, approval vocabulary); it imports only itself (and, tests/bundle checks, the standard
    library)."""
    modules = _modules()
    for module, path in modules.items():
        if module == "llm_do.bundle" or module.startswith("llm_do.bundle."):
            outside = sorted(t for t in _imports(module, path, modules) if not t.startswith("llm_do.bundle"))
            assert not outside, f"{module} imports {outside}"


COMPILER_USES_OF_THE_RUNTIME = {
    "llm_do.runtime.args": "PromptInput and WorkerArgs: the schema classes user Python subclasses",
    "llm_do.runtime.entry_signature": "the entry function's parameters, read as a run calls it",
    "llm_do.runtime.legacy_tools": "pydantic-ai 1.x's tools for `.agent`-era Python, imported at introspection",
    "llm_do.runtime.toolsets.mcp_transport": "connecting to an MCP server to list its tools at build, as a run connects",
    "llm_do.runtime.bundle": "`llm-do run`: building a bundle in memory and running it",
}
"""What the compiler may import of the runtime: user code and what runs it, never the format, which
is `llm_do.bundle`. The set may shrink as these move down; it must not grow unnoticed."""


def test_the_compiler_imports_the_runtime_only_where_it_meets_user_code_or_runs() -> None:
    modules = _modules()
    used = {t for module, path in modules.items() if module.startswith("llm_do.compiler")
            for t in _imports(module, path, modules) if t.startswith("llm_do.runtime")} - {"llm_do.runtime"}
    assert used <= set(COMPILER_USES_OF_THE_RUNTIME), sorted(used - set(COMPILER_USES_OF_THE_RUNTIME))


def test_nothing_outside_the_cli_imports_it() -> None:
    """The CLI composes the compiler and the runtime (`llm_do.cli`); no module below it names it,
    deferred imports included."""
    modules = _modules()
    outside = {m: sorted(t for t in _imports(m, p, modules) if t == "llm_do.cli" or t.startswith("llm_do.cli."))
               for m, p in modules.items() if m != "llm_do.cli" and not m.startswith("llm_do.cli.")}
    importers = {m: t for m, t in outside.items() if t}
    assert not importers, f"modules outside llm_do.cli import it: {importers}"


def test_no_two_packages_of_the_compiler_import_each_other() -> None:
    """Package level: `stages` may import `syntax`, `facts`, `legacy` and `approvals`, but none of
    them imports `stages` back (a package and its own subpackages aside)."""
    modules = _modules()

    def folder(module: str) -> str:
        return module if modules[module].name == "__init__.py" else module.rpartition(".")[0]

    arrows: set[tuple[str, str]] = set()
    for module, path in modules.items():
        if not module.startswith("llm_do.compiler."):
            continue
        for target in _imports(module, path, modules):
            a, b = folder(module), folder(target)
            if b.startswith("llm_do.compiler") and a != b and not b.startswith(a + ".") and not a.startswith(b + "."):
                arrows.add((a, b))
    both = sorted((a, b) for a, b in arrows if a < b and (b, a) in arrows)
    assert not both, f"packages that import each other: {both}"


def _package(module: str) -> str:
    """`llm_do.runtime.toolsets.gate` -> `llm_do.runtime`: the packages of the one namespace."""
    return ".".join(module.split(".")[:2])


def test_no_two_packages_import_each_other() -> None:
    """Packages layer as modules do (`cli -> {compiler, runtime} -> stdlib -> toolkit -> bundle`): the runtime
    imports the stdlib to build the built-in toolsets, the stdlib imports only `toolkit` (and the
    bundle format), never the runtime back."""
    modules = _modules()
    edges: dict[tuple[str, str], tuple[str, str]] = {}
    for module, path in modules.items():
        for target in _imports(module, path, modules):
            pair = (_package(module), _package(target))
            if pair[0] != pair[1]:
                edges.setdefault(pair, (module, target))
    both = sorted(f"{a} <-> {b} ({' -> '.join(edges[a, b])}; {' -> '.join(edges[b, a])})"
                  for a, b in edges if a < b and (b, a) in edges)
    assert not both, "packages that import each other: " + "; ".join(both)


def test_the_toolkit_imports_only_the_bundle_format() -> None:
    """What tools are written against stands on the format alone: the stdlib and the runtime build on it."""
    modules = _modules()
    for module, path in modules.items():
        if _package(module) == "llm_do.toolkit":
            outside = {t for t in _imports(module, path, modules) if _package(t) not in ("llm_do.toolkit", "llm_do.bundle")}
            assert not outside, f"{module} imports {sorted(outside)}"

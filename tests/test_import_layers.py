"""The packages import downward: `LAYERS` is the order, and no import climbs it.

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




LAYERS = (
    "llm_do.cli",
    "llm_do.compiler",
    "llm_do.compiler.report",
    "llm_do.compiler.diff",
    "llm_do.compiler.build",
    "llm_do.compiler.pipeline",
    "llm_do.compiler.stages",
    "llm_do.compiler.legacy",
    "llm_do.compiler.facts | llm_do.compiler.analysis | llm_do.compiler.cost",
    "llm_do.compiler.analysis.flows",
    "llm_do.compiler.approvals | llm_do.compiler.code | llm_do.compiler.templates | llm_do.compiler.cache",
    "llm_do.compiler.syntax",
    "llm_do.compiler.diagnostics",
    "llm_do.compiler.codes | llm_do.compiler.suggest | llm_do.compiler.provider_env",
    "llm_do",
    "llm_do.runtime",
    "llm_do.toolsets | llm_do.providers",
    "llm_do.stdlib | llm_do.provenance | llm_do.pricing",
    "llm_do.toolkit",
    "llm_do.bundle",
)
"""Every package and module of `llm_do`, top to bottom: a module may import its own layer and the
layers below it, never one above (import-linter's `layers` contract). Names on one line, split by
`|`, are one floor of independent rooms: neither imports the other.

A module belongs to the longest name it starts with. A name with names inside it (`llm_do`,
`llm_do.compiler`, `llm_do.compiler.analysis`) holds only its root modules, which are a layer of
their own, so a circle through a package's root is seen; a new root module or subpackage of one
of them has no layer until it is placed here. README.md and docs/DESIGN-layout.md print the list.
"""


def _names(layers: tuple[str, ...]) -> dict[str, int]:
    """Each name in `layers` -> the index of its floor."""
    return {name.strip(): floor for floor, layer in enumerate(layers) for name in layer.split("|")}


def _layer_of(module: str, names: dict[str, int], modules: dict[str, Path]) -> str | None:
    best = max((n for n in names if module == n or module.startswith(n + ".")), key=len, default=None)
    if best is None or module == best:
        return best
    holds_names = any(n.startswith(best + ".") for n in names)
    root_module = module.rpartition(".")[0] == best and modules[module].name != "__init__.py"
    return None if holds_names and not root_module else best


def _climbs(modules: dict[str, Path], layers: tuple[str, ...]) -> list[str]:
    """Every module no layer holds, every name no module has, and every import that climbs."""
    names = _names(layers)
    problems = [f"{name}: no such module or package" for name in names if name not in modules]
    layer = {m: _layer_of(m, names, modules) for m in modules}
    problems += [f"{m}: in no layer of LAYERS" for m, at in sorted(layer.items()) if at is None]
    for module, path in sorted(modules.items()):
        for target in sorted(_imports(module, path, modules)):
            a, b = layer[module], layer[target]
            if a is not None and b is not None and a != b and names[b] <= names[a]:
                problems.append(f"{module} ({a}) imports {target} ({b})")
    return problems


def test_no_import_climbs_the_layers() -> None:
    problems = _climbs(_modules(), LAYERS)
    assert not problems, "\n".join(problems)


def test_the_layers_check_sees_a_circle_through_a_package_root_and_a_sibling(tmp_path: Path) -> None:
    files = {"pkg.a": "from pkg.a.sub import x\n", "pkg.a.sub": "", "pkg.a.sub.x": "from pkg.a import y\n",
             "pkg.a.y": "", "pkg.b": "", "pkg.b.z": "from pkg.c import w\n", "pkg.c": "", "pkg.c.w": "",
             "pkg.d": ""}
    modules: dict[str, Path] = {}
    for name, text in files.items():
        path = tmp_path / f"{name}.py"
        if any(other.startswith(name + ".") for other in files):
            path = tmp_path / name / "__init__.py"
            path.parent.mkdir()
        path.write_text(text)
        modules[name] = path
    layers = ("pkg.a", "pkg.a.sub", "pkg.b | pkg.c")
    assert _climbs(modules, layers) == ["pkg.d: in no layer of LAYERS",
                                        "pkg.a.sub.x (pkg.a.sub) imports pkg.a.y (pkg.a)",
                                        "pkg.b.z (pkg.b) imports pkg.c.w (pkg.c)"]


def _printed_layers(path: Path) -> str:
    """The block after the line `Import layers` in `path`, as LAYERS prints it there."""
    text = path.read_text(encoding="utf-8")
    return text.split("Import layers", 1)[1].split("```\n", 2)[1]


def test_the_readme_and_the_design_layout_print_the_layers() -> None:
    printed = "".join(layer.replace("llm_do.", "") + "\n" for layer in LAYERS)
    for document in (ROOT / "README.md", ROOT / "docs" / "DESIGN-layout.md"):
        assert _printed_layers(document) == printed, f"{document.name}'s import layers are not LAYERS"


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

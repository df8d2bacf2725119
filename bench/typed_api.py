"""How much of each package's public API is typed `Any` (issue 34's measure).

A public function is a module-level function or a method of a module-level class whose own name,
class name and module path have no part starting with `_` (`__init__.py` is the package itself).
It counts as *untyped* when any parameter annotation or the return annotation mentions `Any`
(`Any`, `typing.Any`, or `Any` inside a string annotation). Unannotated parameters (`self`, `cls`)
count as typed: mypy checks the bodies either way. Standard library only, reads the source with
`ast` and imports nothing.

    python bench/typed_api.py            # one line per package: "package: N of M (P%)"
    python bench/typed_api.py --files    # and the files with the most untyped functions
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# The packages measured, by directory; a file is counted once, under the first (longest) prefix that
# holds it, so runtime/llm_do/runtime does not also count as runtime/llm_do.
PACKAGES = {
    "runtime": "runtime/llm_do/runtime",
    "bundle": "runtime/llm_do/bundle",
    "cli": "runtime/llm_do/cli",
    "toolkit": "runtime/llm_do/toolkit",
    "toolsets": "runtime/llm_do/toolsets",
    "stdlib": "stdlib/llm_do/stdlib",
    "compiler": "compiler/llm_do/compiler",
}


@dataclass(frozen=True)
class Count:
    """One package's figures: public functions that mention `Any`, of all public functions."""

    untyped: int
    total: int

    @property
    def fraction(self) -> float:
        return self.untyped / self.total if self.total else 0.0


def _mentions_any(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name) and node.id == "Any":
            return True
        if isinstance(node, ast.Attribute) and node.attr == "Any":
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                parsed = ast.parse(node.value, mode="eval")
            except SyntaxError:
                continue
            if _mentions_any(parsed.body):
                return True
    return False


def signature_mentions_any(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a parameter or the return of `function` is annotated with `Any` anywhere in it."""
    arguments = function.args
    parameters = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                  *(a for a in (arguments.vararg, arguments.kwarg) if a is not None)]
    return any(_mentions_any(p.annotation) for p in parameters) or _mentions_any(function.returns)


def public_functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Module-level public functions and the public methods of module-level public classes."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            yield node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for member in node.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                        and not member.name.startswith("_"):
                    yield member


def is_public_module(path: Path, root: Path) -> bool:
    parts = path.relative_to(root).parts
    return not any(part.startswith("_") and part != "__init__.py" for part in parts)


def file_counts(root: Path) -> dict[Path, Count]:
    """Per public module under `root`: its untyped and total public functions."""
    counts = {}
    for path in sorted(root.rglob("*.py")):
        if not is_public_module(path, root):
            continue
        functions = list(public_functions(ast.parse(path.read_text(encoding="utf-8"), str(path))))
        counts[path] = Count(sum(signature_mentions_any(f) for f in functions), len(functions))
    return counts


def _package_files(repo: Path) -> dict[str, dict[Path, Count]]:
    by_package: dict[str, dict[Path, Count]] = {}
    claimed: set[Path] = set()
    for name, directory in sorted(PACKAGES.items(), key=lambda item: -len(item[1])):
        counts = {p: c for p, c in file_counts(repo / directory).items() if p not in claimed}
        claimed.update(counts)
        by_package[name] = counts
    return {name: by_package[name] for name in PACKAGES}


def _summed(counts: Iterable[Count]) -> Count:
    counts = list(counts)
    return Count(sum(c.untyped for c in counts), sum(c.total for c in counts))


def package_counts(repo: Path = REPO) -> dict[str, Count]:
    """Per package in PACKAGES: its untyped and total public functions."""
    return {name: _summed(files.values()) for name, files in _package_files(repo).items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, nargs="?", const=10, default=0,
                        help="also list the N files with the most untyped public functions")
    options = parser.parse_args()
    files = _package_files(REPO)
    for name, counts in files.items():
        count = _summed(counts.values())
        print(f"{name}: {count.untyped} of {count.total} ({count.fraction:.0%})")
    if options.files:
        every = [(c.untyped, c.total, p) for counts in files.values() for p, c in counts.items() if c.untyped]
        print()
        for untyped, total, path in sorted(every, key=lambda row: (-row[0], str(row[2])))[:options.files]:
            print(f"{untyped:4} of {total:<4} {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()

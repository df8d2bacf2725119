"""spec/ and the README name modules that exist: every dotted `llm_do.…` name imports (a module,
or a name in one), and every path into the repository's own folders (`compiler/…`, `runtime/…`,
`stdlib/…`, `tests/…`, `spec/…`, `bench/…`) is there (examples/ holds what builds write, too). A module that moves takes its
mentions along."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = sorted([REPO / "README.md", *(REPO / "spec").rglob("*.md")])
DOTTED = re.compile(r"\bllm_do(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
ROOTS = ("compiler", "runtime", "stdlib", "tests", "spec", "bench")
PATH = re.compile(r"(?<![\w./-])(?:" + "|".join(ROOTS) + r")/[\w./-]*[\w/]")


def mentions(pattern: re.Pattern[str]) -> list[tuple[str, str]]:
    """(where, what) for each match: `spec/runtime.md:514` and the name or path."""
    found = []
    for doc in DOCUMENTS:
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            found += [(f"{doc.relative_to(REPO)}:{n}", m.group(0)) for m in pattern.finditer(line)]
    return found


def resolves(dotted: str) -> bool:
    """The longest prefix that imports, then attributes for the rest."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_the_documents_name_modules_and_paths() -> None:
    assert len(mentions(DOTTED)) > 20 and len(mentions(PATH)) > 10


@pytest.mark.parametrize(("where", "dotted"), mentions(DOTTED))
def test_every_dotted_name_imports(where: str, dotted: str) -> None:
    assert resolves(dotted), f"{where}: {dotted} does not exist"


@pytest.mark.parametrize(("where", "path"), mentions(PATH))
def test_every_repository_path_exists(where: str, path: str) -> None:
    assert (REPO / path.rstrip("/")).exists(), f"{where}: {path} does not exist"


def test_a_stale_name_or_path_fails() -> None:
    assert not resolves("llm_do.compiler.graph_export") and not resolves("llm_do.runtime.errors.NoSuchError")
    assert resolves("llm_do.compiler.report.graph.RENDERERS") and resolves("llm_do.runtime.WorkerArgs")
    assert [m.group(0) for m in PATH.finditer("see `runtime/llm_do/cli/x.py`, not src/a.py")] == ["runtime/llm_do/cli/x.py"]

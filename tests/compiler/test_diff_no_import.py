"""`llm-do diff --no-import` on tests/diff_corpus_no_import: one case per kind of change the text
alone cannot judge (issue 15, section 2), each an old and a new project, the entries `diff` must
report and what it says it did not compare.

Before, each of these printed "no changes in meaning" (or, for a condition on a Python tool's
parameter, failed with a false A003); each is rendered in every format (snapshots).
"""

from __future__ import annotations

import json
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from llm_do.compiler.diff.bundle import BundleDiff, diff_bundles
from llm_do.compiler.diff.inputs import compile_document
from llm_do.compiler.diff.unread import without_import
from llm_do.compiler.report.diff import RENDERERS, DiffInputs, DiffReport
from llm_do.compiler.report.schemas import CapabilitiesDocument, DiffDocument
from tests.support.cli import run_cli

CORPUS = Path(__file__).resolve().parents[1] / "diff_corpus_no_import"
CASES = sorted(p.name for p in CORPUS.iterdir() if (p / "expected.json").is_file())
INPUTS = DiffInputs("old", "new", "llm-do diff old new --no-import")


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("corpus")


def _compile(case: str, side: str, work: Path) -> dict[str, Any]:
    root = work / f"{case}-{side}"
    if not root.exists():
        shutil.copytree(CORPUS / case / side, root)
    return compile_document(root, f"{case}/{side}", import_python=False)


@cache
def _diff(case: str, work: Path) -> BundleDiff:
    old, new = _compile(case, "old", work), _compile(case, "new", work)
    return without_import(diff_bundles(old, new), old, new)


@pytest.mark.parametrize("case", CASES)
def test_diff_reports_what_it_could_not_evaluate(case: str, work: Path) -> None:
    expected = json.loads((CORPUS / case / "expected.json").read_text())
    result = _diff(case, work)
    found = [{"severity": c.severity, "verb": c.verb, "area": c.area, "subject": c.subject, "at": f"{c.file}:{c.line}"}
             for c in result.changes]
    assert found == expected["changes"]
    assert [u.subject for u in result.not_compared] == expected["not_compared"]
    DiffDocument.model_validate_json(RENDERERS["json"](DiffReport(result, INPUTS)))


@pytest.mark.parametrize("fmt", sorted(RENDERERS))
@pytest.mark.parametrize("case", CASES)
def test_every_format(case: str, fmt: str, work: Path, snapshot) -> None:
    assert RENDERERS[fmt](DiffReport(_diff(case, work), INPUTS)) == snapshot


def test_the_command_never_says_no_changes_for_what_it_could_not_read(tmp_path: Path) -> None:
    """F2 and the CI recipe: `diff --no-import` exits 1 on a breaking schema change (it printed
    "no changes in meaning" and exited 0); `capabilities --no-import` shows the MCP server it did
    not start as unknown instead of dropping it."""
    case = CORPUS / "schema_breaking"
    result = run_cli("diff", case / "old", case / "new", "--no-import")
    assert result.exit_code == 1, result.stderr
    assert "medium changed  schemas.py (not evaluated without import) (may affect: schemas of writer)" in result.stdout
    caps = run_cli("capabilities", case / "new", "--no-import")
    assert caps.exit_code == 0, caps.stderr
    assert " ?tools of MCP server srv  (not evaluated without import)" in caps.stdout.splitlines()
    doc = run_cli("capabilities", case / "new", "--no-import", "--format", "json").json()
    CapabilitiesDocument.model_validate(doc)
    assert [(w["name"], w["unknown"]) for w in doc["workers"]] == [("main", ["tools of MCP server srv"]), ("writer", [])]


def test_a_rule_over_tools_made_by_decorators_is_unresolved_without_import_not_an_error() -> None:
    """Issue 30: `--no-import` (the CI recipe's) refused the whole project, A002 at a glob over a
    toolset whose tools `@kit.tool_plain` makes, so its pull requests got no review at all. The
    rule is now C002 (an info: not resolved without import), lint passes, `diff` compares, and a
    build that imports the Python resolves it (no C002)."""
    project = CORPUS.parent / "diff_corpus" / "decorated_toolset_rule" / "new"
    lint = run_cli("lint", project, "--no-import")
    assert lint.exit_code == 0, lint.stderr
    assert "main.worker:4:11: C002 info: 'kit_*' matches none of the tools the text shows; it may match a tool of 'kit'" \
        in lint.stderr
    assert "A002" not in lint.stderr
    imported = run_cli("lint", project)
    assert imported.exit_code == 0 and "C002" not in imported.stderr
    caps = run_cli("capabilities", project, "--no-import")
    assert " ?allow kit_* of main (not resolved)  (not evaluated without import)" in caps.stdout.splitlines()

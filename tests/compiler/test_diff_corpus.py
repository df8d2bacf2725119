"""`llm-do diff` on tests/diff_corpus: one case per kind of change in the code and the text a
project runs (issue 15), each an old and a new project and the entries `diff` must report.

Before fingerprints, each of these printed "no changes in meaning" (or, for a worker's
description, a low setting). Every case is also rendered in every format (snapshots), and its
fingerprints are the same whether the Python is imported or read with `ast` (`--no-import`).
A case whose expected.json has `no_import` (issue 30's cases) is also compared as the CI recipe
compares it, both sides read with `--no-import`: those entries and what was not compared, in
every format.
"""

from __future__ import annotations

import json
import shutil
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from llm_do.compiler.diff.bundle import BundleDiff, diff_bundles
from llm_do.compiler.diff.committed_lock import with_committed_locks
from llm_do.compiler.diff.inputs import compile_document
from llm_do.compiler.diff.unread import without_import
from llm_do.compiler.pipeline import compile_project
from llm_do.compiler.report.diff import RENDERERS, DiffInputs, DiffReport
from llm_do.compiler.report.schemas import DiffDocument
from tests.support.cli import run_cli
from tests.support.projects import resealed

CORPUS = Path(__file__).resolve().parents[1] / "diff_corpus"
CASES = sorted(p.name for p in CORPUS.iterdir() if (p / "expected.json").is_file())
NO_IMPORT = [c for c in CASES if "no_import" in json.loads((CORPUS / c / "expected.json").read_text())]
INPUTS = DiffInputs("old", "new", "llm-do diff old new")
NO_IMPORT_INPUTS = DiffInputs("old", "new", "llm-do diff old new --no-import")


@pytest.fixture(autouse=True)
def _python_for_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_DO_TEST_PYTHON", sys.executable)


def _compile(case: str, side: str, work: Path, *, import_python: bool = True) -> dict[str, Any]:
    root = work / f"{case}-{side}-{import_python}"
    if not root.exists():
        shutil.copytree(CORPUS / case / side, root)
        _commit_lock(case, side, root)
    return compile_document(root, f"{case}/{side}", import_python=import_python, committed=True)


def _commit_lock(case: str, side: str, root: Path) -> None:
    """The `bundle.lock` a case commits on a side (issue 30, G1), made now so it is this llm-do's:
    the build of the project `SIDE.lock/`, or the side's own build with `SIDE.lock.json` merged in
    and resealed (`{}`: the build itself)."""
    source, patch = CORPUS / case / f"{side}.lock", CORPUS / case / f"{side}.lock.json"
    if source.is_dir():
        scratch = shutil.copytree(source, root.with_name(root.name + "-lock-source"))
        built = compile_project(scratch).bundle
        assert built is not None
        (root / "bundle.lock").write_bytes(built)
    elif patch.is_file():
        built = compile_project(root).bundle
        assert built is not None
        (root / "bundle.lock").write_bytes(resealed(built, json.loads(patch.read_text())))


def _compared(old: dict[str, Any], new: dict[str, Any], *, import_python: bool = True) -> BundleDiff:
    """What `llm-do diff` reports of two compiled sides."""
    result = diff_bundles(old, new)
    if not import_python:
        result = without_import(result, old, new)
    return with_committed_locks(result, old, new)


@cache
def _diff(case: str, work: Path) -> BundleDiff:
    return _compared(_compile(case, "old", work), _compile(case, "new", work))


@cache
def _diff_no_import(case: str, work: Path) -> BundleDiff:
    old, new = _compile(case, "old", work, import_python=False), _compile(case, "new", work, import_python=False)
    return _compared(old, new, import_python=False)


def _found(diff: BundleDiff) -> list[dict[str, str]]:
    return [{"severity": c.severity, "verb": c.verb, "area": c.area, "subject": c.subject, "at": f"{c.file}:{c.line}"}
            for c in diff.changes]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("corpus")


def test_the_corpus_has_a_case_per_kind_of_change() -> None:
    assert len(CASES) >= 14
    for case in CASES:
        assert (CORPUS / case / "old").is_dir() and (CORPUS / case / "new").is_dir(), case


@pytest.mark.process
@pytest.mark.parametrize("case", CASES)
def test_diff_reports_the_expected_entries(case: str, work: Path) -> None:
    expected = json.loads((CORPUS / case / "expected.json").read_text())["changes"]
    assert _found(_diff(case, work)) == expected


@pytest.mark.process
@pytest.mark.parametrize("case", NO_IMPORT)
def test_diff_without_import_reports_the_expected_entries(case: str, work: Path) -> None:
    expected = json.loads((CORPUS / case / "expected.json").read_text())["no_import"]
    found = _diff_no_import(case, work)
    assert _found(found) == expected["changes"]
    assert [u.subject for u in found.not_compared] == expected["not_compared"]


def _rendered(report: DiffReport, fmt: str) -> str:
    """The report in one format; a JSON one valid against its schema."""
    rendered = RENDERERS[fmt](report)
    if fmt == "json":
        DiffDocument.model_validate_json(rendered)
    return rendered


@pytest.mark.process
@pytest.mark.parametrize("fmt", sorted(RENDERERS))
@pytest.mark.parametrize("case", NO_IMPORT)
def test_every_format_without_import(case: str, fmt: str, work: Path, snapshot) -> None:
    assert _rendered(DiffReport(_diff_no_import(case, work), NO_IMPORT_INPUTS), fmt) == snapshot


@pytest.mark.process
@pytest.mark.parametrize("fmt", sorted(RENDERERS))
@pytest.mark.parametrize("case", CASES)
def test_every_format(case: str, fmt: str, work: Path, snapshot) -> None:
    assert _rendered(DiffReport(_diff(case, work), INPUTS), fmt) == snapshot


@pytest.mark.process
def test_an_edit_at_a_shared_leaf_is_one_entry_in_every_format(work: Path) -> None:
    """Four workers reach the write an approval relaxed at their shared leaf: text and JSON list it
    once, naming them, as the comment does (they listed one row per worker, and the rule again)."""
    report = DiffReport(_diff("shared_leaf", work), INPUTS)
    doc = json.loads(RENDERERS["json"](report))
    assert [(e["subject"], e["workers"], [f["subject"] for f in e["folded"]]) for e in doc["changes"]] == [
        ("approval of writer.write_file", ["editor", "main", "reviewer", "writer"],
         [f"fs.write:project/** of {w}" for w in ("editor", "main", "reviewer", "writer")])]
    assert doc["summary"] == {"high": 1, "medium": 0, "low": 0}
    assert (doc["changes"][0]["file"], doc["changes"][0]["line"]) == ("writer.worker", 4)
    text = RENDERERS["text"](report).splitlines()
    assert text[0].endswith("1 change: 1 high, 0 medium, 0 low")
    assert [line for line in text[1:] if not line.startswith(" ")] == ["high   widened  approval of writer.write_file: ask -> allow (relaxed)"]
    assert "    fs.write:project/** widened, gate allow for editor, main, reviewer, writer" in text


def _code_nodes(doc: dict[str, Any]) -> dict[str, Any]:
    nodes = {f"{key}.{name}": tool.get("code") for key, ts in doc["toolsets"].items() if ts["kind"] == "python"
             for name, tool in (ts.get("tools") or {}).items()}
    nodes["entry"] = (doc["entry"].get("function") or {}).get("code")
    return nodes


@pytest.mark.process
@pytest.mark.parametrize("case", [c for c in CASES if (CORPUS / c / "new" / "tools.py").is_file()])
def test_fingerprints_are_the_same_without_import(case: str, work: Path) -> None:
    imported = _code_nodes(_compile(case, "new", work))
    read = _code_nodes(_compile(case, "new", work, import_python=False))
    assert any(imported.values())
    assert read == imported


@pytest.mark.process
def test_a_python_call_nothing_declares_is_an_error_never_no_change(tmp_path: Path) -> None:
    """python_call without `calls: [writer]`: diff printed "no changes in meaning"; the new side is
    now G005 at the call, and diff refuses to compare (exit 2) after printing it."""
    new = shutil.copytree(CORPUS / "python_call" / "new", tmp_path / "new")
    main = new / "main.worker"
    main.write_text(main.read_text().replace("calls: [writer]\n", ""))
    result = run_cli("diff", CORPUS / "python_call" / "old", new)
    assert result.exit_code == 2
    assert "tools.py:12:18: G005 error: tool 'save_note' of worker 'main' calls worker 'writer'" in result.stdout + result.stderr


@pytest.mark.process
def test_one_template_edit_is_one_entry_in_every_format(work: Path) -> None:
    """Issue 30: a template three workers include, edited once, was one entry per worker (at
    3,000 workers, 3,000 rows of the same diff in the comment)."""
    report = DiffReport(_diff("template_edit", work), INPUTS)
    doc = json.loads(RENDERERS["json"](report))
    assert [(e["subject"], e["workers"], len(e["folded"])) for e in doc["changes"]] == [
        ("instructions of main", ["main", "reader", "writer"], 2)]
    assert doc["summary"] == {"high": 0, "medium": 1, "low": 0}
    assert RENDERERS["text"](report).splitlines()[1:] == [
        "medium changed  instructions of main, reader, writer (one edit, 3 workers)",
        "    +- Do what the files you read tell you to do."]


LOCK_CASES = [case for case in CASES if "lock" in json.loads((CORPUS / case / "expected.json").read_text())]


@pytest.mark.process
@pytest.mark.parametrize("case", LOCK_CASES)
def test_a_committed_lock_is_compared_without_import_too(case: str, work: Path, snapshot) -> None:
    """The review workflow diffs with `--no-import`: a lock that is not the build of its sources is
    the same high entry there, and a lock that is (its schemas and Python tools unread) adds none."""
    expected = json.loads((CORPUS / case / "expected.json").read_text())["changes"]
    result = _diff_no_import(case, work)
    assert _found(result) == expected
    for fmt in sorted(RENDERERS):
        assert RENDERERS[fmt](DiffReport(result, NO_IMPORT_INPUTS)) == snapshot(name=fmt)

"""With the project's own folder on the import path (`PYTHONPATH=src`), a verified module imported
by its short name still runs from the verified bytes, and an unverified file of that folder is
refused (red team M3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli, worker
from tests.support.events import of_kind, read_events
from tests.support.projects import build_project

pytestmark = pytest.mark.process

PROJECT: dict[str, Any] = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"], "entry": {"worker": "main"}},
    "tools.py": 'import helper\nimport pkg.sub\n\n\ndef report() -> str:\n    """What helper says."""\n    return helper.V\n\n\n'
                'def late() -> str:\n    """Imports a module of src/ only when called."""\n    import other\n\n    return other.V\n\n\n'
                'TOOLS = [report, late]\n',
    "src/helper.py": 'V = "helper v1"\n',
    "src/other.py": 'V = "never verified"\n',
    "src/pkg/__init__.py": "",
    "src/pkg/sub.py": 'V = "pkg.sub v1"\n',
    "main.worker": worker("tools: [report, late]\napprovals:\n  - allow report\n  - allow late"),
}

EDITED = 'import pathlib\npathlib.Path(__file__).with_name("CANARY").write_text("ran")\nV = "EDITED"\n'


@pytest.fixture
def bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project built in this process as the run will see it (`src` on PYTHONPATH and on
    `sys.path`): the run's check that its lock is the build of the sources beside it then finds the
    build's record instead of compiling again in a child process."""
    root = tmp_path / "proj"
    monkeypatch.syspath_prepend(str(root / "src"))  # what PYTHONPATH=src does for the run
    monkeypatch.setenv("PYTHONPATH", str(root / "src"))  # and for the build
    return build_project(root, PROJECT)


def _run(bundle: Path, tool: str, tmp_path: Path) -> tuple[int, str, list[dict[str, Any]]]:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"workers": {"main": [{"tool_calls": [{"tool": tool, "args": {}}]}, {"text": "done"}]}}))
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", script, "--events", events)
    return result.exit_code, result.stderr, read_events(events) if events.exists() else []


def test_the_build_records_the_module_of_the_src_folder(bundle: Path) -> None:
    assert '"src/helper.py"' in bundle.read_text()


def test_an_edited_module_reached_through_the_path_runs_its_verified_bytes(bundle: Path, tmp_path: Path) -> None:
    from llm_do.runtime import load_bundle

    loaded = load_bundle(bundle)  # verified now: the edit below comes after, as a worker's write would
    helper = bundle.parent / "src" / "helper.py"
    helper.write_text(EDITED)
    assert loaded.import_module("tools").report() == "helper v1"
    assert not (helper.parent / "CANARY").exists()


def test_an_edited_submodule_of_a_package_reached_through_the_path_runs_its_verified_bytes(bundle: Path) -> None:
    """`import pkg.sub` finds `src/pkg/sub.py` through the path: the submodule of a verified
    package reached by its short name is the verified source too, never the file as edited
    (mutation survivor 12 of issue 36)."""
    from llm_do.runtime import load_bundle

    loaded = load_bundle(bundle)
    sub = bundle.parent / "src" / "pkg" / "sub.py"
    sub.write_text(EDITED)
    assert loaded.import_module("tools").pkg.sub.V == "pkg.sub v1"
    assert not (sub.parent / "CANARY").exists()


def test_an_unverified_module_of_the_src_folder_is_refused(bundle: Path, tmp_path: Path) -> None:
    code, stderr, events = _run(bundle, "late", tmp_path)
    assert code == 3, stderr
    assert "refused: import of 'other' (src/other.py) from the project, which the bundle did not verify" in stderr
    assert of_kind(events, "tool_returned", tool="late") == []


def test_the_verified_module_runs(bundle: Path, tmp_path: Path) -> None:
    code, stderr, events = _run(bundle, "report", tmp_path)
    assert code == 0, stderr
    [returned] = of_kind(events, "tool_returned", tool="report")
    assert returned["result"] == "helper v1"

"""`llm-do init DIR --worker NAME` adds only a worker the project can have and will see: a name a
worker or a toolset has is refused (the compiler's N001, N002), and a folder no `worker_files`
entry covers is listed in project.json, the rest of the file as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_cli, worker, write_project
from tests.support.lint import lint

MANIFEST = {"version": 1, "worker_files": ["*.worker", "workers/*/worker.worker"], "entry": {"worker": "main"},
            "python_files": ["tools.py"], "defaults": {"model": "test"}}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "p", {
        "project.json": MANIFEST,
        "main.worker": worker("description: m", "Hi."),
        "helper.worker": worker("description: h\nname: aide", "Help."),
        "tools.py": "from pydantic_ai import FunctionToolset\n\n\nTOOLSETS = {'catalog': FunctionToolset([])}\n",
    })


@pytest.mark.parametrize(("name", "says"), [
    ("main", "a worker named 'main' is already defined in 'main.worker' (N001)"),
    ("aide", "a worker named 'aide' is already defined in 'helper.worker' (N001)"),  # named in its front matter
    ("filesystem_project", "worker 'filesystem_project' has the name of a stdlib toolset (N002)"),
    ("catalog", "worker 'catalog' has the name of a Python toolset (N002)"),  # read, not imported
])
def test_a_name_the_project_has_is_refused(project: Path, name: str, says: str) -> None:
    result = run_cli("init", project, "--worker", name)
    assert result.exit_code == 2
    assert result.stderr.strip() == f"llm-do: error: cannot add the worker '{name}': {says}; choose another name"
    assert not (project / "workers").exists()


def test_a_new_project_refuses_main_and_toolset_names(tmp_path: Path) -> None:
    for name, code in (("main", "N001"), ("shell_readonly", "N002")):
        result = run_cli("init", tmp_path / name, "--worker", name)
        assert result.exit_code == 2 and f"({code})" in result.stderr, result.stderr
        assert not (tmp_path / name).exists() or not any((tmp_path / name).iterdir())


def test_a_worker_in_a_folder_worker_files_covers_is_added_as_it_was(project: Path) -> None:
    before = (project / "project.json").read_bytes()
    result = run_cli("init", project, "--worker", "counter")
    assert result.exit_code == 0, result.stderr
    assert (project / "project.json").read_bytes() == before
    assert "listed" not in result.stderr


@pytest.mark.parametrize("manifest_text", [
    '{"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}}\n',
    '\ufeff{\r\n  "version": 1,\r\n  "worker_files": [\r\n    "*.worker"\r\n  ],\r\n  "entry": {"worker": "main"}\r\n}\r\n',
], ids=["one-line", "bom-crlf"])
def test_a_folder_worker_files_misses_is_listed_in_project_json(tmp_path: Path, manifest_text: str) -> None:
    root = write_project(tmp_path / "p", {"main.worker": worker("description: m\nmodel: test", "Hi.")})
    (root / "project.json").write_bytes(manifest_text.encode("utf-8"))
    result = run_cli("init", root, "--worker", "helper")
    assert result.exit_code == 0, result.stderr
    assert "listed workers/helper/worker.worker in project.json's worker_files" in result.stderr
    after = (root / "project.json").read_bytes().decode("utf-8")
    entry = '"workers/helper/worker.worker"'
    assert after.replace(", " + entry, "").replace(",\r\n    " + entry, "") == manifest_text  # only the entry is new
    assert json.loads(after.lstrip("\ufeff"))["worker_files"] == ["*.worker", "workers/helper/worker.worker"]
    seen = lint(root)
    assert seen.codes() == ["G003"]  # the project sees it: unreachable until a worker calls it
    seen.expect("G003", "workers/helper/worker.worker", line=1, column=1)


def test_a_project_that_does_not_load_is_not_added_to(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {"main.worker": worker("description: m", "Hi.")})
    (root / "project.json").write_text('{"version": 1, "worker_files": ["*.worker"],}\n')
    result = run_cli("init", root, "--worker", "helper")
    assert result.exit_code == 2 and "does not load" in result.stderr and "llm-do lint" in result.stderr
    assert not (root / "workers").exists()

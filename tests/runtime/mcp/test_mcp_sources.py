"""A project-local MCP server is a verified source (red team M2): the project files its command
line names and the project modules it imports are hashed at build, refused before the server
starts when changed, and reported by `build --check` and `diff`; the launcher is not a project file."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.cli import run_cli, write_project
from tests.support.mcp import SERVER, call_script, mcp_project

pytestmark = pytest.mark.process

LOCAL_SERVER = {"command": "${LLM_DO_TEST_PYTHON}", "args": ["server.py"],
                "env": {"ECHO_PID_FILE": "${ECHO_PID_FILE:-}"}, "allowed_tools": ["echo"], "required": False}


@pytest.fixture(scope="module")
def _template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mcp-sources") / "proj"
    files = mcp_project(LOCAL_SERVER)
    files["server.py"] = SERVER.read_text().replace("import os\n", "import os\n\nimport echo_helper  # noqa: F401\n", 1)
    files["echo_helper.py"] = 'GREETING = "hi"\n'
    write_project(root, files)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LLM_DO_TEST_PYTHON", sys.executable)
        result = run_cli("build", root)
    assert result.exit_code == 0, result.stdout + result.stderr
    return root


@pytest.fixture
def project(_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LLM_DO_TEST_PYTHON", sys.executable)
    return Path(shutil.copytree(_template, tmp_path / "proj"))


def _node(project: Path) -> dict:
    return json.loads((project / "bundle.lock").read_text())


def test_the_build_records_the_server_file_and_the_module_it_imports_not_the_launcher(project: Path) -> None:
    doc = _node(project)
    recorded = doc["toolsets"]["echo"]["sources"]
    assert sorted(recorded) == ["echo_helper.py", "server.py"]
    assert {rel: doc["sources"][rel]["sha256"] for rel in recorded} == recorded


def test_a_server_whose_module_changed_is_refused_before_it_starts(project: Path, tmp_path: Path, monkeypatch) -> None:
    pid = tmp_path / "pid"
    monkeypatch.setenv("ECHO_PID_FILE", str(pid))
    (project / "echo_helper.py").write_text('GREETING = "edited"\n')
    result = run_cli("exec", project / "bundle.lock", "go", "--script", call_script(tmp_path, ("echo", {"text": "x"})),
                     "--approve-all")
    assert result.exit_code == 3, result.stderr
    assert "stale: echo_helper.py changed since the build" in result.stderr
    assert not pid.exists()  # never started


def test_a_server_file_written_during_the_run_is_refused_when_the_server_starts(project: Path, tmp_path: Path) -> None:
    from llm_do.bundle.errors import BundleRefused
    from llm_do.runtime import load_bundle
    from llm_do.runtime.toolsets.mcp import McpServers

    bundle = load_bundle(project / "bundle.lock")  # verified at load, as a run starts
    (project / "server.py").write_text("raise SystemExit('model-written server ran')\n")
    servers = McpServers(bundle)
    with pytest.raises(BundleRefused, match=r"stale: server\.py changed since the build \(run by MCP server 'echo'\)"):
        import asyncio

        asyncio.run(servers.server("echo", bundle.toolset("echo") or {}))


def test_build_check_and_diff_report_the_changed_server_code(project: Path, tmp_path: Path) -> None:
    old = tmp_path / "old.lock"
    shutil.copy(project / "bundle.lock", old)
    (project / "echo_helper.py").write_text('GREETING = "edited"\n')
    check = run_cli("build", "--check", project)
    assert check.exit_code == 1 and "echo_helper.py" in check.stdout + check.stderr
    assert run_cli("build", project).exit_code == 0
    diff = run_cli("diff", old, project / "bundle.lock", "--format", "json")
    changes = [c for c in json.loads(diff.stdout)["changes"] if c["area"] in ("mcp", "code")]
    # its code, compared as a Python tool's (issue 30): the part that changed, and who runs it (asked: low)
    assert [(c["severity"], c["verb"], c["subject"], c["note"]) for c in changes] == [
        ("low", "changed", "code of echo_helper.py", "changed; reached by MCP server echo")]

"""`lint --no-import`: Python references checked with `ast`; no user code runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli, worker, write_project


def guarded(marker: Path, body: str) -> str:
    """Python text that leaves `marker` behind if it is ever executed."""
    return f"open({str(marker)!r}, 'a').write('ran\\n')\n" + body


def broken_project(marker: Path) -> dict[str, Any]:
    return {
        "project.json": {
            "version": 1,
            "worker_files": ["*.worker"],
            "python_files": ["schemas.py", "bad.py"],
            "entry": {"worker": "main", "args": {"input": "hi"}},
        },
        "main.worker": worker("model: test\nschema_in_ref: schemas.py:Missing\ntoolsets: [other]", "Hi."),
        "other.worker": worker("schema_in_ref: schemas.py:Plain", "Hi."),
        "schemas.py": guarded(
            marker,
            "from pydantic import BaseModel\n"
            "\n"
            "class Plain(BaseModel):\n"
            "    x: int\n"
            "\n"
            "class Similar(BaseModel):\n"
            "    y: int\n",
        ),
        "bad.py": guarded(marker, "x = 1\n\ndef f(:\n    pass\n"),
    }


def tools_project(marker: Path) -> dict[str, Any]:
    return {
        "project.json": {
            "version": 1,
            "worker_files": ["*.worker"],
            "python_files": ["tools.py", "listed.py", "kits.py", "schemas.py"],
        },
        "main.worker": worker(
            "model: test\nschema_in_ref: schemas.py:Good\ntools: [shout, reverse, whisper]\ntoolsets: [kit, nokit]",
            "Hi.",
        ),
        "tools.py": guarded(
            marker,
            "def shout(text: str) -> str:\n"
            "    return text.upper()\n"
            "\n"
            "TOOLS = {'shout': shout}\n",
        ),
        "listed.py": guarded(
            marker,
            "def reverse(text: str) -> str:\n"
            "    return text[::-1]\n"
            "\n"
            "TOOLS = [reverse]\n",
        ),
        "kits.py": guarded(
            marker,
            "from pydantic_ai.toolsets import FunctionToolset\n"
            "\n"
            "TOOLSETS = {'kit': FunctionToolset([])}\n",
        ),
        "schemas.py": guarded(
            marker,
            "from llm_do.runtime import WorkerArgs\n"
            "\n"
            "class Good(WorkerArgs):\n"
            "    text: str\n"
            "\n"
            "    def prompt_messages(self):\n"
            "        return [self.text]\n",
        ),
    }


def lint_json(root: Path) -> tuple[int, list[dict[str, Any]], str]:
    result = run_cli("lint", root, "--no-import", "--format", "json")
    assert "Traceback" not in result.stderr
    return result.exit_code, result.json()["diagnostics"], result.stderr


def test_broken_python_is_reported_without_running_it(tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    root = write_project(tmp_path / "proj", broken_project(marker))
    code, diags, _ = lint_json(root)
    assert not marker.exists(), "user code ran under --no-import"
    assert code == 1
    found = {(d["code"], d["file"]): d for d in diags}
    syntax = found[("Y001", "bad.py")]
    assert syntax["line"] == 4  # the guard line, a blank line, `x = 1`, then `def f(:`
    assert "SyntaxError" in syntax["message"]
    missing = found[("S003", "main.worker")]
    assert missing["line"] == 3
    assert "Missing" in missing["message"]
    not_args = found[("S004", "other.worker")]
    assert not_args["line"] == 2
    assert "Plain" in not_args["message"]
    info = found[("Y006", "project.json")]
    assert info["severity"] == "info"


def test_unknown_tool_from_literal_tools(tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    root = write_project(tmp_path / "proj", tools_project(marker))
    code, diags, _ = lint_json(root)
    assert not marker.exists(), "user code ran under --no-import"
    assert code == 1
    errors = [d for d in diags if d["severity"] == "error"]
    assert [(d["code"], d["file"], d["line"]) for d in errors] == [("N004", "main.worker", 4), ("N003", "main.worker", 5)]
    assert "whisper" in errors[0]["message"] and "reverse" not in errors[0]["message"]
    assert "nokit" in errors[1]["message"]
    assert any(d["code"] == "Y006" for d in diags)


def test_clean_project_passes_with_the_info(tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    files = tools_project(marker)
    files["main.worker"] = worker("model: test\nschema_in_ref: schemas.py:Good\ntools: [shout, reverse]\ntoolsets: [kit]",
                                  "Hi.")
    root = write_project(tmp_path / "proj", files)
    result = run_cli("lint", root, "--no-import")
    assert not marker.exists()
    assert result.exit_code == 0, result.stderr
    assert "Y006" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.process
def test_control_lint_without_the_flag_imports_and_finds_the_same(tmp_path: Path) -> None:
    """The marker mechanism works: without --no-import the code runs (in lint's subprocess)."""
    marker = tmp_path / "ran.txt"
    root = write_project(tmp_path / "proj", broken_project(marker))
    result = run_cli("lint", root, "--format", "json")
    assert marker.exists()
    found = {(d["code"], d["file"], d["line"]) for d in result.json()["diagnostics"]}
    assert {("Y001", "bad.py", 4), ("S003", "main.worker", 3), ("S004", "other.worker", 2)} <= found
    assert not any(code == "Y006" for code, _, _ in found)


def test_conditions_on_a_python_tools_parameters_are_read_from_its_def(tmp_path: Path) -> None:
    """F1: a condition on a Python tool's parameter is no A003 without import; a misspelt one is,
    with the parameters the `def` shows; a type the annotation says is checked (A005)."""
    marker = tmp_path / "ran.txt"
    files: dict[str, Any] = {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"]},
        "main.worker": worker("model: test\ntools: [post_message, count]\napprovals:\n"
                              "  - allow post_message(channel ~ 'bot-*' and text != '')\n  - allow count(limit < 5)", "Hi."),
        "tools.py": guarded(marker, "from pydantic_ai import RunContext\n\n"
                                    "def post_message(ctx: RunContext[None], channel: str, text, *, urgent: bool = False) -> str:\n"
                                    "    return channel\n\n"
                                    "async def count(limit: int = 3) -> int:\n    return limit\n\n"
                                    "TOOLS = [post_message, count]\n"),
    }
    root = write_project(tmp_path / "proj", files)
    code, diags, _ = lint_json(root)
    assert not marker.exists()
    assert (code, [d["code"] for d in diags]) == (0, ["Y007", "Y006"])  # Y007: main uses the project's tools
    files["main.worker"] = worker("model: test\ntools: [post_message]\napprovals:\n"
                                  "  - allow post_message(chanel ~ 'bot-*')\n  - ask post_message(urgent ~ 'y*')", "Hi.")
    code, diags, _ = lint_json(write_project(tmp_path / "bad", files))
    errors = [(d["code"], d["line"], d["message"], d.get("hint")) for d in diags if d["severity"] == "error"]
    assert errors == [("A003", 5, "tool 'post_message' has no parameter 'chanel'", "did you mean 'channel'?"),
                      ("A005", 6, "'urgent' of 'post_message' is a boolean, not a string: `~` matches strings only",
                       "compare it with ==, !=, <, <=, >, >= or in")]

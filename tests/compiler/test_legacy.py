"""Projects of zby/llm-do's `.agent` era build; keys of that era without an equivalent are L001."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli, worker, write_project
from tests.support.projects import LEGACY_PROJECT


def lint(root: Path) -> tuple[int, list[dict[str, Any]], str]:
    result = run_cli("lint", root, "--format", "json")
    assert "Traceback" not in result.stderr
    return result.exit_code, result.json()["diagnostics"], result.stderr


@pytest.fixture(scope="module")
def legacy_build(tmp_path_factory: pytest.TempPathFactory):
    root = write_project(tmp_path_factory.mktemp("legacy") / "proj", LEGACY_PROJECT)
    result = run_cli("build", root)
    bundle = json.loads((root / "bundle.lock").read_text()) if (root / "bundle.lock").exists() else None
    return root, result, bundle


@pytest.mark.process
def test_legacy_project_builds(legacy_build) -> None:
    _, result, bundle = legacy_build
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert bundle["entry"] == {"worker": "main", "args": {"input": "sample_input.txt"}}
    assert set(bundle["workers"]) == {"main", "summarizer"}
    assert bundle["workers"]["main"]["calls"] == ["summarizer"]
    assert bundle["workers"]["main"]["source"] == "main.agent"
    assert {p: s["kind"] for p, s in bundle["sources"].items()} == {
        "project.json": "manifest",
        "main.agent": "worker",
        "summarizer.agent": "worker",
        "schemas.py": "python",
    }
    assert bundle["runtime"]["approval_mode"] == "approve_all"
    assert bundle["runtime"]["max_depth"] == 10


@pytest.mark.process
def test_input_model_ref_and_agent_args(legacy_build) -> None:
    bundle = legacy_build[2]
    schema = bundle["workers"]["summarizer"]["input"]
    assert schema["ref"] == "schemas.py:SummarizerInput"
    assert schema["qualname"] == "SummarizerInput"
    assert set(schema["json_schema"]["properties"]) == {"path", "start", "end"}
    assert schema["json_schema"]["required"] == ["path"]


@pytest.mark.process
def test_server_side_tools_pass_into_the_bundle(legacy_build) -> None:
    bundle = legacy_build[2]
    assert bundle["workers"]["main"]["server_side_tools"] == [{"tool_type": "web_search", "max_uses": 3}]
    assert bundle["workers"]["summarizer"]["server_side_tools"] == []


@pytest.mark.process
def test_self_recursive_agent_warns_l002_instead_of_g001(legacy_build) -> None:
    _, result, _ = legacy_build
    assert "G001" not in result.stderr
    # The warning points at the `toolsets` item of the recursive edge.
    assert "summarizer.agent:7:" in result.stderr
    assert "L002 warning" in result.stderr


@pytest.fixture
def two_cycle(tmp_path: Path) -> Path:
    return write_project(
        tmp_path / "proj",
        {
            "project.json": {"version": 1, "agent_files": ["*.agent"], "entry": {"agent": "ping"}},
            "ping.agent": worker("name: ping\ntoolsets: [pong]", "Ping."),
            "pong.agent": worker("name: pong\ntoolsets: [ping]", "Pong."),
        },
    )


def test_two_agent_cycle_is_l002_not_g001(two_cycle: Path) -> None:
    code, diags, _ = lint(two_cycle)
    assert code == 0
    assert {d["code"] for d in diags} == {"L002"}
    assert all(d["severity"] == "warning" for d in diags)
    assert {d["file"] for d in diags} <= {"ping.agent", "pong.agent"}
    assert run_cli("build", two_cycle).exit_code == 0


def test_the_same_cycle_in_worker_files_is_g001(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "proj",
        {
            "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "ping"}},
            "ping.worker": worker("toolsets: [pong]", "Ping."),
            "pong.worker": worker("toolsets: [ping]", "Pong."),
        },
    )
    code, diags, _ = lint(root)
    assert code == 1
    assert "G001" in {d["code"] for d in diags}
    assert "L002" not in {d["code"] for d in diags}


# --- keys of that era without an equivalent ----------------------------------------------------------

BASE_MANIFEST = {"version": 1, "agent_files": ["main.agent"], "entry": {"agent": "main"}}


def _with(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(BASE_MANIFEST))
    node = data
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = value
    return data


# (manifest key path, value, words the hint must contain)
MANIFEST_CASES = [
    (("runtime", "agent_calls_require_approval"), True, "ask"),
    (("runtime", "agent_attachments_require_approval"), True, "attachments"),
    (("allow_cli_input",), False, "entry.args"),
    (("runtime", "auth_mode"), "oauth_required", "environment"),
    (("runtime", "return_permission_errors"), False, "tool result"),
    (("runtime", "agent_approval_overrides"), {"main": {"calls_require_approval": True}}, "ask"),
]


@pytest.mark.parametrize("path, value, words", MANIFEST_CASES, ids=[".".join(c[0]) for c in MANIFEST_CASES])
def test_removed_manifest_keys_are_l001_with_a_hint(tmp_path: Path, path, value, words: str) -> None:
    root = write_project(tmp_path / "proj", {"project.json": _with(path, value), "main.agent": worker("name: main", "Hi.")})
    code, diags, _ = lint(root)
    assert code == 1
    (l001,) = [d for d in diags if d["code"] == "L001"]
    assert l001["file"] == "project.json"
    assert l001["severity"] == "error"
    assert path[-1] in l001["message"]
    assert l001["hint"] and words in l001["hint"]
    # Point at the key itself.
    text = (root / "project.json").read_text()
    line = text.splitlines()[l001["line"] - 1]
    assert f'"{path[-1]}"' in line
    assert line.index(f'"{path[-1]}"') + 1 == l001["column"]
    # Nothing else is wrong with the project.
    assert [d["code"] for d in diags if d["severity"] == "error"] == ["L001"]


# (manifest key path, the value that is llm-do's behaviour anyway)
ALREADY_CASES = [
    (("runtime", "agent_calls_require_approval"), False),
    (("runtime", "agent_attachments_require_approval"), False),
    (("runtime", "return_permission_errors"), True),
    (("runtime", "auth_mode"), "oauth_off"),
    (("runtime", "agent_approval_overrides"), {}),
    (("allow_cli_input",), True),
]


@pytest.mark.parametrize("path, value", ALREADY_CASES, ids=[".".join(c[0]) for c in ALREADY_CASES])
def test_keys_set_to_what_llm_do_does_anyway_are_an_info_note(tmp_path: Path, path, value) -> None:
    root = write_project(tmp_path / "proj", {"project.json": _with(path, value), "main.agent": worker("name: main\nmodel: test", "Hi.")})
    code, diags, _ = lint(root)
    assert code == 0, diags
    (note,) = [d for d in diags if d["code"] == "L003"]
    assert note["severity"] == "info"
    assert note["file"] == "project.json"
    assert f"'{path[-1]}: {json.dumps(value)}'" in note["message"]
    assert "remove it" in note["hint"]
    line = (root / "project.json").read_text().splitlines()[note["line"] - 1]
    assert line.index(f'"{path[-1]}"') + 1 == note["column"]
    assert not [d for d in diags if d["severity"] == "error"]


def test_a_value_of_another_type_is_not_taken_for_the_default(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {"project.json": _with(("runtime", "agent_calls_require_approval"), 0),
                                             "main.agent": worker("name: main\nmodel: test", "Hi.")})
    code, diags, _ = lint(root)
    assert code == 1
    assert [d["code"] for d in diags if d["severity"] == "error"] == ["L001"]


@pytest.mark.parametrize("old, new, value", [("input", "args", {"input": "hello"}), ("name", "worker", "main")])
def test_entry_keys_with_an_equivalent_are_translated(tmp_path: Path, old: str, new: str, value: Any) -> None:
    manifest = {"version": 1, "agent_files": ["main.agent"], "entry": {"agent": "main", "args": {"input": "hello"}}}
    manifest["entry"].pop(new if new == "args" else "agent")
    manifest["entry"][old] = value
    root = write_project(tmp_path / "proj", {"project.json": manifest, "main.agent": worker("name: main\nmodel: test", "Hi.")})
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stderr
    bundle = json.loads((root / "bundle.lock").read_text())
    assert bundle["entry"] == {"worker": "main", "args": {"input": "hello"}}


def test_entry_true_in_an_agent_file_is_l001(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "proj",
        {
            "project.json": {"version": 1, "agent_files": ["main.agent"]},
            "main.agent": worker("name: main\ndescription: the entry\nentry: true", "Hi."),
        },
    )
    code, diags, _ = lint(root)
    assert code == 1
    (l001,) = [d for d in diags if d["code"] == "L001"]
    assert (l001["file"], l001["line"], l001["column"]) == ("main.agent", 4, 1)
    assert "project.json" in l001["hint"] and "entry" in l001["hint"]


def test_input_model_ref_in_a_worker_file_is_l001(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "proj",
        {"main.worker": worker("model: test\ninput_model_ref: schemas.py:Input", "Hi.")},
    )
    code, diags, _ = lint(root)
    assert code == 1
    (l001,) = [d for d in diags if d["code"] == "L001"]
    assert (l001["file"], l001["line"]) == ("main.worker", 3)
    assert "schema_in_ref" in l001["hint"]


def test_legacy_and_new_name_together_is_an_error(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "proj",
        {
            "project.json": {"version": 1, "agent_files": ["main.agent"], "worker_files": ["main.agent"]},
            "main.agent": worker("name: main", "Hi."),
        },
    )
    code, diags, _ = lint(root)
    assert code == 1
    assert any(d["file"] == "project.json" and "agent_files" in d["message"] for d in diags)


def test_agent_and_worker_files_mix(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "proj",
        {
            "project.json": {"version": 1, "worker_files": ["*.worker", "*.agent"]},
            "main.worker": worker("model: test\ntoolsets: [old_helper]", "Delegate."),
            "old_helper.agent": worker("name: old_helper", "Help."),
        },
    )
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stderr
    bundle = json.loads((root / "bundle.lock").read_text())
    assert bundle["workers"]["old_helper"]["source"] == "old_helper.agent"


def test_generated_agents_dir_is_the_default_path_of_dynamic_agents_and_confined(tmp_path: Path) -> None:
    from llm_do.compiler.pipeline import compile_project

    files: dict[str, Any] = {
        "project.json": {"version": 1, "generated_agents_dir": "../outside", "agent_files": ["*.agent"]},
        "main.agent": worker("toolsets:\n  - dynamic_agents\n  - worker_create: {path: own}", "Create agents."),
    }
    result = compile_project(write_project(tmp_path / "p", files))
    [f002] = [d for d in result.diagnostics if d.code == "F002"]
    assert (f002.file, f002.line) == ("project.json", 3)  # the key, as write_project lays the JSON out
    assert "dynamic_agents" in f002.message  # worker_create has its own path: the key does not reach it

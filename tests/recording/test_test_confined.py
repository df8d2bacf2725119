"""`llm-do test` without --live opens no connection (red team L1): a case that plays a script fails
naming a remote MCP server rather than reaching it, and the build takes a remote server's tools from
the cassettes or says that none recorded them (X008), all while a real listener at the server's
address hears nothing. Every path a case names is inside the project (red team L3): an absolute
one, one that climbs out, or a link out is exit 2 at its line, and nothing outside runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import one_line_error, run_cli, worker, write_project


def remote_project(root: Path, url: str, opaque: bool) -> Path:
    server = {"url": url, "headers": {"Authorization": "Bearer ${RT_TOKEN}"}, **({"opaque": True} if opaque else {})}
    return write_project(root, {
        "project.json": {"version": 1, "name": "remote", "worker_files": ["*.worker"], "entry": {"worker": "main"},
                         "mcp_servers": {"srv": server}},
        "main.worker": worker("toolsets: [srv]", "main"),
        "script.json": {"workers": {"main": [{"text": "done"}]}},
        "tests/cases.yaml": "cases:\n  - name: offline\n    input: go\n    script: ../script.json\n"
                            "    expect: {output: {contains: done}}\n",
    })


def test_a_script_case_fails_naming_a_remote_server_it_does_not_reach(tmp_path: Path,
                                                                        listener: tuple[str, list[bytes]]) -> None:
    url, heard = listener
    root = remote_project(tmp_path / "proj", url, opaque=True)
    result = run_cli("test", root, env={"RT_TOKEN": "ghp_SECRETTOKEN123"})
    assert result.exit_code == 1, result.stdout + result.stderr
    assert result.stdout.splitlines()[:2] == [
        "FAIL offline (tests/cases.yaml:2)",
        "  the run failed: remote MCP server 'srv' is not reached without --live, and a script holds no answer of it: "
        "replay a cassette recorded from a run that used the server (`--record DIR`), or run `llm-do test --live`"]
    assert heard == []


def test_the_build_lists_no_remote_server_that_no_cassette_recorded(tmp_path: Path,
                                                                     listener: tuple[str, list[bytes]]) -> None:
    url, heard = listener
    root = remote_project(tmp_path / "proj", url, opaque=False)
    result = run_cli("test", root, env={"RT_TOKEN": "ghp_SECRETTOKEN123"})
    assert result.exit_code == 1
    assert ("X008 error: MCP server 'srv' is remote, and `llm-do test` reaches no server without --live: no cassette "
            "of the project's cases recorded its tools") in result.stderr
    assert "hint: record a case's cassette from a run that uses it (`--record DIR`), or run `llm-do test --live`" in result.stderr
    assert result.stderr.splitlines()[-1] == "llm-do: the project has errors; no case was run"
    assert heard == []


OUTSIDE = "open({canary!r}, 'w').write('ran')\ndef ok(output):\n    return True\nclass Out:\n    pass\n"


@pytest.mark.parametrize(("field", "line"), [
    ("    expect:\n      output:\n        predicate: '{outside}:ok'\n", 5),
    ("    expect:\n      output:\n        schema: '{outside}:Out'\n", 5),
    ("    expect:\n      output:\n        predicate: '../outside.py:ok'\n", 5),
    ("    expect:\n      output:\n        predicate: 'tests/../../outside.py:ok'\n", 5),
    ("    expect:\n      output:\n        predicate: 'tests/link.py:ok'\n", 5),
    ("    input: {{input: go, attachments: [notes.txt, '{outside}']}}\n", 3),
    ("    cassette: '{outside_json}'\n", 3),
    ("    cassette: ../../cassette.json\n", 3),
    ("    script: /etc/hostname\n", 3),
])
def test_a_path_a_case_names_outside_the_project_is_refused_at_its_line(tmp_path: Path, field: str, line: int) -> None:
    outside, canary = tmp_path / "outside.py", tmp_path / "CANARY"
    outside.write_text(OUTSIDE.format(canary=str(canary)))
    (tmp_path / "cassette.json").write_text("{}")
    root = write_project(tmp_path / "proj", {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
        "main.worker": worker("description: m", "main"),
        "notes.txt": "notes\n",
        "script.json": {"workers": {"main": [{"text": "done"}]}},
    })
    (root / "tests").mkdir()
    (root / "tests" / "link.py").symlink_to(outside)
    text = field.format(outside=outside, outside_json=tmp_path / "cassette.json")
    source = "" if "cassette:" in text or "script:" in text else "    script: ../script.json\n"
    source += "" if "input:" in text else "    input: go\n"  # a run that would reach the predicate
    (root / "tests" / "cases.yaml").write_text("cases:\n  - name: c1\n" + text + source)
    result = run_cli("test", root)
    assert result.exit_code == 2, result.stdout + result.stderr
    error = one_line_error(result)
    assert error.startswith(f"llm-do: tests/cases.yaml:{line}: case 'c1': "), error
    assert "is not a file of the project (a case names files inside it, relative to the " in error
    assert not canary.exists()

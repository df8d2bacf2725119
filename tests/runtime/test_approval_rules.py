"""Approval rules with conditions at run time: the gate decides each call from the bundle's rules
on the tool's normalized arguments (paths resolved below the root, shell's parsed argv), a matching
deny wins even under approve_all, and the last matching allow/ask decides otherwise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import TextPart, ToolCallPart

from llm_do.bundle.canonical import seal
from llm_do.runtime import RuntimeConfig, run_worker
from tests.support.approvals import exec_, turns, write_call
from tests.support.cli import run_cli, worker
from tests.support.processes import IMPORT_PROBE


def rules_project(*rules: str, toolsets: str = "filesystem_project") -> dict[str, Any]:
    listed = "".join(f"\n  - \"{r}\"" for r in rules)
    return {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
        "main.worker": worker(f"toolsets: [{toolsets}]\napprovals:{listed}", "Main."),
        "src/keep.txt": "kept\n",
    }


def run_calls(bundle: Path, calls: list[tuple[str, dict[str, Any]]], mode: str) -> dict[str, str]:
    """Run the entry worker making `calls` one per turn; the approval the gate gave each call,
    keyed by its first argument's value."""
    events: list[Any] = []
    model = turns(*[[ToolCallPart(tool, args)] for tool, args in calls], [TextPart("done")])
    config = RuntimeConfig(model=model, approval_mode=mode, on_event=events.append)
    assert run_worker(bundle, "go", config=config).output == "done"
    return {next(iter(e.args.values())): e.approval for e in events if e.kind == "tool_called"}


def writes(*paths: str) -> list[tuple[str, dict[str, Any]]]:
    return [("write_file", {"path": p, "content": "x"}) for p in paths]


def test_an_allow_with_a_condition_allows_only_the_calls_it_matches(build) -> None:
    bundle = build(rules_project("allow write_file(path ~ 'output/**')"))
    root = bundle.parent
    approvals = run_calls(bundle, writes("output/a/b.txt", "notes.txt"), "reject_all")
    assert approvals == {"output/a/b.txt": "allow", "notes.txt": "ask"}
    assert (root / "output/a/b.txt").exists()
    assert not (root / "notes.txt").exists()


def test_paths_are_judged_after_dots_and_symlinks_are_resolved(build) -> None:
    """`output/../src/x.py`, `./output/../x` and `output/link/x` with `link -> ../src` name files
    outside `output/`, so they never pass for `output/**`; `./output/./y` is inside it."""
    bundle = build(rules_project("allow write_file(path ~ 'output/**')"))
    root = bundle.parent
    (root / "output").mkdir()
    os.symlink("../src", root / "output" / "link")
    sneaky = ("output/../src/x.py", "./output/../x", "output/link/x")
    approvals = run_calls(bundle, writes(*sneaky, "./output/./y"), "reject_all")
    assert approvals == {**dict.fromkeys(sneaky, "ask"), "./output/./y": "allow"}
    assert not (root / "src/x.py").exists() and not (root / "x").exists() and not (root / "src/x").exists()
    assert (root / "output/y").exists()


def test_a_path_leading_out_of_the_root_never_matches_as_if_inside(build) -> None:
    bundle = build(rules_project("allow write_file(not path ~ 'secret/**')"))
    (bundle.parent / "output").mkdir()
    os.symlink("/tmp", bundle.parent / "output" / "out")
    approvals = run_calls(bundle, writes("output/out/x", "ok.txt"), "reject_all")
    assert approvals == {"output/out/x": "ask", "ok.txt": "allow"}


def test_a_matching_deny_holds_under_approve_all_and_after_a_later_allow(build) -> None:
    bundle = build(rules_project("deny write_file(path ~ '**/*.py' or path ~ '.env*')", "allow write_file"))
    root = bundle.parent
    approvals = run_calls(bundle, writes("a.py", "pkg/b.py", "output/../c.py", ".env.local", "notes.md"), "approve_all")
    assert approvals == {"a.py": "deny", "pkg/b.py": "deny", "output/../c.py": "deny", ".env.local": "deny",
                         "notes.md": "allow"}
    assert [p.name for p in root.rglob("*") if p.is_file() and p.suffix in (".py", ".local", ".md")] == ["notes.md"]


def test_deny_under_approve_all_from_the_command_line(build, script, tmp_path: Path) -> None:
    bundle = build(rules_project("deny write_file(path ~ 'src/**')"))
    calls = {"workers": {"main": [write_call("out/../src/keep.txt", "overwritten"), {"text": "done"}]}}
    result = exec_(bundle, script(calls), "--approve-all")
    assert result.exit_code == 0, result.stderr
    assert (bundle.parent / "src/keep.txt").read_text() == "kept\n"


def test_between_allow_and_ask_the_last_matching_rule_decides(build) -> None:
    bundle = build(rules_project("ask write_file(path ~ 'docs/**')", "allow write_file(path ~ '**/*.md')"))
    approvals = run_calls(bundle, writes("docs/a.md", "docs/a.txt", "b.md", "c.txt"), "reject_all")
    assert approvals == {"docs/a.md": "allow", "docs/a.txt": "ask", "b.md": "allow", "c.txt": "ask"}


def test_the_default_applies_only_when_no_rule_matches(build) -> None:
    bundle = build(rules_project("ask read_file(path ~ 'private/**')", "allow write_file(path == 'log.txt')"))
    calls = [("read_file", {"path": "private/k.txt"}), ("read_file", {"path": "src/keep.txt"}), *writes("log.txt", "x.txt")]
    approvals = run_calls(bundle, calls, "reject_all")
    assert approvals == {"private/k.txt": "ask", "src/keep.txt": "allow", "log.txt": "allow", "x.txt": "ask"}


def test_defaults_filled_in_before_the_rule_looks(build) -> None:
    """`list_files` without a path lists `.`, and a rule on `path` sees that."""
    bundle = build(rules_project("deny list_files(path == '.')"))
    events: list[Any] = []
    model = turns([ToolCallPart("list_files", {})], [ToolCallPart("list_files", {"path": "src"})], [TextPart("done")])
    run_worker(bundle, "go", config=RuntimeConfig(model=model, approval_mode="approve_all", on_event=events.append))
    assert [e.approval for e in events if e.kind == "tool_called"] == ["deny", "allow"]


@pytest.mark.parametrize(("command", "approval"), [("ls", "ask"), ("cat src/keep.txt", "allow"), ("rm x", "allow")])
def test_a_shell_rule_sees_the_parsed_argv(build, command: str, approval: str) -> None:
    """`argv[0]` is the command as the toolset parses it; a refused command line has no argv, so
    the rule does not match it (it keeps the default, and the toolset refuses it)."""
    bundle = build(rules_project("ask shell(argv[0] in ['ls', 'find'])", toolsets="shell_readonly"))
    approvals = run_calls(bundle, [("shell", {"command": command})], "reject_all")
    assert approvals == {command: approval}


def test_auto_still_asks_the_toolset_when_no_rule_matches(build) -> None:
    bundle = build(rules_project("deny shell(argv[1] ~ 'src/**')", toolsets="shell_file_ops"))
    approvals = run_calls(bundle, [("shell", {"command": "mv src/keep.txt k.txt"}), ("shell", {"command": "ls"}),
                                   ("shell", {"command": "mv a b"})], "reject_all")
    assert approvals == {"mv src/keep.txt k.txt": "deny", "ls": "allow", "mv a b": "ask"}


SPELLINGS = ["mv keep.txt d/", "mv ./keep.txt d/", "mv d/../keep.txt d/", "mv -t d keep.txt", "mv --target-directory=d keep.txt",
             "mv -- keep.txt ./d"]


@pytest.mark.parametrize("command", SPELLINGS)
def test_a_respelled_command_meets_the_same_rule(build, command: str) -> None:
    """Red team M5: the rule judges the normalized argv, so every spelling of `mv keep.txt d/` is
    denied under approve_all and the file stays where it is."""
    project = rules_project("allow shell", "deny shell(argv[0] == 'mv' and argv[1] == 'keep.txt' and argv[2] == 'd')",
                            toolsets="shell_file_ops")
    project["keep.txt"] = "k\n"
    project["d/.keep"] = ""
    bundle = build(project)
    approvals = run_calls(bundle, [("shell", {"command": command})], "approve_all")
    assert approvals == {command: "deny"}
    assert (bundle.parent / "keep.txt").exists() and not (bundle.parent / "d/keep.txt").exists()


def test_a_format_1_lock_is_refused_with_rebuild(build) -> None:
    """Format 1 knew no conditions: its `approval` alone would loosen a conditional deny."""
    bundle = build(rules_project("deny write_file(path ~ 'src/**')"))
    doc = json.loads(bundle.read_text(encoding="utf-8"))
    doc["bundle_format"] = 1
    bundle.write_bytes(seal(doc))
    result = run_cli("exec", bundle, "hi", "--model", "test")
    assert result.exit_code == 3
    assert "bundle format 1" in result.stderr and "llm-do build" in result.stderr


@pytest.mark.process
def test_rules_are_evaluated_without_the_compiler_or_lark(build, tmp_path: Path) -> None:
    """The bundle holds the rules lowered: a run that decides calls by them imports no parser."""
    bundle = build(rules_project("allow write_file(path ~ 'output/**')", "deny write_file(path ~ '**/*.py')",
                                 "ask shell(argv[0] == 'ls')", toolsets="filesystem_project, shell_readonly"))
    s = tmp_path / "s.json"
    s.write_text(json.dumps({"workers": {"main": [
        {"tool_calls": [{"tool": "write_file", "args": {"path": "output/a.txt", "content": "x"}},
                        {"tool": "shell", "args": {"command": "cat src/keep.txt"}}]}, {"text": "done"}]}}))
    env = {k: v for k, v in os.environ.items() if k != "LLM_DO_MODEL"}
    proc = subprocess.run([sys.executable, "-c", IMPORT_PROBE, "exec", str(bundle), "hi", "--script", str(s)],
                          capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120)
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    assert line, proc.stdout + proc.stderr
    codes, heavy, _ = eval(line[0][len("RESULT "):])
    assert codes == [0], proc.stderr
    assert heavy == [], f"exec imported {heavy}"
    assert (bundle.parent / "output/a.txt").exists()  # allowed by its rule, in the default prompt mode


@pytest.mark.process
def test_a_python_tool_is_judged_on_its_raw_arguments(build) -> None:
    """No normalizer: `out/..` passes for `out/*` (which is why lint warns, A008)."""
    bundle = build({
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"],
                         "entry": {"worker": "main"}},
        "tools.py": "def export(target: str, count: int = 1) -> str:\n    \"\"\"Export.\"\"\"\n    return target\n\n\n"
                    "TOOLS = [export]\n",
        "main.worker": worker("tools: [export]\napprovals: [\"allow export(target ~ 'out/*')\", 'deny export(count > 5)']"),
    })
    calls = [("export", {"target": t, "count": c}) for t, c in (("out/a", 1), ("out/..", 1), ("x", 1), ("out/b", 9))]
    assert run_calls(bundle, calls, "reject_all") == {"out/a": "allow", "out/..": "allow", "x": "ask", "out/b": "deny"}


def test_a_worker_call_is_judged_on_the_callees_input(build) -> None:
    bundle = build({
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
        "main.worker": worker("toolsets: [helper]\napprovals: [\"ask helper(input ~ '*secret*')\"]"),
        "helper.worker": worker("", "Help."),
    })
    events: list[Any] = []
    model = turns([ToolCallPart("helper", {"input": "the secret plan"})], [ToolCallPart("helper", {"input": "hello"})],
                  [TextPart("helped")], [TextPart("done")])
    config = RuntimeConfig(model=model, approval_mode="reject_all", on_event=events.append)
    assert run_worker(bundle, "go", config=config).output == "done"
    assert [(e.args["input"], e.approval) for e in events if e.kind == "tool_called"] == [
        ("the secret plan", "ask"), ("hello", "allow")]
    assert [e.outcome for e in events if e.kind == "tool_returned"] == ["denied", "ok"]

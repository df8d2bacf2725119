"""What no tool may touch, whatever the rules (`toolkit.protected`, red team M5 and H2): the lock,
llm-do's state, the user's llm-do folders and what `llm-do test` reads. A test per tool family
(filesystem, shell's mv and its readers, worker_create, attachments, the gate's refusal) and per
protected path, each in the spellings that must not get past (`./`, `a/../`, case, links).

The project: `bundle.lock`, the run's lock `build/app.lock`, `.llm-do/threads/t.json`, the user's
cache and configuration folders placed inside it (`home/`) so the tools can reach them, and a case
file naming a cassette, a script and a predicate."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.exceptions import ToolFailed

from llm_do.runtime.args import PromptInput
from llm_do.runtime.created_workers import DefinitionProblem, WorkerDefinition, target
from llm_do.runtime.prompt import AttachmentProblem, build_prompt
from llm_do.stdlib.filesystem.descriptor import FilesystemSettings
from llm_do.stdlib.filesystem.toolset import FilesystemToolset
from llm_do.stdlib.registry import STDLIB_TOOLSETS
from llm_do.stdlib.shell.descriptor import ShellSettings
from llm_do.stdlib.shell.toolset import ShellToolset
from llm_do.toolkit import protected
from llm_do.toolkit.protected import READ, READ_TREE, REPLACE, WRITE, protected_paths
from tests.support.toolsets import call_tool

SECRET = "sk-live-THREAD-SECRET"
CASES = """\
cases:
  - name: triage
    cassette: cassettes/triage.json
    expect: {output: {predicate: "checks.py:ok", schema: schemas.py:Note}}
  - name: scripted
    script: ../scripts/s.json
"""
FILES = {
    "bundle.lock": "{}\n",
    "build/app.lock": "{}\n",
    ".llm-do/threads/t.json": f'{{"messages": "{SECRET}"}}\n',
    ".llm-do/runs.sqlite": "db",
    "home/cache/llm-do/key": "cache key",
    "home/config/llm-do/key": "config key",
    "tests/cases.yaml": CASES,
    "tests/cassettes/triage.json": "{}\n",
    "tests/redact.txt": "sk-.*\n",
    "tests/evals/abc.json": "{}\n",
    "scripts/s.json": "{}\n",
    "checks.py": "def ok(x): return True\n",
    "schemas.py": "Note = dict\n",
    "notes/todo.md": "buy milk\n",
    "sub/other.txt": "x\n",
}

WRITE_PROTECTED = {
    "bundle.lock": "the project's lock",
    "./bundle.lock": "the project's lock",
    "notes/../bundle.lock": "the project's lock",
    "BUNDLE.LOCK": "the project's lock",
    "sub/bundle.lock": "is a lock",
    "build/app.lock": "the lock this run was loaded from",
    "lock-link": "the project's lock",
    ".llm-do/threads/t.json": ".llm-do",
    ".llm-do/new.json": ".llm-do",
    ".LLM-DO/threads/t.json": ".llm-do",
    "state-link/threads/t.json": ".llm-do",
    "build/.llm-do/threads/x.json": ".llm-do",
    "notes/.llm-do/threads/x.json": ".llm-do",  # any .llm-do folder below the toolset's directory
    "home/cache/llm-do/entry.json": "cache folder",
    "home/config/llm-do/key": "configuration folder",
    "tests/cases.yaml": "test case file",
    "tests/new.yml": "test case file",
    "tests/redact.txt": "redaction patterns",
    "tests/evals/abc.json": "eval reports",
    "tests/cassettes/triage.json": "cassette file that the test cases of tests/cases.yaml read",
    "scripts/s.json": "script file",
    "checks.py": "predicate file",
    "schemas.py": "schema file",
}
READ_PROTECTED = {
    ".llm-do/threads/t.json": ".llm-do",
    "./.llm-do/runs.sqlite": ".llm-do",
    "notes/../.LLM-DO/threads/t.json": ".llm-do",
    "state-link/threads/t.json": ".llm-do",
    "home/cache/llm-do/key": "cache folder",
    "home/config/llm-do/key": "configuration folder",
}
READABLE = ["bundle.lock", "build/app.lock", "tests/cases.yaml", "tests/cassettes/triage.json", "checks.py",
            "notes/todo.md"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    os.symlink("bundle.lock", root / "lock-link")
    os.symlink(".llm-do", root / "state-link")
    monkeypatch.setenv("XDG_CACHE_HOME", str(root / "home" / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "home" / "config"))
    return root


def _protected(root: Path) -> Any:
    return protected_paths(root, root / "build" / "app.lock")


def fs(root: Path, name: str = "filesystem_project", **settings: Any) -> FilesystemToolset:
    return FilesystemToolset(STDLIB_TOOLSETS[name], FilesystemSettings(**settings), root, _protected(root))


def shell(root: Path, name: str = "shell_file_ops") -> ShellToolset:
    return ShellToolset(STDLIB_TOOLSETS[name], ShellSettings(), root, _protected(root))


def call(toolset: Any, name: str, **args: Any) -> Any:
    return asyncio.run(call_tool(toolset, name, args))


def refused(toolset: Any, name: str, **args: Any) -> str:
    with pytest.raises(ToolFailed) as info:
        call(toolset, name, **args)
    return info.value.message


def snapshot(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


# --- the filesystem toolsets ----------------------------------------------------------------------


@pytest.mark.parametrize(("path", "why"), WRITE_PROTECTED.items())
def test_write_file_refuses_every_protected_path_in_every_spelling(project: Path, path: str, why: str) -> None:
    before = snapshot(project)
    message = refused(fs(project), "write_file", path=path, content="forged")
    verb = "read or change" if why in (".llm-do", "cache folder", "configuration folder") else "change, move or remove"
    assert message.startswith(repr(path)) and why in message and message.endswith(f", which no tool may {verb}"), message
    assert snapshot(project) == before


@pytest.mark.parametrize(("path", "why"), READ_PROTECTED.items())
def test_read_file_refuses_llm_dos_state_and_the_users_llm_do_folders(project: Path, path: str, why: str) -> None:
    message = refused(fs(project, "filesystem_project_ro"), "read_file", path=path)
    assert message.startswith(repr(path)) and why in message and "read or change" in message, message
    assert SECRET not in message


@pytest.mark.parametrize("path", READABLE)
def test_the_lock_and_the_test_files_stay_readable(project: Path, path: str) -> None:
    assert call(fs(project, "filesystem_project_ro"), "read_file", path=path) == (project / path).read_text()


def test_list_files_shows_nothing_of_the_protected_folders_and_refuses_to_list_them(project: Path) -> None:
    listed = call(fs(project, "filesystem_project_ro"), "list_files").splitlines()
    assert "notes/todo.md" in listed and "bundle.lock" in listed
    assert not [p for p in listed if ".llm-do" in p.lower() or p.startswith("home/")], listed
    assert ".llm-do" in refused(fs(project, "filesystem_project_ro"), "list_files", path=".llm-do")
    assert "cache folder" in refused(fs(project, "filesystem_project_ro"), "list_files", path="home/cache/llm-do")


def test_a_cwd_toolset_above_the_project_protects_the_project_too(project: Path) -> None:
    """`filesystem_cwd` rooted at the project's parent: the project's lock and state by location."""
    toolset = FilesystemToolset(STDLIB_TOOLSETS["filesystem_cwd"], FilesystemSettings(), project.parent, _protected(project))
    assert "the project's lock" in refused(toolset, "write_file", path="proj/bundle.lock", content="x")
    assert ".llm-do" in refused(toolset, "read_file", path="proj/.llm-do/threads/t.json")


def test_a_toolset_made_outside_a_run_protects_its_base_as_the_project(tmp_path: Path) -> None:
    toolset = FilesystemToolset(STDLIB_TOOLSETS["filesystem_project"], FilesystemSettings(), tmp_path)
    assert "the project's lock" in refused(toolset, "write_file", path="bundle.lock", content="x")


def test_the_gate_is_told_before_asking_that_a_protected_write_will_fail(project: Path) -> None:
    toolset = fs(project)
    assert "the project's lock" in (toolset.refusal("write_file", {"path": "./bundle.lock", "content": "x"}, None) or "")
    assert toolset.refusal("write_file", {"path": "notes/new.md", "content": "x"}, None) is None
    assert toolset.refusal("read_file", {"path": "bundle.lock"}, None) is None
    assert ".llm-do" in (toolset.refusal("read_file", {"path": ".llm-do/threads/t.json"}, None) or "")


# --- the shell toolsets ---------------------------------------------------------------------------


@pytest.mark.parametrize(("command", "why"), [
    ("mv bundle.lock x", "the project's lock"),
    ("mv ./Bundle.Lock x", "the project's lock"),
    ("mv x.txt bundle.lock", "the project's lock"),
    ("mv -t build x.txt", None),  # build/x.txt: allowed (the lock is beside it)
    ("mv x.txt build/app.lock", "the lock this run was loaded from"),
    ("mv build elsewhere", "holds the lock this run was loaded from"),
    ("mv . elsewhere", "cannot be moved"),
    ("mv notes/.. elsewhere", "cannot be moved"),
    ("mv .llm-do elsewhere", ".llm-do"),
    ("mv x.txt .llm-do", ".llm-do"),
    ("mv x.txt .llm-do/", ".llm-do"),
    ("mv -t .llm-do/threads x.txt", ".llm-do"),
    ("mv x.txt state-link", ".llm-do"),
    ("mv -T sub .llm-do", ".llm-do"),
    ("mv home elsewhere", "holds llm-do's cache folder"),
    ("mv home/config/llm-do/key x", "configuration folder"),
    ("mv tests elsewhere", "holds the project's test cases"),
    ("mv tests/cassettes elsewhere", "cassette file"),
    ("mv x.txt tests/cases.yaml", "test case file"),
    ("mv x.txt tests/", None),  # tests/x.txt is no case file
    ("mv -t tests new.yaml", "test case file"),
    ("mv scripts gone", "script file"),
    ("mv checks.py gone.py", "predicate file"),
    ("mv x.txt checks.py", "predicate file"),
])
def test_mv_never_moves_removes_or_replaces_what_is_protected(project: Path, command: str, why: str | None) -> None:
    (project / "x.txt").write_text("x")
    toolset = shell(project)
    before = snapshot(project)
    if why is None:
        assert call(toolset, "shell", command=command).startswith("exit code: 0")
        return
    message = refused(toolset, "shell", command=command)
    assert message.startswith("mv: ") and why in message, message
    assert snapshot(project) == before
    assert "argv" not in toolset.normalize_args("shell", {"command": command})
    assert toolset.approval_for("shell", {"command": command}) == "allow"  # refused unasked, like any refused line
    assert toolset.refusal("shell", {"command": command}, None) == message


@pytest.mark.parametrize("command", ["cat .llm-do/threads/t.json", "head -n 1 ./.LLM-DO/threads/t.json",
                                     "grep sk- state-link/threads/t.json", "grep -r sk- .llm-do", "wc home/config/llm-do/key",
                                     "sort -m notes/todo.md --random-source .llm-do/runs.sqlite",
                                     "find .llm-do -name '*.json'", "ls -la .llm-do/threads",
                                     "git diff --no-index .llm-do/threads/t.json notes/todo.md",
                                     "git diff --no-index . notes"])
def test_readers_refuse_llm_dos_state(project: Path, command: str) -> None:
    message = refused(shell(project, "shell_readonly"), "shell", command=command)
    assert "which no tool may read or change" in message and SECRET not in message, message


def test_a_recursive_grep_skips_llm_dos_state_and_the_users_llm_do_folders(project: Path) -> None:
    toolset = shell(project, "shell_readonly")
    for command in ("grep -r sk- .", "grep -rn sk-", "grep --recursive key .", "grep -d recurse key ."):
        result = call(toolset, "shell", command=command)
        assert SECRET not in result and "config key" not in result and "cache key" not in result, (command, result)
    assert "tests/redact.txt" in call(toolset, "shell", command="grep -r sk- .")
    shown = call(toolset, "shell", command="cat bundle.lock tests/cases.yaml")
    assert shown.startswith("exit code: 0") and "cassette: cassettes/triage.json" in shown  # the lock and cases: readable


# --- worker_create and attachments ----------------------------------------------------------------


@pytest.mark.parametrize(("folder", "why"), [(".llm-do", ".llm-do"), ("./.LLM-DO/threads", ".llm-do"),
                                             ("home/config/llm-do", "configuration folder"),
                                             ("home/cache/llm-do", "cache folder")])
def test_worker_create_writes_no_worker_into_a_protected_folder(project: Path, folder: str, why: str) -> None:
    with pytest.raises(DefinitionProblem, match=why) as info:
        target(project, folder, WorkerDefinition("poet", "Write poems.", "a poet", None))
    assert "the folder for created workers" in str(info.value)
    target(project, "tests", WorkerDefinition("poet", "Write poems.", "a poet", None))  # tests/poet.worker: no case file


@pytest.mark.parametrize("path", [".llm-do/threads/t.json", "./.llm-do/runs.sqlite", "state-link/threads/t.json",
                                  "home/config/llm-do/key"])
def test_a_model_attaches_nothing_protected(project: Path, path: str) -> None:
    with pytest.raises(AttachmentProblem, match="which no tool may read") as info:
        build_prompt(PromptInput(input="x", attachments=[path]), None, project, confined=True,
                     lock=project / "build" / "app.lock")
    assert SECRET not in str(info.value)
    assert fs(project).reads("read_file", os.path.realpath(project / path)) is None  # so the gate refuses it too
    build_prompt(PromptInput(input="x", attachments=[path]), None, project, confined=False)  # a person's own --attach


# --- the protected set ---------------------------------------------------------------------------


def test_every_access_kind_by_place(project: Path) -> None:
    places = _protected(project)
    assert places.refusal(project, "bundle.lock", READ) is None
    assert places.refusal(project, "bundle.lock", WRITE) is not None
    assert places.refusal(project, "notes", REPLACE) is None
    assert "holds the project's lock" in (places.refusal(project, ".", REPLACE) or "")
    assert "holds" in (places.refusal(project.parent, "proj", REPLACE) or "")
    assert places.refusal(project, "notes/new.md", WRITE) is None
    assert places.refusal(project, "notes", READ_TREE) is None
    state = "llm-do's own state (chat threads and the run database hold what tools returned), which no tool may read or change"
    assert places.refusal(project, ".llm-do/threads/t.json", WRITE) == f"'.llm-do/threads/t.json' is in a .llm-do folder, {state}"
    assert places.refusal(project, "./.llm-do", READ) == f"'./.llm-do' is a .llm-do folder, {state}"
    assert places.refusal(project, "build", READ_TREE) == f"'build' holds the .llm-do folder beside the run's lock, {state}"
    assert places.refusal(project, ".", READ_TREE) == ("'.' holds the project's .llm-do folder, llm-do's own state (chat "
                                                       "threads and the run database hold what tools returned), which no "
                                                       "tool may read or change")
    assert places.refusal(project, "checks.py", WRITE) == ("'checks.py' is a predicate file that the test cases of "
                                                          "tests/cases.yaml read, which no tool may change, move or remove")


def test_a_path_outside_the_toolsets_directory_is_refused_as_outside_whatever_it_names(project: Path) -> None:
    toolset = fs(project / "notes")
    for path in ("../sub/.llm-do/x.json", "../sub/bundle.lock"):
        assert toolset.refusal("write_file", {"path": path, "content": "x"}, None) is None  # the gate's check: not this
        assert refused(toolset, "write_file", path=path, content="x") == f"{path!r} points outside the toolset's directory"


def test_the_users_folders_are_the_ones_the_environment_names_now(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert "cache folder" in (protected_paths(project).refusal(project, "home/cache/llm-do/key", READ) or "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(project / "notes"))
    places = protected_paths(project)
    assert places.refusal(project, "home/cache/llm-do/key", READ) is None
    assert "cache folder" in (places.refusal(project, "notes/llm-do/key", READ) or "")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(project / "sub"))
    places = protected_paths(project)
    assert places.refusal(project, "home/config/llm-do/key", READ) is None
    assert "configuration folder" in (places.refusal(project, "sub/llm-do/key", READ) or "")


def test_a_case_file_whose_references_are_no_file_names_names_nothing(project: Path) -> None:
    (project / "tests" / "odd.yaml").write_text("cases:\n  - name: odd\n    expect: {output: {predicate: null, schema: 5}}\n")
    places = protected.ProtectedPaths(project)
    assert places.refusal(project, "checks.py", WRITE) is not None  # tests/cases.yaml names it
    assert places.refusal(project, "notes/todo.md", WRITE) is None


def test_without_a_home_directory_the_project_is_protected_all_the_same(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from llm_do.toolkit import user_state

    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setattr(user_state, "_home", lambda: None)  # a container without HOME: no user folders
    places = protected.ProtectedPaths(project)
    assert "the project's lock" in (places.refusal(project, "bundle.lock", WRITE) or "")
    assert places.refusal(project, "home/cache/llm-do/key", READ) is None


def test_case_files_are_read_only_when_a_write_targets_a_file_they_name(project: Path, monkeypatch) -> None:
    """Keeping the run's path cheap: a write to a file whose name no case file mentions parses no
    YAML; one whose name is mentioned parses them once, until a case file changes."""
    parsed: list[str] = []
    real = protected._named_in
    monkeypatch.setattr(protected, "_named_in", lambda f, p: parsed.append(f) or real(f, p))
    places = protected.ProtectedPaths(project)
    assert places.refusal(project, "notes/new.md", WRITE) is None
    assert places.refusal(project, "bundle.lock", READ) is None
    assert parsed == []
    assert places.refusal(project, "checks.py", WRITE) is not None
    assert places.refusal(project, "schemas.py", WRITE) is not None
    assert len(parsed) == 1
    (project / "tests" / "cases.yaml").write_text(CASES.replace("checks.py", "other_checks.py") + "\n")
    assert places.refusal(project, "checks.py", WRITE) is None  # no case names it any more
    assert places.refusal(project, "other_checks.py", WRITE) is not None
    assert len(parsed) == 2

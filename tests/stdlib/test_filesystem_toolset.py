from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest
from pydantic import ValidationError
from pydantic_ai.exceptions import ToolFailed

from llm_do.stdlib.filesystem import toolset as fs_module
from llm_do.stdlib.filesystem.descriptor import FilesystemSettings
from llm_do.stdlib.filesystem.toolset import FilesystemToolset
from llm_do.stdlib.registry import STDLIB_TOOLSETS
from llm_do.toolkit.files import PathRefused
from tests.support.toolsets import call_tool, run_context


def failure(call, toolset, name: str, **args) -> str:
    with pytest.raises(ToolFailed) as info:
        call(toolset, name, **args)
    assert "\n" not in info.value.message
    return info.value.message


def tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


# --- tools listed ---------------------------------------------------------------------------------


def test_tools_follow_the_descriptor(fs) -> None:
    rw = asyncio.run(fs("filesystem_project").get_tools(run_context()))
    ro = asyncio.run(fs("filesystem_cwd_ro").get_tools(run_context()))
    assert list(rw) == ["read_file", "write_file", "list_files"]
    assert list(ro) == ["read_file", "list_files"]
    assert rw["read_file"].tool_def.parameters_json_schema["required"] == ["path"]


def test_arguments_are_validated(fs) -> None:
    tools = asyncio.run(fs().get_tools(run_context()))
    with pytest.raises(ValidationError):
        tools["read_file"].args_validator.validate_python({"path": "a", "offset": -1})
    with pytest.raises(ValidationError):
        tools["read_file"].args_validator.validate_json('{"path": "a", "max_chars": 0}')


def test_root_is_base_plus_settings_path(fs, call) -> None:
    toolset = fs(path="docs")
    (toolset.base / "docs").mkdir()
    (toolset.base / "top.txt").write_text("top")
    call(toolset, "write_file", path="a.md", content="x")
    assert (toolset.base / "docs" / "a.md").read_text() == "x"
    assert "points outside" in failure(call, toolset, "read_file", path="../top.txt")


def test_settings_path_is_confined(tmp_path: Path) -> None:
    with pytest.raises(PathRefused):
        FilesystemToolset(STDLIB_TOOLSETS["filesystem_project"], FilesystemSettings(path="../x"), tmp_path)


# --- read_file ------------------------------------------------------------------------------------


def test_read(fs, call) -> None:
    toolset = fs()
    (toolset.root / "a.txt").write_text("héllo\n")
    assert call(toolset, "read_file", path="a.txt") == "héllo\n"
    assert call(toolset, "read_file", path="a.txt", offset=1, max_chars=3) == (
        "éll\n[truncated: showing characters 1-4 of 6; call again with offset=4]"
    )
    assert call(toolset, "read_file", path="a.txt", offset=4) == "o\n"
    assert call(toolset, "read_file", path="a.txt", offset=6) == ""


def test_read_truncation_note(fs, call) -> None:
    toolset = fs()
    (toolset.root / "big.txt").write_text("x" * 53121)
    text = call(toolset, "read_file", path="big.txt")
    assert text.endswith("\n[truncated: showing characters 0-20000 of 53121; call again with offset=20000]")
    assert text.count("x") == 20000


def test_read_invalid_utf8_is_replaced(fs, call) -> None:
    toolset = fs()
    (toolset.root / "bin.txt").write_bytes(b"ok\xff\xfeend")
    assert call(toolset, "read_file", path="bin.txt") == "ok\ufffd\ufffdend"


def test_read_refusals(fs, call) -> None:
    toolset = fs(max_read_bytes=10)
    (toolset.root / "dir").mkdir()
    (toolset.root / "big.txt").write_text("x" * 11)
    (toolset.root / "a.txt").write_text("abc")
    os.mkfifo(toolset.root / "fifo")
    assert failure(call, toolset, "read_file", path="missing.txt") == "'missing.txt' does not exist"
    assert "is a directory; use list_files" in failure(call, toolset, "read_file", path="dir")
    assert "not a regular file" in failure(call, toolset, "read_file", path="fifo")
    assert "larger than 10 bytes" in failure(call, toolset, "read_file", path="big.txt")
    assert "past the end" in failure(call, toolset, "read_file", path="a.txt", offset=4)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("../outside.txt", "points outside"),
        ("/etc/passwd", "absolute"),
        ("C:\\Windows\\win.ini", "absolute"),
        ("a\x00b", "NUL"),
        ("out/outside.txt", "symbolic link"),
        ("out.txt", "symbolic link"),
    ],
)
def test_read_escapes(fs, call, tmp_path: Path, path: str, expected: str) -> None:
    toolset = fs()
    (tmp_path / "outside.txt").write_text("secret")
    (toolset.root / "out").symlink_to(tmp_path)
    (toolset.root / "out.txt").symlink_to(tmp_path / "outside.txt")
    assert expected in failure(call, toolset, "read_file", path=path)


def test_read_suffix_filter(fs, call) -> None:
    toolset = fs(allowed_suffixes=[".md"])
    (toolset.root / "a.md").write_text("ok")
    (toolset.root / "a.py").write_text("no")
    (toolset.root / "alias.md").symlink_to(toolset.root / "a.py")
    assert call(toolset, "read_file", path="a.md") == "ok"
    assert "allowed suffix" in failure(call, toolset, "read_file", path="a.py")
    assert "allowed suffix" in failure(call, toolset, "read_file", path="alias.md")


# --- write_file -----------------------------------------------------------------------------------


def test_write_creates_parents(fs, call) -> None:
    toolset = fs()
    assert call(toolset, "write_file", path="notes/deep/a.txt", content="hello world!") == "wrote 12 bytes to notes/deep/a.txt"
    assert (toolset.root / "notes" / "deep" / "a.txt").read_text() == "hello world!"


def test_write_is_atomic_and_leaves_no_temp_files(fs, call) -> None:
    toolset = fs()
    target = toolset.root / "a.txt"
    target.write_text("old")
    target.chmod(0o640)
    call(toolset, "write_file", path="a.txt", content="new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert tree(toolset.root) == ["a.txt"]


def test_failed_write_keeps_the_old_file(fs, call, monkeypatch) -> None:
    toolset = fs()
    (toolset.root / "a.txt").write_text("old")

    def broken_replace(src, dst, **dir_fds):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fs_module.os, "replace", broken_replace)
    assert failure(call, toolset, "write_file", path="a.txt", content="new") == "cannot write 'a.txt': No space left on device"
    assert (toolset.root / "a.txt").read_text() == "old"
    assert tree(toolset.root) == ["a.txt"]


def test_new_file_gets_umask_permissions(fs, call) -> None:
    toolset = fs()
    old = os.umask(0o022)
    try:
        call(toolset, "write_file", path="a.txt", content="x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((toolset.root / "a.txt").stat().st_mode) == 0o644


def test_write_size_is_counted_in_utf8_bytes(fs, call) -> None:
    toolset = fs(max_write_bytes=10)
    assert call(toolset, "write_file", path="a.txt", content="é" * 5) == "wrote 10 bytes to a.txt"
    assert failure(call, toolset, "write_file", path="b.txt", content="é" * 6) == (
        "content is 12 bytes, more than the 10 bytes this toolset writes"
    )
    assert not (toolset.root / "b.txt").exists()


def test_write_refusals(fs, call, tmp_path: Path) -> None:
    toolset = fs(allowed_suffixes=[".md"])
    (toolset.root / "dir.md").mkdir()
    (toolset.root / "out").symlink_to(tmp_path)
    (toolset.root / "out.md").symlink_to(tmp_path / "target.md")
    (toolset.root / "file.md").write_text("")
    assert "allowed suffix" in failure(call, toolset, "write_file", path="a.py", content="")
    assert failure(call, toolset, "write_file", path="dir.md", content="") == "'dir.md' is a directory"
    assert "symbolic link" in failure(call, toolset, "write_file", path="out/a.md", content="")
    assert "symbolic link" in failure(call, toolset, "write_file", path="out.md", content="")
    assert "points outside" in failure(call, toolset, "write_file", path="../a.md", content="")
    assert "absolute" in failure(call, toolset, "write_file", path=str(tmp_path / "a.md"), content="")
    assert ".git directory" in failure(call, toolset, "write_file", path=".git/hooks/x.md", content="")
    assert "cannot create the directory" in failure(call, toolset, "write_file", path="file.md/x.md", content="")
    assert not (tmp_path / "target.md").exists() and not (tmp_path / "a.md").exists()


def test_write_through_a_symlink_inside_writes_the_target(fs, call) -> None:
    toolset = fs()
    (toolset.root / "real.txt").write_text("old")
    (toolset.root / "alias.txt").symlink_to("real.txt")
    assert call(toolset, "write_file", path="alias.txt", content="new") == "wrote 3 bytes to real.txt"
    assert (toolset.root / "alias.txt").is_symlink()
    assert (toolset.root / "real.txt").read_text() == "new"


def test_unencodable_text_is_refused(fs, call) -> None:
    toolset = fs()
    assert "lone surrogate" in failure(call, toolset, "write_file", path="a.txt", content="x\ud800")
    assert "lone surrogate" in failure(call, toolset, "write_file", path="\ud800.txt", content="x")
    assert "lone surrogate" in failure(call, toolset, "list_files", path="\ud800")
    assert tree(toolset.root) == []


def test_read_only_toolsets_do_not_write(fs, call) -> None:
    toolset = fs("filesystem_project_ro")
    with pytest.raises(ToolFailed, match="filesystem_project_ro is read-only"):
        toolset.write_file(path="a.txt", content="x")
    assert not (toolset.root / "a.txt").exists()


# --- list_files -----------------------------------------------------------------------------------


@pytest.fixture
def populated(fs):
    toolset = fs()
    for name in ["b.md", "a.txt", "src/x.py", "src/deep/y.md", ".hidden", ".git/config"]:
        path = toolset.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name)
    (toolset.root / "empty-dir").mkdir()
    return toolset


def test_list_sorted_files_only(populated, call) -> None:
    assert call(populated, "list_files").splitlines() == [".hidden", "a.txt", "b.md", "src/deep/y.md", "src/x.py"]


def test_list_pattern_and_path(populated, call) -> None:
    assert call(populated, "list_files", pattern="*.md") == "b.md"
    assert call(populated, "list_files", pattern="**/*.md").splitlines() == ["b.md", "src/deep/y.md"]
    assert call(populated, "list_files", path="src").splitlines() == ["src/deep/y.md", "src/x.py"]
    assert call(populated, "list_files", path="src", pattern="*") == "src/x.py"
    assert call(populated, "list_files", pattern="*.rs") == "no files match '*.rs' in '.'"


def test_list_git_dir_only_when_asked(populated, call) -> None:
    assert call(populated, "list_files", path=".git") == ".git/config"


def test_list_relative_to_settings_path(populated, call, fs) -> None:
    toolset = fs(path="src")
    assert call(toolset, "list_files").splitlines() == ["deep/y.md", "x.py"]


def test_list_suffix_filter(fs, call) -> None:
    toolset = fs(allowed_suffixes=["md"])
    for name in ["a.md", "b.txt", "c.MD"]:
        (toolset.root / name).write_text("")
    (toolset.root / "alias.md").symlink_to("b.txt")
    assert call(toolset, "list_files").splitlines() == ["a.md", "c.MD"]


def test_list_skips_symlinks_out(populated, call, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "secret.txt").write_text("s")
    (populated.root / "out").symlink_to(tmp_path / "elsewhere")
    (populated.root / "out.txt").symlink_to(tmp_path / "elsewhere" / "secret.txt")
    (populated.root / "in.txt").symlink_to("a.txt")
    listed = call(populated, "list_files", pattern="**/*").splitlines()
    assert "in.txt" in listed and "out.txt" not in listed
    assert not any("secret" in p for p in listed)
    assert call(populated, "list_files", pattern="out/*") == "no files match 'out/*' in '.'"
    assert "symbolic link" in failure(call, populated, "list_files", path="out")


def test_list_is_cut(fs, call, monkeypatch) -> None:
    monkeypatch.setattr(fs_module, "LIST_LIMIT", 3)
    toolset = fs()
    for i in range(5):
        (toolset.root / f"f{i}.txt").write_text("")
    assert call(toolset, "list_files").splitlines() == [
        "f0.txt",
        "f1.txt",
        "f2.txt",
        "[list cut: showing 3 of 5 files; narrow the path or pattern]",
    ]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"path": "missing"}, "'missing' does not exist"),
        ({"path": "a.txt"}, "'a.txt' is not a directory"),
        ({"path": ".."}, "points outside"),
        ({"pattern": "../*"}, "may not contain '..'"),
        ({"pattern": "src/../../*"}, "may not contain '..'"),
        ({"pattern": "/etc/*"}, "must be relative"),
        ({"pattern": "C:/x"}, "must be relative"),
        ({"pattern": "~/*"}, "must be relative"),
        ({"pattern": ""}, "invalid pattern ''"),
        ({"pattern": "a**b/*"}, "invalid pattern"),
        ({"pattern": "a\x00"}, "NUL"),
    ],
)
def test_list_refusals(populated, call, args, expected) -> None:
    assert expected in failure(call, populated, "list_files", **args)


# --- list_files: bounded work, off the event loop, failures are tool results -------------------------


@pytest.fixture
def deep(fs):
    """A 30-deep chain of directories with a file at every level."""
    toolset = fs()
    path = toolset.root
    for i in range(30):
        path = path / f"d{i}"
        path.mkdir()
        (path / f"f{i}.txt").write_text("x")
    return toolset


def test_repeated_double_stars_are_collapsed_and_quick(deep, call) -> None:
    """Six `**/` took pathlib about a minute on this tree; 200 ended the run with a RecursionError."""
    import time

    everything = call(deep, "list_files", pattern="**/*.txt").splitlines()
    assert len(everything) == 30
    for count in (6, 200):
        started = time.monotonic()
        assert call(deep, "list_files", pattern="**/" * count + "*.txt").splitlines() == everything
        assert time.monotonic() - started < 5


def test_double_stars_between_names_stay_polynomial(deep, call) -> None:
    import time

    started = time.monotonic()
    listed = call(deep, "list_files", pattern="**/d*/**/d*/**/d*/**/d*/**/d*/**/d*/**/f2?.txt")
    assert time.monotonic() - started < 5
    assert listed.splitlines() == [p for p in call(deep, "list_files", pattern="**/f2?.txt").splitlines()]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("*.md", ["b.md"]),
        ("./src/*", ["src/x.py"]),
        ("src//**", ["src/deep/y.md", "src/x.py"]),
        ("**", [".hidden", "a.txt", "b.md", "src/deep/y.md", "src/x.py"]),
        ("**/deep/*", ["src/deep/y.md"]),
        ("src/**/*.md", ["src/deep/y.md"]),
        ("s?c/[xy].py", ["src/x.py"]),
        ("[!a]*", [".hidden", "b.md"]),
    ],
)
def test_list_patterns(populated, call, pattern: str, expected: list[str]) -> None:
    assert call(populated, "list_files", pattern=pattern).splitlines() == expected


def test_list_too_many_parts_is_a_tool_error(populated, call) -> None:
    assert "more than 64 parts" in failure(call, populated, "list_files", pattern="/".join(["a*"] * 65))


def test_list_does_not_enter_directory_links(populated, call, tmp_path: Path) -> None:
    """A link to a directory is not entered, whether it leads out of the root or stays inside
    (which could also loop)."""
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "secret.txt").write_text("s")
    (populated.root / "out").symlink_to(tmp_path / "elsewhere")
    (populated.root / "loop").symlink_to(".")
    listed = call(populated, "list_files", pattern="**/*.txt").splitlines()
    assert listed == ["a.txt"]


def test_list_stops_after_its_entry_budget(populated, call, monkeypatch) -> None:
    from llm_do.stdlib.filesystem import listing

    monkeypatch.setattr(listing, "MAX_ENTRIES", 3)
    lines = call(populated, "list_files").splitlines()
    assert lines[-1] == "[listing stopped after reading 3 directory entries; narrow the path or pattern]"
    assert len(lines) <= 4


def test_an_unforeseen_error_is_a_tool_failure_not_the_end_of_the_run(populated, call, monkeypatch) -> None:
    def broken(*args, **kwargs):
        raise RecursionError("maximum recursion depth\nexceeded")

    monkeypatch.setattr(fs_module, "walk", broken)
    assert failure(call, populated, "list_files") == "list_files failed: RecursionError: maximum recursion depth exceeded"


def test_listing_runs_off_the_event_loop(populated, monkeypatch) -> None:
    """A slow walk leaves the loop free: other tasks run, and a timeout around the call fires on time."""
    import threading
    import time


    release = threading.Event()
    real_walk = fs_module.walk

    def slow_walk(*args, **kwargs):
        release.wait(5)
        return real_walk(*args, **kwargs)

    monkeypatch.setattr(fs_module, "walk", slow_walk)

    async def scenario() -> tuple[bool, float]:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(call_tool(populated, "list_files", {}), 0.2)
        waited = time.monotonic() - started
        release.set()
        return True, waited

    _, waited = asyncio.run(scenario())
    assert waited < 2


def test_read_file_refuses_a_fifo_swapped_in_after_the_check(fs, call, monkeypatch) -> None:
    """The file is judged on what was opened: a FIFO put in place of a checked regular file is
    refused at once instead of blocking the call (and the run) on a reader that never ends."""
    toolset = fs()
    (toolset.root / "plain.txt").write_text("x")
    os.mkfifo(toolset.root / "pipe.txt")
    regular = os.stat(toolset.root / "plain.txt")
    monkeypatch.setattr(FilesystemToolset, "_stat", staticmethod(lambda path, target: regular))
    assert "not a regular file" in failure(call, toolset, "read_file", path="pipe.txt")


def test_a_blocking_call_does_not_hold_up_a_stopped_run(fs, monkeypatch) -> None:
    """A stopped run abandons a stdlib call that blocks: `asyncio.run` returns at once instead of
    joining the thread (the default executor's threads are joined at exit; these are not)."""
    import asyncio
    import threading
    import time


    toolset = fs("filesystem_project")
    release = threading.Event()
    monkeypatch.setattr(toolset, "read_file", lambda **_: release.wait(30))

    async def stopped() -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(call_tool(toolset, "read_file", {"path": "a.txt"}), 0.2)

    started = time.monotonic()
    try:
        asyncio.run(stopped())
        assert time.monotonic() - started < 10
    finally:
        release.set()

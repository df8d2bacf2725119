"""Files that are not what they seem: pipes, huge files, directory symlinks in globs, leftovers of
killed builds. Each ends in a diagnostic (or is ignored), never in a hang or a traceback."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from llm_do.compiler.stages.emit import write_atomic
from llm_do.compiler.syntax.limits import MAX_FILE_BYTES
from llm_do.compiler.syntax.project_glob import glob_project
from llm_do.toolkit.files import remove_stale_temporaries
from tests.support.cli import run_cli, worker, write_project
from tests.support.lint import Lint, assert_exit_matches, lint

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


def within(seconds: float, fn: Callable[[], Any], unblock: Path | None = None) -> Any:
    """fn() run in a thread that must end in time; `unblock`, a FIFO a hung reader may wait on."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = fn()
        except BaseException as exc:  # handed to the test below
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    hung = thread.is_alive()
    if hung and unblock is not None:
        fd = os.open(unblock, os.O_RDWR | os.O_NONBLOCK)  # lets a reader blocked in open() go on
        os.close(fd)
    assert not hung, f"still running after {seconds} s"
    if "error" in box:
        raise box["error"]
    return box["result"]


def _project(tmp_path: Path, manifest_extra: dict[str, Any] | None = None, **files: str) -> Path:
    manifest = {"version": 1, "worker_files": ["*.worker"], **(manifest_extra or {})}
    return write_project(tmp_path / "p", {"project.json": manifest, "main.worker": worker(), **files})


@needs_fifo
def test_a_fifo_matched_by_a_glob_is_reported_at_the_pattern(tmp_path: Path) -> None:
    root = _project(tmp_path)
    os.mkfifo(root / "pipe.worker")
    result: Lint = within(20, lambda: lint(root), unblock=root / "pipe.worker")
    result.expect("F006", "project.json", '"*.worker"', mentions=("pipe.worker", "named pipe"))
    assert_exit_matches(result)


@needs_fifo
def test_a_fifo_listed_by_name_is_reported_at_its_entry(tmp_path: Path) -> None:
    root = _project(tmp_path, {"worker_files": ["main.worker", "pipe.worker"], "python_files": ["tools.py"]})
    os.mkfifo(root / "pipe.worker")
    os.mkfifo(root / "tools.py")
    result: Lint = within(20, lambda: lint(root, "--no-import"), unblock=root / "pipe.worker")
    result.expect("F006", "project.json", '"pipe.worker"', mentions=("named pipe",))
    result.expect("F006", "project.json", '"tools.py"', mentions=("named pipe",))


@needs_fifo
def test_a_fifo_included_or_read_by_file_is_reported_at_the_call(tmp_path: Path) -> None:
    root = _project(tmp_path, **{"main.worker": worker(body='{% include "inc.md" %}\n{{ file("data.txt") }}')})
    os.mkfifo(root / "inc.md")
    os.mkfifo(root / "data.txt")
    result: Lint = within(20, lambda: lint(root), unblock=root / "inc.md")
    result.expect("F006", "main.worker", "inc.md")
    result.expect("F006", "main.worker", "data.txt")


@needs_fifo
def test_a_fifo_in_an_implicit_project_is_reported_at_its_top(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {"main.worker": worker()})
    os.mkfifo(root / "pipe.worker")
    result: Lint = within(20, lambda: lint(root), unblock=root / "pipe.worker")
    result.expect("F006", "main.worker", line=1, column=1, mentions=("pipe.worker",))


@needs_fifo
def test_a_fifo_manifest_is_reported_at_its_path_not_taken_for_no_manifest(tmp_path: Path) -> None:
    """A pipe named project.json is the project's manifest, refused (before, the directory was taken
    for a project without one, and the path given for no file at all)."""
    os.mkfifo(tmp_path / "project.json")
    (tmp_path / "main.worker").write_text(worker())
    for given in (tmp_path / "project.json", tmp_path):
        result = within(20, lambda: run_cli("build", given), unblock=tmp_path / "project.json")  # noqa: B023 - called at once
        assert result.exit_code == 1 and "Traceback" not in result.stderr, result.stderr
        assert "project.json:1:1: F006 error: project.json is a named pipe (FIFO), not a regular file" in result.stderr
    assert not (tmp_path / "bundle.lock").exists()


@pytest.mark.parametrize("target", ["/dev/zero", "../elsewhere.json"])
def test_a_manifest_linked_out_of_the_root_is_refused_at_its_path(tmp_path: Path, target: str) -> None:
    root = write_project(tmp_path / "p", {"main.worker": worker()})
    (tmp_path / "elsewhere.json").write_text('{"version": 1, "worker_files": ["*.worker"]}')
    (root / "project.json").symlink_to(target)
    result = within(20, lambda: run_cli("build", root))
    assert result.exit_code == 1 and "Traceback" not in result.stderr, result.stderr
    assert "project.json:1:1: F002 error: 'project.json' leads outside the project root (through a symlink)" in result.stderr
    assert not (root / "bundle.lock").exists()


@needs_fifo
def test_build_with_a_fifo_fails_cleanly_and_keeps_the_old_lock(tmp_path: Path) -> None:
    root = _project(tmp_path)
    assert run_cli("build", root).exit_code == 0
    lock = (root / "bundle.lock").read_bytes()
    os.mkfifo(root / "pipe.worker")
    result = within(20, lambda: run_cli("build", root), unblock=root / "pipe.worker")
    assert result.exit_code == 1 and "F006" in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert (root / "bundle.lock").read_bytes() == lock


@needs_fifo
def test_build_check_never_waits_on_a_pipe(tmp_path: Path) -> None:
    root = _project(tmp_path, **{"main.worker": worker(body='{% include "inc.md" %}'), "inc.md": "text"})
    assert run_cli("build", root).exit_code == 0
    (root / "inc.md").unlink()
    os.mkfifo(root / "inc.md")
    result = within(20, lambda: run_cli("build", root, "--check"), unblock=root / "inc.md")
    assert result.exit_code == 1 and "changed: inc.md" in result.stderr, result.stderr
    (root / "bundle.lock").unlink()
    os.mkfifo(root / "bundle.lock")
    result = within(20, lambda: run_cli("build", root, "--check"), unblock=root / "bundle.lock")
    assert result.exit_code == 1 and "named pipe" in result.stderr, result.stderr


def test_a_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path, **{"big.worker": worker(body="x" * (MAX_FILE_BYTES + 1))})
    started = time.monotonic()
    result = lint(root)
    assert time.monotonic() - started < 10
    d = result.expect("P011", "big.worker", line=1, column=1)
    assert "4 MiB" in d["message"]


def test_an_included_file_over_the_size_limit_is_refused_at_the_include(tmp_path: Path) -> None:
    root = _project(tmp_path, **{"main.worker": worker(body='{% include "big.md" %}'), "big.md": "y" * (MAX_FILE_BYTES + 1)})
    lint(root).expect("P011", "main.worker", "big.md")


def test_a_file_at_the_size_limit_is_read(tmp_path: Path) -> None:
    body = "z" * (MAX_FILE_BYTES - len(worker(body="")))
    root = _project(tmp_path, **{"main.worker": worker(body=body)})
    lint(root).absent("P011")


def test_globs_do_not_follow_a_link_to_the_directory_itself(tmp_path: Path) -> None:
    root = _project(tmp_path, {"worker_files": ["**/*.worker"]})
    os.symlink(".", root / "self", target_is_directory=True)
    started = time.monotonic()
    result = lint(root)
    assert time.monotonic() - started < 10
    assert result.diagnostics == [], result.diagnostics
    assert glob_project(str(root), "**/*.worker") == ["main.worker"]


def test_globs_do_not_walk_a_link_out_of_the_root(tmp_path: Path) -> None:
    outside = write_project(tmp_path / "outside", {"deep/a/b/other.worker": worker()})
    root = _project(tmp_path, {"worker_files": ["**/*.worker", "*/*.worker"]})
    os.symlink(outside, root / "elsewhere", target_is_directory=True)
    os.symlink("/", root / "machine", target_is_directory=True)
    started = time.monotonic()
    result = lint(root)
    assert time.monotonic() - started < 10
    assert result.codes() == ["F003"]  # `*/*.worker`: the links are not entered
    assert glob_project(str(root), "**/*.worker") == ["main.worker"]


def test_a_directory_named_literally_is_entered_and_confined(tmp_path: Path) -> None:
    outside = write_project(tmp_path / "outside", {"other.worker": worker()})
    root = _project(tmp_path, {"worker_files": ["*.worker", "linked/*.worker"]})
    os.symlink(outside, root / "linked", target_is_directory=True)
    lint(root).expect("F002", "project.json", '"linked/*.worker"', mentions=("linked/other.worker",))


def test_glob_keeps_pythons_rules_for_hidden_names_and_double_star(tmp_path: Path) -> None:
    root = write_project(tmp_path, {name: "" for name in (
        "a.worker", ".hidden.worker", "sub/b.worker", "sub/deeper/c.worker", ".git/d.worker", "sub/.e.worker")})
    top = str(root)
    assert glob_project(top, "*.worker") == ["a.worker"]
    assert glob_project(top, ".*.worker") == [".hidden.worker"]
    assert glob_project(top, "**/*.worker") == ["a.worker", "sub/b.worker", "sub/deeper/c.worker"]
    assert glob_project(top, "sub/**/*.worker") == ["sub/b.worker", "sub/deeper/c.worker"]
    assert glob_project(top, "s?b/[bc].worker") == ["sub/b.worker"]
    assert glob_project(top, ".git/*.worker") == [".git/d.worker"]
    assert "sub/deeper/c.worker" in glob_project(top, "sub/**")


def test_a_dangling_link_is_no_match_and_a_link_loop_no_hang(tmp_path: Path) -> None:
    root = _project(tmp_path)
    os.symlink("missing.worker", root / "dangling.worker")
    os.symlink("loop.worker", root / "loop.worker")
    result = lint(root)
    result.expect("F006", "project.json", '"*.worker"', mentions=("loop.worker",))
    assert not result.of("F006", "dangling.worker")


@pytest.mark.process
def test_a_build_removes_temporaries_that_killed_builds_left(tmp_path: Path) -> None:
    root = _project(tmp_path)
    dead = _dead_pid()
    leftovers = [root / ".bundle.lock.k3j_x9a1.tmp", root / f".bundle.lock.{dead}.abcd1234.tmp"]
    alive = root / f".bundle.lock.{os.getppid()}.abcd1234.tmp"
    unrelated = root / ".other.lock.k3j_x9a1.tmp"
    for path in [*leftovers, alive, unrelated]:
        path.write_bytes(b"{half a lock")
    assert run_cli("build", root).exit_code == 0
    assert not any(p.exists() for p in leftovers)
    assert alive.exists() and unrelated.exists()  # a build still writing, another file's temporary
    assert sorted(p.name for p in root.iterdir() if p.name.endswith(".tmp")) == sorted([alive.name, unrelated.name])


def test_write_atomic_names_its_temporary_after_its_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real_replace = os.replace

    def replace(src: str, dst: Any) -> None:
        seen.append(os.path.basename(src))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    write_atomic(tmp_path / "bundle.lock", b"{}\n")
    assert seen and seen[0].startswith(f".bundle.lock.{os.getpid()}.") and seen[0].endswith(".tmp")
    assert remove_stale_temporaries(tmp_path / "bundle.lock") == []


def _dead_pid() -> int:
    """The id of a process that has ended."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    return int(proc.stdout)

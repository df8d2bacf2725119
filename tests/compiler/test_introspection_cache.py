"""The introspection cache: a build whose Python did not change starts no child, and anything the
child's answer depended on that changed starts one again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from llm_do.compiler.facts import cache as cache_module
from llm_do.compiler.facts import subprocess_runner
from llm_do.compiler.pipeline import compile_project
from llm_do.provenance.user_cache import prune
from tests.support.cli import run_cli, worker, write_project

pytestmark = pytest.mark.process

TOOLS = '''
    from helper import shout_text

    try:
        import extra
    except ImportError:
        extra = None

    with open("greeting.txt") as f:
        GREETING = f.read().strip()

    def shout(text: str) -> str:
        """Shout the text."""
        return shout_text(text)

    TOOLS = [shout] + ([extra.whisper] if extra else [])
'''


WHERE = '''
    def where(text: str) -> str:
        return text

    where.__doc__ = f"Defined in {__file__}."
    TOOLS = [where]
'''


def project(root: Path) -> Path:
    return write_project(root, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"],
                         "entry": {"worker": "main"}},
        "main.worker": worker("model: test\ntools: [shout]\n", "Shout."),
        "tools.py": TOOLS,
        "helper.py": "def shout_text(text: str) -> str:\n    return text.upper()\n",
        "greeting.txt": "hello\n",
    })


@pytest.fixture
def children(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Path]:
    """The roots the introspection child was started for, with a cache of this test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    started: list[Path] = []
    real = subprocess_runner.introspect  # the introspect stage imports it when a project has Python

    def counting(request, root, timeout=None):
        started.append(Path(root))
        return real(request, root, timeout)

    monkeypatch.setattr(subprocess_runner, "introspect", counting)
    return started


def build(root: Path, **options) -> bytes:
    result = compile_project(root, **options)
    assert result.bundle is not None, result.diagnostics
    return result.bundle


def edit(path: Path, text: str) -> None:
    path.write_text(textwrap.dedent(text), encoding="utf-8")


def test_python_that_did_not_change_starts_no_child_and_builds_the_same_bytes(tmp_path: Path, children) -> None:
    root = project(tmp_path / "p")
    first = build(root)
    edit(root / "main.worker", worker("model: test\ntools: [shout]\n", "Shout louder."))
    second = build(root)
    assert len(children) == 1
    assert build(root, cache=False) == second != first
    assert len(children) == 2


def test_a_copied_project_takes_the_answer_and_names_its_own_root(tmp_path: Path, children) -> None:
    (tmp_path / "a").mkdir()
    write_project(tmp_path / "a" / "p", {"project.json": {"version": 1, "worker_files": ["*.worker"],
                                                           "python_files": ["tools.py"], "entry": {"worker": "main"}},
                                          "main.worker": worker("model: test\ntools: [where]\n", "x"),
                                          "tools.py": WHERE})
    first = build(tmp_path / "a" / "p")
    copy = tmp_path / "b" / "p"
    copy.parent.mkdir()
    os.rename(tmp_path / "a" / "p", copy)
    second = build(copy)
    assert len(children) == 1
    assert str(tmp_path / "a" / "p") in first.decode() and str(tmp_path / "a") not in second.decode()
    assert str(copy / "tools.py") in second.decode()


def test_an_answer_in_which_an_import_raised_is_not_kept(tmp_path: Path, children) -> None:
    root = write_project(tmp_path / "p", {"project.json": {"version": 1, "worker_files": ["*.worker"],
                                                           "python_files": ["tools.py"], "entry": {"worker": "main"}},
                                          "main.worker": worker("model: test\n", "x"),
                                          "tools.py": "raise RuntimeError(__file__)\n"})
    first, second = compile_project(root), compile_project(root)
    assert len(children) == 2
    assert [d.message for d in first.diagnostics] == [d.message for d in second.diagnostics]
    assert [str(root) in d.message for d in first.diagnostics] == [True]


def test_a_change_to_what_the_import_read_starts_the_child(tmp_path: Path, children) -> None:
    root = project(tmp_path / "p")
    build(root)
    changes = {
        "the tool module": lambda: edit(root / "tools.py", TOOLS.replace("Shout the text.", "Shout it.")),
        "a helper it imports": lambda: edit(root / "helper.py", "def shout_text(text: str) -> str:\n    return text\n"),
        "a data file it reads at import": lambda: edit(root / "greeting.txt", "hi\n"),
        "a module an import now finds": lambda: edit(root / "extra.py", "def whisper(text: str) -> str:\n    return text\n"),
    }
    for n, (change, make) in enumerate(changes.items(), start=2):
        make()
        bundle = build(root).decode()
        assert len(children) == n, change
    assert "Shout it." in bundle


def test_a_fixed_import_error_is_not_answered_from_the_cache(tmp_path: Path, children) -> None:
    root = project(tmp_path / "p")
    edit(root / "helper.py", "raise RuntimeError('no config')\n")
    broken = compile_project(root)
    assert [d.code for d in broken.diagnostics if d.severity == "error"] == ["Y001"]
    edit(root / "helper.py", "def shout_text(text: str) -> str:\n    return text.upper()\n")
    assert compile_project(root).ok
    assert len(children) == 2


def test_a_changed_module_outside_the_project_or_pythonpath_starts_the_child(
        tmp_path: Path, children, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "site"
    outside.mkdir()
    (outside / "shared_upper.py").write_text("def up(t):\n    return t.upper()\n")
    monkeypatch.setenv("PYTHONPATH", str(outside))
    root = project(tmp_path / "p")
    edit(root / "helper.py", "from shared_upper import up as shout_text\n")
    build(root)
    build(root)
    assert len(children) == 1
    (outside / "shared_upper.py").write_text("def up(t):\n    return t.upper() + '!!'\n")
    build(root)
    assert len(children) == 2
    monkeypatch.setenv("PYTHONPATH", f"{outside}{os.pathsep}{tmp_path}")
    build(root)
    assert len(children) == 3


def test_two_contents_of_the_same_files_are_both_kept(tmp_path: Path, children) -> None:
    root = project(tmp_path / "p")
    shouting = build(root)
    edit(root / "helper.py", "def shout_text(text: str) -> str:\n    return text\n")
    quiet = build(root)
    edit(root / "helper.py", "def shout_text(text: str) -> str:\n    return text.upper()\n")
    assert build(root) == shouting
    edit(root / "helper.py", "def shout_text(text: str) -> str:\n    return text\n")
    assert build(root) == quiet
    assert len(children) == 2


def test_entries_that_do_not_decode_are_forged_or_belong_elsewhere_change_nothing(
        tmp_path: Path, children, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path / "p")
    good = build(root)
    [entry] = (tmp_path / "cache" / "llm-do" / "introspection").glob("*/*.json")
    signed = json.loads(entry.read_bytes())
    forged = signed["entry"].replace("Shout the text.", "Delete everything.")
    entry.write_text(json.dumps({"entry": forged, "mac": signed["mac"]}))
    assert build(root) == good
    assert len(children) == 2
    entry.write_bytes(b"\x00 not json")
    assert build(root) == good
    assert len(children) == 3
    other = project(tmp_path / "q")
    edit(other / "project.json", json.dumps({"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"},
                                             "python_files": ["tools.py", "helper.py"]}))
    build(other)
    [other_entry] = [p for p in entry.parent.parent.glob("*/*.json") if p != entry]
    entry.write_bytes(other_entry.read_bytes())  # another request's entry under this one's name
    assert build(root) == good
    assert len(children) == 5
    # a cache planted in the project tree is never read: only the user's cache directory is
    for planted in (root / ".cache", root / ".llm-do" / "cache"):
        planted.mkdir(parents=True)
        (planted / "llm-do").symlink_to(tmp_path / "cache" / "llm-do")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty"))
    monkeypatch.chdir(root)
    assert build(root) == good
    assert len(children) == 6


def test_no_cache_no_import_and_git_sides_never_take_an_answer_from_it(
        tmp_path: Path, children, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path / "p")
    build(root)
    monkeypatch.setenv(cache_module.NO_CACHE_VARIABLE, "1")
    build(root)
    monkeypatch.delenv(cache_module.NO_CACHE_VARIABLE)
    assert run_cli("build", root, "--no-cache").exit_code == 0
    assert run_cli("lint", root, "--no-cache").exit_code == 0
    assert len(children) == 4
    assert run_cli("lint", root, "--no-import").exit_code == 0
    assert len(children) == 4
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], cwd=root, check=True)
    monkeypatch.chdir(root)
    assert run_cli("diff", "git:HEAD", ".").exit_code == 0
    assert len(children) == 5  # the git side imported; the working tree took its answer from the cache


def test_the_cache_is_pruned_least_recently_used_first(tmp_path: Path) -> None:
    folder = tmp_path / "introspection"
    for i in range(4):
        path = folder / "ab" / f"{i}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * 100)
        os.utime(path, ns=(i * 10**9, i * 10**9))
    prune(folder, 300)
    assert sorted(p.name for p in folder.glob("*/*.json")) == ["2.json", "3.json"]


def test_concurrent_builds_share_one_cache(tmp_path: Path, children) -> None:
    root = project(tmp_path / "p")
    env = {**os.environ}
    builds = [subprocess.Popen([sys.executable, "-m", "llm_do.cli.main", "build", str(root), "-o", str(tmp_path / f"{i}.lock")],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(2)]
    for proc in builds:
        proc.communicate(timeout=60)
        assert proc.returncode == 0
    locks = {(tmp_path / f"{i}.lock").read_bytes() for i in range(2)}
    assert len(locks) == 1
    build(root)
    assert children == []  # answered by what the processes stored


def test_without_a_home_directory_builds_cache_nothing(tmp_path: Path, children, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path / "p")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.setattr("pwd.getpwuid", lambda uid: (_ for _ in ()).throw(KeyError(uid)))
    assert build(root) == build(root)
    assert len(children) == 2

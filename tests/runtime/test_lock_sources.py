"""A lock runs only if it is the build of the sources beside it (issue 31, M5): `exec`, `chat`,
`batch` and `serve` refuse (exit 3, one line naming what differs) a lock rewritten from outside,
resealed with the sources' hashes left as they are, and a lock whose worker files changed since
the build; `--as-built` runs it with a note. The build records answer for a lock `build` wrote
here (no compile), a compile answers otherwise, and the answer is the same without the cache. A
lock shipped without its project runs as before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from llm_do.bundle.canonical import seal
from llm_do.compiler.build import lock_check
from tests.support.cli import one_line_error, run_cli, worker
from tests.support.projects import resealed as reseal

DENIES_SHELL = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main", "args": {"input": "go"}}},
    "main.worker": worker("toolsets: [filesystem_project, shell_file_ops]\napprovals:\n"
                          "  - deny write_file(path ~ '**/*.worker')\n  - allow write_file\n  - deny shell", "main"),
    "d/keep.txt": "kept\n",
}
MOVE = {"workers": {"main": [{"tool_calls": [{"tool": "shell", "args": {"command": "mv d moved"}}]}, {"text": "done"}]}}


def resealed(lock: Path) -> bytes:
    """M5's payload: the lock with `deny shell` turned into `allow`, its node hash and digest
    recomputed, its sources (and their hashes) left as they are."""
    return reseal(lock.read_bytes(), {"workers": {"main": {"tools": {"shell": {"approval": "allow"}}}}})


@pytest.fixture
def project(build, script) -> tuple[Path, Path]:
    """The built project's lock (recorded by `build` in the session's cache) and the script that moves `d`."""
    return build(DENIES_SHELL), script(MOVE)


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The projects a run compiles to answer whether its lock is their build."""
    seen: list[Path] = []
    real = lock_check.compare_with_build

    def counted(project: Path, lock: Path, data: bytes, **kwargs: object) -> object:
        seen.append(project)
        return real(project, lock, data, **kwargs)

    monkeypatch.setattr(lock_check, "compare_with_build", counted)
    return seen


def test_a_lock_built_here_runs_without_compiling(project: tuple[Path, Path], compiles: list[Path]) -> None:
    lock, move = project
    result = run_cli("exec", lock, "--script", move, "--approve-all")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    assert compiles == []


@pytest.mark.parametrize("cache", ["records", "LLM_DO_NO_CACHE"])
def test_a_lock_rewritten_from_outside_is_refused(project: tuple[Path, Path], cache: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """M5: the next `exec --reject-all` ran `shell`, which main.worker denies. No record is kept
    for the rewritten bytes, so a compile answers; without the cache the answer is the same."""
    lock, move = project
    if cache == "LLM_DO_NO_CACHE":
        monkeypatch.setenv("LLM_DO_NO_CACHE", "1")
    lock.write_bytes(resealed(lock))
    result = run_cli("exec", lock, "--script", move, "--reject-all")
    assert result.exit_code == 3, result.stderr
    assert one_line_error(result) == (
        f"llm-do: {lock}: refused: it is stale, not the build of the sources beside it (worker 'main' differs in tools); "
        "run `llm-do build` to update it, or --as-built to run it as it is")
    assert result.stdout == ""
    assert (lock.parent / "d").is_dir() and not (lock.parent / "moved").exists()


def test_as_built_runs_it_with_a_note(project: tuple[Path, Path]) -> None:
    lock, move = project
    lock.write_bytes(resealed(lock))
    result = run_cli("exec", lock, "--script", move, "--reject-all", "--as-built")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"llm-do: note: {lock} is stale, not the build of the sources beside it (worker 'main' differs in tools); "
        "it runs as built (--as-built): run `llm-do build` to update it"]
    assert (lock.parent / "moved").is_dir()


@pytest.mark.parametrize("cache", ["records", "LLM_DO_NO_CACHE"])
def test_a_worker_file_changed_since_the_build_refuses_the_lock(project: tuple[Path, Path], cache: str,
                                                                compiles: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The record of the build says which source changed, without compiling; without it a compile
    says the same first (and what the change makes differ)."""
    lock, move = project
    if cache == "LLM_DO_NO_CACHE":
        monkeypatch.setenv("LLM_DO_NO_CACHE", "1")
    main = lock.parent / "main.worker"
    main.write_text(main.read_text().replace("  - deny shell", "  - allow shell"))
    result = run_cli("exec", lock, "--script", move, "--reject-all")
    assert result.exit_code == 3, result.stderr
    line = one_line_error(result)
    assert line.startswith(f"llm-do: {lock}: refused: it is stale, not the build of the sources beside it (changed: main.worker")
    assert len(compiles) == (0 if cache == "records" else 1)
    assert not (lock.parent / "moved").exists()


def test_a_partly_deleted_project_is_not_shipped_alone(project: tuple[Path, Path]) -> None:
    """The manifest is there, the worker file is not: the project is present, and the lock is not its build."""
    lock, move = project
    (lock.parent / "main.worker").unlink()
    result = run_cli("exec", lock, "--script", move, "--approve-all")
    assert result.exit_code == 3
    assert "it is stale, not the build of the sources beside it" in one_line_error(result)


@pytest.mark.parametrize("hide", ["root", "sources"])
def test_a_rewritten_lock_cannot_hide_the_project_beside_it(project: tuple[Path, Path], tmp_path: Path, hide: str) -> None:
    """The lock names its `root` and its sources, so a rewrite could point them away to pass for a lock
    deployed alone: the project in the lock's own folder is the one it must be the build of."""
    lock, move = project
    (tmp_path / "empty").mkdir()
    elsewhere = {"root": "../empty"} if hide == "root" else {
        "sources": {"nowhere/project.json": {"kind": "manifest", "sha256": "sha256:0"}}}
    lock.write_bytes(reseal(resealed(lock), elsewhere) if hide == "root" else _with_sources(resealed(lock), elsewhere["sources"]))
    result = run_cli("exec", lock, "--script", move, "--reject-all")
    assert result.exit_code == 3, result.stderr
    assert "it is stale, not the build of the sources beside it" in one_line_error(result)
    assert not (lock.parent / "moved").exists()


def _with_sources(data: bytes, sources: dict[str, object]) -> bytes:
    doc = json.loads(data)
    doc["sources"] = sources
    doc.pop("digest")
    return seal(doc)


def test_a_lock_shipped_alone_runs_as_before(project: tuple[Path, Path], tmp_path: Path, compiles: list[Path]) -> None:
    """Only the lock (and the folder its tools work in) is deployed: nothing to compare it with."""
    lock, move = project
    shipped = tmp_path / "deployed"
    shipped.mkdir()
    shutil.copy(lock, shipped / "bundle.lock")
    (shipped / "d").mkdir()
    result = run_cli("exec", shipped / "bundle.lock", "--script", move, "--approve-all")
    assert result.exit_code == 0, result.stderr
    assert compiles == []


def test_a_copy_of_the_project_is_compiled_once_then_recorded(project: tuple[Path, Path], tmp_path: Path, script,
                                                              compiles: list[Path]) -> None:
    """A lock built elsewhere (a checkout, a copy) is their build: the compile that says so records it."""
    lock, _ = project
    copy = shutil.copytree(lock.parent, tmp_path / "copy")
    says = script({"workers": {"main": [{"text": "hi"}]}})
    for _ in range(2):
        result = run_cli("exec", copy / "bundle.lock", "--script", says)
        assert result.exit_code == 0, result.stderr
        assert result.stdout.strip() == "hi"
    assert compiles == [copy / "project.json"]


@pytest.mark.parametrize(("field", "value"), [("compiler", "llm-do 0.0.1"), ("packages", {"pydantic-ai": "0.0.1"})])
def test_a_lock_of_another_llm_do_with_the_same_content_runs_with_a_note(project: tuple[Path, Path], field: str,
                                                                         value: object) -> None:
    lock, move = project
    doc = json.loads(lock.read_bytes())
    doc[field] = value
    doc.pop("digest")
    lock.write_bytes(seal(doc))
    result = run_cli("exec", lock, "--script", move, "--approve-all")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"llm-do: note: {lock} differs from a build now only in {field} (built by another llm-do or other distributions); "
        "run `llm-do build` to update it"]


def test_chat_batch_and_serve_refuse_it_too(project: tuple[Path, Path], tmp_path: Path) -> None:
    lock, _ = project
    lock.write_bytes(resealed(lock))
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text('"go"\n')
    for args in (("chat", lock, "--model", "test"), ("batch", lock, inputs, "-o", tmp_path / "out.jsonl", "--model", "test"),
                 ("serve", lock, "--model", "test")):
        result = run_cli(*args, input="hello\n")
        assert result.exit_code == 3, (args, result.stderr)
        assert "it is stale, not the build of the sources beside it (worker 'main' differs in tools)" in one_line_error(result)
    assert not (tmp_path / "out.jsonl").exists()
    result = run_cli("chat", lock, "--model", "test", "--as-built", input="hello\n")
    assert result.exit_code == 0, result.stderr
    assert "it runs as built (--as-built)" in result.stderr


# --- the Python API (issue 33, G9): the same rule, `as_built=True`, a StaleLockWarning


def test_run_worker_refuses_a_lock_whose_worker_file_changed(project: tuple[Path, Path]) -> None:
    from llm_do.runtime import BundleRefused, RuntimeConfig, run_worker

    lock, _ = project
    main = lock.parent / "main.worker"
    main.write_text(main.read_text().replace("main\n", "main, edited\n"))
    with pytest.raises(BundleRefused) as refused:
        run_worker(lock.parent, "go", config=RuntimeConfig(model="test"))
    assert str(refused.value) == (f"{lock}: refused: it is stale, not the build of the sources beside it (changed: main.worker); "
                                  "run `llm-do build` to update it, or as_built=True to run it as it is")


def test_as_built_runs_it_with_a_warning_of_the_cli_note(project: tuple[Path, Path]) -> None:
    from llm_do.runtime import RuntimeConfig, StaleLockWarning, run_worker

    lock, _ = project
    main = lock.parent / "main.worker"
    main.write_text(main.read_text().replace("main\n", "main, edited\n"))
    with pytest.warns(StaleLockWarning) as warned:
        result = run_worker(lock.parent, "go", config=RuntimeConfig(model="test", as_built=True))
    assert result.output
    assert [str(w.message) for w in warned] == [
        f"note: {lock} is stale, not the build of the sources beside it (changed: main.worker); it runs as built (as_built=True): "
        "run `llm-do build` to update it"]


@pytest.mark.process
def test_the_api_compiles_in_a_child_when_no_record_answers(project: tuple[Path, Path], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The runtime never imports the compiler: a lock without a record (a copy) is compared by a
    child process, which records its answer; a rewritten one is refused the same way."""
    from llm_do.runtime import BundleRefused, Runtime, RuntimeConfig, built_lock

    lock, _ = project
    copy = shutil.copytree(lock.parent, tmp_path / "copy")
    children: list[object] = []
    real = built_lock.compare_in_child
    monkeypatch.setattr(built_lock, "compare_in_child", lambda *a: children.append(a) or real(*a))
    for _ in range(2):
        Runtime.load(copy / "bundle.lock", RuntimeConfig(model="test"))
    assert len(children) == 1
    (copy / "bundle.lock").write_bytes(resealed(copy / "bundle.lock"))
    with pytest.raises(BundleRefused, match=r"not the build of the sources beside it \(worker 'main' differs in tools\)"):
        Runtime.load(copy / "bundle.lock", RuntimeConfig(model="test"))
    assert len(children) == 2


def test_a_refusal_names_five_differences_and_counts_the_rest(tmp_path: Path) -> None:
    from llm_do.bundle.errors import BundleRefused
    from llm_do.provenance.lock_sources import Comparison, obey

    lock = tmp_path / "bundle.lock"
    five = Comparison(tuple(f"changed: w{i}.worker" for i in range(5)))
    seven = Comparison(tuple(f"changed: w{i}.worker" for i in range(7)))
    with pytest.raises(BundleRefused) as info:
        obey(lock, seven, as_built=False, override="--as-built")
    assert str(info.value) == (f"{lock}: refused: it is stale, not the build of the sources beside it (changed: w0.worker; "
                               "changed: w1.worker; changed: w2.worker; changed: w3.worker; changed: w4.worker; and 2 more); "
                               "run `llm-do build` to update it, or --as-built to run it as it is")
    assert obey(lock, five, as_built=True, override="--as-built").endswith("changed: w4.worker); it runs as built "
                                                                          "(--as-built): run `llm-do build` to update it")
    assert obey(lock, Comparison(), as_built=False, override="--as-built") is None
    assert obey(lock, Comparison(note="only the compiler differs"), as_built=False, override="x") == "only the compiler differs"


@pytest.mark.parametrize("printed", [{"differences": ["a"], "note": None}, {"differences": [], "note": "n"}])
def test_a_comparison_a_child_printed_reads_back(printed: dict) -> None:
    from llm_do.provenance.lock_sources import Comparison

    assert Comparison.from_json(printed).as_json() == printed


@pytest.mark.parametrize("printed", [[], {"differences": "a", "note": None}, {"differences": [1], "note": None},
                                     {"differences": [], "note": 3}, {"note": None}])
def test_anything_else_a_child_printed_is_no_comparison(printed: object) -> None:
    from llm_do.provenance.lock_sources import Comparison

    with pytest.raises(ValueError, match="not a lock comparison"):
        Comparison.from_json(printed)


def test_the_project_of_a_lock_is_the_one_it_names_else_its_folders(tmp_path: Path) -> None:
    from llm_do.provenance.lock_sources import project_of

    root, lock = tmp_path / "src", tmp_path / "out" / "bundle.lock"
    (root / "sub").mkdir(parents=True)
    lock.parent.mkdir()
    named = {"sub/project.json": {"kind": "manifest"}, "sub/main.worker": {"kind": "worker"}, "t.jinja": {"kind": "template"}}
    assert project_of(lock, root, named) is None  # nothing it names is there, and nothing beside it
    (root / "sub" / "main.worker").write_text("x")
    assert project_of(lock, root, named) == root  # a worker file it names: the folder
    (root / "sub" / "project.json").write_text("{}")
    assert project_of(lock, root, named) == root / "sub" / "project.json"
    (root / "t.jinja").write_text("x")
    assert project_of(lock, root, {"t.jinja": {"kind": "template"}, "x": "not an entry"}) is None  # a template is no project
    (lock.parent / "a.worker").write_text("x")
    assert project_of(lock, root, {}) == lock.parent
    (lock.parent / "project.json").write_text("{}")
    assert project_of(lock, root, {}) == lock.parent / "project.json"

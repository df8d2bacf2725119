"""`llm-do build`: where the lock goes, exit codes, atomic writes, determinism."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from llm_do.bundle.schema import validate as validate_bundle
from tests.support.cli import run_cli, worker, write_project
from tests.support.introspection import real_introspection

LOCK = "bundle.lock"

# Two workers and a stdlib toolset: no Python, so no introspection subprocess (cheap).
YAML_ONLY = {
    "project.json": {
        "version": 1,
        "worker_files": ["*.worker"],
        "entry": {"worker": "main", "args": {"input": "hello"}},
    },
    "main.worker": worker(
        """
        model: test
        toolsets:
          - filesystem_project_ro
          - helper
        """,
        "Answer the request.",
    ),
    "helper.worker": worker("description: Helps", "Help."),
}

# Every kind of source: worker, manifest, Python (schemas.py and a helper module it imports),
# an included template and a file() read.
ALL_SOURCES = {
    "project.json": {
        "version": 1,
        "name": "sources",
        "worker_files": ["workers/*.worker"],
        "python_files": ["schemas.py"],
        "entry": {"worker": "main", "args": {"topic": "tides"}},
        "vars": {"tone": "dry"},
    },
    "workers/main.worker": worker(
        """
        description: Entry
        schema_in_ref: schemas.py:Topic
        toolsets: [helper]
        """,
        'Be {{ tone }}.\n{% include "prompts/rules.j2" %}\nFacts: {{ file("data/facts.txt") }}',
    ),
    "workers/helper.worker": worker("description: Helps", "Help."),
    "prompts/rules.j2": "Rule one.\nRule two.\n",
    "data/facts.txt": "The sea is salty.\n",
    "textutil.py": "def shout(s):\n    return s.upper()\n",
    "schemas.py": """
        from llm_do.runtime import WorkerArgs
        from textutil import shout


        class Topic(WorkerArgs):
            topic: str

            def prompt_messages(self):
                return [shout(self.topic)]
        """,
}


def listing(root: Path) -> dict[str, bytes]:
    """Every file below root (relative path -> bytes)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def assert_no_temp_files(directory: Path) -> None:
    leftovers = [p.name for p in directory.iterdir() if p.name.endswith(".tmp") or p.name.startswith(".")]
    assert leftovers == []


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


# --- where the lock goes -------------------------------------------------------------------------


def test_build_writes_bundle_lock_next_to_project_json(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", YAML_ONLY)
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stderr
    lock = root / LOCK
    bundle = validate_bundle(lock.read_bytes())
    assert bundle["entry"]["worker"] == "main"
    assert sorted(bundle["workers"]) == ["helper", "main"]
    assert bundle["root"] == "."
    assert result.stdout == ""  # the lock is the output; messages go to stderr
    assert "Traceback" not in result.stderr


def test_default_project_is_the_current_directory(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", YAML_ONLY)
    result = run_cli("build", cwd_to=root)
    assert result.exit_code == 0, result.stderr
    assert (root / LOCK).is_file()


def test_project_may_be_given_as_its_project_json(tmp_path: Path) -> None:
    a = write_project(tmp_path / "a", YAML_ONLY)
    b = write_project(tmp_path / "b", YAML_ONLY)
    assert run_cli("build", a).exit_code == 0
    result = run_cli("build", b / "project.json")
    assert result.exit_code == 0, result.stderr
    assert (b / LOCK).read_bytes() == (a / LOCK).read_bytes()


def test_manifest_in_a_subdirectory_puts_the_lock_next_to_it(tmp_path: Path) -> None:
    root = write_project(tmp_path / "repo" / "llm", YAML_ONLY)
    result = run_cli("build", "llm/project.json", cwd_to=tmp_path / "repo")
    assert result.exit_code == 0, result.stderr
    assert (root / LOCK).is_file()
    assert not (tmp_path / "repo" / LOCK).exists()


@pytest.mark.parametrize("target", ["out", "out/custom.lock"])
def test_output_option_takes_a_file_or_a_directory(tmp_path: Path, target: str) -> None:
    root = write_project(tmp_path / "proj", YAML_ONLY)
    (root / "out").mkdir()
    result = run_cli("build", root, "-o", root / target)
    assert result.exit_code == 0, result.stderr
    written = root / "out" / (LOCK if target == "out" else "custom.lock")
    assert written.is_file()
    assert not (root / LOCK).exists()
    assert sorted(p.name for p in (root / "out").iterdir()) == [written.name]


def test_bundle_root_is_relative_to_the_lock(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", YAML_ONLY)
    deep = root / "build" / "locks"
    deep.mkdir(parents=True)
    assert run_cli("build", root, "-o", deep).exit_code == 0
    bundle = json.loads((deep / LOCK).read_text())
    assert bundle["root"] == "../.."
    assert (deep / bundle["root"]).resolve() == root.resolve()
    # From outside the project too.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert run_cli("build", root, "-o", elsewhere).exit_code == 0
    bundle = json.loads((elsewhere / LOCK).read_text())
    assert not Path(bundle["root"]).is_absolute()
    assert (elsewhere / bundle["root"]).resolve() == root.resolve()


# --- exit codes ----------------------------------------------------------------------------------


def test_warnings_only_build_exits_0_and_writes(tmp_path: Path) -> None:
    files = dict(YAML_ONLY)
    files["orphan.worker"] = worker("description: nobody calls me", "Idle.")
    root = write_project(tmp_path / "proj", files)
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stderr
    assert "G003" in result.stderr
    assert "orphan" in json.loads((root / LOCK).read_text())["workers"]


def test_errors_exit_1_and_write_nothing(tmp_path: Path) -> None:
    files = dict(YAML_ONLY)
    files["helper.worker"] = worker("toolsets: [no_such_toolset]", "Help.")
    root = write_project(tmp_path / "proj", files)
    before = listing(root)
    result = run_cli("build", root)
    assert result.exit_code == 1
    assert "N003" in result.stderr
    assert "helper.worker" in result.stderr
    assert "Traceback" not in result.stderr
    assert listing(root) == before
    assert_no_temp_files(root)


def test_errors_leave_an_existing_lock_byte_for_byte(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", YAML_ONLY)
    assert run_cli("build", root).exit_code == 0
    lock = root / LOCK
    old = lock.read_bytes()
    os.utime(lock, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    (root / "main.worker").write_text(worker("model: test\ntoolsets: [helpr]", "Answer."))
    result = run_cli("build", root)
    assert result.exit_code == 1
    assert "N003" in result.stderr
    assert lock.read_bytes() == old
    assert lock.stat().st_mtime_ns == 1_000_000_000_000_000_000
    assert_no_temp_files(root)


def test_errors_with_output_option_leave_that_lock(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", YAML_ONLY)
    out = tmp_path / "out.lock"
    out.write_bytes(b"previous\n")
    (root / "helper.worker").write_text("no front matter\n")
    result = run_cli("build", root, "-o", out)
    assert result.exit_code == 1
    assert out.read_bytes() == b"previous\n"
    assert not (root / LOCK).exists()


def test_success_leaves_no_temporary_file(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", YAML_ONLY)
    before = set(listing(root))
    assert run_cli("build", root).exit_code == 0
    assert set(listing(root)) == before | {LOCK}
    # A rebuild that changes the lock replaces it, again without leftovers.
    (root / "helper.worker").write_text(worker("description: Helps more", "Help."))
    assert run_cli("build", root).exit_code == 0
    assert "Helps more" in (root / LOCK).read_text()
    assert set(listing(root)) == before | {LOCK}
    assert_no_temp_files(root)


def test_failed_write_is_an_environment_error_without_leftovers(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", YAML_ONLY)
    # bundle.lock is a non-empty directory: the final rename cannot replace it.
    (root / LOCK).mkdir()
    (root / LOCK / "keep").write_text("x")
    result = run_cli("build", root)
    assert result.exit_code == 2
    one_line(result.stderr)
    assert (root / LOCK / "keep").read_text() == "x"
    assert_no_temp_files(root)


def test_lock_file_mode_is_not_private(tmp_path: Path) -> None:
    """The temporary file's 0600 must not leak into a lock meant to be committed and shared."""
    root = write_project(tmp_path / "proj", YAML_ONLY)
    old = os.umask(0o022)
    try:
        assert run_cli("build", root).exit_code == 0
    finally:
        os.umask(old)
    assert (root / LOCK).stat().st_mode & 0o044 == 0o044


@pytest.mark.parametrize(
    "args",
    [
        ("build", "missing-dir"),
        ("build", "empty"),
        ("build", "proj/main.worker"),
        ("build", "proj", "-o", "no/such/dir/x.lock"),
    ],
    ids=["missing", "no-project", "worker-file", "output-dir-missing"],
)
def test_bad_paths_exit_2_with_one_line(tmp_path: Path, args: tuple[str, ...]) -> None:
    write_project(tmp_path / "proj", YAML_ONLY)
    (tmp_path / "empty").mkdir()
    result = run_cli(*args, cwd_to=tmp_path)
    assert result.exit_code == 2
    line = one_line(result.stderr)
    assert args[-1].split("/")[0] in line
    assert not (tmp_path / "proj" / LOCK).exists()


def test_directory_with_neither_project_json_nor_main_worker(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {"other.worker": worker("", "Hi.")})
    result = run_cli("build", root)
    assert result.exit_code == 2
    line = one_line(result.stderr)
    assert "project.json" in line and "main.worker" in line
    assert not (root / LOCK).exists()


def test_unknown_flag_is_a_usage_error(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", YAML_ONLY)
    result = run_cli("build", root, "--frobnicate")
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr
    assert not (root / LOCK).exists()


# --- a project without project.json ---------------------------------------------------------------


def test_directory_with_main_worker_builds_with_defaults(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "proj",
        {
            "main.worker": worker("model: test\ntoolsets: [writer]", "Delegate."),
            "team/writer.worker": worker("toolsets: [editor]", "Write."),
            "team/deep/editor.worker": worker("", "Edit."),
            "notes.txt": "not a worker",
        },
    )
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stderr
    bundle = json.loads((root / LOCK).read_text())
    assert bundle["entry"]["worker"] == "main"
    assert sorted(bundle["workers"]) == ["editor", "main", "writer"]
    assert bundle["workers"]["writer"]["source"] == "team/writer.worker"
    assert bundle["runtime"]["max_depth"] == 5
    assert bundle["runtime"]["approval_mode"] == "prompt"
    assert set(bundle["sources"]) == {"main.worker", "team/writer.worker", "team/deep/editor.worker"}


# --- determinism ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def all_sources_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_project(tmp_path_factory.mktemp("det") / "proj", ALL_SOURCES)
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stderr
    return root


@pytest.fixture(scope="module")
def all_sources_lock(all_sources_root: Path) -> bytes:
    return (all_sources_root / LOCK).read_bytes()


@pytest.mark.process
def test_sources_of_every_kind_are_recorded(all_sources_lock: bytes) -> None:
    sources = json.loads(all_sources_lock)["sources"]
    assert {"project.json", "workers/main.worker", "workers/helper.worker", "schemas.py", "textutil.py",
            "prompts/rules.j2", "data/facts.txt"} <= set(sources)


@pytest.mark.process
def test_copied_directory_builds_to_the_same_bytes_twice(tmp_path: Path, all_sources_root: Path,
                                                         all_sources_lock: bytes) -> None:
    copy = tmp_path / "some" / "where" / "else"
    shutil.copytree(all_sources_root, copy)
    with real_introspection():  # each build imports the Python again
        (copy / LOCK).unlink()
        assert run_cli("build", copy).exit_code == 0
        assert (copy / LOCK).read_bytes() == all_sources_lock
        (copy / LOCK).unlink()
        assert run_cli("build", copy).exit_code == 0
        assert (copy / LOCK).read_bytes() == all_sources_lock


def test_yaml_project_builds_identically_twice(tmp_path: Path) -> None:
    root = write_project(tmp_path / "a", YAML_ONLY)
    assert run_cli("build", root).exit_code == 0
    first = (root / LOCK).read_bytes()
    (root / LOCK).unlink()
    assert run_cli("build", root).exit_code == 0
    assert (root / LOCK).read_bytes() == first


def _crlf_bom(files: dict) -> dict:
    out = {}
    for rel, content in files.items():
        if isinstance(content, dict):
            content = json.dumps(content, indent=2) + "\n"
        text = textwrap.dedent(content).lstrip("\n")
        out[rel] = "\ufeff" + text.replace("\n", "\r\n")
    return out


@pytest.mark.process
def test_crlf_and_bom_build_the_same_bundle_as_lf(tmp_path: Path, all_sources_lock: bytes) -> None:
    root = tmp_path / "crlf"
    root.mkdir()
    for rel, text in _crlf_bom(ALL_SOURCES).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    assert b"\r\n" in (root / "workers/main.worker").read_bytes()
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stderr
    assert (root / LOCK).read_bytes() == all_sources_lock


def test_a_project_without_manifest_skips_hidden_files_and_directories(tmp_path: Path) -> None:
    """As `**/*.worker` would: drafts in `.drafts/`, a `.venv`, or `.x.worker` are not workers."""
    root = write_project(tmp_path / "p", {
        "main.worker": worker("toolsets: [helper]"),
        "sub/helper.worker": worker(),
        ".x.worker": "not a worker at all",
        ".drafts/draft.worker": "not a worker at all",
    })
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stderr
    bundle = json.loads((root / "bundle.lock").read_text())
    assert sorted(bundle["workers"]) == ["helper", "main"]


def test_yaml_dates_and_binary_stay_text_in_the_bundle(tmp_path: Path) -> None:
    """YAML has types JSON has not; the bundle keeps their text instead of failing to encode them."""
    root = write_project(tmp_path / "p", {
        "main.worker": worker("description: 2024-01-02\nmodel_settings: {seed: 2024-01-01, blob: !!binary aGk=, t: 0.5}"),
    })
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stderr
    node = json.loads((root / "bundle.lock").read_text())["workers"]["main"]
    assert node["description"] == "2024-01-02"
    assert node["model_settings"] == {"seed": "2024-01-01", "blob": "aGk=", "t": 0.5}

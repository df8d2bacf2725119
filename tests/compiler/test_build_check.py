"""`llm-do build --check`: exit 0 when the lock is current, 1 naming what differs; writes nothing."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tests.support.cli import run_cli, worker, write_project

LOCK = "bundle.lock"

PROJECT = {
    "project.json": {
        "version": 1,
        "worker_files": ["workers/*.worker"],
        "python_files": ["tools.py"],
        "entry": {"worker": "main", "args": {"input": "go"}},
        "vars": {"tone": "dry"},
    },
    "workers/main.worker": worker(
        """
        model: test
        toolsets: [helper]
        tools: [shout]
        """,
        'Be {{ tone }}.\n{% include "prompts/rules.j2" %}\n{{ file("data/facts.txt") }}',
    ),
    "workers/helper.worker": worker("description: Helps", "Help."),
    "prompts/rules.j2": "Rule one.\n",
    "data/facts.txt": "The sea is salty.\n",
    "textutil.py": "def upper(s):\n    return s.upper()  # helper\n",
    "tools.py": '''
        from textutil import upper


        def shout(text: str) -> str:
            """Shout it."""  # tool
            return upper(text)


        TOOLS = {"shout": shout}
        ''',
    "README.md": "Not part of the build.\n",
}

# (kind, file, old text, new text): each a one-character change.
ONE_CHAR_EDITS = [
    ("worker", "workers/helper.worker", "Help.", "Helo."),
    ("manifest", "project.json", '"dry"', '"dru"'),
    ("python", "tools.py", "# tool", "# tooL"),
    ("template", "prompts/rules.j2", "one", "one!"),
    ("file", "data/facts.txt", "salty", "salts"),
    ("helper-module", "textutil.py", "# helper", "# helpeR"),
]


def snapshot_dir(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_project(tmp_path_factory.mktemp("check") / "proj", PROJECT)
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stderr
    assert set(json.loads((root / LOCK).read_text())["sources"]) >= {
        "textutil.py", "prompts/rules.j2", "data/facts.txt", "tools.py", "project.json"
    }
    return root


@pytest.fixture
def project(built: Path, tmp_path: Path) -> Path:
    """A fresh copy of the built project (its lock included: `root` is relative, so it stays valid)."""
    copy = tmp_path / "proj"
    shutil.copytree(built, copy)
    return copy


def check(root: Path, *extra: str):
    before = snapshot_dir(root)
    result = run_cli("build", root, "--check", *extra)
    assert snapshot_dir(root) == before, "build --check wrote something"
    assert "Traceback" not in result.stderr
    return result


@pytest.mark.process
def test_current_lock_exits_0(project: Path) -> None:
    result = check(project)
    assert result.exit_code == 0, result.stderr
    assert "up to date" in result.stderr


@pytest.mark.process
def test_missing_lock_exits_1(project: Path) -> None:
    (project / LOCK).unlink()
    result = check(project)
    assert result.exit_code == 1
    assert LOCK in result.stderr
    assert "does not exist" in result.stderr or "missing" in result.stderr
    assert not (project / LOCK).exists()


@pytest.mark.parametrize("kind, rel, old, new", ONE_CHAR_EDITS, ids=[e[0] for e in ONE_CHAR_EDITS])
@pytest.mark.process
def test_one_character_edit_of_any_source_is_stale(project: Path, kind: str, rel: str, old: str, new: str) -> None:
    path = project / rel
    text = path.read_text()
    assert text.count(old) == 1
    path.write_text(text.replace(old, new))
    result = check(project)
    assert result.exit_code == 1, result.stderr
    assert rel in result.stderr
    assert "changed" in result.stderr
    # The other sources are not reported.
    for _, other, _, _ in ONE_CHAR_EDITS:
        if other != rel:
            assert other not in result.stderr


@pytest.mark.process
def test_a_new_worker_matching_the_glob_is_stale(project: Path) -> None:
    write_project(project, {"workers/extra.worker": worker("", "Extra.")})
    result = check(project)
    assert result.exit_code == 1
    assert "workers/extra.worker" in result.stderr


@pytest.mark.process
def test_a_file_not_matching_the_glob_does_not_matter(project: Path) -> None:
    write_project(project, {"drafts/idea.worker": worker("", "Not listed."), "README.md": "Changed.\n"})
    result = check(project)
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize("rel", ["workers/helper.worker", "tools.py", "textutil.py", "prompts/rules.j2", "data/facts.txt"])
@pytest.mark.process
def test_a_removed_source_is_stale(project: Path, rel: str) -> None:
    (project / rel).unlink()
    result = check(project)
    assert result.exit_code == 1
    assert rel in result.stderr


@pytest.mark.process
def test_line_ending_changes_are_not_stale(project: Path) -> None:
    for rel in PROJECT:
        path = project / rel
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))
    result = check(project)
    assert result.exit_code == 0, result.stderr


@pytest.mark.process
def test_lock_edited_by_hand_is_stale(project: Path) -> None:
    lock = project / LOCK
    text = lock.read_text()
    assert text.count('"Help."') == 1
    lock.write_text(text.replace('"Help."', '"Help!"'))
    result = check(project)
    assert result.exit_code == 1
    assert "digest" in result.stderr


@pytest.mark.process
def test_truncated_lock_is_stale(project: Path) -> None:
    lock = project / LOCK
    lock.write_bytes(lock.read_bytes()[:200])
    result = check(project)
    assert result.exit_code == 1
    assert LOCK in result.stderr


def _reseal(doc: dict) -> bytes:
    """Write `doc` as a lock with a valid digest, computed independently of llm-do."""
    blank = json.dumps({**doc, "digest": ""}, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    digest = "sha256:" + hashlib.sha256(blank.encode()).hexdigest()
    return blank.replace('"digest": ""', f'"digest": "{digest}"', 1).encode()


@pytest.mark.parametrize(
    "field, value, words",
    [
        ("compiler", {"name": "llm-do", "version": "0.0.1-old"}, "0.0.1-old"),
        ("bundle_format", 999, "999"),
        ("packages", {"pydantic": "0.0.1"}, "pydantic"),
    ],
    ids=["compiler", "format", "package"],
)
@pytest.mark.process
def test_other_compiler_or_format_version_is_stale(project: Path, field: str, value, words: str) -> None:
    lock = project / LOCK
    doc = json.loads(lock.read_text())
    doc[field] = value
    lock.write_bytes(_reseal(doc))
    result = check(project)
    assert result.exit_code == 1
    assert words in result.stderr


@pytest.mark.process
def test_resealed_unchanged_lock_is_current(project: Path) -> None:
    """The independent resealing above is right: without a change the lock stays current."""
    lock = project / LOCK
    assert _reseal(json.loads(lock.read_text())) == lock.read_bytes()


@pytest.mark.process
def test_check_with_output_option_compares_that_lock_and_its_root(project: Path) -> None:
    out = project / "locks"
    out.mkdir()
    shutil.copy(project / LOCK, out / LOCK)
    # Copied unchanged, its `root` (".") now points at locks/, not at the project.
    result = check(project, "-o", out)
    assert result.exit_code == 1
    assert "root" in result.stderr
    doc = json.loads((out / LOCK).read_text())
    doc["root"] = ".."
    (out / LOCK).write_bytes(_reseal(doc))
    result = check(project, "-o", out)
    assert result.exit_code == 0, result.stderr
    (project / "workers/helper.worker").write_text(worker("description: Helps", "Help!"))
    result = check(project, "-o", out / LOCK)
    assert result.exit_code == 1
    assert "workers/helper.worker" in result.stderr
    # the command that updates this lock, not the default one (which would write project/bundle.lock)
    assert result.stderr.splitlines()[-1] == f"run `llm-do build {project} -o {out / LOCK}` to update it"


def test_project_without_project_json(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {"main.worker": worker("model: test", "Hi.")})
    assert run_cli("build", root).exit_code == 0
    assert check(root).exit_code == 0
    write_project(root, {"sub/extra.worker": worker("", "Extra.")})
    result = check(root)
    assert result.exit_code == 1
    assert "sub/extra.worker" in result.stderr


def test_check_of_a_path_without_project_exits_2(tmp_path: Path) -> None:
    result = run_cli("build", tmp_path, "--check")
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.process
def test_hand_edit_with_a_recomputed_digest_is_stale(project: Path) -> None:
    """The digest is a checksum anyone can recompute: --check compares content, so it names the node."""
    lock = project / LOCK
    doc = json.loads(lock.read_text())
    assert doc["workers"]["main"]["tools"]["shout"]["approval"] == "ask"
    doc["workers"]["main"]["tools"]["shout"]["approval"] = "allow"
    lock.write_bytes(_reseal(doc))
    result = check(project)
    assert result.exit_code == 1, result.stderr
    assert "worker 'main' differs in tools (edited by hand" in result.stderr
    assert "helper" not in result.stderr


@pytest.mark.process
def test_hand_edit_with_node_hash_and_digest_recomputed_is_stale(project: Path) -> None:
    lock = project / LOCK
    doc = json.loads(lock.read_text())
    node = doc["workers"]["helper"]
    node["instructions"] = "Help, and also delete everything."
    body = {k: v for k, v in node.items() if k != "hash"}
    node["hash"] = "sha256:" + hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
    lock.write_bytes(_reseal(doc))
    result = check(project)
    assert result.exit_code == 1, result.stderr
    assert "worker 'helper' differs in instructions\n" in result.stderr


@pytest.mark.process
def test_same_content_in_other_bytes_is_not_current(project: Path) -> None:
    """A lock with the right content but written unlike `build` writes it (here: keys unsorted,
    digest recomputed) is still not what build would write."""
    lock = project / LOCK
    doc = json.loads(lock.read_text())
    doc = {"workers": doc.pop("workers"), **doc}
    blank = json.dumps({**doc, "digest": ""}, indent=2, ensure_ascii=False) + "\n"
    digest = "sha256:" + hashlib.sha256(blank.encode()).hexdigest()
    lock.write_text(blank.replace('"digest": ""', f'"digest": "{digest}"', 1))
    result = check(project)
    assert result.exit_code == 1, result.stderr
    assert "canonical form" in result.stderr
    assert "not sealed" not in result.stderr


@pytest.mark.process
def test_project_with_errors_is_not_current_and_shows_them(project: Path) -> None:
    (project / "workers/main.worker").write_text(worker("model: test\ntoolsets: [helpr]", "Go."))
    result = check(project)
    assert result.exit_code == 1
    assert "N003" in result.stderr
    assert "would write no lock" in result.stderr
    assert "changed: workers/main.worker" in result.stderr

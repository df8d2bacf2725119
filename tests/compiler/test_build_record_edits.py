"""A build record never stands in for a build that would write other bytes, and an incremental
build writes exactly a clean build's: projects are taken through seeded random sequences of edits
of every kind, and after each one, whenever a record says the lock is current, a clean build of the
same inputs writes exactly the lock's bytes; an incremental build (front matter and node texts
taken from the packs of the builds before, `incremental`) gives a clean build's bytes; and what
`build` writes (through its record, or compiling incrementally) is byte for byte what a clean build
writes."""

from __future__ import annotations

import random
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from llm_do.compiler import pipeline
from llm_do.compiler.pipeline import compile_project
from llm_do.provenance import build_record
from llm_do.provenance.build_record import build_records, recall
from tests.support.cli import run_cli, worker, write_project
from tests.support.projects import lock_rebuild_attempts

LOCK = "bundle.lock"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["workers/*.worker"], "python_files": ["tools.py"],
                     "entry": {"worker": "main"}, "vars": {"tone": "dry"}, "suppress": ["G003"]},
    "workers/main.worker": worker("model: test\ntoolsets: [triage, helper]\ntools: [shout]",
                                  'Be {{ tone }}.\n{% include "rules.j2" %}'),
    "workers/triage.worker": worker("description: Triage a ticket\nschema_in_ref: schemas.py:Ticket", "Triage."),
    "workers/helper.worker": worker("description: Helps\ncompatible_models: ['openai:*']", "Help."),
    "workers/spare.worker": worker("model: test\nmodel_settings: {temperature: 0.5}", "Spare."),
    "templates/rules.j2": "Rule one.\n",
    "schemas.py": ("from pydantic import Field\n\nfrom llm_do.runtime import WorkerArgs\n\n\nclass Ticket(WorkerArgs):\n"
                   '    title: str = Field(description="The title")\n\n'
                   "    def prompt_messages(self) -> list[str]:\n        return [self.title]\n"),
    "tools.py": 'def shout(text: str) -> str:\n    """Shout it."""\n    return text.upper()\n\n\nTOOLS = {"shout": shout}\n',
    "lib/helper_path.py": "VALUE = 1\n",
}


def _append(rel: str, line: str) -> Callable[[Path, random.Random], None]:
    def edit(root: Path, rng: random.Random) -> None:
        path = root / rel
        if path.is_file():
            path.write_text(path.read_text().rstrip("\n") + f"\n{line}{rng.randrange(3)}\n")
    return edit


def _substitute(rel: str, pattern: str, template: str) -> Callable[[Path, random.Random], None]:
    """Set what `pattern` matches in `rel` to `template` with `{n}` one of two values (so an edit
    may also give back an earlier content; few contents of the Python: each is imported once)."""
    def edit(root: Path, rng: random.Random) -> None:
        path = root / rel
        path.write_text(re.sub(pattern, template.format(n=rng.randrange(2)), path.read_text(), count=1))
    return edit


def _random_worker_body(root: Path, rng: random.Random) -> None:
    path = rng.choice(sorted(root.rglob("*.worker")) or [root / "none"])
    if path.is_file():
        path.write_text(path.read_text().rstrip("\n") + f"\nAlso {rng.randrange(3)}.\n")


def _random_worker_body_with_vars(root: Path, rng: random.Random) -> None:
    path = rng.choice(sorted(root.rglob("*.worker")) or [root / "none"])
    if path.is_file():
        path.write_text(path.read_text().rstrip("\n") + f"\nBe {{{{ tone }}}} {rng.randrange(3)}.\n")


def _local_front_matter(root: Path, rng: random.Random) -> None:
    """One of the front matter edits `build` writes from the last lock (`local_edits`), with a body edit beside it."""
    EDITS[rng.choice(LOCAL)](root, rng)
    _random_worker_body(root, rng)


def _toggle_toolset(root: Path, rng: random.Random) -> None:
    """Give triage a toolset, or take it away: an edit of the front matter that changes what the worker can do."""
    _toggle_triage_key(root, "toolsets", lambda: f"[{rng.choice(['shell_readonly', 'filesystem_project_ro'])}]")


def _toggle_schema_ref(root: Path, rng: random.Random) -> None:
    """Take triage's input schema away, or give it back."""
    _toggle_triage_key(root, "schema_in_ref", lambda: "schemas.py:Ticket")


def _toggle_triage_key(root: Path, key: str, value: Callable[[], str]) -> None:
    """Take triage's front matter `key` away, or write it (with `value()`) before its description."""
    path = root / "workers" / "triage.worker"
    text = path.read_text()
    if f"\n{key}:" in text:
        path.write_text(re.sub(rf"\n{key}: [^\n]*", "", text, count=1))
    else:
        path.write_text(text.replace("\ndescription:", f"\n{key}: {value()}\ndescription:", 1))


def _add_worker(root: Path, rng: random.Random) -> None:
    folder = root / "workers" if (root / "workers").is_dir() else root
    write_project(folder, {f"added{rng.randrange(2)}.worker": worker("model: test", "Added.")})


def _delete_worker(root: Path, rng: random.Random) -> None:
    """Delete a worker nothing calls (one the walk added, or the spare)."""
    found = [p for p in sorted(root.rglob("*.worker")) if p.name.startswith(("added", "spare"))]
    if found:
        rng.choice(found).unlink()


def _add_other_file(root: Path, rng: random.Random) -> None:
    write_project(root, {f"notes/n{rng.randrange(2)}.txt": "Not an input.\n"})


def _touch_everything(root: Path, rng: random.Random) -> None:
    for path in root.rglob("*"):
        if path.is_file() and path.name != LOCK:
            path.write_bytes(path.read_bytes())


EDITS: dict[str, Callable[[Path, random.Random], None]] = {
    "worker": _random_worker_body,
    "worker body with vars": _random_worker_body_with_vars,
    "worker front matter": _substitute("workers/triage.worker", r"description: [^\n]*", "description: Triage {n}"),
    "front matter: description with YAML quoting": _substitute(
        "workers/helper.worker", r"description: [^\n]*", "description: 'Helps: \"{n}\" # not a comment, ünïcode'"),
    "front matter: model switched": _substitute("workers/spare.worker", r"model: [^\n]*", "model: openai:gpt-4o-{n}"),
    "front matter: model_settings changed": _substitute("workers/spare.worker", r"model_settings: [^\n]*",
                                                        "model_settings: {{temperature: 0.{n}, max_tokens: 9}}"),
    "front matter: compatible_models pattern": _substitute("workers/helper.worker", r"compatible_models: [^\n]*",
                                                           "compatible_models: ['anthropic:{n}*', 'openai:*']"),
    "front matter and bodies": _local_front_matter,
    "front matter: a toolset": _toggle_toolset,
    "front matter: a schema ref": _toggle_schema_ref,
    "template include": _append("templates/rules.j2", "Rule "),
    "schema module": _substitute("schemas.py", r'description="[^"]*"', 'description="The title {n}"'),
    "tool module": _substitute("tools.py", r'"""[^"]*"""', '"""Shout it {n}."""'),
    "project.json": _substitute("project.json", r'"tone": "[^"]*"', '"tone": "dry{n}"'),
    "deleted file": _delete_worker,
    "added file": _add_worker,
    "unrelated file": _add_other_file,
    "same bytes written again": _touch_everything,
}
"""The PYTHONPATH change and the return to an earlier state are made in the loop."""
LOCAL = ["worker front matter", "front matter: description with YAML quoting", "front matter: model switched",
         "front matter: model_settings changed", "front matter: compatible_models pattern"]
"""The front matter edits local to a worker (`local_edits`)."""


def _walk(root: Path, monkeypatch: pytest.MonkeyPatch, seed: int, steps: int, kinds: list[str]) -> tuple[set[str], set[str]]:
    """Edit `root` `steps` times (each kind of `kinds` at least once, in a seeded order); after each
    edit compare what a record says, what an incremental build gives and what `build` writes (and
    the diagnostics its record keeps) with a clean build. The kinds of edit recalled, and those
    `build` wrote from the last lock (`local_edits`)."""
    rng = random.Random(seed)
    plan = [*kinds, "PYTHONPATH", "earlier state"]
    rng.shuffle(plan)
    plan += [rng.choice(plan) for _ in range(max(0, steps - len(plan)))]
    states: list[dict[str, bytes]] = []
    recalled, rebuilt = set(), set()
    reused = {"spliced": 0, "front matter": 0}
    tried = lock_rebuild_attempts(monkeypatch)
    assert run_cli("build", root).exit_code == 0
    for kind in plan:
        states.append(_state(root))
        if kind == "PYTHONPATH":
            monkeypatch.setenv("PYTHONPATH", rng.choice(["lib", ""]))
        elif kind == "earlier state":
            _restore(root, rng.choice(states))
        else:
            EDITS[kind](root, rng)
        records = build_records()
        assert records is not None
        said_current = recall(records, root, root / LOCK) is not None
        clean, diagnostics = _clean_build(root, monkeypatch)
        incremental = compile_project(root, lock_dir=root)
        assert incremental.bundle == clean, f"an incremental build after '{kind}' (seed {seed})"
        reused["spliced"] += incremental.spliced
        reused["front matter"] += incremental.front_matter_reused
        if said_current:
            recalled.add(kind)
            assert clean == (root / LOCK).read_bytes(), f"a record said current after '{kind}' (seed {seed})"
        before = (root / LOCK).read_bytes()
        tried.clear()
        result = run_cli("build", root)
        written = (root / LOCK).read_bytes()
        assert written == (clean if clean is not None else before), f"build after '{kind}' (seed {seed}): {result.stderr}"
        if True in tried:
            rebuilt.add(kind)
        body = recall(records, root, root / LOCK)
        if clean is not None and body is not None:
            assert body["diagnostics"] == diagnostics, f"the diagnostics of build after '{kind}' (seed {seed})"
    assert all(reused.values()), f"nothing was taken from the packs: the walk tested no incremental build ({reused})"
    return recalled, rebuilt


def _clean_build(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[bytes | None, list[dict[str, Any]]]:
    """What a clean build writes and says: no pack read or written (introspection from the session's cache)."""
    with monkeypatch.context() as patch:
        patch.setattr(pipeline, "user_packs", lambda: None)
        result = compile_project(root, lock_dir=root)
    assert result.spliced == result.front_matter_reused == 0
    return result.bundle, [d.as_json() for d in result.diagnostics]


def _state(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != LOCK}


def _restore(root: Path, state: dict[str, bytes]) -> None:
    for path in sorted(root.rglob("*"), reverse=True):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and path.name != LOCK and rel not in state:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    for rel, data in state.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        if not (root / rel).is_file() or (root / rel).read_bytes() != data:
            (root / rel).write_bytes(data)


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """The session's cache (tests/conftest.py), whose introspection answers other tests share:
    records are kept by the project's place, and every walk has its own."""
    monkeypatch.delenv("PYTHONPATH", raising=False)


@pytest.mark.process
@pytest.mark.parametrize("stamps", [False, True], ids=["hashed", "stamped"])
def test_every_kind_of_edit_on_a_project_with_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: None,
                                                     stamps: bool) -> None:
    """`stamped`: files count as unchanged by their stamps at once (no wait for the clock's tick)."""
    if stamps:
        monkeypatch.setattr(build_record, "RACY_NS", 0)
    seed = 1
    root = write_project(tmp_path / "proj", PROJECT)
    recalled, rebuilt = _walk(root, monkeypatch, seed, steps=24, kinds=list(EDITS))
    assert "same bytes written again" in recalled, "the record was never used: the walk tested nothing of it"
    assert {"worker", *LOCAL, "front matter and bodies"} <= rebuilt, \
        f"these edits were never written from the last lock: {sorted({'worker', *LOCAL, 'front matter and bodies'} - rebuilt)}"


@pytest.mark.process
@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.iterdir() if (p / "project.json").is_file()))
def test_every_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: None, example: str) -> None:
    root = tmp_path / example
    shutil.copytree(EXAMPLES / example, root, ignore=shutil.ignore_patterns(LOCK, "__pycache__"))
    _walk(root, monkeypatch, seed=len(example), steps=4, kinds=["worker", "added file", "deleted file"])

"""Stale, bound to the bundle: editing one worker's instructions, description, input schema, toolset or
model, or a tool's code, marks exactly the cases whose recorded requests it changes as stale (callers
included: a callee's description and schema are what its caller's model is shown); an edit no
recorded request saw marks none."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from llm_do.cli.testing.case_run import CaseRunner
from llm_do.cli.testing.cases import case_files, load_case_file
from llm_do.compiler.pipeline import compile_project
from tests.support.cli import run_cli, worker, write_project

TOOLS = '''
    def shout(text: str) -> str:
        """Shout the text."""
        return text.upper()

    TOOLS = [shout]
'''
SCHEMAS = '''
    from llm_do.runtime import WorkerArgs


    class Question(WorkerArgs):
        input: str

        def prompt_messages(self) -> list[str]:
            return [self.input]
'''
FILES = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py", "schemas.py"],
                     "entry": {"worker": "main"}},
    "main.worker": worker("description: Answers.\ntoolsets: [b]", "Ask b."),
    "a.worker": worker("description: Shouts.\nmodel: test\ntools: [shout]", "Shout the input."),
    "b.worker": worker("description: Knows things.\nschema_in_ref: schemas.py:Question", "Answer the question."),
    "c.worker": worker("description: Unused.", "Nobody calls me."),
    "tools.py": TOOLS,
    "schemas.py": SCHEMAS,
    "tests/cases.yaml": """
        cases:
          - name: case-a
            worker: a
            input: hello
            cassette: cassettes/a.json
            expect:
              output: {equals: HELLO}
              calls: {in_order: ["shout(text == 'hello')"]}
          - name: case-b
            input: what is up
            cassette: cassettes/main.json
            expect:
              output: {contains: sky}
              calls: {in_order: ["main: b"]}
    """,
    "script.json": {"workers": {
        "a": [{"tool_calls": [{"tool": "shout", "args": {"text": "hello"}}]}, {"text": "HELLO"}],
        "main": [{"tool_calls": [{"tool": "b", "args": {"input": "what is up?"}}]}, {"text": "the sky"}],
        "b": [{"text": "the sky"}],
    }},
}

EDITS: dict[str, tuple[str, str, str]] = {
    # name: (file, old, new)
    "instructions of a": ("a.worker", "Shout the input.", "Shout the input loudly."),
    "instructions of b": ("b.worker", "Answer the question.", "Answer the question briefly."),
    "description of b": ("b.worker", "description: Knows things.", "description: Knows many things."),
    "input schema of b": ("schemas.py", "input: str", "input: str\n    detail: bool = False"),
    "toolset of a": ("a.worker", "tools: [shout]", "tools: [shout]\ntoolsets: [filesystem_project_ro]"),
    "model of a": ("a.worker", "model: test", "model: openai:gpt-4o-mini"),
    "code of shout": ("tools.py", "return text.upper()", "return text.upper() + '!'"),
    "instructions of c": ("c.worker", "Nobody calls me.", "Nobody ever calls me."),
}
EXPECTED_STALE = {
    "instructions of a": {"case-a": ["instructions of a changed"]},
    "instructions of b": {"case-b": ["instructions of b changed"]},
    "description of b": {"case-b": ["description of tool b offered to main changed"]},
    "input schema of b": {"case-b": ["input schema of tool b offered to main changed"]},
    "toolset of a": {"case-a": ["tool list_files of a added", "tool read_file of a added"]},
    "model of a": {"case-a": ["model of a changed (test -> openai:gpt-4o-mini)"]},
    "code of shout": {"case-a": ["code of tool shout changed (used by a)"]},
    "instructions of c": {},
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project, with both cases' cassettes recorded from the script by `exec --record`."""
    root = write_project(tmp_path_factory.mktemp("stale") / "proj", FILES)
    assert run_cli("build", root).exit_code == 0
    for worker_name in ("a", "main"):
        result = run_cli("exec", root, "hello" if worker_name == "a" else "what is up", "--worker", worker_name,
                         "--script", root / "script.json", "--record", root / "tests" / "cassettes")
        assert result.exit_code == 0, result.stderr
    (root / "bundle.lock").unlink()
    return root


def statuses(root: Path) -> dict[str, tuple[str, list[str]]]:
    result = compile_project(root)
    assert result.bundle is not None, [d.message for d in result.diagnostics]
    runner = CaseRunner(root, result.bundle)
    cases = [case for path in case_files(root) for case in load_case_file(path, root)]
    return {r.name: (r.status, r.problems) for r in map(runner.run, cases)}


def test_the_recorded_cases_pass_as_recorded(recorded: Path) -> None:
    assert statuses(recorded) == {"case-a": ("passed", []), "case-b": ("passed", [])}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edit_makes_stale_exactly_the_cases_whose_requests_it_changes(edit: str, recorded: Path, tmp_path: Path,
                                                                         _forget: Callable[[], None]) -> None:
    root = tmp_path / "proj"
    shutil.copytree(recorded, root)
    file, old, new = EDITS[edit]
    path = root / file
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    _forget()
    got = statuses(root)
    stale = {name: problems for name, (status, problems) in got.items() if status == "stale"}
    assert stale == EXPECTED_STALE[edit]
    assert all(status == "passed" for name, (status, _) in got.items() if name not in stale), got


@pytest.fixture
def _forget() -> Callable[[], None]:
    """Forget the project modules an earlier case imported (schemas, tools), so an edited copy imports its own."""
    import sys

    def forget() -> None:
        for name in ("schemas", "tools"):
            sys.modules.pop(name, None)

    return forget


def test_a_stale_case_lists_every_change_it_saw(recorded: Path, tmp_path: Path, _forget: Callable[[], None]) -> None:
    """Newcomer G7: the code of a tool and the instructions of its worker both changed; both are said,
    not the first found."""
    root = tmp_path / "proj"
    shutil.copytree(recorded, root)
    for edit in ("code of shout", "instructions of a", "toolset of a"):
        file, old, new = EDITS[edit]
        (root / file).write_text((root / file).read_text().replace(old, new))
    _forget()
    assert statuses(root)["case-a"] == ("stale", [
        "code of tool shout changed (used by a)", "instructions of a changed", "tool list_files of a added",
        "tool read_file of a added"])

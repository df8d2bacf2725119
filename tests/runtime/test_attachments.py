"""Attachments: checked against the worker's policy before its model is called, then passed to the
model as binary content with the right media type."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import BinaryContent, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.messages import ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import FunctionModel

from llm_do.runtime import InputProblem, RuntimeConfig, run_worker
from tests.support.cli import one_line_error, run_cli, worker
from tests.support.events import of_kind, read_events
from tests.support.projects import build_project

POLICY = """
attachments:
  max_count: 2
  max_total_bytes: 100
  allowed_suffixes: [".txt", ".png"]
"""

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker(POLICY + "toolsets: [filesystem_project_ro, reader]", "Look at the files."),
    "reader.worker": worker(POLICY, "Read the files."),
    "free.worker": worker("", "No policy."),
    "inside.txt": "inside the project\n",
}

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 12


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("attachments") / "proj", PROJECT)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("hello")  # 5 bytes
    (tmp_path / "b.png").write_bytes(PNG)  # 20 bytes
    (tmp_path / "UPPER.TXT").write_text("upper")
    (tmp_path / "c.md").write_text("markdown")
    (tmp_path / "big.txt").write_text("x" * 101)
    return tmp_path


class Models:
    """One FunctionModel per worker; records each worker's requests. `main` may be given turns."""

    def __init__(self, main_turns: list[list[Any]] | None = None) -> None:
        self.main_turns = list(main_turns or [])
        self.seen: dict[str, list[list[Any]]] = {}

    def model_for(self, name: str) -> FunctionModel:
        def respond(messages: list[Any], info: Any) -> ModelResponse:
            self.seen.setdefault(name, []).append(list(messages))
            if name == "main" and self.main_turns:
                return ModelResponse(parts=self.main_turns.pop(0))
            return ModelResponse(parts=[TextPart(f"{name} saw it")])

        return FunctionModel(respond)

    def config(self) -> RuntimeConfig:
        return RuntimeConfig(model_for=self.model_for)


def prompt_of(messages: list[Any]) -> list[Any]:
    [part] = [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, UserPromptPart)]
    return list(part.content) if isinstance(part.content, list) else [part.content]


def test_attachments_reach_the_model_as_binary_content(bundle: Path, files: Path) -> None:
    models = Models()
    result = run_worker(bundle, input="look", attachments=[str(files / "a.txt"), str(files / "b.png")],
                        config=models.config())
    assert result.output == "main saw it"
    text, txt, png = prompt_of(models.seen["main"][0])
    assert text == "look"
    assert isinstance(txt, BinaryContent) and (txt.media_type, txt.data) == ("text/plain", b"hello")
    assert isinstance(png, BinaryContent) and (png.media_type, png.data) == ("image/png", PNG)


def test_allowed_suffixes_ignore_case(bundle: Path, files: Path) -> None:
    models = Models()
    run_worker(bundle, input="look", attachments=[str(files / "UPPER.TXT")], config=models.config())
    [_, upper] = prompt_of(models.seen["main"][0])
    assert upper.data == b"upper"


@pytest.mark.parametrize(
    ("names", "says"),
    [
        (["a.txt", "b.png", "a.txt"], "at most 2"),
        (["big.txt"], "at most 100"),
        (["a.txt", "c.md"], "'.md'"),
        (["missing.txt"], "not found"),
    ],
    ids=["max_count", "max_total_bytes", "allowed_suffixes", "missing"],
)
def test_the_policy_is_checked_before_the_model_is_called(bundle: Path, files: Path, names: list[str], says: str) -> None:
    models = Models()
    with pytest.raises(InputProblem) as info:
        run_worker(bundle, input="look", attachments=[str(files / n) for n in names], config=models.config())
    assert says in str(info.value)
    assert models.seen == {}  # no model was called


def test_a_worker_without_a_policy_takes_any_attachment(bundle: Path, files: Path) -> None:
    models = Models()
    run_worker(bundle, input="look", worker="free", attachments=[str(files / n) for n in ("c.md", "big.txt", "a.txt")],
               config=models.config())
    parts = prompt_of(models.seen["free"][0])
    assert parts[0] == "look"
    assert [p.data for p in parts[1:]] == [b"markdown", b"x" * 101, b"hello"]


def test_attach_that_breaks_the_policy_exits_2_before_the_model_runs(bundle: Path, files: Path, script,
                                                                      tmp_path: Path) -> None:
    s = script({"workers": {"main": [{"text": "ran"}]}})
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "look", "--attach", files / "c.md", "--script", s, "--events", events)
    assert result.exit_code == 2
    assert "'.md'" in one_line_error(result)
    assert not events.exists() or of_kind(read_events(events), "worker_started") == []


def test_attach_within_the_policy_runs(bundle: Path, files: Path, script) -> None:
    s = script({"workers": {"main": [{"text": "ran"}]}})
    result = run_cli("exec", bundle, "look", "--attach", files / "a.txt", "--attach", files / "b.png", "--script", s)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "ran"


def call_reader(*paths: str) -> list[Any]:
    return [ToolCallPart("reader", {"input": "read these", "attachments": list(paths)})]


def test_a_callees_policy_refuses_a_models_attachments_as_a_tool_error(bundle: Path) -> None:
    models = Models([call_reader("inside.txt", "inside.txt", "inside.txt"), [TextPart("main went on")]])
    result = run_worker(bundle, "go", config=models.config())
    assert result.output == "main went on"
    assert "reader" not in models.seen
    [ret] = [p for p in models.seen["main"][1][-1].parts if isinstance(p, ToolReturnPart)]
    assert "at most 2" in ret.model_response_str()


def test_a_model_cannot_attach_files_outside_the_project(bundle: Path, files: Path) -> None:
    models = Models([call_reader(str(files / "a.txt")), call_reader("../outside.txt"), [TextPart("main went on")]])
    (bundle.parent.parent / "outside.txt").write_text("secret")
    result = run_worker(bundle, "go", config=models.config())
    assert result.output == "main went on"
    assert "reader" not in models.seen
    returns = [p.model_response_str() for m in models.seen["main"][2] for p in getattr(m, "parts", [])
               if isinstance(p, ToolReturnPart)]
    assert len(returns) == 2 and all("outside the project" in r for r in returns), returns


def test_a_model_may_attach_project_files_for_a_callee(bundle: Path) -> None:
    models = Models([call_reader("inside.txt"), [TextPart("done")]])
    run_worker(bundle, "go", config=models.config())
    [_, content] = prompt_of(models.seen["reader"][0])
    assert content.data == b"inside the project\n" and content.media_type == "text/plain"


# --- only regular files, never unbounded -----------------------------------------------------------


def test_a_fifo_is_refused_not_read(bundle: Path, files: Path) -> None:
    """Reading a FIFO would wait for a writer forever (past --timeout); it is refused at once."""
    import os

    fifo = files / "pipe.txt"
    os.mkfifo(fifo)
    models = Models()
    with pytest.raises(InputProblem) as info:
        run_worker(bundle, input="look", worker="free", attachments=[str(fifo)], config=models.config())
    assert "not a regular file" in str(info.value)
    assert models.seen == {}


def test_a_model_passing_a_fifo_gets_a_tool_error(bundle: Path, tmp_path: Path) -> None:
    import os
    import shutil

    project = tmp_path / "copy"
    shutil.copytree(bundle.parent, project)
    os.mkfifo(project / "pipe.txt")
    models = Models([call_reader("pipe.txt"), [TextPart("main went on")]])
    result = run_worker(project / "bundle.lock", "go", config=models.config())
    assert result.output == "main went on"
    [ret] = [p for p in models.seen["main"][1][-1].parts if isinstance(p, ToolReturnPart)]
    assert "not a regular file" in ret.model_response_str()


def test_exec_attach_of_a_fifo_exits_2_without_hanging(bundle: Path, files: Path, script) -> None:
    import os

    os.mkfifo(files / "pipe.txt")
    result = run_cli("exec", bundle, "look", "--attach", files / "pipe.txt", "--script",
                     script({"workers": {"main": [{"text": "ran"}]}}))
    assert result.exit_code == 2
    assert "not a regular file" in one_line_error(result)


def test_attachments_without_a_size_policy_have_a_default_limit(bundle: Path, files: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from llm_do.runtime import prompt

    monkeypatch.setattr(prompt, "DEFAULT_MAX_TOTAL_BYTES", 100)
    models = Models()
    with pytest.raises(InputProblem) as info:
        run_worker(bundle, input="look", worker="free", attachments=[str(files / "big.txt")], config=models.config())
    assert "at most 100" in str(info.value) and "max_total_bytes" in str(info.value)
    assert models.seen == {}
    run_worker(bundle, input="look", worker="free", attachments=[str(files / "a.txt")], config=models.config())
    assert "free" in models.seen

"""`worker_create` / `worker_call`: a worker proposes a worker, a person (or the run's approval
mode) approves it, it is written with no tools, runs in the same run, and the next build takes it
in with its instructions verbatim. Scripted, offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.messages import ToolReturnPart
from pydantic_ai.models.function import FunctionModel

from llm_do.compiler.pipeline import compile_project
from llm_do.runtime import DefinitionProblem, Runtime, RuntimeConfig, StaleLockWarning, create_worker
from tests.support.cli import one_line_error, run_cli, worker
from tests.support.events import of_kind, read_events

MANIFEST = {"version": 1, "worker_files": ["**/*.worker"], "entry": {"worker": "main"}}
TRICKY = ("Summarize {{ topic }} for {% if x %}them{% endif %}.\n{# keep #} and {% raw %}x{% endraw %}, "
          "{%- endraw -%} too\n---\nname: not front matter")


def project(front: str = "toolsets: [worker_create]", **files: Any) -> dict[str, Any]:
    return {"project.json": MANIFEST, "main.worker": worker(front, "Create helpers when useful."), **files}


def create(name: str = "poet", instructions: str = "Write a short poem about the input.", description: str = "Writes poems.",
           **extra: Any) -> dict[str, Any]:
    return {"tool_calls": [{"tool": "worker_create", "args": {"name": name, "instructions": instructions,
                                                              "description": description, **extra}}]}


def call(name: str = "poet", text: str = "the sea") -> dict[str, Any]:
    return {"tool_calls": [{"tool": "worker_call", "args": {"worker": name, "input": text}}]}


def run(bundle: Path, script_path: Path, tmp_path: Path, *flags: str) -> tuple[Any, list[dict[str, Any]]]:
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", script_path, "--events", events, *flags, input="")
    return result, read_events(events)


def test_approved_the_worker_is_written_without_tools_called_in_the_run_and_built_next(build, script, tmp_path: Path) -> None:
    bundle = build(project())
    s = script({"workers": {"main": [create(instructions=TRICKY), call(), {"text": "done"}],
                            "poet": [{"text": "waves on waves"}]}})
    result, events = run(bundle, s, tmp_path, "--approve-all", "--strict-script")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "done"
    [returned] = of_kind(events, "tool_returned", tool="worker_call")
    assert returned["result"] == "waves on waves"
    assert [(e["worker"], e["depth"]) for e in of_kind(events, "worker_started")] == [("main", 1), ("poet", 2)]
    created = bundle.parent / "workers" / "generated" / "poet.worker"
    text = created.read_text(encoding="utf-8")
    assert text.startswith('---\nname: "poet"\ndescription: "Writes poems."\n---\n'), text
    rebuilt = compile_project(bundle.parent)
    assert rebuilt.bundle is not None, [str(d) for d in rebuilt.diagnostics]
    node = json.loads(rebuilt.bundle)["workers"]["poet"]
    assert node["instructions"] == TRICKY
    assert (node["description"], node["model"], node["toolsets"], node["tools"]) == ("Writes poems.", None, [], {})


def test_denied_without_a_terminal_no_file_and_the_model_is_told(build, script, tmp_path: Path) -> None:
    bundle = build(project())
    s = script({"workers": {"main": [create(), {"text": "gave up"}], "poet": [{"text": "never"}]}})
    result, events = run(bundle, s, tmp_path)
    assert result.exit_code == 0, result.stderr
    assert not (bundle.parent / "workers").exists()
    [denied] = of_kind(events, "tool_returned", tool="worker_create")
    assert denied["outcome"] == "denied"
    assert "script turns not used: 'poet' 1 of 1" in result.stderr  # never created: its turns are left over


def test_reject_all_denies_it_too(build, script, tmp_path: Path) -> None:
    bundle = build(project())
    result, _ = run(bundle, script({"workers": {"main": [create(), {"text": "ok"}]}}), tmp_path, "--reject-all")
    assert result.exit_code == 0, result.stderr
    assert not (bundle.parent / "workers").exists()


def test_an_allow_rule_does_not_let_it_through_unasked(build, script, tmp_path: Path) -> None:
    """A010 at build; and the run still asks (here: nobody can answer, so it is denied)."""
    bundle = build(project("toolsets: [worker_create]\napprovals: [allow worker_create, allow worker_call]"))
    built = compile_project(bundle.parent)
    [a010] = [d for d in built.diagnostics if d.code == "A010"]
    assert a010.severity == "warning" and "worker_create" in a010.message
    node = json.loads(bundle.read_text())["workers"]["main"]["tools"]
    assert (node["worker_create"]["approval"], node["worker_call"]["approval"]) == ("ask", "allow")
    result, events = run(bundle, script({"workers": {"main": [create(), {"text": "ok"}]}}), tmp_path)
    assert result.exit_code == 0, result.stderr
    assert of_kind(events, "tool_called", tool="worker_create")[0]["approval"] == "ask"
    assert not (bundle.parent / "workers").exists()


def test_a_deny_rule_denies_it_even_with_approve_all(build, script, tmp_path: Path) -> None:
    bundle = build(project("toolsets: [worker_create]\napprovals: [deny worker_create]"))
    result, events = run(bundle, script({"workers": {"main": [create(), {"text": "ok"}]}}), tmp_path, "--approve-all")
    assert result.exit_code == 0, result.stderr
    assert of_kind(events, "tool_returned", tool="worker_create")[0]["outcome"] == "denied"
    assert not (bundle.parent / "workers").exists()


@pytest.mark.parametrize(("name", "why"), [
    ("main", "taken"),                    # a worker of the bundle
    ("filesystem_project", "taken"),      # a stdlib toolset, used or not
    ("worker_create", "taken"),
    ("9lives", "not a valid worker name"),
    ("a/b", "not a valid worker name"),
])
def test_a_name_that_clashes_or_is_invalid_is_refused(build, script, tmp_path: Path, name: str, why: str) -> None:
    bundle = build(project())
    result, events = run(bundle, script({"workers": {"main": [create(name), {"text": "ok"}]}}), tmp_path, "--approve-all")
    assert result.exit_code == 0, result.stderr
    [failed] = of_kind(events, "tool_returned", tool="worker_create")
    assert failed["outcome"] == "failed" and why in failed["result"], failed
    assert not list(bundle.parent.glob("workers/generated/*"))


def test_an_existing_file_is_never_replaced_and_a_second_create_of_a_name_is_refused(build, script, tmp_path: Path) -> None:
    bundle = build(project())
    (bundle.parent / "workers" / "generated").mkdir(parents=True)
    (bundle.parent / "workers" / "generated" / "kept.worker").write_text("mine\n")  # since the build
    s = script({"workers": {"main": [create("kept"), create("poet"), create("poet"), {"text": "ok"}]}})
    # the file makes the lock stale (it is a worker file of the project now): run it as built
    result, events = run(bundle, s, tmp_path, "--approve-all", "--as-built")
    assert result.exit_code == 0, result.stderr
    outcomes = [(e["outcome"], e["result"]) for e in of_kind(events, "tool_returned", tool="worker_create")]
    assert outcomes[0][0] == "failed" and "workers/generated/kept.worker already exists" in outcomes[0][1]
    assert outcomes[1][0] == "ok"
    assert outcomes[2][0] == "failed" and "taken" in outcomes[2][1]
    assert (bundle.parent / "workers" / "generated" / "kept.worker").read_text() == "mine\n"
    assert sorted(p.name for p in (bundle.parent / "workers" / "generated").iterdir()) == ["kept.worker", "poet.worker"]


def test_worker_call_reaches_only_workers_created_in_this_run(build, script, tmp_path: Path) -> None:
    bundle = build(project("toolsets: [worker_create, helper]", **{"helper.worker": worker("", "Help.")}))
    result, events = run(bundle, script({"workers": {"main": [call("helper"), {"text": "ok"}]}}), tmp_path, "--approve-all")
    assert result.exit_code == 0, result.stderr
    [failed] = of_kind(events, "tool_returned", tool="worker_call")
    assert failed["outcome"] == "failed" and "not a worker created in this run" in failed["result"]
    assert not of_kind(events, "worker_started", worker="helper")


def test_the_path_setting_chooses_the_folder(build, script, tmp_path: Path) -> None:
    bundle = build(project("toolsets:\n  - worker_create: {path: drafts}"))
    result, _ = run(bundle, script({"workers": {"main": [create(), {"text": "ok"}]}}), tmp_path, "--approve-all")
    assert result.exit_code == 0, result.stderr
    assert (bundle.parent / "drafts" / "poet.worker").is_file()


def test_the_model_given_is_written_and_checked(build, script, tmp_path: Path) -> None:
    bundle = build(project())
    s = script({"workers": {"main": [create("bad", model="nonsense"), create(model="anthropic:claude-haiku-4-5"),
                                     {"text": "ok"}]}})
    result, events = run(bundle, s, tmp_path, "--approve-all")
    assert result.exit_code == 0, result.stderr
    bad, good = of_kind(events, "tool_returned", tool="worker_create")
    assert bad["outcome"] == "failed" and "'nonsense'" in bad["result"]
    assert good["outcome"] == "ok"
    assert 'model: "anthropic:claude-haiku-4-5"\n' in (bundle.parent / "workers/generated/poet.worker").read_text()


def test_a_created_worker_without_a_model_answers_on_its_callers_model(build) -> None:
    """Only `main` is given a model; the created worker runs on it (the run has no default)."""
    bundle = build(project())
    answered: list[str] = []

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        instructions = info.instructions or ""
        if instructions.startswith("Write a short poem"):
            answered.append("poet")
            return ModelResponse(parts=[TextPart("a poem")])
        answered.append("main")
        done = [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
        if not done:
            return ModelResponse(parts=[ToolCallPart("worker_create", create()["tool_calls"][0]["args"])])
        if len(done) == 1:
            return ModelResponse(parts=[ToolCallPart("worker_call", {"worker": "poet", "input": "x"})])
        return ModelResponse(parts=[TextPart(f"poet said: {done[-1].content}")])

    main_model = FunctionModel(respond)
    config = RuntimeConfig(approval_mode="approve_all", model_for=lambda name: main_model if name == "main" else None)
    result = Runtime.load(bundle, config).run("go")
    assert result.output == "poet said: a poem"
    assert answered == ["main", "main", "poet", "main"]


def test_scripts_may_name_workers_to_be_created_but_not_give_them_tool_calls(build, script) -> None:
    bundle = build(project())
    s = script({"workers": {"main": [{"text": "ok"}], "later": [{"tool_calls": [{"tool": "read_file", "args": {}}]}]}})
    result = run_cli("exec", bundle, "go", "--script", s)
    assert result.exit_code == 2
    assert "'later'" in one_line_error(result) and "created in the run has none" in one_line_error(result)
    plain = build({"project.json": MANIFEST, "main.worker": worker("", "Answer.")}, name="plain")
    result = run_cli("exec", plain, "go", "--script", script({"workers": {"main": [{"text": "ok"}], "later": [{"text": "x"}]}}))
    assert result.exit_code == 2 and "'later', which the bundle does not have" in one_line_error(result)


def test_create_worker_from_python_writes_and_runs_in_that_runtime(build) -> None:
    bundle = build(project())
    runtime = Runtime.load(bundle, RuntimeConfig(model="test"))
    path = create_worker(runtime, "summarizer", TRICKY, "Summarizes.", folder="drafts")
    assert path == (bundle.parent / "drafts" / "summarizer.worker").resolve()
    assert runtime.run("text", worker="summarizer").output
    with pytest.raises(DefinitionProblem, match="taken"):
        create_worker(runtime, "summarizer", "Again.", "Again.", folder="elsewhere")
    with pytest.raises(DefinitionProblem, match="leads outside|points outside|absolute"):
        create_worker(runtime, "escape", "x", "x", folder="../out")
    rebuilt = compile_project(bundle.parent)
    assert rebuilt.bundle is not None
    assert json.loads(rebuilt.bundle)["workers"]["summarizer"]["instructions"] == TRICKY


class EditedAtTheTerminal:
    """A person at the terminal who answers `e` and saves `edited` in the editor."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, answers: str, edited: str | None) -> None:
        import io

        import click

        from llm_do.runtime.approvals import terminal as terminal_prompt

        self.asked = io.StringIO()
        self.shown: list[str] = []
        monkeypatch.setattr(terminal_prompt, "terminal_output", lambda: (self.asked, lambda: None))
        monkeypatch.setattr("sys.stdin", io.StringIO(answers))

        def fake_edit(text: str, **kwargs: Any) -> str | None:
            self.shown.append(text)
            return edited

        monkeypatch.setattr(click, "edit", fake_edit)


def scripted_runtime(bundle: Path, turns: dict[str, Any]) -> Runtime:
    from llm_do.runtime.script import Script, ScriptPlayer

    player = ScriptPlayer(Script.model_validate({"workers": turns}))
    return Runtime.load(bundle, RuntimeConfig(model_for=player.model_for, interactive=True))


def test_on_the_terminal_the_definition_can_be_edited_before_it_is_saved(build, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = build(project())
    edited = '---\nname: bard\ndescription: "Writes ballads."\n---\nWrite a ballad about {{ topic }}.\n'
    person = EditedAtTheTerminal(monkeypatch, "e\n", edited)
    runtime = scripted_runtime(bundle, {"main": [create(), call("bard"), {"text": "done"}], "bard": [{"text": "a ballad"}]})
    assert runtime.run("go").output == "done"
    assert person.shown == ['---\nname: "poet"\ndescription: "Writes poems."\n---\nWrite a short poem about the input.\n']
    assert "[e] edit, then approve" in person.asked.getvalue()
    assert "-> approved as edited" in person.asked.getvalue()
    assert not (bundle.parent / "workers" / "generated" / "poet.worker").exists()
    saved = (bundle.parent / "workers" / "generated" / "bard.worker").read_text(encoding="utf-8")
    assert saved == ('---\nname: "bard"\ndescription: "Writes ballads."\n---\n'
                     "{% raw %}Write a ballad about {{ topic }}.{% endraw %}\n")


def test_an_edit_that_adds_tools_is_refused_and_asked_again(build, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = build(project())
    edited = "---\nname: poet\ndescription: x\ntoolsets: [shell_file_ops]\n---\nDo anything.\n"
    person = EditedAtTheTerminal(monkeypatch, "e\nn\n", edited)
    runtime = scripted_runtime(bundle, {"main": [create(), {"text": "denied"}]})
    assert runtime.run("go").output == "denied"
    assert "the edit cannot be used: a created worker has only name, description and model (not toolsets)" in person.asked.getvalue()
    assert not (bundle.parent / "workers").exists()


def test_the_question_shows_the_whole_file_that_would_be_written(build, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = build(project())
    person = EditedAtTheTerminal(monkeypatch, "v\ny\n", None)
    long = "\n".join(f"Rule {i}: be precise about {{{{ item }}}}." for i in range(12))
    runtime = scripted_runtime(bundle, {"main": [create(instructions=long), {"text": "ok"}]})
    assert runtime.run("go").output == "ok"
    asked = person.asked.getvalue()
    assert "file: poet.worker (in workers/generated/)" in asked
    assert "| {% raw %}Rule 0: be precise about {{ item }}." in asked
    assert "| Rule 11: be precise about {{ item }}.{% endraw %}" in asked  # `v` showed all of it
    assert (bundle.parent / "workers/generated/poet.worker").read_text(encoding="utf-8").count("Rule ") == 12


def test_the_gate_asks_for_worker_create_even_when_a_bundle_says_allow(tmp_path: Path) -> None:
    """The runtime does not rely on the compiler alone: an `allow` (as a bundle not made by this
    compiler could say) is asked all the same; a deny stays a deny, and worker_call is untouched."""
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.toolsets import ToolsetTool

    from llm_do.bundle.views import ToolBinding
    from llm_do.runtime.created_workers import WorkerDefinition, created_spec
    from llm_do.runtime.toolsets.gate import ApprovalGate
    from llm_do.stdlib.registry import STDLIB_TOOLSETS
    from llm_do.stdlib.worker_create.descriptor import WorkerCreateSettings
    from llm_do.stdlib.worker_create.toolset import WorkerCreateToolset

    toolset = WorkerCreateToolset(STDLIB_TOOLSETS["worker_create"], WorkerCreateSettings(), tmp_path)
    spec = created_spec(WorkerDefinition("main", "x", "x"), "main.worker")

    def approval(name: str, bound: str) -> str:
        gate = ApprovalGate(toolset, spec=spec._replace(tools={name: ToolBinding("worker_create", None, bound)}), runtime=None)
        tool = ToolsetTool(toolset=toolset, tool_def=ToolDefinition(name=name), max_retries=1, args_validator=None)
        return gate.decision_for(name, {}, tool)

    assert approval("worker_create", "allow") == "ask"
    assert approval("worker_create", "deny") == "deny"
    assert approval("worker_call", "allow") == "allow"


@pytest.mark.parametrize(("name", "why"), [
    ("main", "the name 'main' is taken"),
    ("kept", "workers/generated/kept.worker already exists"),
    ("9lives", "not a valid worker name"),
])
def test_a_create_that_would_fail_is_refused_before_anyone_is_asked(build, name: str, why: str) -> None:
    bundle = build(project())
    (bundle.parent / "workers" / "generated").mkdir(parents=True)
    (bundle.parent / "workers" / "generated" / "kept.worker").write_text("mine\n")  # since the build
    asked: list[Any] = []
    turns = [[ToolCallPart("worker_create", {"name": name, "instructions": "x", "description": "d"})], [TextPart("ok")]]
    config = RuntimeConfig(approval_callback=lambda request: asked.append(request), as_built=True,  # kept.worker is new
                           model=FunctionModel(lambda messages, info: ModelResponse(parts=turns.pop(0))))
    with pytest.warns(StaleLockWarning):
        result = Runtime.load(bundle, config).run("go")
    assert asked == []
    [refused] = [p.model_response_str() for m in result.messages for p in getattr(m, "parts", [])
                 if getattr(p, "tool_name", None) == "worker_create" and not isinstance(p, ToolCallPart)]
    assert why in refused, refused

"""Which model a worker runs on: --model/--script > worker model > project default > LLM_DO_MODEL >
a clear error; compatible_models checked for real models, skipped for test and scripted ones.

Offline: where a real provider's name appears, the run must never get as far as building it (the
chosen model is `test`, or the name is refused first). No API key is set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import one_line_error, run_cli, worker
from tests.support.events import of_kind, read_events

REAL = "openai:gpt-4o"


def project(front: str = "", default: str | None = None) -> dict[str, Any]:
    manifest: dict[str, Any] = {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}}
    if default:
        manifest["defaults"] = {"model": default}
    return {"project.json": manifest, "main.worker": worker(front, "Answer.")}


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)


def model_used(bundle: Path, tmp_path: Path, *args: str, env: dict[str, str | None] | None = None) -> str:
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "hi", *args, "--events", events, env=env)
    assert result.exit_code == 0, result.stderr
    [started] = of_kind(read_events(events), "worker_started")
    return started["model"]


def test_model_test_is_pydantic_ais_test_model(build, tmp_path: Path) -> None:
    bundle = build(project(f"model: {REAL}"))
    result = run_cli("exec", bundle, "hi", "--model", "test")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "success (no tool calls)"
    assert model_used(bundle, tmp_path, "--model", "test") == "test"


def test_script_replaces_the_workers_model(build, script, tmp_path: Path) -> None:
    bundle = build(project(f"model: {REAL}"))
    s = script({"workers": {"main": [{"text": "scripted"}]}})
    assert model_used(bundle, tmp_path, "--script", str(s)) == "script:main"


def test_the_workers_model_beats_the_project_default_and_the_environment(build, tmp_path: Path) -> None:
    bundle = build(project("model: test", default=REAL))
    assert model_used(bundle, tmp_path, env={"LLM_DO_MODEL": REAL}) == "test"


def test_the_project_default_beats_the_environment(build, tmp_path: Path) -> None:
    bundle = build(project("", default="test"))
    assert model_used(bundle, tmp_path, env={"LLM_DO_MODEL": REAL}) == "test"


def test_the_environment_is_the_last_resort(build, tmp_path: Path) -> None:
    bundle = build(project(""))
    assert model_used(bundle, tmp_path, env={"LLM_DO_MODEL": "test"}) == "test"


def test_no_model_at_all_is_a_clear_error(build) -> None:
    bundle = build(project(""))
    result = run_cli("exec", bundle, "hi")
    assert result.exit_code == 1
    line = one_line_error(result)
    assert "main" in line and "--model" in line and "LLM_DO_MODEL" in line, line


def test_a_resolved_model_must_match_compatible_models(build) -> None:
    bundle = build(project("compatible_models: ['anthropic:*', 'openai:gpt-5*']"))
    result = run_cli("exec", bundle, "hi", env={"LLM_DO_MODEL": REAL})
    assert result.exit_code == 1
    line = one_line_error(result)
    assert REAL in line and "anthropic:*" in line and "openai:gpt-5*" in line, line


def test_model_flag_must_match_compatible_models_too(build) -> None:
    bundle = build(project("compatible_models: ['anthropic:*']"))
    result = run_cli("exec", bundle, "hi", "--model", REAL)
    assert result.exit_code == 1
    assert "anthropic:*" in one_line_error(result)


def test_compatible_models_match_case_sensitively(build) -> None:
    bundle = build(project("compatible_models: ['openai:GPT-*']"))
    result = run_cli("exec", bundle, "hi", env={"LLM_DO_MODEL": "openai:gpt-4o"})
    assert result.exit_code == 1
    assert "openai:GPT-*" in one_line_error(result)


def test_test_and_scripted_models_skip_compatible_models(build, script, tmp_path: Path) -> None:
    bundle = build(project("compatible_models: ['anthropic:*']"))
    assert model_used(bundle, tmp_path, "--model", "test") == "test"
    s = script({"workers": {"main": [{"text": "ok"}]}})
    assert model_used(bundle, tmp_path, "--script", str(s)) == "script:main"
    assert model_used(bundle, tmp_path, env={"LLM_DO_MODEL": "test"}) == "test"


def models_started(bundle: Path, tmp_path: Path, env: dict[str, str | None] | None = None) -> dict[str, str]:
    """worker -> the model its worker_started event names, for a run that must succeed."""
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "hi", "--events", events, env=env)
    assert result.exit_code == 0, result.stderr
    return {e["worker"]: e["model"] for e in of_kind(read_events(events), "worker_started")}


def test_a_callee_without_a_model_runs_on_its_callers_model(build, tmp_path: Path) -> None:
    """Before the project default and LLM_DO_MODEL: the real default here would fail the run
    (no key), so only the caller's `test` lets the callee answer."""
    bundle = build({
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"},
                         "defaults": {"model": REAL}},
        "main.worker": worker("model: test\ntoolsets: [helper]", "Lead."),
        "helper.worker": worker("", "Help."),
    })
    assert models_started(bundle, tmp_path, env={"LLM_DO_MODEL": REAL}) == {"main": "test", "helper": "test"}


def test_the_inherited_model_passes_down_a_chain(build, tmp_path: Path) -> None:
    bundle = build({
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
        "main.worker": worker("model: test\ntoolsets: [middle]", "Lead."),
        "middle.worker": worker("toolsets: [leaf]", "Pass on."),
        "leaf.worker": worker("", "Answer."),
    })
    assert models_started(bundle, tmp_path) == {"main": "test", "middle": "test", "leaf": "test"}


def test_a_callers_model_outside_compatible_models_is_passed_over_for_the_default(build, tmp_path: Path) -> None:
    bundle = build({
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
        "main.worker": worker(f"model: {REAL}\ntoolsets: [helper]", "Lead."),
        "helper.worker": worker("compatible_models: ['anthropic:*']", "Help."),
    })
    from llm_do.runtime.bundle import load_bundle
    from llm_do.runtime.models import choose_model

    helper = load_bundle(bundle).worker("helper")
    assert choose_model(helper, "anthropic:claude-x", None, REAL) == "anthropic:claude-x"
    assert choose_model(helper, None, None, "anthropic:claude-y") == "anthropic:claude-y"


def test_a_worker_with_no_model_run_on_its_own_fails_naming_it(build) -> None:
    """At the top of a run there is no caller to inherit from."""
    from llm_do.runtime import RunFailed, Runtime

    bundle = build({
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
        "main.worker": worker("model: test\ntoolsets: [helper]", "Lead."),
        "helper.worker": worker("", "Help."),
    })
    with pytest.raises(RunFailed, match="worker 'helper' has no model"):
        Runtime.load(bundle).run("hi", worker="helper")


def test_an_unknown_model_name_is_one_clear_line(build) -> None:
    bundle = build(project(""))
    result = run_cli("exec", bundle, "hi", "--model", "nonsense")
    assert result.exit_code == 2  # a usage error, found before anything runs (as build's M001)
    assert "'nonsense'" in one_line_error(result)

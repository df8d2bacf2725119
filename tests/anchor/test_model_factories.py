"""`llm_do.register_model_factory`: a project's Python registers a provider prefix; the build
accepts model names with it and records the module, the runtime imports it and builds with it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from llm_do.runtime import model_factories
from llm_do.runtime.bundle import load_bundle
from llm_do.runtime.runtime import Runtime
from tests.support.cli import run_cli, worker, write_project

PROVIDERS_PY = """
    from pydantic_ai.models.test import TestModel

    from llm_do import register_model_factory


    def build(name: str) -> TestModel:
        return TestModel(custom_output_text=f"built by the factory for {name}")


    register_model_factory("my-gateway", build)
    """


def gateway_project(root: Path, model: str = "my-gateway:small") -> Path:
    return write_project(root, {
        "project.json": {"version": 1, "entry": {"worker": "main"}, "worker_files": ["main.worker"],
                         "python_files": ["providers.py"]},
        "main.worker": worker(f"model: {model}", "Answer."),
        "providers.py": PROVIDERS_PY,
    })


@pytest.mark.process
def test_the_build_accepts_the_prefix_and_the_run_builds_the_model_with_the_factory(tmp_path: Path) -> None:
    root = gateway_project(tmp_path / "p")
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stderr
    assert json.loads((root / "bundle.lock").read_text())["model_factories"] == {"my-gateway": "providers"}
    run = run_cli("exec", root / "bundle.lock", "hi", input="")
    assert run.exit_code == 0, run.stderr
    assert run.stdout.strip() == "built by the factory for small"


def test_lint_without_importing_reads_the_registration(tmp_path: Path) -> None:
    root = gateway_project(tmp_path / "p")
    result = run_cli("lint", root, "--no-import", "--format", "json")
    assert result.exit_code == 0, result.stdout
    # "read without importing" and, the gateway's model having no known price, B002: no M001
    assert [d["code"] for d in result.json()["diagnostics"]] == ["B002", "Y006"]


@pytest.mark.process
def test_a_prefix_nobody_registers_is_still_m001(tmp_path: Path) -> None:
    root = gateway_project(tmp_path / "p", model="other-gateway:small")
    result = run_cli("lint", root, "--format", "json")
    assert result.exit_code == 1
    assert [d["code"] for d in result.json()["diagnostics"]] == ["M001"]


def test_a_project_without_factories_has_no_model_factories_key(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {"main.worker": worker("model: test", "Hi.")})
    assert run_cli("build", root).exit_code == 0
    assert "model_factories" not in json.loads((root / "bundle.lock").read_text())


@pytest.mark.process
def test_registering_a_prefix_of_pydantic_ai_fails_the_import(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "project.json": {"version": 1, "entry": {"worker": "main"}, "worker_files": ["main.worker"],
                         "python_files": ["providers.py"]},
        "main.worker": worker("model: test", "Hi."),
        "providers.py": "from llm_do import register_model_factory\nregister_model_factory('openai', print)\n",
    })
    result = run_cli("lint", root, "--format", "json")
    (y001,) = result.json()["diagnostics"]
    assert (y001["code"], y001["file"], y001["line"]) == ("Y001", "providers.py", 2)
    assert "pydantic-ai's own" in y001["message"]


def test_a_module_imported_afresh_registers_again_but_another_factory_is_refused() -> None:
    def build(name: str) -> str:
        return name

    def rebuilt(name: str) -> str:
        return name

    model_factories.register_model_factory("afresh-gateway", build)
    again = type(build)(build.__code__, build.__globals__)  # the same def run again
    model_factories.register_model_factory("afresh-gateway", again)
    assert model_factories.factory_for("afresh-gateway:x") == (again, "x")
    with pytest.raises(ValueError, match="already registered"):
        model_factories.register_model_factory("afresh-gateway", rebuilt)
    model_factories.register_model_factory("afresh-gateway", rebuilt, replace=True)
    assert model_factories.factory_for("afresh-gateway:x") == (rebuilt, "x")


@pytest.mark.parametrize("prefix, problem", [("", "non-empty"), ("a:b", "':'"), ("test", "pydantic-ai's own")])
def test_bad_prefixes_are_refused(prefix: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        model_factories.register_model_factory(prefix, print)


@pytest.mark.process
def test_the_anchors_custom_provider_builds_an_openai_compatible_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """examples/custom_provider: LLM_DO_MODEL names its own prefix; building the model contacts nothing."""
    root = tmp_path / "custom_provider"
    shutil.copytree(Path(__file__).parent / "projects" / "custom_provider", root)
    assert run_cli("build", root).exit_code == 0
    monkeypatch.setenv("LLM_DO_MODEL", "ollama-local:llama3")
    runtime = Runtime(load_bundle(root / "bundle.lock"))
    model, label = runtime.calls.model(runtime.bundle.worker("main"))
    assert label == "ollama-local:llama3"
    assert (type(model).__name__, model.model_name, model.system) == ("OpenAIChatModel", "llama3", "ollama-local")
    assert model.base_url.startswith("http://127.0.0.1:11434/v1")

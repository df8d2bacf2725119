"""A model that cannot be built or reached is told in llm-do's words: the key to set, the extra to
install, the worker and model (and address) that failed; never pydantic-ai's `Agent('test')`."""

from __future__ import annotations

import sys

import pytest

from llm_do.runtime import RunFailed, Runtime, RuntimeConfig
from llm_do.runtime.models import ModelProblem, build_model
from tests.support.cli import worker


def test_a_missing_api_key_names_the_variable_and_how_to_run_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelProblem) as caught:
        build_model("openai:gpt-4o-mini")
    assert str(caught.value) == ("cannot use model 'openai:gpt-4o-mini': set OPENAI_API_KEY (to run offline: --model test, "
                                 "or --script FILE, or RuntimeConfig(model='test'))")


def test_a_missing_provider_package_names_the_llm_do_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # not installed, whatever this environment has
    with pytest.raises(ModelProblem) as caught:
        build_model("anthropic:claude-sonnet-4-5")
    assert str(caught.value) == ("cannot use model 'anthropic:claude-sonnet-4-5': its provider's package is not installed: "
                                 "pip install 'llm-do[anthropic]'")


def test_an_unreachable_model_names_the_worker_the_model_and_the_address(build, monkeypatch: pytest.MonkeyPatch) -> None:
    import pydantic_ai.models
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    bundle = build({"project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
                    "main.worker": worker("", "Hi.")})
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # to 127.0.0.1 only, and refused there
    client = AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="unused", max_retries=0)  # port 9: nothing listens
    model = OpenAIChatModel("gpt-x", provider=OpenAIProvider(openai_client=client))
    with pytest.raises(RunFailed) as caught:
        Runtime.load(bundle, RuntimeConfig(model=model)).run("hi")
    assert str(caught.value) == ("worker 'main' could not use model 'gpt-x' at http://127.0.0.1:9/v1/chat/completions: "
                                 "ModelConnectionError: Connection error.")

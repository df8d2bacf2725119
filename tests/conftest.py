"""Every test is offline: pydantic-ai refuses real model requests for the whole session."""

from __future__ import annotations

import pydantic_ai.models
import pytest

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False


@pytest.fixture(autouse=True)
def _no_model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's LLM_DO_MODEL or API keys must not change what a test sees."""
    monkeypatch.delenv("LLM_DO_MODEL", raising=False)
    monkeypatch.setenv("LLM_DO_IMPORT_TIMEOUT", "60")

"""`OpenAICompatibleProvider` as `.agent`-era projects construct it.

llm-do 1.x had its own provider for OpenAI-compatible servers (Ollama, vLLM, gateways), built with
keywords only and needing no API key. pydantic-ai 2 ships one that takes the service name first;
this subclass keeps the old call working (`OpenAICompatibleProvider(base_url=..., name=...)`) on
top of pydantic-ai's. Importing it imports the `openai` SDK, so only projects that use it pay.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai.providers.openai_compatible import OpenAICompatibleProvider as _PydanticAIProvider

__all__ = ["OpenAICompatibleProvider"]


class OpenAICompatibleProvider(_PydanticAIProvider):
    """A provider for any service with an OpenAI-compatible API, at `base_url`."""

    def __init__(
        self,
        name: str = "openai-compatible",
        *,
        base_url: str,
        api_key: str | None = "unused",
        http_client: Any = None,
        **kwargs: Any,
    ) -> None:
        # The 1.x default api_key: the OpenAI SDK needs one, local servers ignore it.
        super().__init__(name, base_url=base_url.rstrip("/"), api_key=api_key, http_client=http_client, **kwargs)

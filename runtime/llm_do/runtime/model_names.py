"""Model names as pydantic-ai reads them (`provider:model`), checked without importing pydantic-ai.

The provider list mirrors `pydantic_ai.providers.infer_provider_class`; a test keeps the two in step.
Standard library only: `build` (M001) and `exec --model` give the same message and hint from here.
"""

from __future__ import annotations

import fnmatch

KNOWN_PROVIDERS: frozenset[str] = frozenset(
    """
    openai openai-chat openai-responses openai-decisions openai-codex openai-chatgpt deepseek openrouter
    vercel azure azure-responses google google-decisions google-cloud bedrock bedrock-mantle groq anthropic
    mistral cerebras cohere system-one crusoe elevenlabs xai moonshotai meta fireworks together heroku
    huggingface ollama github github-copilot litellm vllm nebius ovhcloud alibaba sambanova snowflake
    """.split()
)
RENAMED_PROVIDERS: dict[str, str] = {
    "google-gla": "google",
    "google-vertex": "google-cloud",
    "grok": "xai",
}
SPECIAL_MODELS = frozenset({"test"})
"""Names pydantic-ai resolves without a provider: `test` is its TestModel."""


def model_problem(name: str, registered: frozenset[str] | set[str] = frozenset()) -> tuple[str, str | None] | None:
    """(message, hint) when neither pydantic-ai nor a model factory the project registers
    (`registered` prefixes) would know the model's provider; None when one would."""
    if name in SPECIAL_MODELS:
        return None
    provider, sep, model = name.partition(":")
    if not sep:
        return f"model '{name}' has no provider prefix", f"write it as `provider:{name}`, e.g. `openai:{name}`"
    if provider in registered:
        return None if model else (f"model '{name}' names no model after the provider", None)
    if provider.startswith("gateway/"):
        provider = provider.removeprefix("gateway/")
    if provider in RENAMED_PROVIDERS:
        new = RENAMED_PROVIDERS[provider]
        return f"provider '{provider}' was renamed in pydantic-ai 2", f"write `{new}:{model}`"
    if provider not in KNOWN_PROVIDERS:
        return f"unknown model provider '{provider}' in '{name}'", _did_you_mean(provider)
    if not model:
        return f"model '{name}' names no model after the provider", None
    return None


def _did_you_mean(provider: str) -> str | None:
    import difflib

    match = difflib.get_close_matches(provider, sorted(KNOWN_PROVIDERS), n=1) or [
        p for p in sorted(KNOWN_PROVIDERS) if p == provider.lower()]
    return f"did you mean '{match[0]}'?" if match else None


def matches_any(model: str, patterns: list[str]) -> bool:
    """Case-sensitive fnmatch, as `compatible_models` is specified."""
    return any(fnmatch.fnmatchcase(model, p) for p in patterns)

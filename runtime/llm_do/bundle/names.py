"""Names the bundle holds and both sides check alike: host service names and model names.

- Service names (`service:NAME` grants): the compiler checks a module's declarations and the runtime
  `RuntimeConfig(services=...)` with the same rule, so a name the runtime would refuse never builds.
- Model names as pydantic-ai reads them (`provider:model`), checked without importing pydantic-ai.
  The provider list mirrors `pydantic_ai.providers.infer_provider_class`; a test keeps the two in
  step. `build` (M001) and `exec --model` give the same message and hint from here.

Standard library only: the compiler and the runtime's start-up path import it.
"""

from __future__ import annotations

import fnmatch

SERVICE_KIND = "service"
"""The capability kind a module declares a service need with: `service:NAME`."""

RESERVED = frozenset({"get", "keys", "items", "values", "require", "runtime", "references", "services"})
"""Names a service may not take: the registry's own methods (attribute access would hide them) and
what `ctx.deps` already calls `runtime`, `references` and `services`."""


def service_name_problem(name: object) -> str | None:
    """Why `name` cannot name a service, or None: a Python identifier (attribute access), not
    private, not reserved."""
    if not isinstance(name, str) or not name.isidentifier():
        return f"service name {name!r} is not a Python identifier"
    if name.startswith("_"):
        return f"service name {name!r} starts with '_'; such names are reserved"
    if name in RESERVED:
        return f"service name {name!r} is reserved ({', '.join(sorted(RESERVED))})"
    return None


# --- model names ----------------------------------------------------------------------------------

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

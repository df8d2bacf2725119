"""The environment variables a model's provider reads its credentials from.

A worker's model implies them (`env:OPENAI_API_KEY`), so a change of model shows in `capabilities`
and `diff` as what the run will need from its environment. The names are pydantic-ai's providers'
(`pydantic_ai/providers/*.py`); a provider not listed here implies nothing rather than a guess.
"""

from __future__ import annotations

PROVIDER_ENV: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "openai-chat": ("OPENAI_API_KEY",),
    "openai-responses": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "google": ("GOOGLE_API_KEY",),
    "google-cloud": ("GOOGLE_APPLICATION_CREDENTIALS",),
    "azure": ("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT"),
    "bedrock": ("AWS_REGION",),
    "groq": ("GROQ_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "cohere": ("CO_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "together": ("TOGETHER_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "moonshotai": ("MOONSHOTAI_API_KEY",),
    "heroku": ("HEROKU_INFERENCE_KEY",),
    "huggingface": ("HF_TOKEN",),
    "github": ("GITHUB_API_KEY",),
    "nebius": ("NEBIUS_API_KEY",),
    "ovhcloud": ("OVHCLOUD_API_KEY",),
    "alibaba": ("ALIBABA_API_KEY",),
    "sambanova": ("SAMBANOVA_API_KEY",),
    "ollama": ("OLLAMA_BASE_URL",),
    "vllm": ("VLLM_BASE_URL",),
}


def model_env(model: str | None) -> tuple[str, ...]:
    """The variables `provider:model` (or a `compatible_models` pattern) needs; () when the
    provider is unknown, a wildcard, or the model is `test`."""
    if not model:
        return ()
    provider, sep, _ = model.partition(":")
    if not sep:
        return ()
    if provider.startswith("gateway/"):
        return ("PYDANTIC_AI_GATEWAY_API_KEY",)
    return PROVIDER_ENV.get(provider, ())


def front_models(model: str | None, compatible_models: list[str] | None, default: str | None) -> list[str]:
    """`capability_grants.worker_model` from the worker's `model` and `compatible_models` and the project's default."""
    if model:
        return [model]
    if compatible_models:
        return list(compatible_models)
    return [default] if default else []


def model_grants(models: list[str]) -> dict[tuple[str, str, str, str], dict[str, str]]:
    """The `env:VAR` grants of a worker that may run on `models` (`capability_grants.worker_model`),
    by their sort key in `WorkerNode.capabilities` (capability, tool, toolset, model)."""
    grants: dict[tuple[str, str, str, str], dict[str, str]] = {}
    for model in models:
        for var in model_env(model):
            grants.setdefault((f"env:{var}", "", "", model), {"capability": f"env:{var}", "model": model})
    return grants


def grant_key(grant: dict[str, object]) -> tuple[str, str, str, str]:
    """Where a grant sorts in `WorkerNode.capabilities`: by capability, tool, toolset, model (absent first)."""
    return (str(grant["capability"]), str(grant.get("tool", "")), str(grant.get("toolset", "")), str(grant.get("model", "")))

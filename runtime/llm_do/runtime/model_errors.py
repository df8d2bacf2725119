"""A model that cannot be built or reached, told in llm-do's words: what to set or install (its
extras, `--model test`), and which worker on which model failed, where pydantic-ai's own text
advises its API (`Agent('test')`, `pip install "pydantic-ai-slim[...]"`) and names no worker."""

from __future__ import annotations

import re

from .errors import RunFailed

LLM_DO_EXTRAS = frozenset({"anthropic"})
"""pydantic-ai-slim groups llm-do has an extra of the same name for (pyproject.toml)."""

_GROUP = re.compile(r"pydantic-ai-slim\[([\w-]+)\]")
_ENV_VAR = re.compile(r"`([A-Z][A-Z0-9_]*)` environment variable")


def unusable_model(model: str, exc: BaseException) -> str:
    """Why `model` cannot be built: its provider's package to install, or its key to set."""
    text = " ".join(str(exc).split())
    group = _GROUP.search(text)
    if group is not None:
        name = group[1]
        install = f"pip install 'llm-do[{name}]'" if name in LLM_DO_EXTRAS else f"pip install 'pydantic-ai-slim[{name}]'"
        return f"cannot use model '{model}': its provider's package is not installed: {install}"
    variable = _ENV_VAR.search(text)
    if variable is not None:
        return (f"cannot use model '{model}': set {variable[1]} (to run offline: --model test, or --script FILE, "
                "or RuntimeConfig(model='test'))")
    return f"cannot use model '{model}': {text}"


def model_failed(exc: BaseException, worker: str, label: str) -> RunFailed:
    """A request of `worker` to its model failed (unreachable, refused, rate limited): the worker,
    the model and, when known, the address it tried."""
    url = _url(exc.__cause__)
    where = f" at {url}" if url else ""
    text = " ".join(str(exc).split())
    return RunFailed(f"worker '{worker}' could not use model '{label}'{where}: {type(exc).__name__}: {text}")


def _url(cause: BaseException | None) -> str | None:
    """The address of the request a transport error was raised for (httpx and the provider SDKs
    keep it on `request`; reading it where none was set raises)."""
    try:
        request = getattr(cause, "request", None)
        url = getattr(request, "url", None)
    except Exception:
        return None
    return str(url) if url else None

"""Model factories a project registers for its own provider prefixes (`register_model_factory`).

A project's Python calls `register_model_factory("my-gateway", build)` when it is imported; a model
named `my-gateway:NAME` is then `build("NAME")`. The build learns the prefixes in its introspection
subprocess and records which module registers each (the bundle's `model_factories`); the runtime
imports that module before it builds such a model. Standard library only until a prefix is checked
against pydantic-ai's own providers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

ModelFactory = Callable[[str], Any]
"""Model name after the prefix -> a pydantic-ai `Model`."""

_FACTORIES: dict[str, ModelFactory] = {}


def register_model_factory(provider: str, factory: ModelFactory, *, replace: bool = False) -> None:
    """Build models named `provider:NAME` with `factory(NAME)`.

    The prefix must be new to pydantic-ai (its providers keep their meaning) and registered once,
    unless `replace` is given; the same factory registered again (its module imported afresh, as a
    changed project's is) replaces the old one.
    """
    provider = provider.strip() if isinstance(provider, str) else provider
    if not isinstance(provider, str) or not provider:
        raise ValueError("provider prefix must be a non-empty string")
    if ":" in provider:
        raise ValueError(f"provider prefix {provider!r} must not contain ':'; give the prefix only")
    if not callable(factory):
        raise TypeError(f"the model factory for {provider!r} is not callable")
    if _is_pydantic_ai_provider(provider):
        raise ValueError(f"provider prefix {provider!r} is pydantic-ai's own; choose a prefix of your own")
    if provider in _FACTORIES and not replace and not _same_factory(_FACTORIES[provider], factory):
        raise ValueError(f"a model factory is already registered for {provider!r}; pass replace=True to replace it")
    _FACTORIES[provider] = factory


def registered_prefixes() -> list[str]:
    return sorted(_FACTORIES)


def factory_for(model: str) -> tuple[ModelFactory, str] | None:
    """(factory, name after the prefix) when a registered prefix names the model."""
    provider, sep, name = model.partition(":")
    factory = _FACTORIES.get(provider) if sep else None
    return (factory, name) if factory is not None else None


def _same_factory(old: ModelFactory, new: ModelFactory) -> bool:
    def name(f: Any) -> tuple[Any, Any]:
        return getattr(f, "__module__", None), getattr(f, "__qualname__", None)

    return old is new or (name(old) == name(new) and name(new) != (None, None))


def _is_pydantic_ai_provider(provider: str) -> bool:
    if provider == "test" or provider.startswith("gateway/"):
        return True
    from pydantic_ai.providers import infer_provider_class

    try:
        infer_provider_class(provider)
    except ValueError:
        return False
    return True

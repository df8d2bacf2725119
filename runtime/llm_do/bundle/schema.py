"""The bundle's JSON Schema and a validator of whole bundles, generated from `model`'s TypedDicts.

For spec/generate.py (runtime/llm_do/cli/schemas/bundle.schema.json) and the tests only: it imports pydantic,
and nothing on a command's path validates a whole bundle (a verified lock is read as written).
"""

from __future__ import annotations

import importlib.util
import re
import sys
import types
from collections.abc import Mapping
from functools import cache
from typing import Annotated

import typing_extensions
from pydantic import Field, JsonValue, TypeAdapter

from . import model

_STDLIB_TYPING = "from typing import Any, Literal, NotRequired, TypedDict\n"
_FOR_PYDANTIC = "from typing import Any, Literal\n\nfrom typing_extensions import NotRequired, TypedDict\n"
_NOT_REQUIRED = re.compile(r"NotRequired\[(.+)\](,?)$", re.MULTILINE)


@cache
def _model() -> types.ModuleType:
    """`model` as pydantic reads it, with what `model` says in words made pydantic's own:

    - Before Python 3.12 pydantic needs typing_extensions' TypedDict, which `model` (standard
      library only) does not import; so its source, the one declaration, runs again as a module of
      its own with that import line changed (always, so `model` itself is never altered).
    - Every node is closed: a key the model does not declare is invalid (`additionalProperties`).
    - An absent key that may be null is null, an absent flag false (the schema's `default`s).
    - `op` tells a `Condition`'s three kinds apart (the schema's `discriminator`).
    """
    spec = importlib.util.find_spec(model.__name__)
    assert spec is not None and spec.loader is not None and spec.origin is not None
    source = spec.loader.get_source(model.__name__)  # type: ignore[attr-defined]
    if source is None or _STDLIB_TYPING not in source:
        raise RuntimeError(f"{model.__name__} no longer imports {_STDLIB_TYPING.strip()!r}; update schema._model")
    module = types.ModuleType(f"{__package__}._model_for_pydantic")
    module.__package__ = __package__
    sys.modules[module.__name__] = module  # pydantic resolves the annotations in its namespace
    module.Annotated, module.Field = Annotated, Field  # type: ignore[attr-defined]
    source = _NOT_REQUIRED.sub(_with_default, source.replace(_STDLIB_TYPING, _FOR_PYDANTIC, 1))
    exec(compile(source, spec.origin, "exec"), module.__dict__)
    module.Condition = Annotated[module.Condition, Field(discriminator="op")]  # type: ignore[attr-defined]
    for value in list(vars(module).values()):
        if typing_extensions.is_typeddict(value) and value.__module__ == module.__name__:
            value.__pydantic_config__ = {"extra": "forbid"}
    return module


def _with_default(match: re.Match[str]) -> str:
    """`NotRequired[X | None]` -> with `Field(default=None)`, `NotRequired[bool]` -> `False`."""
    inner, comma = match.groups()
    default = "None" if inner.endswith(" | None") else "False" if inner == "bool" else None
    return match.group(0) if default is None else f"NotRequired[Annotated[{inner}, Field(default={default})]]{comma}"


@cache
def bundle_adapter() -> TypeAdapter[model.Bundle]:
    return TypeAdapter(_model().Bundle)


def validate(data: str | bytes | Mapping[str, object]) -> model.Bundle:
    """The bundle as `model` declares it; raises pydantic's ValidationError when it is not."""
    adapter = bundle_adapter()
    if isinstance(data, (str, bytes)):
        return adapter.validate_json(data)
    return adapter.validate_python(data)


def json_schema() -> dict[str, JsonValue]:
    """The JSON Schema of a bundle (without the `$schema`, `$id`, title and description
    spec/generate.py gives it)."""
    return bundle_adapter().json_schema(by_alias=True)

"""Calls feel like Python calls: keyword arguments, a plain string (for `input`), a pydantic model
or a mapping, each normalized to the callee's input schema."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from llm_do.bundle.errors import InputProblem

from .args import WorkerArgs


class WorkerInputProblem(InputProblem, ValueError):
    """Arguments that do not fit the worker's input schema."""


def normalize_input(worker: str, schema: type[WorkerArgs], args: tuple[object, ...], kwargs: dict[str, object]) -> WorkerArgs:
    if len(args) > 1 or (args and kwargs):
        raise WorkerInputProblem(f"worker '{worker}' takes one positional input or keyword arguments, not both")
    if args:
        value = args[0]
        if isinstance(value, schema):
            return value
        if isinstance(value, str):
            if "input" not in schema.model_fields:
                fields = ", ".join(schema.model_fields) or "no fields"
                raise WorkerInputProblem(f"worker '{worker}' takes {fields}, not a plain string; pass keyword arguments")
            data: Any = {"input": value}
        elif isinstance(value, BaseModel):
            data = value.model_dump()
        elif isinstance(value, Mapping):
            data = dict(value)
        else:
            raise WorkerInputProblem(f"worker '{worker}' takes a string, a mapping or a {schema.__name__}, not {type(value).__name__}")
    else:
        data = kwargs
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}" for e in exc.errors(include_url=False)
        )
        raise WorkerInputProblem(f"invalid input for worker '{worker}': {problems}") from None

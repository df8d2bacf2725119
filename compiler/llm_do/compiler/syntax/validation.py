"""Validate parsed data against a pydantic model and turn its errors into located diagnostics."""

from __future__ import annotations

import types
import typing
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from .. import codes
from ..diagnostics import Diagnostic, Location, diagnostic
from ..suggest import did_you_mean
from .positions import Path, Positions

M = TypeVar("M", bound=BaseModel)


_REPAIR_ROUNDS = 8


def validate(
    model: type[M], data: Any, file: str, positions: Positions, *, where: str = ""
) -> tuple[M | None, list[Diagnostic]]:
    """Validate `data`: one diagnostic per offending place.

    On failure the offending keys are dropped and validation is tried again, so the later stages
    can still check the rest (one lint reports every problem); the instance returned then comes
    with error diagnostics. None when no repair makes the data valid.
    """
    try:
        return model.model_validate(data), []
    except ValidationError as exc:
        diagnostics = _diagnostics(model, data, exc, file, positions, where)
        errors = exc.errors(include_url=False)
    repaired = data
    for _ in range(_REPAIR_ROUNDS):
        repaired = _without(repaired, [_data_path(repaired, e["loc"], e["type"]) for e in errors])
        if repaired is None:
            break
        try:
            return model.model_validate(repaired), diagnostics
        except ValidationError as exc:
            errors = exc.errors(include_url=False)
    return None, diagnostics


def _without(data: Any, paths: list[Path]) -> Any:
    """A copy of `data` without the values at `paths`; None when a path cannot be dropped."""
    import copy

    data = copy.deepcopy(data)
    for path in sorted(set(paths), key=lambda p: (len(p), str(p)), reverse=True):
        if not path:
            return None
        parent = data
        for part in path[:-1]:
            try:
                parent = parent[part]
            except (KeyError, IndexError, TypeError):
                parent = None
                break
        last = path[-1]
        if isinstance(parent, dict) and last in parent:
            del parent[last]
        elif isinstance(parent, list) and isinstance(last, int) and 0 <= last < len(parent):
            del parent[last]
        else:
            return None
    return data


def _diagnostics(
    model: type[BaseModel], data: Any, exc: ValidationError, file: str, positions: Positions, where: str
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    seen: set[Path] = set()
    for err in exc.errors(include_url=False):
        path = _data_path(data, err["loc"], err["type"])
        if path in seen:
            continue
        seen.add(path)
        out.append(_one(model, err, path, file, positions, where))
    return out


def _data_path(data: Any, loc: tuple[str | int, ...], kind: str) -> Path:
    """The error's path through the actual data: pydantic adds union-member tags we drop."""
    path: list[str | int] = []
    current = data
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        if isinstance(current, dict) and part in current:
            path.append(part)
            current = current[part]
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            path.append(part)
            current = current[part]
        elif last and kind in ("missing", "extra_forbidden"):
            path.append(part)
        else:
            continue
    return tuple(path)


def _dotted(path: Path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _one(model: type[BaseModel], err: ErrorDetails, path: Path, file: str, positions: Positions, where: str) -> Diagnostic:
    kind = err["type"]
    prefix = f"{where} " if where else ""
    if kind == "extra_forbidden":
        key = str(path[-1])
        pos = positions.key(path)
        known = _keys_at(model, path[:-1])
        return diagnostic(
            codes.UNKNOWN_KEY,
            f"unknown key '{key}'" + (f" in {prefix}{_dotted(path[:-1])}" if path[:-1] else (f" in {where}" if where else "")),
            Location(file=file, line=pos.line, column=pos.column),
            hint=did_you_mean(key, known) or (f"known keys: {', '.join(sorted(known))}" if known else None),
        )
    if kind == "missing":
        pos = positions.value(path[:-1])
        return diagnostic(
            codes.INVALID_VALUE,
            f"missing required key '{path[-1]}'" + (f" in {_dotted(path[:-1])}" if path[:-1] else ""),
            Location(file=file, line=pos.line, column=pos.column),
        )
    pos = positions.value(path)
    at = Location(file=file, line=pos.line, column=pos.column)
    if path == ("version",) and kind == "literal_error":
        return diagnostic(codes.UNSUPPORTED_VERSION, f"unsupported version {err.get('input')!r}; this compiler reads version 1", at,
                          hint='write "version": 1')
    if path == ("name",) and kind == "string_pattern_mismatch":
        return diagnostic(
            codes.INVALID_NAME,
            f"invalid worker name {err.get('input')!r}: names match [A-Za-z_][A-Za-z0-9_-]*",
            at,
        )
    message = err["msg"]
    if message.startswith("Value error, "):
        message = message[len("Value error, "):]
    return diagnostic(codes.INVALID_VALUE, f"{_dotted(path) or 'value'}: {message[0].lower() + message[1:]}", at)


def _keys_at(model: Any, path: Path) -> list[str]:
    """Field names of the model reached by following `path` through the annotations."""
    current: Any = model
    for part in path:
        current = _step(current, part)
        if current is None:
            return []
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _unwrap(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            if arg is not type(None):
                inner = _unwrap(arg)
                if isinstance(inner, type) and issubclass(inner, BaseModel):
                    return inner
        return tp
    return tp


def _step(tp: Any, part: str | int) -> Any:
    tp = _unwrap(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        field = tp.model_fields.get(part) if isinstance(part, str) else None
        return field.annotation if field else None
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is list and isinstance(part, int):
        return args[0] if args else None
    if origin is dict and isinstance(part, str):
        return args[1] if len(args) == 2 else None
    return None

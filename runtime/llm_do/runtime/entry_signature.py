"""Which parameter of an entry function is the context and which the input.

Shared by the build (the introspection subprocess reports what it finds) and the run, so both
read a signature the same way: a parameter annotated with the context type (`CallContext` or a
subclass), or named `ctx` / `runtime`, is the context; the other one is the input, normalized to
its annotation when that is a `WorkerArgs` subclass, else to `PromptInput`. The `.agent` era's
`main(input_data, runtime)` and `main(ctx, input)` therefore both work.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, NamedTuple

from llm_do.bundle.errors import LlmDoError

if TYPE_CHECKING:
    from .args import WorkerArgs

CONTEXT_NAMES = ("ctx", "runtime")


class EntrySignatureProblem(LlmDoError, ValueError):
    """A function that cannot be an entry: the message says why, in one line."""


class EntryParams(NamedTuple):
    context: str | None
    """The parameter that receives the context, if any."""
    input: str | None
    """The parameter that receives the input, if any."""
    input_class: type[WorkerArgs] | None
    """Its annotation when that is a WorkerArgs subclass; None means PromptInput."""
    is_async: bool
    order: tuple[str, ...]
    """The context and input parameters in the order the function takes them."""


def _hints(func: object) -> dict[str, object]:
    """Annotations, resolved when they are strings (`from __future__ import annotations`); an
    annotation that does not resolve counts as none."""
    import typing

    try:
        return typing.get_type_hints(func)
    except Exception:
        return {k: v for k, v in getattr(func, "__annotations__", {}).items() if not isinstance(v, str)}


def _is_context_type(annotation: object) -> bool:
    from .call_scope import CallContext

    return inspect.isclass(annotation) and issubclass(annotation, CallContext)


def entry_params(func: object) -> EntryParams:
    """Read an entry function's signature; raises EntrySignatureProblem when it cannot be one."""
    from .args import WorkerArgs

    if not inspect.isfunction(func) and not inspect.iscoroutinefunction(func):
        raise EntrySignatureProblem(f"is a {type(func).__name__}, not a function")
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError) as exc:
        raise EntrySignatureProblem(f"has no readable signature: {exc}") from None
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required_other = [p for p in params if p not in positional and p.default is p.empty
                      and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if len(positional) > 2 or required_other:
        raise EntrySignatureProblem("takes more than a context and an input")
    hints = _hints(func)
    context = next((p.name for p in positional if _is_context_type(hints.get(p.name))), None)
    if context is None:
        context = next((p.name for p in positional if p.name in CONTEXT_NAMES), None)
    others = [p.name for p in positional if p.name != context]
    if len(others) > 1:
        raise EntrySignatureProblem(
            f"has two parameters and neither is the context: annotate one with CallContext or name it {' or '.join(CONTEXT_NAMES)}")
    input_name = others[0] if others else None
    annotation = hints.get(input_name) if input_name else None
    input_class = annotation if inspect.isclass(annotation) and issubclass(annotation, WorkerArgs) else None
    order = tuple(p.name for p in positional)
    return EntryParams(context, input_name, input_class, inspect.iscoroutinefunction(func), order)

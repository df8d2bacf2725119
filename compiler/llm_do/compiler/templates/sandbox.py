"""The Jinja environment instructions render in: sandboxed, and bounded in what one expression builds.

Jinja's sandbox stops attribute tricks and caps `range()`, but `'a' * 10**9`, `10**10**9` or
`'x'|center(10**9)` still ask Python for gigabytes or hours. Here the repetition and power
operators check the size of their result first, and no call or filter is handed an integer
beyond the rendered-size limit (a width, count or length that large cannot end in instructions
of at most that size). Anything refused is a SecurityError, reported like any rendering failure.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from ..syntax.limits import MAX_RENDERED_CHARS

_MAX_POWER_BITS = 64 * 1024
"""The largest integer `**` may make: about 20000 digits, far more than instructions print."""


def _check_size(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_RENDERED_CHARS:
            raise SecurityError(f"the argument {value} is larger than the {MAX_RENDERED_CHARS} characters instructions may have")


def _bounded(func: Any) -> Any:
    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        _check_size(args, kwargs)
        return func(*args, **kwargs)

    return call


class BoundedSandbox(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset(["*", "**"])

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.filters = {name: _bounded(f) for name, f in self.filters.items()}

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            _check_repetition(left, right)
            _check_repetition(right, left)
        elif operator == "**":
            _check_power(left, right)
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 (Jinja's signature)
        _check_size(args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)


def _check_repetition(sequence: Any, count: Any) -> None:
    if isinstance(sequence, str | list | tuple | bytes) and isinstance(count, int) and not isinstance(count, bool):
        if len(sequence) * count > MAX_RENDERED_CHARS:
            raise SecurityError(f"repeating {len(sequence)} characters or items {count} times makes more than the "
                                f"{MAX_RENDERED_CHARS} instructions may have")


def _check_power(base: Any, exponent: Any) -> None:
    if isinstance(base, int) and isinstance(exponent, int) and abs(base) > 1 and exponent > 0:
        if exponent * math.log2(abs(base)) > _MAX_POWER_BITS:
            raise SecurityError(f"{base} ** {exponent} is a number of more than {_MAX_POWER_BITS} bits")

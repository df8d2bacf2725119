"""The limits on what the compiler reads, in one place (spec/language.md, "Limits", says the same).

Inputs can be pathological: a log file named like a template, JSON nested a million deep, YAML
aliases that expand to billions of values. Each limit is far beyond what a project needs and
checked before the code that would recurse, allocate or loop over such an input.
"""

from __future__ import annotations

import re

MAX_FILE_BYTES = 4 * 1024 * 1024
"""The largest project file (worker, manifest, template, `file()`, Python) read: 4 MiB."""

MAX_NESTING = 100
"""The deepest nesting of lists and mappings in project.json and in front matter."""

MAX_YAML_VALUES = 100_000
"""The most values front matter may expand to through YAML aliases."""

MAX_PATTERN_CHARS = 1000
"""The longest glob pattern (in `worker_files` and `compatible_models`): Python compiles a pattern
into a regular expression, at about three seconds per megabyte."""

MAX_RENDERED_CHARS = 4 * 1024 * 1024
"""The longest rendered instructions, and the largest string or list a template may build."""


_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]')
"""A string (skipped; an unterminated one runs to the end) or a bracket."""


def json_nesting_overflow(text: str, limit: int = MAX_NESTING) -> int | None:
    """The offset of the first `[` or `{` nested deeper than `limit` in JSON text, or None.

    A scan run before the recursive parser, so depth costs a diagnostic rather than a
    RecursionError. Free when the text has few brackets at all."""
    if text.count("[") + text.count("{") <= limit:
        return None
    depth = 0
    for m in _JSON_TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > limit:
                return m.start()
        elif c in "]}":
            depth -= 1
    return None


MAX_TEMPLATE_BLOCKS = 20
"""The deepest nesting of block tags (`{% for %}`, `{% if %}`, `{% macro %}`, ...) in a template:
Jinja compiles a template to Python, which allows 20 nested loops."""

MAX_TEMPLATE_EXPRESSION_DEPTH = 40
"""The deepest expression in a template, counting brackets and the operators, filters, attributes
and calls applied to each other: Jinja's parser and code generator recurse once or more per level,
so a deeper expression would meet Python's recursion limit, at a depth that varies."""

MAX_CONDITION_NESTING = MAX_NESTING
"""The deepest approval-rule condition: `not`s and parenthesized groups inside each other."""

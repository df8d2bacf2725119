"""The nesting limits of templates (limits.py), checked on Jinja's token stream before it parses.

Jinja's parser and code generator recurse, and the Python it generates has limits of its own (20
nested loops, 100 levels of indentation): past them a template fails with a RecursionError or a
SyntaxError in generated code, at a depth that depends on the interpreter's stack. Jinja's lexer
does not recurse, so counting on its tokens finds the first place past llm-do's own limits, with
its line, whatever the input.
"""

from __future__ import annotations

from typing import Any

from ..syntax.limits import MAX_TEMPLATE_BLOCKS, MAX_TEMPLATE_EXPRESSION_DEPTH

_BLOCK_TAGS = frozenset({"for", "if", "macro", "call", "filter", "with", "block", "autoescape", "trans", "set"})
"""Tags with an end tag (`set` only without `=`: `{% set x %}...{% endset %}`)."""

_OPENING = frozenset({"lparen", "lbracket", "lbrace"})
_CLOSING = frozenset({"rparen", "rbracket", "rbrace"})
_BINARY = frozenset({"add", "sub", "mul", "div", "floordiv", "mod", "pow"})
_BINARY_WORDS = frozenset({"and", "or", "not", "in", "is", "if"})
"""Operators that wrap what precedes or follows them (`~` and comparisons build flat nodes)."""
_POSTFIX = frozenset({"dot", "pipe"})
"""Attribute and filter: each wraps the term it follows; so do a call and a subscript, a bracket
right after a term."""
_TERM_ENDS = frozenset({"name", "string", "integer", "float", "rparen", "rbracket", "rbrace"})


class _Frame:
    """One bracket (or the whole tag): operators so far in its current element and term."""

    __slots__ = ("operators", "postfix")

    def __init__(self) -> None:
        self.operators = 0
        self.postfix = 0

    def depth(self) -> int:
        return 1 + self.operators + self.postfix


def nesting_overflow(env: Any, text: str) -> tuple[int, str] | None:
    """The line and message of the first place nested past the limits in template text, or None.

    A bound of the parse tree's depth, counted per tag: each open bracket, and within it each
    operator of the current element plus the postfix chain of the current term."""
    from jinja2.exceptions import TemplateSyntaxError

    blocks: list[str] = []
    frames: list[_Frame] = []
    tag: list[Any] | None = None  # the tokens of the block tag being read (None in `{{ }}`)
    previous = ""
    try:
        for token in env.lexer.tokenize(text):
            kind = token.type
            if kind in ("block_begin", "variable_begin"):
                frames, tag = [_Frame()], ([] if kind == "block_begin" else None)
            elif kind in ("block_end", "variable_end"):
                overflow = _block(blocks, tag) if tag else None
                if overflow:
                    return overflow
                frames, tag = [], None
            elif frames:
                if tag is not None:
                    tag.append(token)
                overflow_message = _expression(frames, token, previous)
                if overflow_message:
                    return token.lineno, overflow_message
            previous = token.type
    except TemplateSyntaxError:
        return None  # the parser reports it, from the same lexer
    return None


def _block(blocks: list[str], tag: list[Any]) -> tuple[int, str] | None:
    name = tag[0].value if tag[0].type == "name" else ""
    if name.startswith("end") and blocks:
        blocks.pop()
    elif name in _BLOCK_TAGS and not (name == "set" and any(t.type == "assign" for t in tag)):
        blocks.append(name)
        if len(blocks) > MAX_TEMPLATE_BLOCKS:
            return tag[0].lineno, f"blocks nested more than {MAX_TEMPLATE_BLOCKS} deep ({{% {name} %}} inside {MAX_TEMPLATE_BLOCKS} others)"
    return None


def _expression(frames: list[_Frame], token: Any, previous: str) -> str | None:
    kind, top = token.type, frames[-1]
    if kind in _BINARY or (kind == "name" and token.value in _BINARY_WORDS):
        top.operators += 1
        top.postfix = 0
    elif kind in ("comma", "colon"):
        top.operators = top.postfix = 0
    elif kind in _CLOSING and len(frames) > 1:
        frames.pop()
        return None
    if kind in _POSTFIX or (kind in ("lparen", "lbracket") and previous in _TERM_ENDS):
        top.postfix += 1
    if kind in _OPENING:
        frames.append(_Frame())
    if sum(f.depth() for f in frames) - 1 > MAX_TEMPLATE_EXPRESSION_DEPTH:  # the tag itself is no level
        return f"an expression nested more than {MAX_TEMPLATE_EXPRESSION_DEPTH} deep (brackets, operators and filters)"
    return None

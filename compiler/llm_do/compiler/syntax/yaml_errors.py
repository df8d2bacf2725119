"""A YAML syntax error in llm-do's words, at the place of the mistake rather than where PyYAML
gave up: an unclosed `[`, `{` or quote where it opened, a tab where it is, a key indented out of
line at the key. PyYAML reports the token it could not fit, often a line later ("while parsing a
flow sequence did not find expected ',' or ']'" under the next key). Pure functions of the text
and the parser's marks; what no rule here recognizes keeps the parser's words and place.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .brackets import closing_bracket
from .hints import yaml_hint


@dataclass(frozen=True)
class Mark:
    """A place in the YAML text, 0-based as PyYAML's marks (`index` in characters)."""

    line: int
    column: int
    index: int


@dataclass(frozen=True)
class YamlSyntaxError:
    message: str
    mark: Mark | None
    hint: str | None = None


_CLOSERS = {"[": "]", "{": "}"}
_COLLECTION = {"[": "list", "{": "mapping"}
_KEY_VALUE = re.compile(r"^(?P<indent> *)(?P<dash>-\s+)?(?P<key>[A-Za-z_][\w-]*):[ \t]+(?P<value>\S.*?)\s*$")
_KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][\w-]*):(?:\s|$)")
_WORDS = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][\w-]*)\s+(?P<value>\S.*?)\s*$")
_ITEM = re.compile(r"^(?P<indent> *)-(?:\s|$)")


def explain(text: str, context: str | None, context_mark: Mark | None, problem: str | None,
            problem_mark: Mark | None, line_offset: int = 0) -> YamlSyntaxError:
    """What went wrong in `text`, from the parts of PyYAML's error (`exc.context`, `exc.problem`
    and their marks): the message (after "invalid YAML: "), its place and a hint. A message that
    names a line counts `line_offset` lines before the text, as positions do."""
    source = _Source(text, text.split("\n"), line_offset)
    error = _Error(context or "", context_mark, problem or "", problem_mark)
    for rule in (_unclosed_collection, _unclosed_quote, _unknown_escape, _tab, _start_character, _indented_key,
                 _value_with_colon, _no_colon, _misplaced_item, _undefined_alias, _duplicate_anchor, _after_quote):
        found = rule(source, error)
        if found is not None:
            return found
    mark = problem_mark or context_mark
    message = " ".join(p for p in (error.context, error.problem) if p) or "invalid YAML"
    hint = None
    if mark is not None:
        hint = yaml_hint(source.line(mark), mark.column + 1, message, source.filled_line_above(mark.line))
    return YamlSyntaxError(message, mark, hint)


@dataclass(frozen=True)
class _Source:
    text: str
    lines: list[str]
    line_offset: int

    def line(self, mark: Mark) -> str:
        return self.lines[mark.line] if 0 <= mark.line < len(self.lines) else ""

    def filled_line_above(self, line: int) -> str | None:
        """The nearest line above `line` that holds something other than a comment."""
        for above in reversed(self.lines[: max(line, 0)]):
            if above.strip() and not above.lstrip().startswith("#"):
                return above
        return None

    def char(self, mark: Mark, length: int = 1) -> str:
        return self.text[mark.index : mark.index + length]


@dataclass(frozen=True)
class _Error:
    """PyYAML's error in parts: what it was doing since `opened`, and what it met at `at`."""

    context: str
    opened: Mark | None
    problem: str
    at: Mark | None


# --- the rules: each recognizes one mistake, or answers None


def _unclosed_collection(source: _Source, error: _Error) -> YamlSyntaxError | None:
    opened = error.opened
    if not error.context.startswith("while parsing a flow") or opened is None or "expected ','" not in error.problem:
        return None
    opener = source.char(opened)
    if opener not in _CLOSERS:
        return None
    kind, closer = _COLLECTION[opener], _CLOSERS[opener]
    if closing_bracket(source.text, opened.index) is not None:
        if error.at is None:
            return None
        return YamlSyntaxError(f"expected ',' or '{closer}' here, in the {kind} opened with '{opener}' on line "
                               f"{opened.line + 1 + source.line_offset}", error.at,
                               "separate the items with ','; quote an item that holds ': ', ',' or a bracket")
    hint = f"end the {kind} with '{closer}'"
    quoted = _quoted_value(source.line(opened), opened.column)
    if quoted:
        hint += f", or quote the value if the '{opener}' is part of its text: {quoted}"
    return YamlSyntaxError(f"the '{opener}' here opens a {kind} that is never closed", opened, hint)


def _unclosed_quote(source: _Source, error: _Error) -> YamlSyntaxError | None:
    opened = error.opened
    if "quoted scalar" not in error.context or opened is None or "unexpected end of stream" not in error.problem:
        return None
    quote = source.char(opened)
    if quote not in ("'", '"'):
        return None
    inside = "\\\"" if quote == '"' else "''"
    return YamlSyntaxError(f"the quote {quote} here is never closed", opened,
                           f"end the value with {quote} (a quote inside it is written {inside})")


def _unknown_escape(source: _Source, error: _Error) -> YamlSyntaxError | None:
    if "unknown escape character" not in error.problem or error.at is None:
        return None
    return YamlSyntaxError(f"'{source.char(error.at, 2)}' is not an escape YAML knows in double quotes", error.at,
                           "use single quotes, where '\\' is plain text, or write '\\\\' for a backslash")


def _tab(source: _Source, error: _Error) -> YamlSyntaxError | None:
    at = error.at
    if at is None or not ("tab character" in error.problem
                          or ("cannot start any token" in error.problem and source.char(at) == "\t")):
        return None
    tab = source.line(at).find("\t")
    return YamlSyntaxError("a tab indents this line: YAML indents with spaces only", _on_line(at, tab) if tab >= 0 else at,
                           "replace the tab with spaces")


def _start_character(source: _Source, error: _Error) -> YamlSyntaxError | None:
    at = error.at
    if at is None or "cannot start any token" not in error.problem or not source.char(at).strip():
        return None
    quoted = _quoted_value(source.line(at), at.column)
    return YamlSyntaxError(f"a value cannot start with '{source.char(at)}' unless it is quoted", at,
                           f"quote the value: {quoted}" if quoted else "quote the value")


def _indented_key(source: _Source, error: _Error) -> YamlSyntaxError | None:
    """A key indented unlike the line above it: PyYAML stops at its colon, or at its first letter."""
    at = error.at
    if at is None or not ("mapping values are not allowed" in error.problem or "did not find expected key" in error.problem):
        return None
    key = _KEY.match(source.line(at))
    above = source.filled_line_above(at.line)
    if key is None or above is None or len(key["indent"]) == _indent(above):
        return None
    spaces = len(key["indent"])
    return YamlSyntaxError(f"'{key['key']}' is indented {_spaces(spaces)}, the line above {_indent(above)}: "
                           f"it lines up with no mapping", _on_line(at, spaces),
                           "the keys of one mapping start in the same column, the front matter's own in the first")


def _value_with_colon(source: _Source, error: _Error) -> YamlSyntaxError | None:
    at = error.at
    if at is None or "mapping values are not allowed" not in error.problem:
        return None
    hint = yaml_hint(source.line(at), at.column + 1, error.problem)
    if hint is None:
        return None
    return YamlSyntaxError("': ' inside a value: YAML reads the text before it as a key", at, hint)


def _no_colon(source: _Source, error: _Error) -> YamlSyntaxError | None:
    opened = error.opened
    if "simple key" not in error.context or opened is None or "expected ':'" not in error.problem:
        return None
    line = source.line(opened)
    words = _WORDS.match(line)
    hint = f"did you mean `{words['key']}: {words['value']}`?" if words else \
        "a key and its value are written `key: value`, a list's item `- value`"
    return YamlSyntaxError(f"'{line.strip()}' is neither `key: value` nor a list item", _on_line(opened, _indent(line)), hint)


def _misplaced_item(source: _Source, error: _Error) -> YamlSyntaxError | None:
    """A list item out of line with the items above it, or a key in the column of a list's items."""
    at = error.at
    if at is None:
        return None
    line = source.line(at)
    if "did not find expected key" in error.problem and _ITEM.match(line):
        items = [_indent(above) for above in reversed(source.lines[: at.line]) if _ITEM.match(above)]
        if items and items[0] != _indent(line):
            return YamlSyntaxError(f"this item is indented {_spaces(_indent(line))}, the items above {items[0]}",
                                   _on_line(at, _indent(line)), "the items of one list start in the same column")
        return YamlSyntaxError("a list item where a key was expected", at,
                               "a list is the value of a key: `toolsets:`, then `  - item` on each line below")
    key = _KEY.match(line)
    if "expected '-' indicator" in error.problem and key:
        return YamlSyntaxError(f"'{key['key']}' stands in the column of the list's items above, without '- '",
                               _on_line(at, _indent(line)),
                               "indent a key of the mapping as the keys above it; an item of the list starts with '- '")
    return None


def _undefined_alias(source: _Source, error: _Error) -> YamlSyntaxError | None:
    at = error.at
    if at is None or "undefined alias" not in error.problem:
        return None
    name = re.match(r"\*[^\s,\[\]{}]*", source.text[at.index :])
    alias = name.group(0) if name else "*"
    return YamlSyntaxError(f"'{alias}' refers to no anchor: nothing above is marked '&{alias[1:]}'", at,
                           "quote the value if the '*' is part of its text")


def _duplicate_anchor(source: _Source, error: _Error) -> YamlSyntaxError | None:
    if "duplicate anchor" not in error.context or error.opened is None or error.at is None:
        return None
    name = re.match(r"&[^\s,\[\]{}]*", source.text[error.at.index :])
    anchor = name.group(0) if name else "&"
    return YamlSyntaxError(f"'{anchor}' marks a second value: the first is on line "
                           f"{error.opened.line + 1 + source.line_offset}", error.at,
                           "give each anchor its own name")


def _after_quote(source: _Source, error: _Error) -> YamlSyntaxError | None:
    at = error.at
    if at is None or "did not find expected key" not in error.problem:
        return None
    char = source.char(at)
    if char in ("]", "}"):
        return YamlSyntaxError(f"'{char}' closes nothing: no '{'[' if char == ']' else '{'}' is open here", at,
                               "remove it, or quote the value if it is part of its text")
    if source.text[: at.index].rstrip(" ").endswith(("'", '"')):
        return YamlSyntaxError("text after the closing quote", at, "quote the whole value, or nothing of it")
    return None


# --- helpers


def _quoted_value(line: str, column: int) -> str | None:
    """`key: "value"` for the line whose value starts at `column`, when it is one key and its value."""
    match = _KEY_VALUE.match(line)
    if match is None or match.start("value") != column:
        return None
    return f"{(match['dash'] or '').strip()} {match['key']}: {json.dumps(match['value'], ensure_ascii=False)}".strip()


def _on_line(mark: Mark, column: int) -> Mark:
    return Mark(mark.line, column, mark.index - mark.column + column)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _spaces(n: int) -> str:
    return f"{n} space{'s' if n != 1 else ''}"

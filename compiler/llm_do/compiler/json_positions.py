"""A JSON grammar for lark that keeps positions, used only when a diagnostic needs one."""

from __future__ import annotations

from functools import lru_cache

from .positions import Path, Pos, PositionTable

_GRAMMAR = r"""
?value: object | array | string | SIGNED_NUMBER -> number | "true" -> true | "false" -> false | "null" -> null
array: "[" [value ("," value)*] "]"
object: "{" [pair ("," pair)*] "}"
pair: string ":" value
string: ESCAPED_STRING
%import common.ESCAPED_STRING
%import common.SIGNED_NUMBER
%import common.WS
%ignore WS
"""


@lru_cache(maxsize=1)
def _parser():
    from lark import Lark

    return Lark(_GRAMMAR, start="value", parser="lalr", propagate_positions=True, maybe_placeholders=False)


def json_positions(text: str) -> PositionTable:
    """Positions of every key and value of a JSON document already known to be valid."""
    import json

    from lark import Token, Tree

    table = PositionTable()

    def pos(node) -> Pos:
        if isinstance(node, Token):
            return Pos(node.line, node.column)
        return Pos(node.meta.line, node.meta.column)

    def walk(node, path: Path) -> None:
        table.values[path] = pos(node)
        if not isinstance(node, Tree):
            return
        if node.data == "object":
            seen: set[str] = set()
            for pair in node.children:
                key_node, value_node = pair.children
                key = json.loads(key_node.children[0])
                if key in seen:
                    table.duplicates.append((path + (key,), pos(key_node)))
                seen.add(key)
                table.keys[path + (key,)] = pos(key_node)
                walk(value_node, path + (key,))
        elif node.data == "array":
            for i, item in enumerate(node.children):
                walk(item, path + (i,))

    walk(_parser().parse(text), ())
    return table

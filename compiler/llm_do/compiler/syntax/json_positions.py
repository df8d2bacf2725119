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
    """Positions of every key and value of a JSON document already read by `json_reading`.

    Should the grammar still refuse a text `json` read, the table is left empty and lookups fall
    back to line 1: a diagnostic without its exact position beats none. The walk keeps its own
    stack, so nesting costs no recursion."""
    import json

    from lark import Token, Tree
    from lark.exceptions import LarkError

    table = PositionTable()
    try:
        tree = _parser().parse(text)
    except LarkError:
        return table

    def pos(node: object) -> Pos:
        if isinstance(node, Token):
            if node.line is None or node.column is None:
                raise ValueError(f"lark gave the JSON token {node!r} no position")
            return Pos(node.line, node.column)
        if isinstance(node, Tree):
            return Pos(node.meta.line, node.meta.column)
        raise TypeError(f"not a node of lark's JSON tree: {node!r}")

    pending: list[tuple[object, Path]] = [(tree, ())]
    while pending:
        node, path = pending.pop()
        table.values[path] = pos(node)
        if not isinstance(node, Tree):
            continue
        children: list[tuple[object, Path]] = []
        if node.data == "object":
            seen: set[str] = set()
            for pair in node.children:
                key_node, value_node = pair.children
                key = json.loads(str(key_node.children[0]))  # a Token: the key's JSON string
                if key in seen:
                    table.duplicates.append((path + (key,), pos(key_node)))
                seen.add(key)
                table.keys[path + (key,)] = pos(key_node)
                children.append((value_node, path + (key,)))
        elif node.data == "array":
            children = [(item, path + (i,)) for i, item in enumerate(node.children)]
        pending.extend(reversed(children))  # in document order: of a repeated key, the last value stays
    return table

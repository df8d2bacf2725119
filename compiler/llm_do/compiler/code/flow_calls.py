"""What an undeclared Python tool's calls may do that the effects table does not say, for its
information-flow labels (red team M3): read files (a private leg), or call into third-party code
the table does not know (possible egress: a client library may send what it is given anywhere).

The effects table (`effects`) names the standard library's and the common HTTP clients' calls
that write, start processes or connect. A tool that posts through another client (`slack_sdk`,
`boto3`, `openai`) calls none of them, so only the flow labels err on the safe side here: a call
whose name resolves, through the module's imports, to an installed module outside the standard
library and the project counts as possible egress, unless the module is one of a few that parse,
validate or compute and do no I/O of their own (`NO_IO`). The lint names those calls (R007), and a
`CAPABILITIES` entry, the tool's complete declaration, replaces all of it. Calls on values
(`client.chat_postMessage`) are not resolved; the call that made the value (`WebClient(...)`) is.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Mapping
from typing import NamedTuple

from .effects import call_effect, dotted, qualified

NO_IO = frozenset({"pydantic", "pydantic_core", "annotated_types", "typing_extensions", "attr", "attrs", "dateutil",
                   "pytz", "markupsafe", "yaml", "regex", "slugify", "llm_do", "pydantic_ai"})
"""Installed packages that parse, validate, format or compute, with no I/O of their own."""
SENDS_ANYWAY = ("pydantic_ai.Agent", "pydantic_ai.agent", "pydantic_ai.direct", "pydantic_ai.models",
                "pydantic_ai.providers", "pydantic_ai.mcp")
"""Names of a `NO_IO` package that do send: a model request carries what it is given to a provider."""
READ_CALLS = frozenset({"open", "io.open", "builtins.open", "os.fdopen", "sqlite3.connect", "shelve.open", "dbm.open"})
"""Calls that read a file when the effects table finds no write in them (`open(p)`, not `open(p, "w")`)."""
READ_METHODS = frozenset({"read_text", "read_bytes", "open"})
"""Methods of path-like objects that read (`Path(p).read_text()`, `path.open()`)."""
SHOWN_PARTS = 3
"""A third-party call is named by at most its first three dotted parts (`slack_sdk.WebClient`)."""

ModuleFiles = Callable[[str], "str | None"]


class UnknownCall(NamedTuple):
    """A call into third-party code the effects table does not know: its name, where it is."""

    name: str
    file: str
    line: int
    column: int


def flow_calls(node: ast.AST, aliases: Mapping[str, str], module_files: ModuleFiles, file: str
               ) -> tuple[bool, tuple[UnknownCall, ...]]:
    """(whether the code under `node` reads a file, its calls into unknown third-party code)."""
    reads = False
    unknown: list[UnknownCall] = []
    for child in ast.walk(node):
        if not isinstance(child, ast.Call) or call_effect(child, aliases) is not None:
            continue
        if _reads(child, aliases):
            reads = True
            continue
        name = _third_party(child, aliases, module_files)
        if name is not None:
            unknown.append(UnknownCall(name, file, child.lineno, child.col_offset + 1))
    return reads, tuple(unknown)


def _reads(call: ast.Call, aliases: Mapping[str, str]) -> bool:
    name = dotted(call.func)
    if name is not None and qualified(name, aliases) in READ_CALLS:
        return True
    return isinstance(call.func, ast.Attribute) and call.func.attr in READ_METHODS


def _third_party(call: ast.Call, aliases: Mapping[str, str], module_files: ModuleFiles) -> str | None:
    """The call's name when it resolves to an installed module outside the standard library and
    the project that is not known to do no I/O; None otherwise (a local name, a parameter, ...)."""
    name = dotted(call.func)
    if name is None or name.partition(".")[0] not in aliases:
        return None
    full = qualified(name, aliases)
    parts = full.split(".")
    root = parts[0]
    if not root or root in sys.stdlib_module_names or root == "__future__":
        return None
    if any(module_files(".".join(parts[:i])) for i in range(1, len(parts) + 1)):
        return None  # project code: its own parts are read
    if root in NO_IO and not any(full == s or full.startswith(s + ".") for s in SENDS_ANYWAY):
        return None
    return ".".join(parts[:SHOWN_PARTS])

"""An MCP server's configuration as the bundle keeps it, and as a started server needs it.

The bundle holds the configuration as written in project.json: `${VAR}` and `${VAR:-default}`
unexpanded, so no secret the environment supplies is ever written into it, and the same project
builds to the same bytes anywhere. `expanded` fills them in from the environment when a server is
started (at build, to list its tools; at run). Standard library only: both the compiler and the
runtime use it, and neither should load an MCP client to read a configuration.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, overload

from .errors import InputProblem

if TYPE_CHECKING:  # the model is for the type checker: `exec` does not load it
    from .model import McpConnection

CONNECTION_KEYS = ("command", "args", "env", "url", "headers")
"""The keys that say how to reach a server (hashed; what `diff` compares)."""

MISSING_CLIENT = "MCP servers need llm-do's `mcp` extra: pip install 'llm-do[mcp]'"
"""What a build or run says when the MCP client (pydantic-ai's `mcp` extra) is not installed."""

_VAR = re.compile(r"\$\{([^}:]+)(?::-([^}]*))?\}")


class UnsetVariable(InputProblem, ValueError):
    """A `${VAR}` without a default whose variable the environment does not set."""

    def __init__(self, name: str) -> None:
        super().__init__(f"the environment variable {name} is not set (it is used as ${{{name}}})")
        self.name = name


def connection(config: Mapping[str, object]) -> dict[str, object]:
    """The connection part of a server's configuration, as written (empty values left out)."""
    return {k: config[k] for k in CONNECTION_KEYS if config.get(k)}


def config_hash(config: Mapping[str, object]) -> str:
    """sha256 of the connection as written, over canonical JSON: unexpanded strings only."""
    text = json.dumps(connection(config), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@overload
def expanded(value: str, environ: Mapping[str, str]) -> str: ...
@overload
def expanded(value: list[str], environ: Mapping[str, str]) -> list[str]: ...
@overload
def expanded(value: dict[str, str], environ: Mapping[str, str]) -> dict[str, str]: ...
@overload
def expanded(value: object, environ: Mapping[str, str]) -> object: ...
def expanded(value: object, environ: Mapping[str, str]) -> object:
    """`value` (a string, list or dict of them) with `${VAR}` / `${VAR:-default}` filled in; any
    other value as it is. Raises `UnsetVariable` for a variable without a default that `environ`
    does not set."""
    if isinstance(value, str):
        def fill(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            if name in environ:
                return environ[name]
            if default is None:
                raise UnsetVariable(name)
            return default

        return _VAR.sub(fill, value)
    if isinstance(value, list):
        return [expanded(v, environ) for v in value]
    if isinstance(value, dict):
        return {k: expanded(v, environ) for k, v in value.items()}
    return value


SHORTEST_SECRET = 4
"""Values shorter than this are not redacted: a flag like `1` would turn every digit of the
message into a variable name, and hides nothing worth hiding."""


def redacted(text: str, config: Mapping[str, object], environ: Mapping[str, str]) -> str:
    """`text` with every value the environment gives a `${VAR}` of `config` written back as
    `${VAR}`: a message about a started server (its error, its last word on stderr) never repeats
    a secret the configuration took from the environment."""
    names = {m.group(1) for m in _VAR.finditer(json.dumps(config, ensure_ascii=False))}
    values = sorted(((environ[n], n) for n in names if len(environ.get(n, "")) >= SHORTEST_SECRET),
                    key=lambda pair: -len(pair[0]))
    for value, name in values:
        text = text.replace(value, f"${{{name}}}")
    return text


def describe(config: McpConnection) -> str:
    """How a message names the server's connection: its command line, or its URL (as written)."""
    if config.get("url"):
        return str(config["url"])
    return " ".join([str(config.get("command", "")), *(str(a) for a in config.get("args") or ())])


START_TIMEOUT = 30.0
"""Seconds a server has to start and answer `initialize` (LLM_DO_MCP_START_TIMEOUT overrides)."""


def start_timeout() -> float:
    """The start time limit, for the build's listing and the run's sessions alike."""
    try:
        return float(os.environ.get("LLM_DO_MCP_START_TIMEOUT", START_TIMEOUT))
    except ValueError:
        return START_TIMEOUT

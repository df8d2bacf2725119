"""The JSON Schemas llm-do ships for editors and tools: the `.worker` front matter, project.json,
test cases, cassettes, bundle.lock and the JSON of `diff` and `capabilities`.

spec/generate.py writes them into `llm_do/cli/schemas/` (the one copy, in the package, so the wheel
carries it); `llm-do schema NAME` prints one and `llm-do init` names them in the files it writes.
Each `$id` is a stable https URL, `SCHEMA_URL` + `NAME-VERSION.schema.json`: a new format version
is a new URL, and an editor maps the URL to the installed copy (`llm-do schema NAME --path`)."""

from __future__ import annotations

import json
from importlib.resources import files
from importlib.resources.abc import Traversable

SCHEMA_URL = "https://llm-do.dev/schemas/"
"""Where the schemas' `$id`s are rooted (spec/README.md, "Editors")."""

SCHEMAS = {
    "worker": "the YAML front matter of a .worker file",
    "project": "project.json",
    "case": "a file of test cases (tests/*.yaml)",
    "cassette": "a recorded run's model traffic (tests/cassettes/*.json)",
    "bundle": "bundle.lock",
    "diff": "what `llm-do diff --format json` prints",
    "capabilities": "what `llm-do capabilities --format json` prints",
}
"""Each schema's name (`llm-do schema NAME`) and what it describes."""


def schema_url(name: str, version: object) -> str:
    """The `$id` of version `version` of schema `name`."""
    return f"{SCHEMA_URL}{name}-{version}.schema.json"


def schema_file(name: str) -> Traversable:
    """The installed copy of schema `name` (a key of SCHEMAS)."""
    return files("llm_do.cli").joinpath("schemas", f"{name}.schema.json")


def schema_text(name: str) -> str:
    return schema_file(name).read_text(encoding="utf-8")


def schema_id(name: str) -> str:
    """The `$id` of the installed schema `name`: what a file names to be validated by it."""
    return str(json.loads(schema_text(name))["$id"])

"""A proposed worker as a person edits it before approving: front matter (`name`, `description`,
`model`) and the instructions as plain text, unescaped; read back into tool arguments.

Loaded only when someone edits (it opens $EDITOR through click and reads YAML)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from llm_do.bundle.errors import LlmDoError

from .definition import yaml_string

KEYS = ("name", "description", "model")
_FENCE = re.compile(r"^---[ \t]*$", re.M)


class EditProblem(LlmDoError, ValueError):
    """The edited text is not a definition; the message says why, for the person editing."""


def definition_text(args: Mapping[str, object]) -> str:
    lines = ["---", f"name: {yaml_string(str(args.get('name', '')))}", f"description: {yaml_string(str(args.get('description', '')))}"]
    if args.get("model"):
        lines.append(f"model: {yaml_string(str(args['model']))}")
    return "\n".join([*lines, "---", str(args.get("instructions", ""))]) + "\n"


def parse_definition_text(text: str) -> dict[str, object]:
    """`name`, `description`, `model` and `instructions` from edited text, or `EditProblem`."""
    import yaml

    fences = list(_FENCE.finditer(text))
    if len(fences) < 2 or fences[0].start() != 0:
        raise EditProblem("the text must start with front matter between two '---' lines")
    try:
        front = yaml.safe_load(text[fences[0].end():fences[1].start()]) or {}
    except yaml.YAMLError as exc:
        raise EditProblem(f"the front matter is not valid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(front, dict):
        raise EditProblem("the front matter must be a mapping")
    extra = sorted(str(k) for k in front if k not in KEYS)
    if extra:
        raise EditProblem(f"a created worker has only name, description and model (not {', '.join(extra)}); "
                          "add tools to its file after the build")
    if not all(isinstance(front.get(k), str) or (k == "model" and front.get(k) is None) for k in KEYS if k in front):
        raise EditProblem("name, description and model must be text")
    return {"name": front.get("name", ""), "description": front.get("description", ""), "model": front.get("model"),
            "instructions": text[fences[1].end():].lstrip("\n")}


def edit_in_editor(args: Mapping[str, object]) -> dict[str, object] | None:
    """Open the definition in $EDITOR; the edited arguments, or None when nothing changed."""
    import click

    edited = click.edit(definition_text(args), extension=".worker", require_save=True)
    if edited is None:
        return None
    return {**args, **parse_definition_text(edited)}

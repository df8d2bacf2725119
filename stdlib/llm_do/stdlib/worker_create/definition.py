"""A worker created during a run (`worker_create`, `Runtime.create_worker`), as a definition: the
rules it must meet and the text of the file that proposes it.

A created worker has the least privilege a worker can have: no toolsets, no tools, the default
input (`PromptInput`), text output, and the model it was given or else its caller's. Its file holds
only `name`, `description` and `model`, and a body the next `llm-do build` renders back to exactly
the instructions it was created with (template syntax is escaped). Standard library only, so the
rules can be tested without a run; the runtime writes the file and runs the worker
(`llm_do.runtime.created_workers`).
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from llm_do.bundle.errors import LlmDoError

from .names import CREATING_TOOLSETS as CREATING_TOOLSETS  # where the runtime finds it

NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]*$"
"""A worker name, as the compiler checks it (`front_matter.NAME_PATTERN`; a test keeps them equal)."""
_NAME = re.compile(NAME_PATTERN)

DEFAULT_FOLDER = "workers/generated"
"""Where created workers are written, relative to the project root, unless the toolset's `path`
(or the `.agent` era's `generated_agents_dir`) says otherwise."""

MAX_NAME = 100
MAX_TEXT_BYTES = 1_000_000
"""Most UTF-8 bytes of instructions and description together."""
BUILD_FILE_BYTES = 4 * 1024 * 1024
"""The largest project file a build reads (the compiler's `limits.MAX_FILE_BYTES`; a test keeps
them equal): a created worker's file, escapes included, must fit, or the next build rejects it."""

_TEMPLATE = re.compile(r"\{[{%#]")
_ENDRAW = re.compile(r"\{%(?=[-+]?\s*endraw)")
_YAML_UNPRINTABLE = re.compile("[^\x09\x0a\x0d\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""What a double-quoted scalar writes escaped: characters YAML may not hold, and those it reads as
line breaks (U+0085, U+2028, U+2029), after which `---` would end the front matter's document."""


class DefinitionProblem(LlmDoError, ValueError):
    """A definition that cannot become a worker; the message is for the model (or the host)."""


class WorkerDefinition(NamedTuple):
    name: str
    instructions: str
    description: str
    model: str | None = None


def check_definition(definition: WorkerDefinition, taken: set[str]) -> WorkerDefinition:
    """The definition as it will be written (instructions stripped, newlines `\\n`), or
    `DefinitionProblem`. `taken`: names of the bundle's workers and toolsets, the stdlib's
    toolsets and the workers already created in this run."""
    name = definition.name
    if not name or len(name) > MAX_NAME or not _NAME.fullmatch(name):
        raise DefinitionProblem(f"{name!r} is not a valid worker name: a letter or '_' first, then letters, digits, '_' "
                                f"or '-' (at most {MAX_NAME} characters)")
    if name in taken:
        raise DefinitionProblem(f"the name '{name}' is taken by a worker or toolset of this project; choose another")
    instructions = definition.instructions.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not instructions:
        raise DefinitionProblem("the instructions are empty")
    for field, value in (("instructions", instructions), ("description", definition.description),
                         ("model", definition.model or "")):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise DefinitionProblem(f"the {field} are not valid text (they have a lone surrogate)") from None
    size = len(instructions.encode("utf-8")) + len(definition.description.encode("utf-8"))
    if size > MAX_TEXT_BYTES:
        raise DefinitionProblem(f"the instructions and description are {size} bytes, more than the {MAX_TEXT_BYTES} a created "
                                "worker may have")
    model = definition.model.strip() if definition.model else None
    if model is not None and not re.fullmatch(r"[^\s]+", model):
        raise DefinitionProblem(f"{definition.model!r} is not a model name (`provider:model-name`)")
    checked = WorkerDefinition(name, instructions, definition.description.strip(), model or None)
    written = len(worker_file_text(checked).encode("utf-8"))
    if written > BUILD_FILE_BYTES:
        raise DefinitionProblem(f"the worker's file would be {written} bytes once escaped, more than the {BUILD_FILE_BYTES} "
                                "the next build reads; use shorter text or fewer control characters")
    return checked


def escape_template(text: str) -> str:
    """Instructions as a body the build renders back to `text`: without template syntax as they
    are, else inside `{% raw %}`, with any `{%` that would end the raw block written as a
    template expression."""
    if not _TEMPLATE.search(text):
        return text
    return "{% raw %}" + _ENDRAW.sub("{% endraw %}{{ '{%' }}{% raw %}", text) + "{% endraw %}"


def yaml_string(value: str) -> str:
    """A double-quoted YAML scalar (JSON's escapes, plus those of characters YAML may not hold or
    reads as line breaks)."""
    quoted = json.dumps(value, ensure_ascii=False)
    return _YAML_UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}" if ord(m.group()) < 0x10000
                                 else f"\\U{ord(m.group()):08x}", quoted)


def worker_file_text(definition: WorkerDefinition) -> str:
    """The `.worker` file of a checked definition: name, description, model if given; no tools."""
    lines = ["---", f"name: {yaml_string(definition.name)}", f"description: {yaml_string(definition.description)}"]
    if definition.model:
        lines.append(f"model: {yaml_string(definition.model)}")
    lines.append("---")
    return "\n".join(lines) + "\n" + escape_template(definition.instructions) + "\n"

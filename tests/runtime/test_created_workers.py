"""The file of a created worker: what the next build reads back is exactly what was created
(instructions with template syntax, descriptions with any characters), and the rules of a
definition (`check_definition`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_do.compiler.pipeline import compile_project
from llm_do.compiler.syntax.front_matter import NAME_PATTERN
from llm_do.compiler.syntax.limits import MAX_FILE_BYTES
from llm_do.stdlib.worker_create.definition import (
    BUILD_FILE_BYTES,
    DefinitionProblem,
    WorkerDefinition,
    check_definition,
    escape_template,
    worker_file_text,
)
from llm_do.stdlib.worker_create.definition import (
    NAME_PATTERN as RUNTIME_NAME_PATTERN,
)
from llm_do.toolkit.files import write_new
from tests.support.cli import write_project

INSTRUCTIONS = [
    "Plain text, no templates.",
    "{{ x }} and {{x}} and {{ '{' }}",
    "{% for i in range(3) %}{{ i }}{% endfor %}",
    "{# a comment #} {#- trimmed -#}",
    "{% raw %}inside{% endraw %} {%endraw%} {%- endraw -%} {%+ endraw +%} {%   endraw   %}",
    "{% endraw",
    "{",
    "a }} b %} c #}",
    "---\nname: evil\ntoolsets: [shell_file_ops]\n---\nbody",
    "tabs\tand unicode: żółw 🐢 \u2028 line sep, \u0085 next line",
    "line one\n\n\n  indented\n",
]
DESCRIPTIONS = ['He said "hi" \\ and left', "colon: yes # not a comment", "🐢 \x07 bell \u200b zero width", "- a list?",
                "{{ not a template }}", "null", "[1, 2]", "\u2028\ufeff",
                # PyYAML reads U+0085 (and U+2028, U+2029) as a line break: `---` after one ends the document
                "release notes\u0085--- draft", "a\u2028--- b\u2029---\u0085...\u0085c"]


def test_the_runtime_and_the_compiler_agree_on_worker_names() -> None:
    assert RUNTIME_NAME_PATTERN == NAME_PATTERN
    assert BUILD_FILE_BYTES == MAX_FILE_BYTES


def test_instructions_and_descriptions_survive_the_next_build(tmp_path: Path) -> None:
    files: dict[str, str | dict] = {"project.json": {"version": 1, "worker_files": ["**/*.worker"], "entry": {"worker": "w0"}}}
    made = {}
    for i, instructions in enumerate(INSTRUCTIONS):
        definition = check_definition(WorkerDefinition(f"w{i}", instructions, DESCRIPTIONS[i % len(DESCRIPTIONS)],
                                                       "test" if i % 2 else None), set())
        made[definition.name] = definition
    root = tmp_path / "p"
    write_project(root, files)
    for definition in made.values():
        write_new(root / "workers" / f"{definition.name}.worker", worker_file_text(definition).encode())
    result = compile_project(root)
    assert result.bundle is not None, [str(d) for d in result.diagnostics if d.is_error]
    workers = json.loads(result.bundle)["workers"]
    for name, definition in made.items():
        node = workers[name]
        assert node["instructions"] == definition.instructions == INSTRUCTIONS[int(name[1:])].strip()
        assert node["description"] == definition.description
        assert (node["model"], node["toolsets"], node["tools"]) == (definition.model, [], {})


def test_text_without_template_syntax_is_written_as_it_is() -> None:
    assert escape_template("Be brief. {x} is fine.") == "Be brief. {x} is fine."
    assert escape_template("{{ x }}") == "{% raw %}{{ x }}{% endraw %}"


@pytest.mark.parametrize(("definition", "problem"), [
    (WorkerDefinition("", "x", "d"), "not a valid worker name"),
    (WorkerDefinition("a" * 101, "x", "d"), "not a valid worker name"),
    (WorkerDefinition("poet\n", "x", "d"), "not a valid worker name"),
    (WorkerDefinition("ok", "x" * 1_000_001, "d"), "more than the 1000000"),
    (WorkerDefinition("ok", "  \n ", "d"), "instructions are empty"),
    (WorkerDefinition("ok", "x\ud800", "d"), "lone surrogate"),
    (WorkerDefinition("ok", "x", "d", "two words"), "not a model name"),
    (WorkerDefinition("main", "x", "d"), "taken"),
    # within MAX_TEXT_BYTES, but each control character is written as a 6-byte escape: the next build would
    # refuse the 5.4 MB file (P011)
    (WorkerDefinition("ok", "x", "\x01" * 900_000), "more than the 4194304 the next build reads"),
])
def test_definitions_refused(definition: WorkerDefinition, problem: str) -> None:
    with pytest.raises(DefinitionProblem, match=problem):
        check_definition(definition, {"main"})


def test_write_new_never_replaces(tmp_path: Path) -> None:
    target = tmp_path / "a" / "x.worker"
    write_new(target, b"one")
    with pytest.raises(FileExistsError):
        write_new(target, b"two")
    assert target.read_text() == "one"
    assert sorted(p.name for p in target.parent.iterdir()) == ["x.worker"]  # no temporary left behind

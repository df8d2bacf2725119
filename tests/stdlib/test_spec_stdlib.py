"""spec/stdlib.md names everything the code defines: toolsets, settings with their defaults, tools
with their parameters, defaults and approvals, every allowlisted command and each of its flags."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from llm_do.stdlib.registry import STDLIB_TOOLSETS
from llm_do.stdlib.shell.commands import ALLOWLISTS, GIT, CommandSpec, FindSpec, GitSpec

SPEC = (Path(__file__).parents[2] / "spec" / "stdlib.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    """The text under the heading whose title is exactly `title`, up to the next heading of the same
    or a higher level."""
    match = re.search(rf"^(#+) {re.escape(title)}\n", SPEC, re.MULTILINE)
    assert match, f"no section {title!r} in spec/stdlib.md"
    level = len(match.group(1))
    rest = SPEC[match.end() :]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.MULTILINE)
    return rest[: end.start()] if end else rest


def table_row(text: str, name: str) -> str:
    match = re.search(rf"^\| `{re.escape(name)}` \|.*$", text, re.MULTILINE)
    assert match, f"no table row for {name!r}"
    return match.group(0)


def check_fields(text: str, model: type[BaseModel]) -> None:
    for name, field in model.model_fields.items():
        row = table_row(text, name)
        expected = "required" if field.default is PydanticUndefined else f"`{json.dumps(field.default)}`"
        assert expected in row, (model.__name__, name, row)


@pytest.mark.parametrize("name", list(STDLIB_TOOLSETS))
def test_toolset_listed_with_root_and_capabilities(name: str) -> None:
    descriptor = STDLIB_TOOLSETS[name]
    row = table_row(SPEC, name)
    assert f"| {descriptor.root} |" in row
    for tool in descriptor.tools:
        assert f"`{tool.name}`" in row
    for capability in descriptor.capabilities:
        assert f"`{capability}`" in row


@pytest.mark.parametrize("name", list(STDLIB_TOOLSETS))
def test_settings_and_tools(name: str) -> None:
    descriptor = STDLIB_TOOLSETS[name]
    families = {"filesystem": "Filesystem toolsets", "shell": "Shell toolsets", "worker": "Worker creation toolsets",
                "dynamic": "Worker creation toolsets"}
    family = section(families[name.split("_")[0]])
    check_fields(family, descriptor.settings_model)  # the settings table comes first in the family
    for tool in descriptor.tools:
        tool_text = section(f"`{tool.name}`")
        check_fields(tool_text, tool.args_model)
        assert f"Default approval `{tool.approval}`" in tool_text
        for capability in tool.capabilities:
            assert f"`{capability}`" in tool_text


def _flag_specs() -> list[tuple[str, CommandSpec | FindSpec, str]]:
    """(command, spec, the spec text its flags must appear in)."""
    git_text = SPEC[SPEC.index("#### `git`") : SPEC.index("### `shell_file_ops` commands")]
    found = []
    for table in ALLOWLISTS.values():
        for name, spec in table.items():
            if isinstance(spec, GitSpec):
                found.extend((sub.name, sub, git_text) for sub in spec.subcommands.values())
            else:
                found.append((name, spec, section(f"`{name}`")))
    return found


FLAG_SPECS = _flag_specs()


@pytest.mark.parametrize(("name", "spec", "text"), FLAG_SPECS, ids=[name for name, _, _ in FLAG_SPECS])
def test_every_flag_is_documented(name: str, spec: CommandSpec | FindSpec, text: str) -> None:
    flags = [*spec.primaries, *spec.refused] if isinstance(spec, FindSpec) else [*spec.options, *spec.refused]
    missing = [flag for flag in flags if f"`{flag}`" not in text]
    assert not missing, f"{name}: {missing} not in spec/stdlib.md"
    if isinstance(spec, CommandSpec) and spec.numeric_flag:
        assert "`-NUM`" in text
    if isinstance(spec, CommandSpec):
        assert f"`{name}`" in SPEC
        if spec.target_options:
            assert "*target* flags" in text and all(f"`{flag}`" in text for flag in spec.target_options)


def test_commands_and_approvals() -> None:
    for toolset, table in ALLOWLISTS.items():
        listing = section(f"`{toolset}` commands")
        for name, spec in table.items():
            assert f"`{name}`" in listing
            assert f"`{spec.approval}`" in listing
    git_text = section("`git`")
    for sub in GIT.subcommands:
        assert f"`{sub}`" in git_text
    for flag in GIT.refused_global:
        assert f"`{flag}`" in git_text
    assert " ".join(GIT.prefix) in git_text

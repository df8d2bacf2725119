"""A011 (newcomer F4): a rule sees a stdlib path relative to the toolset's root, normalized, so a
glob that repeats the root (`docs/secret*` under `path: docs`), is absolute, has `.`/`..` segments
or ends in `/` names no path the rule is given. Warned at the glob, with the glob that would match."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import worker, write_project
from tests.support.lint import lint


def project(tmp_path: Path, toolsets: str, rule: str) -> Path:
    front = f"toolsets:\n{toolsets}\napprovals:\n  - allow write_file\n  - \"{rule}\""
    return write_project(tmp_path, {"main.worker": worker(front), "docs/.keep": "", "src/.keep": ""})


DOCS = "  - filesystem_project:\n      path: docs"


@pytest.mark.parametrize(("glob", "fixed", "says"), [
    ("docs/secret*", "secret*", "it names docs/docs/secret*, not docs/secret*"),
    ("docs/**", "**", "relative to the toolset's root docs/"),
    ("docs", ".", "it names docs/docs"),
    ("/docs/secret*", "secret*", "is absolute"),
    ("./secret*", "secret*", "`.` or `..` segments"),
    ("notes/../secret*", "secret*", "`.` or `..` segments"),
    ("notes/", "notes", "ends in `/`"),
])
def test_a_glob_that_cannot_match_inside_the_root_warns_at_the_glob(tmp_path: Path, glob: str, fixed: str, says: str) -> None:
    result = lint(project(tmp_path, DOCS, f"deny write_file(path ~ '{glob}')"))
    d = result.expect("A011", "main.worker", f"'{glob}'", mentions=(says,))
    assert d["hint"] == f"write '{fixed}'", d
    assert result.codes() == ["A011"]


def test_a_glob_that_leads_out_of_the_root_has_no_fix(tmp_path: Path) -> None:
    result = lint(project(tmp_path, DOCS, "deny write_file(path ~ '../src/*.py')"))
    d = result.expect("A011", "main.worker", "'../src/*.py'", mentions=("points outside the toolset's root docs/",))
    assert d["hint"] == "leave the rule out: it can never match"


@pytest.mark.parametrize(("toolsets", "rule"), [
    (DOCS, "deny write_file(path ~ 'secret*')"),
    (DOCS, "deny write_file(path ~ '**/docs/secret*')"),
    ("  - filesystem_project", "deny write_file(path ~ 'docs/secret*')"),  # the root is the project
    (DOCS, "deny write_file(content ~ 'docs/*')"),  # not a path
    ("  - shell_file_ops:\n      path: src", "deny shell(argv[0] ~ 'src*')"),  # the command, not a path
])
def test_globs_a_rule_can_match_are_not_warned(tmp_path: Path, toolsets: str, rule: str) -> None:
    lint(project(tmp_path, toolsets, rule)).absent("A011")


def test_a_shell_operand_is_relative_to_the_shells_root_too(tmp_path: Path) -> None:
    result = lint(project(tmp_path, "  - filesystem_project\n  - shell_file_ops:\n      path: src",
                          "deny shell(argv[1] ~ 'src/keep*')"))
    d = result.expect("A011", "main.worker", "'src/keep*'", mentions=("relative to the toolset's root src/",))
    assert d["hint"] == "write 'keep*'"

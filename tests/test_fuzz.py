"""Property: whatever is done to a project's files, lint and build end with diagnostics at valid
positions, never with an exception, a traceback or a hang.

Hypothesis (derandomized: the same inputs on every run) mutates the examples and conformance
cases: truncation, odd characters (NUL, surrogates, U+2028, a BOM), deep nesting, huge values,
swapped types, repeated and dropped lines, template recursion, YAML alias bombs, and files
replaced by pipes, link loops or directories. Most inputs run through the compiler in this process
(for speed); a few through the installed `llm-do` to check exit codes and stderr at the CLI.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llm_do.compiler.pipeline import compile_project
from llm_do.compiler.report.diagnostics import ProjectDiagnostics
from llm_do.compiler.report.diagnostics.github import render_github
from llm_do.compiler.report.diagnostics.json import render_json
from llm_do.compiler.report.diagnostics.sarif import render_sarif
from llm_do.compiler.stages.load import ProjectNotFound

REPO = Path(__file__).resolve().parents[1]
PROJECTS = sorted(p for base in ("examples", "spec/conformance") for p in (REPO / base).iterdir() if p.is_dir())
NOT_INPUTS = {"expected.json", "README.md", "script.json", "script.yaml"}
SECONDS_PER_INPUT = 10.0
"""CPU seconds of this process, which a busy machine does not stretch as it does the wall clock;
a clean input takes some tens of milliseconds, a runaway (a template or alias bomb) far more."""

ODD_TEXT = ["\x00", "\ud800", "\\ud800", "\\udfff", '"\\ud83d"', "\u2028", "\u2029", "\x85", "\ufeff", "\r", "\t",
            "\U0001f600", "e\u0301", "\x1b[31m", "\\u0000", "\x7f", "\uffff"]
NESTING = [("[", "]"), ('{"a": ', "}"), ("- ", ""), ("a: {", "}"), ("{{ (", ") }}"), ("{% if x %}", "{% endif %}"),
           ("? ", ""), ("(", ")")]
HUGE = ["9", "x", "'", "\n", "[", "&a ", " "]
SWAPS = ["[]", "{}", "1", '"x"', "null", "[1, 2]", '{"a": 1}', "true", "-1", "1e400", "NaN", "Infinity", "~",
         "!!binary aGk=", "2024-01-01", ".inf", "0x1F", "*undefined", "&a [*a]", "'unterminated", "{a: [}"]
TEMPLATE_BITS = ['{% include "main.worker" %}', '{% include "../x" %}', '{{ file("project.json") }}',
                 '{% extends "x" %}', '{% import "main.worker" as m %}', "{{ x.__class__ }}", "{{ 'a' * 10**9 }}",
                 "{% set x = x %}", "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}", "{{ range(1, 2, 0) }}",
                 "{% block a %}{% endblock %}{% block a %}{% endblock %}", "{{ 10**10**10 }}", "{% raw %}", "{#",
                 "{{ 'x'|center(10**9) }}", '{% include "partials/" + x %}', "{{ file('/etc/passwd') }}"]
ALIASES = ["a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
           "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
           "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n", "x: &x {y: *x}\n", "<<: *nowhere\n", "<<: [1]\n"]
SPECIAL = ["fifo", "link_loop", "dev_zero", "directory", "dangling"] if hasattr(os, "mkfifo") else []
TOKEN = re.compile(r'"[^"\n]*"|\b\d+\b|\btrue\b|\bfalse\b|\bnull\b|\[[^\[\]\n]*\]|(?<=: )[^\n]+')


@dataclass(frozen=True)
class Mutation:
    kind: str
    file: int
    at: float
    """Where in the file, as a fraction of its length."""
    payload: str = ""
    size: int = 1


mutations = st.one_of(
    st.builds(Mutation, st.just("truncate"), st.integers(0, 50), st.floats(0, 1)),
    st.builds(Mutation, st.just("insert"), st.integers(0, 50), st.floats(0, 1), st.sampled_from(ODD_TEXT)),
    st.builds(Mutation, st.just("nest"), st.integers(0, 50), st.floats(0, 1),
              st.sampled_from([f"{o}\x00{c}" for o, c in NESTING]), st.sampled_from([3, 99, 100, 101, 1000, 100_000])),
    st.builds(Mutation, st.just("insert_many"), st.integers(0, 50), st.floats(0, 1), st.sampled_from(HUGE),
              st.sampled_from([4400, 100_000, 1_000_000])),
    st.builds(Mutation, st.just("swap"), st.integers(0, 50), st.floats(0, 1), st.sampled_from(SWAPS)),
    st.builds(Mutation, st.sampled_from(["copy_line", "drop_line", "drop_range"]), st.integers(0, 50), st.floats(0, 1),
              st.just(""), st.integers(1, 200)),
    st.builds(Mutation, st.just("insert"), st.integers(0, 50), st.floats(0, 1), st.sampled_from(TEMPLATE_BITS + ALIASES)),
    *([st.builds(Mutation, st.just("special"), st.integers(0, 50), st.just(0.0), st.sampled_from(SPECIAL))] if SPECIAL else []),
)


def mutate(text: str, m: Mutation) -> str:
    """`text` changed as `m` says (the special kinds are applied to the file, not the text)."""
    i = int(m.at * len(text))
    if m.kind == "truncate":
        return text[:i]
    if m.kind == "insert":
        return text[:i] + m.payload + text[i:]
    if m.kind == "nest":
        opening, closing = m.payload.split("\x00")
        return text[:i] + opening * m.size + closing * m.size + text[i:]
    if m.kind == "insert_many":
        return text[:i] + m.payload * m.size + text[i:]
    if m.kind == "swap":
        tokens = list(TOKEN.finditer(text))
        if not tokens:
            return text + m.payload
        t = tokens[int(m.at * (len(tokens) - 1))]
        return text[: t.start()] + m.payload + text[t.end():]
    if m.kind in ("copy_line", "drop_line"):
        lines = text.split("\n")
        j = int(m.at * (len(lines) - 1))
        if m.kind == "copy_line":
            lines.insert(min(j + m.size % 5, len(lines)), lines[j])
        else:
            del lines[j]
        return "\n".join(lines)
    if m.kind == "drop_range":
        return text[:i] + text[i + m.size:]
    raise AssertionError(m.kind)


def make_special(path: Path, kind: str) -> None:
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link_loop":
        os.symlink(path.name, path)
    elif kind == "dev_zero":
        os.symlink("/dev/zero", path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "dangling":
        os.symlink(path.name + ".missing", path)


def apply(root: Path, changes: list[Mutation]) -> None:
    files = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink() and p.name not in NOT_INPUTS)
    for m in changes:
        files = [f for f in files if f.is_file() and not f.is_symlink()]
        if not files:
            return
        path = files[m.file % len(files)]
        if m.kind == "special":
            make_special(path, m.payload)
            continue
        text = path.read_bytes().decode("utf-8", "surrogateescape")
        path.write_bytes(mutate(text, m).encode("utf-8", "surrogateescape" if "\ud800" not in m.payload else "surrogatepass"))


def file_lines(root: Path, rel: str) -> list[str]:
    """The lines positions count (LF only, after normalization) of a project file."""
    data = (root / rel).read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").decode("utf-8", "replace").split("\n")


def assert_positions_inside(root: Path, diagnostics: list[dict]) -> None:
    for d in diagnostics:
        places = [(d["file"], d["line"], d["column"])] + [(r["file"], r["line"], r["column"]) for r in d["related"]]
        for file, line, column in places:
            assert not os.path.isabs(file) and not file.startswith(("<", "..")), d
            if line is None:
                assert column is None, d
                continue
            path = root / file
            if not path.is_file() or path.is_symlink() and not os.path.realpath(path).startswith(str(root.resolve())):
                assert line == 1 and column in (1, None), d  # a file that is no text (a pipe, say): its top
                continue
            lines = file_lines(root, file)
            assert 1 <= line <= len(lines), (d, len(lines))
            if column is not None:
                assert 1 <= column <= len(lines[line - 1]) + 1, (d, len(lines[line - 1]))


def check_project(root: Path) -> None:
    """Compile as `build` does, render every format, and check the properties."""
    started = time.process_time()
    try:
        result = compile_project(root, import_python=False)
    except ProjectNotFound:
        return  # the CLI's exit 2: the manifest itself was turned into something else
    elapsed = time.process_time() - started
    assert elapsed < SECONDS_PER_INPUT, f"took {elapsed:.1f} s of CPU"
    report = [ProjectDiagnostics(str(root), root, result.diagnostics)]
    document = json.loads(render_json(report))
    assert_positions_inside(root, document["diagnostics"])
    for render in (render_sarif, render_github):
        render(report).encode("utf-8")
    assert (result.bundle is not None) == result.ok
    if result.bundle is not None:
        json.loads(result.bundle)


def _copy(project: Path, into: str) -> Path:
    root = Path(into) / project.name
    shutil.copytree(project, root, symlinks=True)
    return root


@settings(max_examples=250, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(project=st.sampled_from(PROJECTS), changes=st.lists(mutations, min_size=1, max_size=3))
def test_mutated_projects_compile_to_diagnostics(project: Path, changes: list[Mutation]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = _copy(project, tmp)
        apply(root, changes)
        check_project(root)


CLI_CASES = {
    "surrogate-and-separators": ("07-references", [Mutation("insert", 0, 0.5, "\\ud800"), Mutation("insert", 1, 0.3, "\u2028")]),
    "deep-json": ("06-manifest-errors", [Mutation("nest", 99, 0.6, "[\x00]", 100_000)]),
    "deep-yaml": ("05-front-matter-errors", [Mutation("nest", 3, 0.2, "[\x00]", 100_000)]),
    "template-bomb": ("13-templates", [Mutation("insert", 2, 0.9, "{{ 'a' * 10**9 }}"),
                                       Mutation("insert", 1, 0.9, '{% include "main.worker" %}')]),
}


@pytest.mark.e2e
@pytest.mark.parametrize("case", sorted(CLI_CASES))
@pytest.mark.process
def test_mutated_projects_at_the_cli(tmp_path: Path, case: str) -> None:
    """The real console script: exit 0, 1 or 2, no traceback, JSON on stdout; a failed build keeps
    the old lock."""
    name, changes = CLI_CASES[case]
    root = _copy(REPO / "spec" / "conformance" / name, str(tmp_path))
    apply(root, changes)
    (root / "bundle.lock").write_bytes(b"old lock\n")
    env = {**os.environ, "LLM_DO_DEBUG": ""}
    llm_do = [sys.executable, "-c", "from llm_do.cli.main import main; main()"]
    lint = subprocess.run([*llm_do, "lint", str(root), "--format", "json", "--no-import"], capture_output=True,
                          timeout=60, env=env)
    assert lint.returncode in (0, 1, 2), lint.stderr
    assert b"Traceback" not in lint.stderr and b"internal error" not in lint.stderr, lint.stderr
    if lint.returncode != 2:
        assert_positions_inside(root, json.loads(lint.stdout)["diagnostics"])
    build = subprocess.run([*llm_do, "build", str(root)], capture_output=True, timeout=60, env=env)
    assert build.returncode in (0, 1, 2), build.stderr
    assert b"Traceback" not in build.stderr and b"internal error" not in build.stderr, build.stderr
    if build.returncode != 0:
        assert (root / "bundle.lock").read_bytes() == b"old lock\n"

"""`llm-do lint` output formats: text, json, sarif and github for one broken project (snapshots),
and the contract of each (keys, sorting, paths relative to the working directory, escaping), exit
codes (`--strict`, a path that is not a project)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from llm_do.bundle.version import VERSION
from tests.support.cli import PLAIN_ENV, CliResult, run_cli, write_project

# Errors with and without hints, warnings, and a related location (the include site of a problem
# found inside an included template).
BROKEN = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "vars": {"topic": "tides"}},
    "main.worker": """
        ---
        toolsets:
          - helpr
          - helper
          - helper
        ---
        Write about {{ topic }}.
        {% include 'parts/intro.md' %}
        """,
    "parts/intro.md": "Intro for {{ audience }}.\n",
    "helper.worker": "---\nname: helper\n---\nHelp.\n",
    "orphan.worker": "---\nname: orphan\n---\nNobody calls me.\n",
}

@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the project `proj`; lint runs from here, so paths read `proj/...`."""
    cwd = tmp_path_factory.mktemp("formats")
    write_project(cwd / "proj", BROKEN)
    return cwd


def run_lint(workdir: Path, *args: str, env: dict[str, str | None] | None = None) -> CliResult:
    result = run_cli("lint", *args, cwd_to=workdir, env={**PLAIN_ENV, **(env or {})})
    assert "Traceback" not in result.stderr
    return result


@pytest.fixture(scope="module")
def rows(workdir: Path) -> list[dict]:
    result = run_lint(workdir, "proj", "--format", "json")
    assert result.exit_code == 1
    return result.json()["diagnostics"]


# --- snapshots

def test_text_snapshot(workdir: Path, snapshot) -> None:
    result = run_lint(workdir, "proj")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == snapshot


def test_json_snapshot(workdir: Path, snapshot) -> None:
    result = run_lint(workdir, "proj", "--format", "json")
    assert result.exit_code == 1
    assert result.stdout == snapshot


def test_sarif_snapshot(workdir: Path, snapshot) -> None:
    result = run_lint(workdir, "proj", "--format", "sarif")
    assert result.exit_code == 1
    doc = result.json()
    assert doc["runs"][0]["tool"]["driver"]["version"] == VERSION
    doc["runs"][0]["tool"]["driver"]["version"] = "<version>"  # the snapshot survives a release
    assert json.dumps(doc, indent=2, ensure_ascii=False) == snapshot


def test_github_snapshot(workdir: Path, snapshot) -> None:
    result = run_lint(workdir, "proj", "--format", "github")
    assert result.exit_code == 1
    assert result.stdout == snapshot


# --- text

def _long_line_project(root: Path) -> Path:
    return write_project(root, {
        "main.worker": "---\ndescription: " + "a long description " * 8 + "\ntoolsets: ["
                       + "filesystem_project_ro, " * 4 + "helpr]\n---\nSay " + "x " * 60 + "{{ nope }}\n",
    })


@pytest.mark.parametrize("columns", ["30", "80", "300"])
def test_text_output_does_not_depend_on_terminal_width(tmp_path: Path, columns: str) -> None:
    """Each caret sits under its column, however narrow the terminal rich thinks it has."""
    root = _long_line_project(tmp_path / "proj")
    file_lines = (root / "main.worker").read_text().splitlines()
    result = run_cli("lint", "proj", cwd_to=tmp_path, env={**PLAIN_ENV, "COLUMNS": columns})
    lines = result.stderr.splitlines()
    headers = [i for i, line in enumerate(lines) if re.match(r"^proj/main\.worker:\d+:\d+: ", line)]
    assert len(headers) == 5
    for i in headers:
        _, line, column = (int(n) if n.isdigit() else n for n in lines[i].split(":")[:3])
        source, caret = lines[i + 1], lines[i + 2]
        gutter = source.index("| ") + 2
        at = len(caret.rstrip()) - 1
        assert caret.rstrip() == " " * at + "^", (lines[i], caret)
        # The caret sits under the character the column names, in the window of a long line too.
        assert source[at] == file_lines[line - 1][column - 1], (lines[i], source, caret)
        if at - gutter != column - 1:
            assert "..." in source


def test_a_long_line_is_shown_as_a_window_around_the_column(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {
        "main.worker": "---\ntoolsets: [" + "filesystem_project_ro, " * 200 + "helpr]\n---\nSay.\n",
    })
    result = run_cli("lint", "proj", cwd_to=tmp_path, env=PLAIN_ENV)
    lines = result.stderr.splitlines()
    assert lines[0].startswith("proj/main.worker:2:")
    assert lines[1].startswith("  2 | ...") and lines[1].endswith("helpr]")
    assert len(lines[1]) < 140
    assert len((root / "main.worker").read_text().splitlines()[1]) > 4000


def test_many_diagnostics_of_one_code_are_counted_not_printed(tmp_path: Path) -> None:
    """A one-line project.json with 4000 errors prints a page, not megabytes; json lists all."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj/project.json").write_text(
        json.dumps({"version": 1, "worker_files": [1] * 4000}, separators=(",", ":")))
    result = run_cli("lint", "proj", cwd_to=tmp_path, env=PLAIN_ENV)
    assert result.exit_code == 1
    assert len(result.stderr) < 10_000
    assert result.stderr.count(": P006 error: ") == 20
    assert "... and 3980 more P006 errors" in result.stderr
    assert result.stderr.rstrip().endswith("4000 errors")
    rows = run_cli("lint", "proj", "--format", "json", cwd_to=tmp_path).json()["diagnostics"]
    assert len(rows) == 4000


def test_text_output_has_no_color_without_a_terminal(workdir: Path) -> None:
    result = run_lint(workdir, "proj")
    assert "\x1b[" not in result.stderr


def test_text_paths_are_relative_to_the_working_directory(workdir: Path) -> None:
    outside = run_lint(workdir, "proj")
    assert re.search(r"^proj/main\.worker:3:5: N003 error", outside.stderr, re.M)
    inside = run_cli("lint", ".", cwd_to=workdir / "proj", env=PLAIN_ENV)
    assert re.search(r"^main\.worker:3:5: N003 error", inside.stderr, re.M)
    assert re.search(r"^  note: main\.worker:8:13: included from here", inside.stderr, re.M)


def test_text_of_a_clean_project(tmp_path: Path) -> None:
    write_project(tmp_path / "ok", {"main.worker": "---\n---\nHello.\n"})
    result = run_cli("lint", "ok", cwd_to=tmp_path, env=PLAIN_ENV)
    assert result.exit_code == 0
    assert result.stdout == ""
    assert result.stderr.strip() == "no problems found"


# --- json

KEYS = {"code", "severity", "message", "file", "line", "column", "hint", "project"}


def test_json_contract(workdir: Path, rows: list[dict]) -> None:
    assert rows
    for row in rows:
        assert KEYS <= row.keys(), row
        assert isinstance(row["file"], str) and row["file"] and not row["file"].startswith(("/", "proj/"))
        assert row["project"] == "proj"
        assert row["severity"] in ("error", "warning", "info")
    n007 = next(r for r in rows if r["code"] == "N007")
    assert n007["hint"] is None  # present, null where none applies
    keys = [(r["project"], r["file"], r["line"]) for r in rows]
    assert keys == sorted(keys)


def test_json_related_location(rows: list[dict]) -> None:
    t002 = next(r for r in rows if r["code"] == "T002")
    assert t002["file"] == "parts/intro.md"
    assert t002["related"] == [{"file": "main.worker", "line": 8, "column": 13, "message": "included from here"}]


def test_json_prints_only_the_document_even_when_clean(tmp_path: Path) -> None:
    write_project(tmp_path / "ok", {"main.worker": "---\n---\nHello.\n"})
    result = run_cli("lint", "ok", "--format", "json", cwd_to=tmp_path, env=PLAIN_ENV)
    assert result.exit_code == 0
    assert result.json()["diagnostics"] == []


def test_json_over_two_projects(tmp_path: Path) -> None:
    write_project(tmp_path / "proj", BROKEN)
    write_project(tmp_path / "another", {
        "main.worker": "---\ntoolsets: [nowhere]\n---\nx\n",
        "zeta.worker": "---\n---\nx\n",
    })
    result = run_lint(tmp_path, "proj", "another", "--format", "json")
    assert result.exit_code == 1
    rows = result.json()["diagnostics"]
    assert {r["project"] for r in rows} == {"proj", "another"}
    keys = [(r["project"], r["file"], r["line"] or 0) for r in rows]
    assert keys == sorted(keys)
    another = [(r["code"], r["file"]) for r in rows if r["project"] == "another"]
    assert sorted(another) == [("G003", "zeta.worker"), ("N003", "main.worker")]


def test_json_of_a_project_named_by_its_project_json(workdir: Path, rows: list[dict]) -> None:
    result = run_lint(workdir, "proj/project.json", "--format", "json")
    by_path = [{k: v for k, v in r.items() if k != "project"} for r in result.json()["diagnostics"]]
    assert by_path == [{k: v for k, v in r.items() if k != "project"} for r in rows]


# --- sarif

def test_sarif_contract(workdir: Path, rows: list[dict]) -> None:
    result = run_lint(workdir, "proj", "--format", "sarif")
    doc = result.json()
    assert doc["version"] == "2.1.0"
    assert "sarif" in doc["$schema"] and "2.1.0" in doc["$schema"]
    (run,) = doc["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "llm-do"
    rule_ids = [r["id"] for r in driver["rules"]]
    assert sorted(rule_ids) == sorted({r["code"] for r in rows})
    level = {"error": "error", "warning": "warning", "info": "note"}
    assert len(run["results"]) == len(rows)
    for res, row in zip(run["results"], rows):
        assert res["ruleId"] == row["code"]
        assert rule_ids[res["ruleIndex"]] == res["ruleId"]
        assert res["level"] == level[row["severity"]]
        assert row["message"] in res["message"]["text"]
        (loc,) = res["locations"]
        physical = loc["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == f"proj/{row['file']}"
        assert physical["region"]["startLine"] == row["line"]
        assert physical["region"].get("startColumn") == row["column"]
    # The only URL is the schema's: llm-do has no site for informationUri or helpUri to name.
    assert re.findall(r"https?://[^\s\"]+", result.stdout) == [doc["$schema"]]
    related = next(r for r in run["results"] if r["ruleId"] == "T002")["relatedLocations"]
    assert [(r["physicalLocation"]["artifactLocation"]["uri"], r["physicalLocation"]["region"]["startLine"])
            for r in related] == [("proj/main.worker", 8)]


# --- github

GITHUB_LINE = re.compile(r"^::(error|warning|notice) file=([^,]+),line=(\d+),col=(\d+),title=([^,:]+)::(.+)$")


def test_github_contract(workdir: Path, rows: list[dict]) -> None:
    result = run_lint(workdir, "proj", "--format", "github")
    lines = result.stdout.splitlines()
    assert len(lines) == len(rows)
    for line, row in zip(lines, rows):
        m = GITHUB_LINE.match(line)
        assert m, line
        level, file, lineno, col, title, message = m.groups()
        assert level == {"error": "error", "warning": "warning", "info": "notice"}[row["severity"]]
        assert (file, int(lineno), int(col)) == (f"proj/{row['file']}", row["line"], row["column"])
        assert row["code"] in title
        assert row["message"] in message


def test_github_escapes_properties_and_messages(tmp_path: Path) -> None:
    """In a property `%`, CR, LF, `:` and `,` are escaped; in the message `%`, CR and LF."""
    write_project(tmp_path / "proj", {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "odd"}},
        "a,b:c.worker": '---\nname: odd\ntoolsets: ["50%\\nbad"]\n---\nx\n',
    })
    result = run_cli("lint", "proj", "--format", "github", cwd_to=tmp_path, env=PLAIN_ENV)
    assert result.exit_code == 1
    (line,) = result.stdout.splitlines()
    assert line.startswith("::error file=proj/a%2Cb%3Ac.worker,line=3,col=12,title=")
    message = line.split("::", 2)[2]
    assert "50%25%0Abad" in message


# --- exit codes

@pytest.mark.parametrize("fmt", ["text", "json"])
def test_strict_makes_warnings_fail(tmp_path: Path, fmt: str) -> None:
    root = write_project(tmp_path / "proj", {
        "main.worker": "---\n---\nx\n",
        "orphan.worker": "---\n---\nx\n",
    })
    plain = run_cli("lint", root, "--format", fmt, env=PLAIN_ENV)
    strict = run_cli("lint", root, "--format", fmt, "--strict", env=PLAIN_ENV)
    assert "G003" in plain.stdout + plain.stderr
    assert (plain.exit_code, strict.exit_code) == (0, 1)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
@pytest.mark.parametrize("what", ["missing", "empty-dir", "python-file"])
def test_path_that_is_not_a_project(tmp_path: Path, what: str, fmt: str) -> None:
    target = {"missing": tmp_path / "nowhere", "empty-dir": tmp_path, "python-file": tmp_path / "tools.py"}[what]
    (tmp_path / "tools.py").write_text("X = 1\n")
    result = run_cli("lint", target, "--format", fmt, env=PLAIN_ENV)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr

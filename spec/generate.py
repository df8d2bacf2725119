"""Regenerate the files of spec/ that are made from the code, or check that they are current.

    python spec/generate.py          rewrite spec/diagnostics.md and the JSON Schemas (runtime/llm_do/cli/schemas/)
    python spec/generate.py --check  write nothing; exit 1 and name the stale files

Sources: the rule registry `llm_do.compiler.codes.RULES` (diagnostics.md) and the pydantic models
`ProjectManifest` (project.json) and `WorkerFrontMatter` (front matter), the TypedDicts of
`llm_do.bundle.model` (bundle.lock), and the pydantic models `CaseFile` (tests/*.yaml) and
`Cassette` (recorded model traffic).
The schemas are written into the package (`llm_do.cli.schema_files`: the wheel carries them, `llm-do
schema NAME` prints them), each `$id` an https URL of `schema_files.SCHEMA_URL`.
The output is byte-stable: JSON Schemas are written with sorted keys, two-space indentation and a
final newline, so running this twice changes nothing. tests/test_spec_sync.py runs the check.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

SPEC = Path(__file__).resolve().parent
ROOT = SPEC.parent
"""The checkout: the generated files' paths are relative to it."""
SCHEMAS_DIR = "runtime/llm_do/cli/schemas"

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

CATEGORIES: dict[str, str] = {
    "P": "Syntax and structure of project.json and front matter",
    "F": "Files and paths",
    "N": "Names and references",
    "S": "Schemas",
    "Y": "User Python",
    "X": "MCP servers",
    "T": "Templates",
    "G": "The call graph",
    "M": "Models",
    "A": "Approvals",
    "R": "Review: capabilities",
    "B": "Budgets: what a run can cost",
    "L": "The `.agent` era",
    "C": "Configuration of the checks",
}
"""Title of each code letter, in the order diagnostics.md lists them."""


def _json_text(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _schema(model: Any, name: str, title: str, description: str, **kwargs: Any) -> str:
    return _document(model.model_json_schema(**kwargs), name, title, description)


def _document(schema: dict[str, Any], name: str, title: str, description: str) -> str:
    from llm_do.cli.schema_files import schema_url

    schema.pop("description", None)
    kind, _, version = name.partition(":")
    doc = {
        "$schema": JSON_SCHEMA_DIALECT,
        "$id": schema_url(kind, version),
        **schema,
        "title": title,
        "description": description,
    }
    return _json_text(doc)


def project_schema() -> str:
    from llm_do.compiler.stages.load import EDITOR_SCHEMA_KEY
    from llm_do.compiler.syntax.manifest import ProjectManifest

    schema = ProjectManifest.model_json_schema()
    schema["properties"][EDITOR_SCHEMA_KEY] = {
        "type": "string", "description": "The JSON Schema editors validate this file with (its URL); llm-do ignores it."}
    return _document(
        schema, "project:1", "llm-do project.json (version 1)",
        "project.json: which files make an llm-do project, where a run starts and how it runs. "
        "Generated from llm_do.compiler.syntax.manifest.ProjectManifest by spec/generate.py; see spec/language.md.",
    )


def worker_schema() -> str:
    from llm_do.compiler.syntax.front_matter import WorkerFrontMatter

    return _schema(
        WorkerFrontMatter, "worker:1", "llm-do .worker front matter",
        "The YAML front matter of a .worker file (between the two `---` lines). Generated from "
        "llm_do.compiler.syntax.front_matter.WorkerFrontMatter by spec/generate.py; see spec/language.md.",
    )


def bundle_schema() -> str:
    from llm_do.bundle import schema
    from llm_do.bundle.format import BUNDLE_FORMAT

    return _document(
        schema.json_schema(), f"bundle:{BUNDLE_FORMAT}", f"llm-do bundle.lock (bundle_format {BUNDLE_FORMAT})",
        "bundle.lock as `llm-do build` writes it. Generated from the TypedDicts of llm_do.bundle.model "
        "(llm_do.bundle.schema) by spec/generate.py; see spec/bundle.md.",
    )


def diff_schema() -> str:
    from llm_do.compiler.report.schemas import DiffDocument

    return _schema(
        DiffDocument, "diff:2", "llm-do diff --format json (format 2)",
        "What `llm-do diff OLD NEW --format json` prints. Generated from "
        "llm_do.compiler.report.schemas.DiffDocument by spec/generate.py; see spec/diff.md.",
        by_alias=True,
    )


def capabilities_schema() -> str:
    from llm_do.compiler.report.schemas import CapabilitiesDocument

    return _schema(
        CapabilitiesDocument, "capabilities:1", "llm-do capabilities --format json (format 1)",
        "What `llm-do capabilities --format json` prints. Generated from "
        "llm_do.compiler.report.schemas.CapabilitiesDocument by spec/generate.py; see spec/diff.md.",
    )


def case_schema() -> str:
    from llm_do.cli.testing.cases import CaseFile

    return _schema(
        CaseFile, "case:1", "llm-do test case file (tests/*.yaml)",
        "A file of cases `llm-do test` runs. Generated from llm_do.cli.testing.cases.CaseFile by "
        "spec/generate.py; see spec/testing.md.",
        by_alias=True,
    )


def cassette_schema() -> str:
    from llm_do.runtime.recording.cassette import CASSETTE_FORMAT, Cassette

    return _schema(
        Cassette, f"cassette:{CASSETTE_FORMAT}", f"llm-do cassette (cassette_format {CASSETTE_FORMAT})",
        "A run's model traffic as `--record` writes it and `llm-do test` replays it. Generated from "
        "llm_do.runtime.recording.cassette.Cassette by spec/generate.py; see spec/testing.md.",
    )


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def diagnostics_md() -> str:
    from llm_do.compiler.codes import RULES

    unknown = sorted({code[0] for code in RULES} - set(CATEGORIES))
    if unknown:
        raise SystemExit(f"spec/generate.py: no category title for code letter(s) {', '.join(unknown)}; add them to CATEGORIES")
    lines = [
        "<!-- GENERATED by spec/generate.py from compiler/llm_do/compiler/codes.py: do not edit by hand.",
        "     Run `python spec/generate.py` after changing the rule registry. -->",
        "",
        "# Diagnostics",
        "",
        "Every problem the compiler reports (`llm-do build`, `llm-do lint`, `llm-do graph`) carries one",
        "of these codes. A code never changes meaning. `llm-do explain CODE` prints the same text.",
        "Errors stop a build; warnings and infos do not (`llm-do lint --strict` exits 1 on warnings",
        "too). A project may silence warning and info codes with `suppress` in project.json",
        "([language.md](language.md#projectjson)); errors cannot be silenced.",
        "",
        "Each diagnostic has a `file` relative to the project root (never null), a 1-based `line` and",
        "`column` counted in code points ([language.md](language.md#positions)), a one-line `message`,",
        "and optionally a `hint` and related locations.",
        "",
        "| Code | Name | Severity | Summary |",
        "|---|---|---|---|",
    ]
    ordered = sorted(RULES.values(), key=lambda r: (list(CATEGORIES).index(r.code[0]), r.code))
    for r in ordered:
        lines.append(f"| [{r.code}](#{r.code.lower()}) | `{r.name}` | {r.severity} | {_cell(r.summary)} |")
    current = None
    for r in ordered:
        if r.code[0] != current:
            current = r.code[0]
            lines += ["", f"## {current}: {CATEGORIES[current]}"]
        lines += [
            "",
            f"### {r.code}",
            "",
            f"**{r.name}** ({r.severity}). {r.summary}",
            "",
            r.explanation,
        ]
    return "\n".join(lines) + "\n"


GENERATED: dict[str, Callable[[], str]] = {
    "spec/diagnostics.md": diagnostics_md,
    f"{SCHEMAS_DIR}/project.schema.json": project_schema,
    f"{SCHEMAS_DIR}/worker.schema.json": worker_schema,
    f"{SCHEMAS_DIR}/bundle.schema.json": bundle_schema,
    f"{SCHEMAS_DIR}/diff.schema.json": diff_schema,
    f"{SCHEMAS_DIR}/capabilities.schema.json": capabilities_schema,
    f"{SCHEMAS_DIR}/case.schema.json": case_schema,
    f"{SCHEMAS_DIR}/cassette.schema.json": cassette_schema,
}
"""Each generated file, relative to the checkout, and the function that renders it."""


def render_all() -> dict[Path, str]:
    return {ROOT / rel: render() for rel, render in GENERATED.items()}


def stale_files() -> list[Path]:
    """Generated files that are missing or differ from what the code renders now."""
    out = []
    for path, text in render_all().items():
        try:
            current = path.read_bytes()
        except FileNotFoundError:
            current = None
        if current != text.encode("utf-8"):
            out.append(path)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a generated file is stale")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files()
        for path in stale:
            print(f"stale: {path.relative_to(ROOT).as_posix()}", file=sys.stderr)
        if stale:
            print("run `python spec/generate.py` to regenerate", file=sys.stderr)
            return 1
        print("spec/ generated files are up to date", file=sys.stderr)
        return 0
    for path, text in render_all().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        old = path.read_bytes() if path.exists() else None
        if old != text.encode("utf-8"):
            path.write_bytes(text.encode("utf-8"))
            print(f"wrote {path.relative_to(ROOT).as_posix()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

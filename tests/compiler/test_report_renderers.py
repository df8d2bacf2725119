"""One renderer signature for every report: `report.Renderer`, the report's data in, text out.

The diagnostics renderers print exactly what `llm-do lint --format F` prints (text on stderr, the
others on stdout); the graph and capabilities tables take their data as their one argument."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from llm_do.compiler.capability_report import RENDERERS as CAPABILITY_RENDERERS
from llm_do.compiler.graph_export import RENDERERS as GRAPH_RENDERERS
from llm_do.compiler.pipeline import compile_project
from llm_do.compiler.report.diagnostics import FORMATS, ProjectDiagnostics, renderer
from tests.support.cli import run_cli, write_project

BROKEN = {
    "project.json": {"version": 1, "worker_files": ["*.worker"]},
    "main.worker": "---\ntoolsets:\n  - helpr\n  - helper\n---\nWrite about {{ topic }}.\n",
    "helper.worker": "---\nname: helper\n---\nHelp.\n",
    "orphan.worker": "---\nname: orphan\n---\nNobody calls me.\n",
}
PLAIN_ENV: dict[str, str | None] = {"FORCE_COLOR": None, "NO_COLOR": None, "TTY_COMPATIBLE": None,
                                    "TTY_INTERACTIVE": None, "COLUMNS": "500", "TERM": "dumb"}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_each_diagnostics_renderer_prints_what_lint_prints(fmt: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    write_project(tmp_path / "proj", BROKEN)
    monkeypatch.chdir(tmp_path)
    result = compile_project(Path("proj"), import_python=False, emit_bundle=False)
    assert result.diagnostics
    rendered = renderer(fmt)([ProjectDiagnostics("proj", result.loaded.root, result.diagnostics)])
    assert isinstance(rendered, str) and rendered
    lint = run_cli("lint", "proj", "--format", fmt, cwd_to=tmp_path, env=PLAIN_ENV)
    assert lint.exit_code == 1
    assert rendered + "\n" == (lint.stderr if fmt == "text" else lint.stdout)


@pytest.mark.parametrize("table", [GRAPH_RENDERERS, CAPABILITY_RENDERERS], ids=["graph", "capabilities"])
def test_report_renderers_take_the_report_as_their_one_argument(table: dict) -> None:
    for fmt, render in table.items():
        params = list(inspect.signature(render).parameters.values())
        assert len(params) == 1 and params[0].default is inspect.Parameter.empty, fmt
        assert inspect.signature(render).return_annotation in ("str", str), fmt

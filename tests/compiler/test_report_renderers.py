"""One renderer signature for every report: `report.Renderer`, the report's data in, text out.

The diagnostics renderers print exactly what `llm-do lint --format F` prints (text on stderr, the
others on stdout); every family's table takes the report's data as the one argument its
renderers need (options, such as text's `color`, are keyword-only with defaults)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from llm_do.compiler.pipeline import compile_project
from llm_do.compiler.report.capabilities import RENDERERS as CAPABILITY_RENDERERS
from llm_do.compiler.report.diagnostics import RENDERERS as DIAGNOSTICS_RENDERERS
from llm_do.compiler.report.diagnostics import ProjectDiagnostics
from llm_do.compiler.report.diff import RENDERERS as DIFF_RENDERERS
from llm_do.compiler.report.graph import RENDERERS as GRAPH_RENDERERS
from tests.support.cli import run_cli, write_project

BROKEN = {
    "project.json": {"version": 1, "worker_files": ["*.worker"]},
    "main.worker": "---\ntoolsets:\n  - helpr\n  - helper\n---\nWrite about {{ topic }}.\n",
    "helper.worker": "---\nname: helper\n---\nHelp.\n",
    "orphan.worker": "---\nname: orphan\n---\nNobody calls me.\n",
}
PLAIN_ENV: dict[str, str | None] = {"FORCE_COLOR": None, "NO_COLOR": None, "TTY_COMPATIBLE": None,
                                    "TTY_INTERACTIVE": None, "COLUMNS": "500", "TERM": "dumb"}


@pytest.mark.parametrize("fmt", sorted(DIAGNOSTICS_RENDERERS))
def test_each_diagnostics_renderer_prints_what_lint_prints(fmt: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    write_project(tmp_path / "proj", BROKEN)
    monkeypatch.chdir(tmp_path)
    for name, value in PLAIN_ENV.items():  # the renderer here sees what lint's process sees
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    result = compile_project(Path("proj"), import_python=False, emit_bundle=False)
    assert result.diagnostics
    rendered = DIAGNOSTICS_RENDERERS[fmt]([ProjectDiagnostics("proj", result.loaded.root, result.diagnostics)])
    assert isinstance(rendered, str) and rendered
    lint = run_cli("lint", "proj", "--format", fmt, cwd_to=tmp_path, env=PLAIN_ENV)
    assert lint.exit_code == 1
    assert rendered + "\n" == (lint.stderr if fmt == "text" else lint.stdout)


@pytest.mark.parametrize("table", [GRAPH_RENDERERS, CAPABILITY_RENDERERS, DIFF_RENDERERS, DIAGNOSTICS_RENDERERS],
                         ids=["graph", "capabilities", "diff", "diagnostics"])
def test_report_renderers_take_the_report_as_their_one_argument(table: dict) -> None:
    for fmt, render in table.items():
        params = list(inspect.signature(render).parameters.values())
        required = [p for p in params if p.default is inspect.Parameter.empty]
        assert len(required) == 1 and required[0] is params[0], fmt
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[1:]), fmt
        assert inspect.signature(render).return_annotation in ("str", str), fmt

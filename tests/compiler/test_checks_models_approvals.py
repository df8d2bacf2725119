"""Models (M001-M003), approval rule syntax and targets (A001-A002) and suppression in project.json (C001)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import write_project
from tests.support.lint import Lint, lint

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"],
                     "defaults": {"model": "anthropic:claude-sonnet-4-5"}},
    "main.worker": "---\ntoolsets: [m001a, m001b, m001c, m002, m003, ok1, ok2, ok3, approver]\n---\nx\n",
    "m001a.worker": "---\nmodel: opnai:gpt-4o\n---\nx\n",
    "m001b.worker": "---\nmodel: gpt-4o\n---\nx\n",
    "m001c.worker": "---\nmodel: google-gla:gemini-2.0-flash\n---\nx\n",
    "m002.worker": "---\nmodel: openai:gpt-4o\ncompatible_models: ['openai:*']\n---\nx\n",
    # compatible_models are case-sensitive: the default matches neither pattern
    "m003.worker": "---\ncompatible_models: ['openai:*', 'Anthropic:*']\n---\nx\n",
    "ok1.worker": "---\ncompatible_models: ['anthropic:claude-*']\n---\nx\n",
    "ok2.worker": "---\nmodel: test\n---\nx\n",
    "ok3.worker": "---\nmodel: ollama:llama3.2\n---\nx\n",
    "approver.worker": """
        ---
        toolsets: [filesystem_project, ok2]
        approvals:
          - ask *
          - allow read_file
          - deny write_*
          - allow ok2
          - ask filesystem_project(path ~ 'secret/**')
          - permit read_file
          - allow
          - allow read_file now
          - ask read_fle
          - deny shell
        ---
        x
        """,
}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Lint:
    return lint(write_project(tmp_path_factory.mktemp("models"), PROJECT))


def test_unknown_provider_with_did_you_mean(models: Lint) -> None:
    models.expect("M001", "m001a.worker", "opnai:gpt-4o", suggests="openai", mentions=("opnai",))


def test_model_without_provider_prefix(models: Lint) -> None:
    d = models.expect("M001", "m001b.worker", "gpt-4o")
    assert "openai:gpt-4o" in d["hint"]


def test_provider_renamed_in_pydantic_ai_2(models: Lint) -> None:
    d = models.expect("M001", "m001c.worker", "google-gla:gemini-2.0-flash")
    assert "google:gemini-2.0-flash" in d["hint"]


def test_model_and_compatible_models_together(models: Lint) -> None:
    models.expect("M002", "m002.worker", "compatible_models")


def test_default_model_matching_no_compatible_pattern(models: Lint) -> None:
    models.expect("M003", "m003.worker", "compatible_models", mentions=("anthropic:claude-sonnet-4-5",))


@pytest.mark.parametrize(("rule", "offset"), [("permit read_file", 0), ("allow\n", 5), ("allow read_file now", 16)])
def test_invalid_approval_rule_at_the_word_that_does_not_fit(models: Lint, rule: str, offset: int) -> None:
    line, column = models.at("approver.worker", rule)
    models.expect("A001", "approver.worker", line=line, column=column + offset)


def test_approval_rule_matching_no_tool_points_at_the_target(models: Lint) -> None:
    line, column = models.at("approver.worker", "read_fle")
    models.expect("A002", "approver.worker", line=line, column=column, suggests="read_file", mentions=("read_fle",))
    models.expect("A002", "approver.worker", "shell", mentions=("shell",))


def test_models_project_reports_exactly_these(models: Lint) -> None:
    """Valid models (a pattern the default matches, `test`, another provider) and rules naming a
    tool, a toolset, a worker or a glob are fine."""
    assert models.exit_code == 1
    assert sorted(models.summary()) == sorted(
        [("M001", f"m001{x}.worker", 2) for x in "abc"]
        + [("M002", "m002.worker", 3), ("M003", "m003.worker", 2)]
        + [("A001", "approver.worker", models.at("approver.worker", r)[0])
           for r in ("permit read_file", "allow\n", "allow read_file now")]
        + [("A002", "approver.worker", models.at("approver.worker", r)[0]) for r in ("ask read_fle", "deny shell")]
        + [("B002", "ok3.worker", 2)]  # a valid model, but no price is known for a local one (spec/cost.md)
    )


def test_unknown_provider_of_the_project_default(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "defaults": {"model": "antropic:claude"}},
        "main.worker": "---\n---\nx\n",
    })
    result = lint(root)
    result.expect("M001", "project.json", '"antropic:claude"', suggests="anthropic")
    assert result.exit_code == 1


# --- suppression

SUPPRESSED = {
    "main.worker": "---\ntoolsets: [helper, helper, nowhere]\n---\nx\n",
    "helper.worker": "---\n---\nx\n",
    "orphan.worker": "---\n---\nx\n",
}


def test_suppressed_warning_codes_are_not_reported(tmp_path: Path) -> None:
    files = {**SUPPRESSED, "main.worker": "---\ntoolsets: [helper, helper]\n---\nx\n"}
    unsuppressed = lint(write_project(tmp_path / "before", {
        "project.json": {"version": 1, "worker_files": ["*.worker"]}, **files}))
    assert sorted(unsuppressed.codes()) == ["G003", "N007"]
    result = lint(write_project(tmp_path / "after", {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "suppress": ["G003", "N007"]}, **files}))
    assert result.diagnostics == []
    assert result.exit_code == 0


def test_suppressing_an_error_or_an_unknown_code_is_c001_and_the_error_stays(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "suppress": ["G003", "N003", "Z999"]},
        **SUPPRESSED,
    })
    result = lint(root)
    result.expect("C001", "project.json", '"N003"', mentions=("N003",))
    result.expect("C001", "project.json", '"Z999"', mentions=("Z999",))
    result.expect("N003", "main.worker", "nowhere")
    result.absent("G003")
    assert sorted(result.codes()) == ["C001", "C001", "N003", "N007"]
    assert result.exit_code == 1

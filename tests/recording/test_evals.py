"""Evals with --live: a case repeats and is scored (output checks and an LLM judge shaped like
pydantic_evals'), the report is a file named by the bundle digest, and `llm-do diff` says which cases
passed before and after when both sides have one. The live models here are pydantic-ai's offline
TestModel and FunctionModel: nothing leaves the machine."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pydantic_ai import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel

from llm_do.cli.testing.evals import EvaluatorContext, Judge, JudgeSpec
from tests.support.cli import run_cli, worker, write_project

CASES = """
cases:
  - name: says-success
    input: hi
    repeat: 3
    evaluators:
      - contains: success
    expect:
      limits: {requests: 1}
  - name: judged
    input: hi
    evaluators:
      - judge: {rubric: The answer greets the user by name., model: test}
"""


def test_a_live_case_repeats_is_scored_and_reported_by_digest(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
        "main.worker": worker("description: Greets.\nmodel: test", "Greet."),
        "tests/cases.yaml": CASES,
    })
    result = run_cli("test", root, "--live")
    assert result.exit_code == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "PASS says-success (tests/cases.yaml:2)"
    # TestModel, as a judge, answers the schema's plainest values: not passed, score 0, reason 'a'
    assert lines[1:4] == ["FAIL judged (tests/cases.yaml:9)",
                          "  0 of 1 run passed; 1 must (pass_rate 1: the share of runs that must pass)",
                          "  judge: The answer greets the user by name.: a"]
    reports = list((root / "tests" / "evals").glob("*.json"))
    assert len(reports) == 1 and f"wrote tests/evals/{reports[0].name}" in result.stderr
    report = json.loads(reports[0].read_text())
    assert reports[0].stem == report["bundle_digest"].removeprefix("sha256:")
    assert report["cases"]["says-success"] == {"status": "passed", "runs": 3, "runs_passed": 3,
                                               "evaluators": {"contains 'success'": {"passed": 3}}}
    assert report["cases"]["judged"]["evaluators"] == {
        "judge: The answer greets the user by name.": {"passed": 0, "mean_score": 0.0}}


def test_diff_shows_which_cases_passed_before_and_after(tmp_path: Path) -> None:
    old = write_project(tmp_path / "old", {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
        "main.worker": worker("description: Greets.\nmodel: test", "Greet."),
        "tests/cases.yaml": "cases:\n  - name: answers\n    input: hi\n    evaluators: [{contains: success}]\n"
                            "  - name: mentions-a-name\n    input: hi\n    evaluators: [{contains: Dana}]\n",
    })
    assert run_cli("test", old, "--live").exit_code == 1
    new = tmp_path / "new"
    shutil.copytree(old, new)
    (new / "main.worker").write_text(worker("description: Greets.\nmodel: test", "Greet warmly."))
    (new / "tests" / "cases.yaml").write_text(
        "cases:\n  - name: answers\n    input: hi\n    evaluators: [{contains: nothing like it}]\n")
    assert run_cli("test", new, "--live").exit_code == 1
    result = run_cli("diff", old, new)
    assert result.stdout.endswith("\nCases (llm-do test --live reports):\n"
                                  "  passed before and after: none\n"
                                  "  failing before and after: none\n"
                                  "  now failing: answers\n"
                                  "  now passing: none\n"
                                  "  cases removed: mentions-a-name\n"), result.stdout


def test_the_llm_judge_grades_with_a_pydantic_ai_agent() -> None:
    seen: list[str] = []

    def grade(messages: list, info: object) -> ModelResponse:
        seen.append(messages[0].parts[-1].content)
        return ModelResponse(parts=[ToolCallPart("final_result", {"reason": "greets Dana", "passed": True, "score": 0.9})])

    judge = Judge(judge=JudgeSpec(rubric="Greets the user by name."))
    verdict = judge.evaluate(EvaluatorContext("c", "hi, I am Dana", "Hello Dana!"), FunctionModel(grade))
    assert (verdict.value, verdict.reason, verdict.score) == (True, "greets Dana", 0.9)
    assert seen == ["<Input>\nhi, I am Dana\n</Input>\n<Output>\nHello Dana!\n</Output>\n<Rubric>\nGreets the user by name.\n</Rubric>"]

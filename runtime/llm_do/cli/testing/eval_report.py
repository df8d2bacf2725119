"""The report of a live run of the cases (`llm-do test --live`): a file in the project named by the
bundle digest (`tests/evals/HEX.json`, committed if the project wants it), so `llm-do diff` can say,
when both sides have one, which cases passed before and after."""

from __future__ import annotations

import json
from pathlib import Path

from .case_run import CaseResult

REPORTS_DIR = "tests/evals"


def report_path(root: Path, digest: str) -> Path:
    return root / REPORTS_DIR / f"{digest.removeprefix('sha256:')}.json"


def report_text(results: list[CaseResult], digest: str) -> str:
    """Sorted, indented JSON: per case its status, runs, runs passed and each evaluator's passes and
    mean score."""
    cases: dict[str, object] = {}
    for result in results:
        evaluators: dict[str, dict[str, object]] = {}
        for run in result.runs:
            for label, verdict in run.evaluations.items():
                entry = evaluators.setdefault(label, {"passed": 0, "scores": []})
                entry["passed"] = int(str(entry["passed"])) + (1 if verdict.value else 0)
                if verdict.score is not None:
                    scores = entry["scores"]
                    assert isinstance(scores, list)
                    scores.append(verdict.score)
        for entry in evaluators.values():
            scores = entry.pop("scores")
            assert isinstance(scores, list)
            if scores:
                entry["mean_score"] = round(sum(scores) / len(scores), 4)
        cases[result.name] = {"status": result.status, "runs": len(result.runs) or 1,
                              "runs_passed": sum(1 for r in result.runs if r.passed) if result.runs else int(result.status == "passed"),
                              "evaluators": evaluators}
    return json.dumps({"bundle_digest": digest, "cases": cases}, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def read_status(path: Path) -> dict[str, str] | None:
    """Case name -> status of a report file; None when there is none (or it is not a report)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {name: str(case["status"]) for name, case in data["cases"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def compare(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Lines saying which cases passed before and after."""
    def names(which: list[str]) -> str:
        return ", ".join(sorted(which)) or "none"

    both = [n for n in after if n in before]
    lines = [
        f"passed before and after: {names([n for n in both if before[n] == after[n] == 'passed'])}",
        f"failing before and after: {names([n for n in both if before[n] != 'passed' and after[n] != 'passed'])}",
        f"now failing: {names([n for n in both if before[n] == 'passed' and after[n] != 'passed'])}",
        f"now passing: {names([n for n in both if before[n] != 'passed' and after[n] == 'passed'])}",
    ]
    if added := [n for n in after if n not in before]:
        lines.append(f"new cases: {', '.join(f'{n} ({after[n]})' for n in sorted(added))}")
    if gone := [n for n in before if n not in after]:
        lines.append(f"cases removed: {names(gone)}")
    return lines

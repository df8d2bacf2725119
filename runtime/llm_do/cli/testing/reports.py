"""The results of `llm-do test` in each output format: renderers over one list of `CaseResult`s,
nothing more (text, json, github annotations; JUnit XML for CI)."""

from __future__ import annotations

import json
from collections.abc import Callable
from xml.etree import ElementTree

from .case_run import CaseResult

LABELS = {"passed": "PASS", "failed": "FAIL", "stale": "STALE"}


def summary(results: list[CaseResult]) -> str:
    counts = {status: sum(1 for r in results if r.status == status) for status in LABELS}
    parts = [f"{counts['passed']} passed", f"{counts['failed']} failed", f"{counts['stale']} stale"]
    return f"{len(results)} case{'s' if len(results) != 1 else ''}: " + ", ".join(parts)


def text(results: list[CaseResult], *, failures_only: bool = False) -> str:
    """A block per case (`failures_only`, `test -q`: per case that did not pass), then the summary."""
    lines = []
    for result in results:
        if failures_only and result.status == "passed":
            continue
        lines.append(f"{LABELS[result.status]} {result.name} ({result.case.shown}:{result.case.line})")
        if result.hint is not None:
            lines.append(f"  {result.hint}")
        for problem in result.problems:
            lines.extend("  " + line for line in problem.splitlines())
        if result.recorded is not None:
            lines.append(f"  recorded {result.recorded.name}")
    lines.append(summary(results))
    return "\n".join(lines)


def failures_text(results: list[CaseResult]) -> str:
    return text(results, failures_only=True)


def as_json(results: list[CaseResult]) -> str:
    data = {"cases": [{"name": r.name, "file": r.case.shown, "line": r.case.line, "status": r.status, "problems": r.problems}
                      for r in results],
            "passed": sum(1 for r in results if r.status == "passed"),
            "failed": sum(1 for r in results if r.status == "failed"),
            "stale": sum(1 for r in results if r.status == "stale")}
    return json.dumps(data, indent=2, ensure_ascii=False)


def github(results: list[CaseResult]) -> str:
    """GitHub Actions workflow commands: one `::error` per case that did not pass."""
    lines = []
    for result in results:
        if result.status == "passed":
            continue
        message = f"case '{result.name}' {result.status}: " + "; ".join(p.splitlines()[0] for p in result.problems)
        message = message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        lines.append(f"::error file={result.case.shown},line={result.case.line},title=llm-do test::{message}")
    lines.append(summary(results))
    return "\n".join(lines)


FORMATS: dict[str, Callable[[list[CaseResult]], str]] = {"text": text, "json": as_json, "github": github}


def junit(results: list[CaseResult]) -> bytes:
    """JUnit XML: one testsuite per case file, a `failure` per failed or stale case."""
    root = ElementTree.Element("testsuites", name="llm-do test", tests=str(len(results)),
                               failures=str(sum(1 for r in results if r.status != "passed")))
    suites: dict[str, ElementTree.Element] = {}
    for result in results:
        suite = suites.get(result.case.shown)
        if suite is None:
            suite = suites[result.case.shown] = ElementTree.SubElement(root, "testsuite", name=result.case.shown)
        case = ElementTree.SubElement(suite, "testcase", name=result.name, classname=result.case.shown,
                                      file=result.case.shown, line=str(result.case.line))
        if result.status != "passed":
            failure = ElementTree.SubElement(case, "failure", type=result.status,
                                             message=(result.problems[0].splitlines()[0] if result.problems else result.status))
            failure.text = "\n".join(result.problems)
    for suite in suites.values():
        cases = suite.findall("testcase")
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
    ElementTree.indent(root)
    text: bytes = ElementTree.tostring(root, encoding="utf-8")
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + text + b"\n"

"""Every example under examples/ is a real project: it lints clean, builds byte-identically (twice,
and from another path), and runs its whole flow offline from its script with exit 0.

Each example is copied to a temporary directory first: runs move and write files, and the tree
under examples/ must stay as users find it.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import run_cli

EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "examples"
EXAMPLES = sorted(p.parent.name for p in EXAMPLES_DIR.glob("*/project.json"))
REQUIRED = {"greeter", "orchestrator", "recursive_summarizer", "python_tools", "file_organizer",
            "templated_reviewer", "legacy_agent"}

# Warnings (and infos) an example is about: python_tools is about project Python, which its
# single-file worker uses (Y007); status_page about the lethal trifecta it notes (R005); every other example must lint without any diagnostic.
EXPECTED_WARNINGS: dict[str, list[str]] = {"legacy_agent": ["L002"], "python_tools": ["Y007"], "status_page": ["R005"]}
# Flags its README puts on the exec command line.
EXEC_FLAGS: dict[str, list[str]] = {"file_organizer": ["--approve-all"], "directory_workers": ["--approve-all"],
                                    "status_page": ["--approve-all"]}
# Exit codes other than 0 its README says the run ends with: status_page's --approve-all meets a flow denial (5).
EXEC_STATUS: dict[str, int] = {"status_page": 5}


# --- helpers


def copy_example(name: str, dest: Path) -> Path:
    """examples/NAME at `dest`, without what a local build or run left behind."""
    shutil.copytree(EXAMPLES_DIR / name, dest, ignore=shutil.ignore_patterns("bundle.lock", "__pycache__"))
    return dest


def script_path(project: Path) -> Path:
    scripts = [p for p in (project / "script.json", project / "script.yaml") if p.exists()]
    assert len(scripts) == 1, f"{project.name} must ship exactly one script.json or script.yaml"
    return scripts[0]


def load_script(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    return yaml.safe_load(text) if path.suffix == ".yaml" else json.loads(text)


def entry_worker(project: Path) -> str:
    entry = json.loads((project / "project.json").read_text(encoding="utf-8")).get("entry") or {}
    return entry.get("worker") or entry.get("agent") or "main"


def expected_output(project: Path) -> str:
    """The entry worker's last scripted turn: what the run must print."""
    last = load_script(script_path(project))["workers"][entry_worker(project)][-1]
    assert "text" in last, "the entry worker of an example ends with a text turn"
    return last["text"]


def build(project: Path) -> bytes:
    result = run_cli("build", project)
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    return (project / "bundle.lock").read_bytes()


def run_example(project: Path, events: Path, *extra: str) -> Any:
    """`llm-do exec` of the project's bundle with its script, strictly: a turn its flow never plays fails it."""
    return run_cli("exec", project / "bundle.lock", "--script", script_path(project), "--strict-script", "--events", events,
                   *extra)


def read_events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def events_of(events: list[dict[str, Any]], kind: str, **match: Any) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == kind and all(e.get(k) == v for k, v in match.items())]


@pytest.fixture(autouse=True)
def _isolated_user_modules(tmp_path_factory: pytest.TempPathFactory):
    """Examples share module names (schemas, tools): around each test, forget the modules runs
    imported from temporary projects, and the roots the runtime put on sys.path."""
    base = str(tmp_path_factory.getbasetemp())

    def forget() -> None:
        for name, module in list(sys.modules.items()):
            if (getattr(module, "__file__", None) or "").startswith(base):
                del sys.modules[name]

    forget()  # what earlier tests imported from their own temporary projects
    path = list(sys.path)
    yield
    forget()
    sys.path[:] = path


# --- the set of examples


def test_every_required_example_is_there_with_readme_and_script() -> None:
    assert REQUIRED <= set(EXAMPLES), f"missing: {sorted(REQUIRED - set(EXAMPLES))}"
    index = (EXAMPLES_DIR / "README.md").read_text(encoding="utf-8")
    for name in EXAMPLES:
        project = EXAMPLES_DIR / name
        readme = (project / "README.md").read_text(encoding="utf-8")
        script = script_path(project)
        assert "llm-do build " in readme and "--script " in readme and script.name in readme, name
        assert f"({name}/)" in index or f"({name}/README.md)" in index, f"examples/README.md does not link {name}"
    assert any(script_path(EXAMPLES_DIR / n).suffix == ".yaml" for n in EXAMPLES), "at least one YAML script"
    for name in EXAMPLES:
        cases = (EXAMPLES_DIR / name / "tests" / "cases.yaml").read_text(encoding="utf-8")
        assert "cassette: cassettes/" in cases, f"{name}'s cases replay a cassette"
        assert list((EXAMPLES_DIR / name / "tests" / "cassettes").glob("*.json")), name


# --- each example, end to end


@pytest.mark.parametrize("name", EXAMPLES)
@pytest.mark.process
def test_example_builds_reproducibly_and_runs_its_script(name: str, tmp_path: Path, snapshot) -> None:
    project = copy_example(name, tmp_path / "a" / name)

    lint = run_cli("lint", project, "--format", "json")
    assert lint.exit_code == 0, lint.stdout + lint.stderr
    codes = [d["code"] for d in lint.json()["diagnostics"]]
    assert codes == EXPECTED_WARNINGS.get(name, []), lint.stdout

    first = build(project)
    assert build(project) == first, "a second build of the same project gave other bytes"
    elsewhere = copy_example(name, tmp_path / "b" / "some" / "other" / "place")
    assert build(elsewhere) == first, "the same project at another path gave other bytes"
    assert str(tmp_path) not in first.decode("utf-8")

    graph = run_cli("graph", project / "bundle.lock", "--format", "json")
    assert graph.exit_code == 0, graph.stderr
    assert graph.json() == snapshot

    events_file = tmp_path / "events.jsonl"
    result = run_example(project, events_file, *EXEC_FLAGS.get(name, []))
    assert result.exit_code == EXEC_STATUS.get(name, 0), result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == expected_output(project) + "\n"
    events = read_events(events_file)
    assert events[-1]["event"] == "run_finished"
    CHECKS.get(name, lambda project, events: None)(project, events)

    # its cases replay their cassettes offline (in a scratch copy of the project as it was before the run)
    cases = run_cli("test", elsewhere, "--format", "json")
    assert cases.exit_code == 0, cases.stdout + cases.stderr
    report = cases.json()
    assert report["passed"] == len(report["cases"]) >= 1


# --- what each example's flow must have done, beyond its final output


def check_orchestrator(project: Path, events: list[dict[str, Any]]) -> None:
    script = load_script(script_path(project))["workers"]
    (classified,) = events_of(events, "worker_finished", worker="ticket_classifier")
    assert classified["depth"] == 2
    assert classified["output"] == script["ticket_classifier"][0]["output"], "the structured output, validated"
    (drafted,) = events_of(events, "worker_finished", worker="reply_drafter")
    assert drafted["depth"] == 2
    # The typed input: the classifier was called with the fields of schemas.py:Ticket.
    (call,) = events_of(events, "tool_called", worker="triage", tool="ticket_classifier")
    assert set(call["args"]) == {"subject", "body", "customer_plan"}


def check_recursive_summarizer(project: Path, events: list[dict[str, Any]]) -> None:
    assert [e["depth"] for e in events_of(events, "worker_started", worker="summarize")] == [1, 2, 2]
    reads = events_of(events, "tool_returned", tool="read_file", outcome="ok")
    doc = (project / "docs" / "incident-2024-03-18-checkout-outage.md").read_text(encoding="utf-8")
    second_half = [e for e in reads if e["depth"] == 2 and e["result"].startswith("## Why it happened")]
    assert second_half and doc[2505:].startswith("## Why it happened"), "the second half was read at its offset"
    bundle = json.loads((project / "bundle.lock").read_text(encoding="utf-8"))
    assert bundle["runtime"]["max_depth"] == 3


def check_python_tools(project: Path, events: list[dict[str, Any]]) -> None:
    (items,) = events_of(events, "tool_returned", tool="extract_action_items")
    assert items["outcome"] == "ok"
    for owner in ("Ben Okafor", "Ana Ruiz", "Dmitri Volkov", "Chen Wei"):
        assert owner in items["result"]
    (due,) = events_of(events, "tool_returned", tool="add_business_days")
    assert due["result"] == "2024-05-21"  # five working days after Tuesday 14 May
    assert [e["result"] for e in events_of(events, "tool_returned", tool="weekday")].count("Friday") == 2
    # The Python tool delegated to a worker: it ran one level below the worker that called the tool.
    (summarizer,) = events_of(events, "worker_started", worker="discussion_summarizer")
    assert summarizer["depth"] == 2
    approvals = {e["tool"]: e["approval"] for e in events_of(events, "tool_called", worker="notes_assistant")}
    assert approvals["extract_action_items"] == approvals["summarize_discussion"] == approvals["weekday"] == "allow"


def check_directory_workers(project: Path, events: list[dict[str, Any]]) -> None:
    bundle = json.loads((project / "bundle.lock").read_text(encoding="utf-8"))
    workers = bundle["workers"]
    assert set(workers) == {"main", "analyzer", "formatter"}, "worker.worker is named after its directory"
    assert workers["formatter"]["tools"]["bullet_list"]["toolset"] == "workers.formatter.tools.TOOLS"
    assert workers["analyzer"]["tools"]["count_by_kind"]["toolset"] == "workers.analyzer.tools.TOOLS"
    assert "bullet_list" not in workers["analyzer"]["tools"] and "count_by_kind" not in workers["formatter"]["tools"]
    for source in ("workers/formatter/tools.py", "workers/formatter/markdown.py", "workers/analyzer/tools.py",
                   "workers/formatter/header.j2", "templates/tone.md"):
        assert source in bundle["sources"], f"{source} is an input of the bundle"
    instructions = workers["formatter"]["instructions"]
    assert instructions.startswith("You format release digests.") and "plain words" in instructions
    assert [e["result"] for e in events_of(events, "tool_returned", worker="formatter", tool="bullet_list")] == [
        "- Export reports as CSV\n- Dark mode for the dashboard",
        "- Dates in the audit log were shown in UTC\n- The search box lost focus after a refresh"]
    (counted,) = events_of(events, "tool_returned", worker="analyzer", tool="count_by_kind")
    assert json.loads(counted["result"]) == {"chore": 1, "feat": 2, "fix": 2}
    assert all(e["approval"] == "ask" for e in events_of(events, "tool_called", worker="formatter"))


INBOX_FILED = {
    "invoice-acme-hosting-2024-04.txt": "finance",
    "receipt-2024-03-12-hardware-store.txt": "finance",
    "q2-roadmap-draft.md": "work",
    "1on1-notes-jordan.md": "work",
    "shakshuka-recipe.md": "personal",
}


def check_file_organizer(project: Path, events: list[dict[str, Any]]) -> None:
    original = EXAMPLES_DIR / "file_organizer" / "inbox"
    assert sorted(p.name for p in (project / "inbox").iterdir()) == ["untitled.txt"]
    for file, folder in INBOX_FILED.items():
        moved = project / "archive" / folder / file
        assert moved.read_bytes() == (original / file).read_bytes(), f"{file} not moved to archive/{folder}"
    log = (project / "archive" / "FILING-LOG.md").read_text(encoding="utf-8")
    for file, folder in INBOX_FILED.items():
        assert f"- {file} -> archive/{folder}/" in log
    assert "untitled.txt stays in the inbox" in log
    asked = [e for e in events_of(events, "approval_decided", worker="organize_inbox")]
    assert len(asked) == len(INBOX_FILED) + 1 and all(e["approved"] for e in asked), "each mv and the write asked"
    # The inspector's shell ran in inbox/ (its `path` setting) and could only read.
    assert all(e["outcome"] == "ok" for e in events_of(events, "tool_returned", worker="file_inspector"))


def check_templated_reviewer(project: Path, events: list[dict[str, Any]]) -> None:
    bundle = json.loads((project / "bundle.lock").read_text(encoding="utf-8"))
    style = (project / "STYLE.md").read_text(encoding="utf-8").strip()
    severities = "- `blocker`: must be fixed before merging"
    for worker in ("review", "security_review"):
        text = bundle["workers"][worker]["instructions"]
        assert "Payments API team at Northwind Pay" in text  # vars, through the shared partial
        assert style in text  # file() inside the included partial
        assert severities in text and "at most 8 findings" in text  # a loop over a vars list
        assert "{{" not in text and "{%" not in text
    assert "whenever there is a `blocker` finding" in bundle["workers"]["review"]["instructions"]
    for source in ("partials/context.md.j2", "partials/findings.md.j2", "STYLE.md"):
        assert source in bundle["sources"], f"{source} is an input of the bundle"
    (security,) = events_of(events, "worker_finished", worker="security_review")
    assert security["depth"] == 2


def check_legacy_agent(project: Path, events: list[dict[str, Any]]) -> None:
    assert [e["depth"] for e in events_of(events, "worker_started", worker="planner")] == [2, 3]
    (call,) = events_of(events, "tool_called", worker="main", tool="planner")
    assert call["args"]["remaining_depth"] == 1  # input_model_ref: schemas.py:PlannerInput (an AgentArgs)


def check_status_page(project: Path, events: list[dict[str, Any]]) -> None:
    """The taint guard asks the publish (the notes and the report reached publisher's frame), and
    --approve-all does not answer it: nothing is published."""
    assert not (project / "site" / "status.md").exists()
    (guarded,) = events_of(events, "flow_guarded", worker="publisher")
    assert guarded["private"] == [{"capability": "fs.read:project/**", "worker": "status_update", "tool": "read_file"}]
    assert guarded["untrusted"] == [{"capability": "input"}]
    (asked,) = events_of(events, "approval_decided", worker="publisher")
    assert not asked["approved"] and "--approve-all does not approve it" in asked["note"]


CHECKS: dict[str, Callable[[Path, list[dict[str, Any]]], None]] = {
    "orchestrator": check_orchestrator,
    "recursive_summarizer": check_recursive_summarizer,
    "python_tools": check_python_tools,
    "file_organizer": check_file_organizer,
    "templated_reviewer": check_templated_reviewer,
    "legacy_agent": check_legacy_agent,
    "directory_workers": check_directory_workers,
    "status_page": check_status_page,
}


# --- what the READMEs promise besides the main run


def test_file_organizer_without_approval_moves_and_writes_nothing(tmp_path: Path) -> None:
    project = copy_example("file_organizer", tmp_path / "file_organizer")
    before = sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file())
    build(project)
    events_file = tmp_path / "events.jsonl"
    result = run_example(project, events_file, "--reject-all")
    assert result.exit_code == 0, result.stderr  # denials go back to the model; the run goes on
    after = sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file() and p.name != "bundle.lock")
    assert after == before
    denied = events_of(read_events(events_file), "tool_returned", worker="organize_inbox", outcome="denied")
    assert len(denied) == len(INBOX_FILED) + 1


@pytest.mark.process
def test_legacy_agent_migrates_to_worker_files_that_build_clean_and_run_the_same(tmp_path: Path) -> None:
    project = copy_example("legacy_agent", tmp_path / "legacy_agent")
    result = run_cli("migrate", project)
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in project.glob("*.agent")) == []
    planner = (project / "planner.worker").read_text(encoding="utf-8")
    assert "schema_in_ref: schemas.py:PlannerInput" in planner and "recursive: true" in planner
    manifest = json.loads((project / "project.json").read_text(encoding="utf-8"))
    assert manifest["worker_files"] == ["main.worker", "planner.worker"] and "agent_files" not in manifest
    assert manifest["entry"]["worker"] == "main"

    lint = run_cli("lint", project, "--format", "json")
    assert lint.exit_code == 0 and lint.json()["diagnostics"] == [], lint.stdout
    build(project)
    run = run_example(project, tmp_path / "events.jsonl")
    assert run.exit_code == 0, run.stderr
    assert run.stdout == expected_output(project) + "\n"
    graph = run_cli("graph", project / "bundle.lock", "--format", "json").json()
    assert {"from": "worker:planner", "to": "worker:planner", "kind": "calls", "recursive": True,
            "gated": False} in graph["edges"]


@pytest.mark.process
def test_two_examples_with_a_schemas_module_run_one_after_the_other_in_one_process(tmp_path: Path) -> None:
    """A host (or a test suite) runs several bundles in one process: each must get its own
    `schemas.py`, the file its bundle hashed, not the module another bundle imported first."""
    for name in ("orchestrator", "legacy_agent"):
        project = copy_example(name, tmp_path / name)
        build(project)
        result = run_example(project, tmp_path / f"{name}.jsonl")
        assert result.exit_code == 0, f"{name}: {result.stderr}"
        assert result.stdout == expected_output(project) + "\n"

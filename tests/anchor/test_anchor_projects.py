"""The anchor's example projects (zby/llm-do at 8d2109a, vendored under projects/) build unchanged,
and those the test model can play run with `exec --model test --approve-all "Say hello."`.

Every project is built; none is skipped. A project is either played, built only (the reason says
why the test model cannot play it), or waits for the conversations issue (its build must fail
with exactly the diagnostics naming what that issue adds, so this test changes when it lands).
"""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import pytest

from llm_do.compiler.pipeline import CompileResult, compile_project
from llm_do.compiler.stages.emit import write_atomic
from tests.support.cli import run_cli

PROJECTS_DIR = Path(__file__).resolve().parent / "projects"
PROJECTS = sorted(p.parent.name for p in PROJECTS_DIR.glob("*/project.json"))

BUILD_ONLY: dict[str, str] = {
    "data_processor": "the test model calls calculate_stats with 'a', which the tool rejects with ValueError",
    "data_report_stabilized": "the test model calls analyze_dataset with path 'a', a file the tool opens unchecked",
    "github_triage": "fetch_notifications runs the GitHub CLI `gh` against the network",
    "orchestrating_tool": "its searcher worker uses server-side web_search, which TestModel does not support",
    "web_research_agent": "search_web needs SERPAPI_API_KEY and the network",
    "web_searcher": "it uses server-side web_search, which TestModel does not support",
}

SCRIPTED: dict[str, str] = {
    "bootstrapping": "the test model would call agent_call before agent_create; a script plays the flow its main.agent describes",
}

PLAYED = [p for p in PROJECTS if p not in BUILD_ONLY and p not in SCRIPTED]


def copy_project(name: str, dest: Path) -> Path:
    shutil.copytree(PROJECTS_DIR / name, dest, ignore=shutil.ignore_patterns("bundle.lock", "__pycache__"))
    return dest


def test_the_anchor_has_22_projects_each_classified_once() -> None:
    assert len(PROJECTS) == 22
    assert set(BUILD_ONLY) <= set(PROJECTS) and set(SCRIPTED) <= set(PROJECTS)
    assert not set(SCRIPTED) & set(BUILD_ONLY)
    assert len(PLAYED) == 15


class Built(NamedTuple):
    root: Path
    """The first copy, its bundle.lock written when the build succeeded."""
    result: CompileResult
    again: bytes | None
    """The bundle of the second copy, at another path."""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Built]:
    """Each project built twice, from two copies at different paths, by the pipeline `llm-do
    build` runs, in parallel threads (each build mostly waits on its introspection subprocess). The
    second copy takes the first one's introspection from the cache, as a user's copy would: a path
    that leaked into what the import answered still differs, since the cache puts each root back."""
    base = tmp_path_factory.mktemp("anchor")

    def build(name: str) -> tuple[str, Built]:
        one = copy_project(name, base / "one" / name)
        two = copy_project(name, base / "elsewhere" / "two" / name)
        first, second = compile_project(one), compile_project(two)
        if first.bundle is not None:
            write_atomic(one / "bundle.lock", first.bundle)
        return name, Built(one, first, second.bundle)

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(build, PROJECTS))


@pytest.mark.parametrize("name", PROJECTS)
@pytest.mark.process
def test_builds_unchanged_and_byte_identically(built, name: str) -> None:
    project = built[name]
    assert project.result.bundle is not None, [str(d) for d in project.result.diagnostics]
    assert project.result.bundle == project.again, "the same project built at another path gave other bytes"
    assert not [d for d in project.result.diagnostics if d.severity == "error"]
    result = run_cli("build", project.root, "--check")
    assert result.exit_code == 0, result.stderr
    assert "is up to date" in result.stderr


@pytest.mark.parametrize("name", PLAYED)
@pytest.mark.process
def test_runs_with_the_test_model(built, name: str) -> None:
    root = built[name].root
    result = run_cli("exec", root / "bundle.lock", "--model", "test", "--approve-all", "Say hello.", cwd_to=root, input="")
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout.strip()


@pytest.mark.process
def test_calculator_runs_its_1x_tools_pre_approved(built) -> None:
    """Plain functions under `@toolset.tool` run (pydantic-ai 1.x inference), and the factory's
    `pre_approved` lets them run when the run rejects every call that needs approval."""
    root = built["calculator"].root
    events = root / "events.jsonl"
    result = run_cli("exec", root / "bundle.lock", "--model", "test", "--reject-all", "--events", events, "Say hello.", input="")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"factorial": 1, "fibonacci": 0, "add": 0.0, "multiply": 0.0}
    called = [json.loads(line) for line in events.read_text().splitlines() if '"tool_called"' in line]
    assert sorted((e["tool"], e["approval"]) for e in called) == [
        ("add", "allow"), ("factorial", "allow"), ("fibonacci", "allow"), ("multiply", "allow")
    ]


@pytest.mark.process
def test_orchestrating_tool_takes_its_default_approval_key_as_a_note(built) -> None:
    (note,) = [d for d in built["orchestrating_tool"].result.diagnostics if d.code == "L003"]
    assert (note.severity, note.file, note.line) == ("info", "project.json", 5)
    assert "agent_calls_require_approval" in note.message


@pytest.mark.process
def test_entry_functions_of_the_agent_era_run(built) -> None:
    """`main(input_data, runtime)` (entry_logging) and `main(_input_data, runtime: CallContext)`
    (pitchdeck_eval_code_entry): entry functions without `entry.calls`, so each may call every
    worker, with the warning that says the compiler cannot see their calls."""
    for name in ("entry_logging", "pitchdeck_eval_code_entry"):
        (warning,) = [d for d in built[name].result.diagnostics if d.code == "G004"]
        assert (warning.file, warning.line) == ("project.json", 8)
    root = built["entry_logging"].root
    result = run_cli("exec", root / "bundle.lock", "--model", "test", "Hello from the log", input="")
    assert result.exit_code == 0, result.stderr
    assert "Hello from the log" in (root / "messages.log").read_text()
    root = built["pitchdeck_eval_code_entry"].root
    result = run_cli("exec", root / "bundle.lock", "--model", "test", input="")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "Evaluated 1 pitch deck(s): acma-pitchdeck"
    assert (root / "evaluations" / "acma-pitchdeck.md").read_text().strip()


@pytest.mark.process
def test_custom_provider_records_its_model_factories(built) -> None:
    assert json.loads(built["custom_provider"].result.bundle)["model_factories"] == {"http-json": "providers", "ollama-local": "providers"}


BOOTSTRAP_INSTRUCTIONS = "You are a pitch deck evaluation specialist.\n\nOutput format (Markdown):\n# {Company Name}\n{{ not a variable }}"


@pytest.mark.process
def test_bootstrapping_creates_its_evaluator_with_agent_create_and_calls_it(built, tmp_path: Path) -> None:
    """The `.agent` era's dynamic_agents: agent_create writes the evaluator into generated_agents_dir
    (approved by the project's approve_all), agent_call runs it with a deck attached, and the next
    build of a project that lists the folder takes the evaluator in."""
    root = tmp_path / "bootstrapping"
    shutil.copytree(built["bootstrapping"].root, root)  # with its bundle.lock; the fixture's copy stays as built
    (root / "input").mkdir()
    (root / "input" / "aurora-solar.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
    evaluator = {"name": "pitch_evaluator", "model": "anthropic:claude-haiku-4-5", "toolsets": [],
                 "description": "Analyze a PDF pitch deck and return a markdown evaluation report.",
                 "instructions": BOOTSTRAP_INSTRUCTIONS}
    report = "# Aurora Solar\n**Verdict:** WATCH\n"
    script = {"workers": {
        "main": [
            {"tool_calls": [{"tool": "agent_create", "args": evaluator}]},
            {"tool_calls": [{"tool": "list_files", "args": {"path": "input", "pattern": "*.pdf"}}]},
            {"tool_calls": [{"tool": "agent_call", "args": {"agent": "pitch_evaluator", "input": "Evaluate this pitch deck.",
                                                              "attachments": ["input/aurora-solar.pdf"]}}]},
            {"tool_calls": [{"tool": "write_file", "args": {"path": "evaluations/aurora-solar.md", "content": report}}]},
            {"text": "Processed input/aurora-solar.pdf into evaluations/aurora-solar.md."},
        ],
        "pitch_evaluator": [{"text": report}],
    }}
    (tmp_path / "script.json").write_text(json.dumps(script), encoding="utf-8")
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", root / "bundle.lock", "--script", tmp_path / "script.json", "--strict-script", "--events", events,
                     input="")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "Processed input/aurora-solar.pdf into evaluations/aurora-solar.md."
    assert (root / "evaluations" / "aurora-solar.md").read_text(encoding="utf-8") == report
    started = [json.loads(line) for line in events.read_text().splitlines() if '"worker_started"' in line]
    assert [(e["worker"], e["depth"]) for e in started] == [("main", 1), ("pitch_evaluator", 2)]
    created = root / "generated" / "pitch_evaluator.worker"
    assert created.read_text(encoding="utf-8").startswith(
        '---\nname: "pitch_evaluator"\ndescription: "Analyze a PDF pitch deck and return a markdown evaluation report."\n'
        'model: "anthropic:claude-haiku-4-5"\n---\n')
    manifest = json.loads((root / "project.json").read_text(encoding="utf-8"))
    manifest["agent_files"].append("generated/*.worker")
    (root / "project.json").write_text(json.dumps(manifest), encoding="utf-8")
    rebuilt = compile_project(root)
    assert rebuilt.bundle is not None, [str(d) for d in rebuilt.diagnostics]
    node = json.loads(rebuilt.bundle)["workers"]["pitch_evaluator"]
    assert node["instructions"] == BOOTSTRAP_INSTRUCTIONS
    assert (node["toolsets"], node["tools"], node["model"]) == ([], {}, "anthropic:claude-haiku-4-5")

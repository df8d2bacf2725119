"""`llm-do capabilities` and the analysis under it: own and transitive capabilities, least-gated
paths, the bundle staying flat, the R rules, and the three output formats."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from llm_do.compiler.analysis.capabilities import Analysis, Gate, Grant, WorkerView, analyse, is_side_effect
from llm_do.compiler.report.schemas import CapabilitiesDocument
from tests.support.cli import run_cli, worker, write_project

# main -> planner (asked by main) -> writer (write_file allowed by writer's rule); main -> reader.
PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "defaults": {"model": "openai:gpt-4o"},
                     # the snapshots' cost bounds: these prices, not those of the genai-prices installed
                     "cost": {"prices": {"openai:gpt-4o": {"input_mtok": 2.5, "output_mtok": 10, "context_window": 128000},
                                         "anthropic:claude-sonnet-4-5": {"input_mtok": 3, "output_mtok": 15, "context_window": 200000}}}},
    "main.worker": worker(
        """
        toolsets:
          - filesystem_project_ro
          - planner
          - reader
        approvals:
          - ask planner
        """,
        "Coordinate.",
    ),
    "planner.worker": worker("toolsets: [writer]", "Plan."),
    "writer.worker": worker(
        """
        model: anthropic:claude-sonnet-4-5
        toolsets:
          - filesystem_project: {path: out, allowed_suffixes: [".md"]}
        approvals:
          - allow write_file
        """,
        "Write.",
    ),
    "reader.worker": worker("toolsets: [shell_file_ops]", "Read."),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_project(tmp_path_factory.mktemp("caps") / "proj", PROJECT)
    assert run_cli("build", root).exit_code == 0
    return root


def caps_json(target: Path) -> dict:
    result = run_cli("capabilities", target, "--format", "json")
    assert result.exit_code == 0, result.stderr
    CapabilitiesDocument.model_validate(result.json())  # the documented shape (runtime/llm_do/cli/schemas/)
    return result.json()


def by_worker(doc: dict) -> dict[str, dict[str, dict]]:
    return {w["name"]: {c["capability"]: c for c in w["capabilities"]} for w in doc["workers"]}


def test_bundle_records_own_capabilities_with_scope(project: Path) -> None:
    doc = json.loads((project / "bundle.lock").read_text())
    writer = doc["workers"]["writer"]["capabilities"]
    assert {"capability": "fs.write:project/out/**/*.md", "tool": "write_file"} in writer
    assert {"capability": "env:ANTHROPIC_API_KEY", "model": "anthropic:claude-sonnet-4-5"} in writer
    main = {g["capability"] for g in doc["workers"]["main"]["capabilities"]}
    assert main == {"call:planner", "call:reader", "env:OPENAI_API_KEY", "fs.read:project/**"}
    assert not any(g["capability"].startswith("fs.write") for g in doc["workers"]["main"]["capabilities"])


def test_transitive_capability_has_its_path_and_gates(project: Path) -> None:
    caps = by_worker(caps_json(project))
    write = caps["main"]["fs.write:project/out/**/*.md"]
    assert write["path"] == ["main", "planner", "writer"]
    assert write["tool"] == "write_file"
    assert write["gate"] == "ask"
    assert write["gated_steps"] == [{"worker": "main", "tool": "planner", "approval": "ask", "by": "rule"}]
    assert write["side_effect"] is True
    # the planner calls without approval, and the writer's rule allows the write
    assert caps["planner"]["fs.write:project/out/**/*.md"]["gate"] == "allow"
    assert caps["writer"]["fs.write:project/out/**/*.md"]["path"] == ["writer"]
    # shell_file_ops: `auto` (mv is asked per call), a side effect
    exec_ = caps["main"]["proc.exec:ls,mv"]
    assert (exec_["gate"], exec_["path"]) == ("auto", ["main", "reader"])
    assert caps["reader"]["proc.exec:ls,mv"]["gate"] == "auto"
    # the callee's model's credentials are needed to run main
    assert caps["main"]["env:ANTHROPIC_API_KEY"]["path"] == ["main", "planner", "writer"]
    # call: stays direct
    assert "call:writer" not in caps["main"] and "call:writer" in caps["planner"]


def test_project_and_lock_agree(project: Path) -> None:
    assert caps_json(project) == caps_json(project / "bundle.lock")


def test_project_is_compiled_not_read_from_its_lock(project: Path, tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", PROJECT)
    assert run_cli("build", root).exit_code == 0
    (root / "main.worker").write_text(worker("toolsets: [filesystem_project]", "Write yourself."))
    caps = by_worker(caps_json(root))
    assert "fs.write:project/**" in caps["main"]


def view(calls: dict[str, str] | None = None, grants: list[tuple[str, str, str]] | None = None) -> WorkerView:
    return WorkerView(
        calls={c: Gate(a, "allow") for c, a in (calls or {}).items()},
        grants=[Grant(cap, tool, "tool", Gate(a, a)) for cap, tool, a in grants or []],
    )


def test_least_gated_path_wins_then_shortest_then_by_name() -> None:
    views = {
        "top": view({"a": "ask", "b": "allow", "c": "allow"}),
        "a": view(grants=[("fs.write:x", "w", "allow")]),  # short but asked at the call
        "b": view({"d": "allow"}),  # longer, never asked
        "c": view({"d": "allow"}),
        "d": view(grants=[("fs.write:x", "w", "allow")]),
    }
    reach = Analysis(views).reach("top", "fs.write:x")
    assert reach is not None
    assert reach.path == ("top", "b", "d")  # b before c by name
    assert reach.gate == "allow"


def test_deny_cuts_a_path_and_recursion_terminates() -> None:
    views = {
        "top": view({"loop": "allow", "gone": "deny"}),
        "loop": view({"loop": "allow", "top": "allow"}, [("custom:t", "t", "ask")]),
        "gone": view(grants=[("fs.write:x", "w", "allow")]),
    }
    analysis = Analysis(views)
    assert analysis.reach("top", "fs.write:x") is None
    reach = analysis.reach("top", "custom:t")
    assert reach is not None and reach.path == ("top", "loop") and reach.gate == "ask"
    assert [s.via for s in reach.gated_steps] == ["t"]


def test_a_long_chain_stays_linear_in_the_bundle_and_fast(tmp_path: Path) -> None:
    n = 300
    files: dict = {"project.json": {"version": 1, "worker_files": ["*.worker"], "runtime": {"max_depth": n + 1},
                                    "suppress": ["R002"]}}
    for i in range(n):
        callee = f"\ntoolsets: [w{i + 1}]" if i + 1 < n else "\ntoolsets: [filesystem_project]"
        files[f"w{i}.worker"] = worker(f"description: step {i}{callee}", "Pass it on.")
    files["project.json"]["entry"] = {"worker": "w0"}
    root = write_project(tmp_path / "chain", files)
    assert run_cli("build", root).exit_code == 0, "the chain builds"
    doc = json.loads((root / "bundle.lock").read_text())
    sizes = [len(json.dumps(doc["workers"][f"w{i}"]["capabilities"])) for i in range(n - 1)]
    assert max(sizes) == min(sizes) or max(sizes) - min(sizes) < 10, "no transitive data stored per worker"
    reach = analyse(doc).reach("w0", "fs.write:project/**")
    assert reach is not None and len(reach.path) == n


def test_side_effects() -> None:
    assert is_side_effect("fs.write:project/**")
    assert is_side_effect("custom:stamp") and is_side_effect("net:api.example.com")
    assert is_side_effect("proc.exec:ls,mv")  # mv is asked by the shell policy: it writes
    assert not is_side_effect("proc.exec:cat,grep,ls")  # commands the policy runs without asking
    assert not is_side_effect("fs.read:project/**") and not is_side_effect("env:OPENAI_API_KEY")
    assert not is_side_effect("private") and not is_side_effect("untrusted") and is_side_effect("egress")


FORMATS = ["text", "json", "markdown"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_output_formats(project: Path, fmt: str, snapshot) -> None:
    result = run_cli("capabilities", project / "bundle.lock", "--format", fmt)
    assert result.exit_code == 0, result.stderr
    assert PRICE_DATA.sub("genai-prices VERSION, price changes recorded to DATE", result.stdout) == snapshot


PRICE_DATA = re.compile(r"genai-prices [^,]+, price changes recorded to (\d{4}-\d\d-\d\d|unknown)")
"""The release of genai-prices installed (it comes with pydantic-ai): not part of what is snapshotted."""


@pytest.mark.process
def test_python_tools_declare_capabilities_statically(tmp_path: Path) -> None:
    files = {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"]},
        "main.worker": worker("tools: [fetch]\ntoolsets: [ext]", "Fetch."),
        "tools.py": '''
            from pydantic_ai.toolsets import FunctionToolset

            def fetch(url: str) -> str:
                """Fetch a page."""
                return url

            def make():
                return FunctionToolset()

            TOOLS = [fetch]
            TOOLSETS = {"ext": make}
            CAPABILITIES = {"fetch": ["net:api.example.com"], "ext": ["fs.write:cwd/**"]}
            ''',
    }
    root = write_project(tmp_path / "p", files)
    for flags in ((), ("--no-import",)):
        caps = by_worker(json.loads(run_cli("capabilities", root, "--format", "json", *flags).stdout))["main"]
        assert caps["custom:fetch"]["tool"] == "fetch"
        assert caps["net:api.example.com"]["tool"] == "fetch"
        assert caps["custom:*"]["toolset"] == "ext"
        assert caps["fs.write:cwd/**"]["toolset"] == "ext"


@pytest.mark.process
def test_capabilities_declaration_must_be_literal(tmp_path: Path) -> None:
    files = {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"]},
        "main.worker": worker("tools: [fetch]", "Fetch."),
        "tools.py": '''
            def fetch(url: str) -> str:
                """Fetch a page."""
                return url

            TOOLS = [fetch]
            KINDS = ["net"]
            CAPABILITIES = {"fetch": KINDS}
            ''',
    }
    root = write_project(tmp_path / "p", files)
    result = run_cli("lint", root, "--format", "json")
    found = [d for d in result.json()["diagnostics"] if d["code"] == "Y004"]
    assert found and "CAPABILITIES" in found[0]["message"] and found[0]["file"] == "tools.py" and found[0]["line"] == 7


def test_errors_are_one_line(tmp_path: Path) -> None:
    result = run_cli("capabilities", tmp_path / "nothing-here")
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    broken = write_project(tmp_path / "broken", {"main.worker": worker("toolsets: [nowhere]")})
    result = run_cli("capabilities", broken)
    assert result.exit_code == 1 and "N003" in result.stderr


# --- lint


def lint_codes(root: Path) -> list[tuple[str, str, int | None]]:
    result = run_cli("lint", root, "--format", "json")
    return sorted((d["code"], d["file"], d["line"]) for d in result.json()["diagnostics"] if d["code"].startswith("R"))


def test_r001_and_r002(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "main.worker": worker("model: test\ntoolsets: [helper, shell_readonly]"),
        "helper.worker": worker("toolsets: [filesystem_project]\napprovals: [allow write_file]"),
    })
    assert lint_codes(root) == [("R001", "helper.worker", 2), ("R002", "main.worker", 3)]
    result = run_cli("lint", root, "--format", "json")
    r001 = next(d for d in result.json()["diagnostics"] if d["code"] == "R001")
    assert "main -> helper -> write_file" in r001["message"] and r001["severity"] == "warning"
    assert run_cli("lint", root).exit_code == 0
    assert run_cli("lint", root, "--strict").exit_code == 1
    # gating the call removes R001; R002 stays (main can still write through helper)
    (root / "main.worker").write_text(worker("model: test\ntoolsets: [helper]\napprovals: [ask helper]"))
    assert lint_codes(root) == [("R002", "main.worker", 3)]


@pytest.mark.parametrize("flags", [(), ("--no-import",)])
def test_a_tool_that_declares_only_reads_settles_r001_for_itself_only(tmp_path: Path, flags: tuple[str, ...]) -> None:
    """Newcomer F24: a literal CAPABILITIES entry is the tool's complete declaration, so one that
    lists only reads acknowledges that tool for R001; the project's other tools still warn (no
    project-wide suppress), and so does a tool whose declaration is empty (it says nothing)."""
    root = write_project(tmp_path / "p", {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"],
                         "defaults": {"model": "test"}},
        "main.worker": worker("tools: [count_todos, archive, tally]\n"
                              "approvals: [allow count_todos, allow archive, allow tally]"),
        "tools.py": '''
            def count_todos(folder: str) -> int:
                """Count the TODOs of a folder."""
                return 0

            def archive(name: str) -> str:
                """Archive a report."""
                return name

            def tally(name: str) -> str:
                """Tally a report."""
                return name

            TOOLS = [count_todos, archive, tally]
            CAPABILITIES = {"count_todos": ["fs.read:project/**", "private"], "tally": []}
            ''',
    })
    result = run_cli("lint", root, "--format", "json", *flags)
    r001 = sorted(d["message"].split(" can use ")[1].split(" ")[0] for d in result.json()["diagnostics"] if d["code"] == "R001")
    assert r001 == ["custom:archive", "custom:tally"]
    caps = run_cli("capabilities", root, "--format", "json", *flags).json()
    side_effects = {c["capability"]: c["side_effect"] for c in caps["workers"][0]["capabilities"]}
    assert side_effects == {"custom:archive": True, "custom:tally": True, "custom:count_todos": False,
                            "fs.read:project/**": False, "private": False}
    text = run_cli("capabilities", root, *flags).stdout
    assert " !custom:archive" in text and " !custom:count_todos" not in text and "  custom:count_todos" in text


def test_a_tool_name_that_may_write_in_another_worker_stays_a_side_effect() -> None:
    """`custom:NAME` is one capability across workers: it is read-only only when every tool of
    that name declares only reads."""
    reads = Grant("custom:sync", "sync", "tool", Gate("allow", "ask"))
    declared = Grant("fs.read:project/**", "sync", "tool", Gate("allow", "ask"))
    alone = Analysis({"a": WorkerView(grants=[reads, declared])})
    assert not alone.side_effect("custom:sync") and alone.side_effect("custom:other")
    both = Analysis({"a": WorkerView(grants=[reads, declared]), "b": WorkerView(grants=[reads])})
    assert both.side_effect("custom:sync")
    writes = Grant("fs.write:project/**", "sync", "tool", Gate("allow", "ask"))
    assert Analysis({"a": WorkerView(grants=[reads, declared, writes])}).side_effect("custom:sync")


def test_a_write_restricted_by_a_condition_is_shown_so(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "main.worker": worker("model: test\ntoolsets: [filesystem_project]\n"
                              "approvals:\n  - \"allow write_file(path ~ 'output/**')\""),
    })
    write = by_worker(caps_json(root))["main"]["fs.write:project/**"]
    assert write["gate"] == "conditional"
    assert write["gated_steps"] == [{"worker": "main", "tool": "write_file", "approval": "conditional", "by": "rules",
                                     "rules": ["allow write_file(path ~ 'output/**')"], "paths_in": "the project"}]
    text = run_cli("capabilities", root).stdout
    assert "[conditional at main.write_file by allow write_file(path ~ 'output/**') (paths in the project)]" in text
    assert lint_codes(root) == []  # not R001: only writes below output/ go unasked


def test_what_a_worker_can_attach_is_what_its_read_file_reads(tmp_path: Path) -> None:
    """Red team M4: a model's attachments are reads by the calling worker, so a worker that calls
    workers can attach what its read_file reads, under read_file's gate; without read_file or
    without calls, nothing (project and lock agree)."""
    root = write_project(tmp_path / "p", {
        "main.worker": worker("model: test\ntoolsets:\n  - filesystem_project: {path: notes}\n  - echo\n"
                              "approvals:\n  - \"deny read_file(path ~ '**/.env*')\""),
        "echo.worker": worker("model: test\ntoolsets: [filesystem_project_ro]"),
        "blind.worker": worker("model: test\ntoolsets: [echo]"),
        "maker.worker": worker("model: test\ntoolsets: [filesystem_project_ro, dynamic_agents]"),
    })
    workers = by_worker(caps_json(root))
    attach = workers["main"]["attach:project/notes/**"]
    assert attach["path"] == ["main"] and attach["tool"] == "read_file" and attach["gate"] == "conditional"
    assert [c for c in workers["echo"] if c.startswith("attach:")] == []  # calls nobody
    assert [c for c in workers["blind"] if c.startswith("attach:")] == []  # reads nothing itself
    assert "attach:project/**" in workers["maker"]  # agent_call takes attachments too
    text = run_cli("capabilities", root).stdout
    assert ("attach:project/notes/**    via read_file  [conditional at main.read_file by deny read_file(path ~ '**/.env*') "
            "(paths in notes/)]") in text

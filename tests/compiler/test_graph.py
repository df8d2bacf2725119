"""`llm-do graph`: the compiled call graph of a project or a bundle.lock, in four formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_cli, worker, write_project
from tests.support.projects import GRAPH_PROJECT

FORMATS = ["text", "json", "mermaid", "dot"]

@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_project(tmp_path_factory.mktemp("graph") / "proj", GRAPH_PROJECT)
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stderr
    return root


def graph(target: Path, fmt: str) -> str:
    result = run_cli("graph", target, "--format", fmt)
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


@pytest.mark.parametrize("fmt", FORMATS)
def test_project_and_lock_give_the_same_graph(built: Path, fmt: str, snapshot) -> None:
    from_lock = graph(built / "bundle.lock", fmt)
    from_project = graph(built, fmt)
    assert from_lock == from_project
    assert str(built) not in from_lock
    assert from_lock == snapshot


def test_json_contract(built: Path) -> None:
    doc = json.loads(graph(built / "bundle.lock", "json"))
    nodes = doc["nodes"]
    edges = doc["edges"]
    assert all(set(n) >= {"id", "kind"} for n in nodes)
    assert all(set(e) >= {"from", "to", "kind"} for e in edges)
    assert [n["id"] for n in nodes] == sorted(n["id"] for n in nodes)
    assert [(e["from"], e["to"], e["kind"]) for e in edges] == sorted((e["from"], e["to"], e["kind"]) for e in edges)
    kinds = {n["id"]: n["kind"] for n in nodes}
    assert kinds == {
        "worker:main": "worker",
        "worker:analyst": "worker",
        "worker:reviewer": "worker",
        "worker:critic": "worker",
        "toolset:filesystem_project": "toolset",
        "toolset:filesystem_project_ro": "toolset",
        "toolset:shell_readonly": "toolset",
    }
    for n in nodes:
        assert n["id"].split(":", 1)[0] == n["kind"]
    by_pair = {(e["from"], e["to"]): e for e in edges}
    assert set(by_pair) == {
        ("worker:main", "toolset:filesystem_project"),
        ("worker:main", "toolset:shell_readonly"),
        ("worker:main", "worker:analyst"),
        ("worker:main", "worker:reviewer"),
        ("worker:analyst", "toolset:filesystem_project_ro"),
        ("worker:reviewer", "worker:critic"),
        ("worker:critic", "worker:reviewer"),
    }
    calls = {pair for pair, e in by_pair.items() if e["kind"] == "calls"}
    assert calls == {p for p in by_pair if p[1].startswith("worker:")}
    assert all(e["kind"] == "uses" for p, e in by_pair.items() if p not in calls)


def test_recursion_and_approval_marks(built: Path) -> None:
    edges = {(e["from"], e["to"]): e for e in json.loads(graph(built / "bundle.lock", "json"))["edges"]}
    recursive = {pair for pair, e in edges.items() if e.get("recursive")}
    assert recursive == {("worker:reviewer", "worker:critic"), ("worker:critic", "worker:reviewer")}
    gated = {pair for pair, e in edges.items() if e.get("gated")}
    assert gated == {
        ("worker:main", "toolset:filesystem_project"),  # write_file is asked by default
        ("worker:main", "worker:reviewer"),  # `ask reviewer`
    }


def test_text_format_marks_entry_recursion_and_approval(built: Path) -> None:
    text = graph(built / "bundle.lock", "text")
    lines = text.splitlines()
    assert lines[0] == "worker:main (entry)"  # first, though analyst and critic sort before it
    assert any("worker:main" in line and "entry" in line for line in lines)
    assert any("worker:critic" in line and "recursive" in line for line in lines)
    assert any("filesystem_project" in line and "approval" in line for line in lines)


def test_mermaid_and_dot_are_well_formed(built: Path) -> None:
    mermaid = graph(built / "bundle.lock", "mermaid")
    assert mermaid.splitlines()[0].startswith(("flowchart", "graph"))
    dot = graph(built / "bundle.lock", "dot").strip()
    assert dot.startswith("digraph") and dot.endswith("}")
    assert dot.count("{") == dot.count("}")
    # Every edge appears in both.
    edges = json.loads(graph(built / "bundle.lock", "json"))["edges"]
    assert sum(" -> " in line for line in dot.splitlines()) == len(edges)
    assert sum(("-->" in line or "-.->" in line) for line in mermaid.splitlines()) == len(edges)


PYTHON_PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"]},
    "main.worker": worker(
        """
        model: test
        tools: [stamp, peek]
        approvals:
          - allow peek
        """,
        "Use the tools.",
    ),
    "tools.py": '''
        def stamp(text: str) -> str:
            """Stamp a text."""
            return "[" + text + "]"


        def peek(path: str) -> str:
            """Peek at a path."""
            return path


        TOOLS = {"stamp": stamp, "peek": peek}
        ''',
}


@pytest.mark.process
def test_python_tools_are_tool_nodes(tmp_path: Path, snapshot) -> None:
    root = write_project(tmp_path / "proj", PYTHON_PROJECT)
    assert run_cli("build", root).exit_code == 0
    doc = json.loads(graph(root / "bundle.lock", "json"))
    assert {n["id"]: n["kind"] for n in doc["nodes"]} == {
        "worker:main": "worker", "tool:stamp": "tool", "tool:peek": "tool"
    }
    edges = {e["to"]: e for e in doc["edges"]}
    assert set(edges) == {"tool:stamp", "tool:peek"}
    assert all(e["kind"] == "uses" and e["from"] == "worker:main" for e in edges.values())
    assert edges["tool:stamp"]["gated"] is True  # Python tools are asked by default
    assert edges["tool:peek"]["gated"] is False
    assert graph(root / "bundle.lock", "text") == snapshot


def test_project_with_errors_exits_1(tmp_path: Path) -> None:
    files = dict(GRAPH_PROJECT)
    files["analyst.worker"] = worker("toolsets: [nowhere]", "Analyze.")
    root = write_project(tmp_path / "proj", files)
    result = run_cli("graph", root, "--format", "json")
    assert result.exit_code == 1
    assert "N003" in result.stderr
    assert "Traceback" not in result.stderr


def test_tampered_lock_is_refused(built: Path, tmp_path: Path) -> None:
    lock = tmp_path / "bundle.lock"
    lock.write_text((built / "bundle.lock").read_text().replace("Coordinate.", "Coordinate!"))
    result = run_cli("graph", lock)
    assert result.exit_code == 2
    assert "digest" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_lock_of_another_bundle_format_is_refused(built: Path, tmp_path: Path) -> None:
    """`graph` checks a lock as `exec`, `capabilities` and `diff` do (`llm_do.bundle.reader.verify`):
    a lock sealed with a format this llm-do does not know is refused, though its digest verifies."""
    from llm_do.bundle.canonical import seal
    from llm_do.bundle.format import BUNDLE_FORMAT

    doc = json.loads((built / "bundle.lock").read_bytes())
    doc["bundle_format"] = 1
    lock = tmp_path / "bundle.lock"
    lock.write_bytes(seal(doc))
    result = run_cli("graph", lock)
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"llm-do: error: {lock}: bundle format 1 is not one this llm-do reads ({BUNDLE_FORMAT}); "
                                     "run `llm-do build`")


def test_unknown_format_is_a_usage_error(built: Path) -> None:
    result = run_cli("graph", built, "--format", "svg")
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr


def test_mermaid_node_ids_stay_distinct(tmp_path: Path) -> None:
    """Worker names may contain `-`: `fetch-data` and `fetch_data` are two workers, two nodes."""
    root = write_project(
        tmp_path / "proj",
        {
            "main.worker": worker("model: test\ntoolsets: [fetch-data, fetch_data]", "Fetch."),
            "fetch-data.worker": worker("", "One."),
            "fetch_data.worker": worker("", "Two."),
        },
    )
    mermaid = graph(root, "mermaid").splitlines()
    node_ids = [line.split("[", 1)[0].split("(", 1)[0].strip() for line in mermaid[1:] if "--" not in line]
    assert len(node_ids) == 3
    assert len(set(node_ids)) == 3, node_ids
    edge_targets = {line.split()[-1] for line in mermaid if "-->" in line}
    assert len(edge_targets) == 2, mermaid


def test_a_toolset_is_one_node_per_distinct_instance(tmp_path: Path) -> None:
    """Workers that give a toolset the same settings share its node; other settings are another
    node, named by them (`path: .` is the default, as no settings are)."""
    root = write_project(
        tmp_path / "proj",
        {
            "main.worker": worker("model: test\ntoolsets:\n  - shell_readonly:\n      path: src\n  - helper\n  - other", "Lead."),
            "helper.worker": worker("toolsets:\n  - shell_readonly:\n      path: .", "Help."),
            "other.worker": worker("toolsets:\n  - shell_readonly:\n      path: src", "Other."),
            "src/a.txt": "a\n",
        },
    )
    doc = json.loads(graph(root, "json"))
    assert [n["id"] for n in doc["nodes"] if n["kind"] == "toolset"] == [
        "toolset:shell_readonly", "toolset:shell_readonly(path=src)"]
    uses = sorted((e["from"], e["to"]) for e in doc["edges"] if e["kind"] == "uses")
    assert uses == [("worker:helper", "toolset:shell_readonly"), ("worker:main", "toolset:shell_readonly(path=src)"),
                    ("worker:other", "toolset:shell_readonly(path=src)")]
    mermaid = graph(root, "mermaid")
    assert mermaid.count('[("shell_readonly(path=src)")]') == 1 and mermaid.count('[("shell_readonly")]') == 1
    dot = graph(root, "dot")
    assert '"toolset:shell_readonly(path=src)" [label="shell_readonly(path=src)", shape=cylinder];' in dot
    assert '"toolset:shell_readonly" [label="shell_readonly", shape=cylinder];' in dot
    assert "uses toolset:shell_readonly(path=src)" in graph(root, "text")

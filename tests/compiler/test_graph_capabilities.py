"""`llm-do graph` shows capabilities: DOT read back with a real DOT parser (pydot), Mermaid checked
line by line for its structure."""

from __future__ import annotations

import re
from pathlib import Path

import pydot
import pytest

from tests.support.cli import run_cli, write_project
from tests.support.projects import GRAPH_PROJECT

# pydot's parser uses pyparsing names that pyparsing 3.3 deprecates; not ours to fix
pytestmark = pytest.mark.filterwarnings("ignore:.*deprecated.*:DeprecationWarning")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_project(tmp_path_factory.mktemp("graphcaps") / "proj", GRAPH_PROJECT)


def graph(root: Path, fmt: str) -> str:
    result = run_cli("graph", root, "--format", fmt)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def unquote(text: str) -> str:
    return text[1:-1] if text.startswith('"') and text.endswith('"') else text


def test_dot_parses_and_carries_capabilities_recursion_and_gates(root: Path) -> None:
    parsed = pydot.graph_from_dot_data(graph(root, "dot"))
    assert parsed is not None and len(parsed) == 1
    dot = parsed[0]
    nodes = {unquote(n.get_name()): n for n in dot.get_nodes() if unquote(n.get_name()) not in ("node", "edge", "graph")}
    assert set(nodes) == {"worker:main", "worker:analyst", "worker:reviewer", "worker:critic",
                          "toolset:filesystem_project", "toolset:filesystem_project_ro", "toolset:shell_readonly"}
    main_label = unquote(nodes["worker:main"].get_label()).split("\\n")
    assert main_label[0] == "main"
    assert "fs.write:project/** [ask]" in main_label  # write_file is asked by default
    assert "fs.read:project/**" in main_label
    assert nodes["worker:main"].get("penwidth") == "2"  # the entry
    # analyst names no model and the project has no default: its requests run on the run's model
    assert unquote(nodes["worker:analyst"].get_label()).split("\\n") == ["analyst", "fs.read:project/**", "request unpriced"]
    edges = {(unquote(e.get_source()), unquote(e.get_destination())): e for e in dot.get_edges()}
    assert unquote(edges[("worker:reviewer", "worker:critic")].get_label()) == "recursive"
    gated = edges[("worker:main", "worker:reviewer")]
    assert unquote(gated.get_label()) == "approval" and gated.get("color") == "orange"
    assert edges[("worker:main", "worker:analyst")].get_label() is None


MERMAID_NODE = re.compile(r'^  (n\d+)(\["(.*)"\]|\[\("(.*)"\)\]|\(\["(.*)"\)\])$')
MERMAID_EDGE = re.compile(r"^  (n\d+) (-->|-\.->)(\|([^|]+)\|)? (n\d+)$")


def test_mermaid_structure(root: Path) -> None:
    lines = graph(root, "mermaid").splitlines()
    assert lines[0] == "flowchart LR"
    labels: dict[str, str] = {}
    edges: list[tuple[str, str, str, str | None]] = []
    for line in lines[1:]:
        if m := MERMAID_NODE.match(line):
            labels[m.group(1)] = next(g for g in m.groups()[2:] if g is not None)
        elif m := MERMAID_EDGE.match(line):
            edges.append((m.group(1), m.group(2), m.group(5), m.group(4)))
        else:
            pytest.fail(f"not a node or an edge: {line!r}")
    names = {v.split("<br/>")[0]: k for k, v in labels.items()}
    assert labels[names["main"]].split("<br/>")[1:] == [
        "fs.read:project/**", "fs.write:project/** [ask]", "proc.exec:cat,find,git,grep,head,ls,sort,tail,uniq,wc",
        "request at most $0.00 (test)", "run unpriced"]  # `test` is free; its callees run on the run's model
    assert all(src in labels and dst in labels for src, _, dst, _ in edges)
    by_pair = {(src, dst): (arrow, mark) for src, arrow, dst, mark in edges}
    assert by_pair[(names["reviewer"], names["critic"])] == ("-->", "recursive")
    assert by_pair[(names["main"], names["reviewer"])] == ("-->", "approval")
    assert by_pair[(names["main"], names["filesystem_project"])] == ("-.->", "approval")

"""The call graph (G001-G003): undeclared recursion, calls past max_depth, unreachable workers.
Findings about an edge point at the `toolsets` item of the caller that names the callee."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import write_project
from tests.support.lint import Lint, lint

CYCLES = {
    "project.json": {"version": 1, "worker_files": ["*.worker"]},
    "main.worker": """
        ---
        toolsets: [self_ok, self_bad, p, r, x]
        ---
        Start.
        """,
    # self-recursion, declared: fine
    "self_ok.worker": "---\nrecursive: true\ntoolsets: [self_ok]\n---\nx\n",
    # self-recursion, undeclared
    "self_bad.worker": "---\ntoolsets:\n  - filesystem_project_ro\n  - self_bad\n---\nx\n",
    # a two-worker cycle where only p is declared
    "p.worker": "---\nrecursive: true\ntoolsets: [q]\n---\nx\n",
    "q.worker": "---\ntoolsets: [shell_readonly, p]\n---\nx\n",
    # a two-worker cycle, both declared: fine
    "r.worker": "---\nrecursive: true\ntoolsets: [s]\n---\nx\n",
    "s.worker": "---\nrecursive: true\ntoolsets: [r]\n---\nx\n",
    # a three-worker cycle, none declared (y also calls a worker off the cycle)
    "x.worker": "---\ntoolsets: [y]\n---\nx\n",
    "y.worker": "---\ntoolsets: [leaf, z]\n---\nx\n",
    "z.worker": "---\ntoolsets: [x]\n---\nx\n",
    "leaf.worker": "---\n---\nx\n",
}


@pytest.fixture(scope="module")
def cycles(tmp_path_factory: pytest.TempPathFactory) -> Lint:
    return lint(write_project(tmp_path_factory.mktemp("cycles"), CYCLES))


def test_undeclared_self_recursion(cycles: Lint) -> None:
    cycles.expect("G001", "self_bad.worker", "- self_bad", column=5, mentions=("self_bad",))


def test_cycle_reports_each_undeclared_worker_at_its_edge_on_the_cycle(cycles: Lint) -> None:
    cycles.expect("G001", "q.worker", "p]", mentions=("'q'",))
    cycles.expect("G001", "x.worker", "y]", mentions=("'x'",))
    cycles.expect("G001", "y.worker", "z]", mentions=("'y'",))
    cycles.expect("G001", "z.worker", "x]", mentions=("'z'",))


def test_declared_recursion_is_fine(cycles: Lint) -> None:
    """Exactly the undeclared workers are reported: not self_ok, p, r or s."""
    assert sorted(d["file"] for d in cycles.of("G001")) == ["q.worker", "self_bad.worker", "x.worker",
                                                            "y.worker", "z.worker"]
    assert set(cycles.codes()) == {"G001"}
    assert cycles.exit_code == 1


# main -> a -> b -> c, and main -> d -> e. With the entry at depth 1, depth(a) = 2, depth(b) = 3,
# depth(c) = 4, depth(d) = 2; an edge U -> V is an error when depth(U) >= max_depth.
CHAIN = {
    "main.worker": "---\ntoolsets: [a, d]\n---\nx\n",
    "a.worker": "---\ntoolsets: [b]\n---\nx\n",
    "b.worker": "---\ntoolsets:\n  - filesystem_project_ro\n  - c\n---\nx\n",
    "c.worker": "---\n---\nx\n",
    "d.worker": "---\ntoolsets: [e]\n---\nx\n",
    "e.worker": "---\n---\nx\n",
}
EDGE_AT = {("main", "a"): "a, d]", ("main", "d"): "d]", ("a", "b"): "b]", ("b", "c"): "c\n", ("d", "e"): "e]"}


@pytest.mark.parametrize(("max_depth", "refused"), [
    (1, {("main", "a"), ("main", "d"), ("a", "b"), ("b", "c"), ("d", "e")}),
    (2, {("a", "b"), ("d", "e"), ("b", "c")}),
    (3, {("b", "c")}),
    (4, set()),
])
def test_call_past_max_depth_boundary(tmp_path: Path, max_depth: int, refused: set[tuple[str, str]]) -> None:
    root = write_project(tmp_path, {"project.json": {"version": 1, "worker_files": ["*.worker"],
                                                     "runtime": {"max_depth": max_depth}}, **CHAIN})
    result = lint(root)
    for caller, callee in refused:
        result.expect("G002", f"{caller}.worker", EDGE_AT[(caller, callee)], mentions=(f"'{caller}'", f"'{callee}'"))
    assert len(result.of("G002")) == len(refused)
    assert result.exit_code == (1 if refused else 0)


def test_default_max_depth_is_five(tmp_path: Path) -> None:
    """w1 (the entry, depth 1) -> ... -> w6: only the call from w5 (depth 5) is refused."""
    files = {f"w{i}.worker": f"---\ntoolsets: [w{i + 1}]\n---\nx\n" for i in range(1, 6)}
    files["w6.worker"] = "---\n---\nx\n"
    files["project.json"] = {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "w1"}}
    result = lint(write_project(tmp_path, files))
    result.expect("G002", "w5.worker", "w6", mentions=("'w5'", "'w6'"))
    assert result.codes() == ["G002"]


def test_depth_is_the_shortest_call_path(tmp_path: Path) -> None:
    """deep is reached both directly (depth 2) and through a chain (depth 4): its call is fine."""
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "runtime": {"max_depth": 3}},
        "main.worker": "---\ntoolsets: [a, deep]\n---\nx\n",
        "a.worker": "---\ntoolsets: [b]\n---\nx\n",
        "b.worker": "---\ntoolsets: [deep]\n---\nx\n",
        "deep.worker": "---\ntoolsets: [leaf]\n---\nx\n",
        "leaf.worker": "---\n---\nx\n",
    })
    result = lint(root)
    # b is at depth 3 = max_depth: its own call to deep is refused, deep's call to leaf is not.
    result.expect("G002", "b.worker", "deep", mentions=("'b'",))
    assert result.codes() == ["G002"]


def test_unreachable_workers_warn_and_do_not_fail_the_lint(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"]},
        "main.worker": "---\ntoolsets: [used]\n---\nx\n",
        "used.worker": "---\n---\nx\n",
        "orphan.worker": "---\ndescription: nobody calls me\nname: orphan\ntoolsets: [orphan_child]\n---\nx\n",
        "orphan_child.worker": "---\n---\nOnly the orphan calls me.\n",
    })
    result = lint(root)
    result.expect("G003", "orphan.worker", "orphan\n", mentions=("orphan",))
    # Without `name:` the worker's name comes from its file: the top of the file.
    result.expect("G003", "orphan_child.worker", line=1, column=1, mentions=("orphan_child",))
    assert sorted(result.codes()) == ["G003", "G003"]
    assert result.exit_code == 0

"""`llm_do.bundle`, the format's one home: standard library only (its schema generation aside),
one check of a lock's bytes for every command, and one derivation of the call edges."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from llm_do.bundle import reader
from llm_do.bundle.canonical import document_json, seal, sha256_hex, tagged
from llm_do.bundle.errors import BundleRefused
from llm_do.bundle.format import BUNDLE_FORMAT
from llm_do.bundle.views import CallEdge, UsedToolset, WorkerSpec, call_edges, shortened, worker_description

PACKAGE = Path(reader.__file__).resolve().parent
NOT_STDLIB_ONLY = {"schema.py"}
"""Generates the JSON Schema with pydantic: for spec/generate.py and the tests only."""


def _imported(path: Path) -> set[str]:
    """The top-level names of the modules `path` imports absolutely, at any depth of its code."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module)
    return found


def test_the_package_imports_only_the_standard_library() -> None:
    modules = sorted(p for p in PACKAGE.glob("*.py") if p.name not in NOT_STDLIB_ONLY)
    assert len(modules) >= 10
    for path in modules:
        foreign = sorted(m for m in _imported(path)
                         if m.split(".")[0] not in sys.stdlib_module_names and not m.startswith("llm_do.bundle"))
        assert not foreign, f"llm_do/bundle/{path.name} imports {foreign}"


@pytest.mark.process
def test_importing_every_module_but_schema_loads_nothing_else() -> None:
    names = sorted(f"llm_do.bundle.{p.stem}" for p in PACKAGE.glob("*.py") if p.name not in NOT_STDLIB_ONLY
                   and p.stem != "__init__")
    code = (f"import sys; before = set(sys.modules); import {', '.join(names)}; "
            "print(sorted({m.split('.')[0] for m in set(sys.modules) - before} - set(sys.stdlib_module_names)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.replace("'", '"')) == ["llm_do"]


# --- verify: the one check of a lock's bytes


def _doc(**changes: object) -> dict:
    doc = {"@generated": "a test", "bundle_format": BUNDLE_FORMAT, "digest": "", "entry": {"worker": "main"},
           "workers": {}}
    return {**doc, **changes}


def test_verify_gives_the_reader_of_a_sealed_lock() -> None:
    lock = reader.verify(seal(_doc()), "bundle.lock")
    assert lock.get("entry") == {"worker": "main"}


def _resealed(data: bytes) -> bytes:
    """`data` with its digest made to match again, however the rest of it is laid out."""
    start = data.index(b'"digest": "') + len(b'"digest": "')
    end = data.index(b'"', start)
    body = data[:start] + data[end:]
    return data[:start] + tagged(sha256_hex(body)).encode() + data[end:]


@pytest.mark.parametrize(("data", "why"), [
    (seal(_doc()).replace(b'"main"', b'"mains"'), "bundle.lock: refused: its digest does not match its contents"),
    (document_json(_doc(digest="sha256:0")), "bundle.lock: refused: its digest does not match its contents"),
    (_resealed(seal(_doc()).replace(b'"bundle_format": %d' % BUNDLE_FORMAT, b'"bundle_format": 2 2')),
     "bundle.lock: refused: a value at byte"),
    (b"{not a lock}\n", "bundle.lock: refused: it has no top-level digest"),
    (seal(_doc(bundle_format=2)), f"bundle.lock: bundle format 2 is not one this llm-do reads ({BUNDLE_FORMAT})"),
    (seal(_doc(bundle_format=None)), f"bundle.lock: bundle format None is not one this llm-do reads ({BUNDLE_FORMAT})"),
])
def test_verify_refuses_in_one_line_saying_why_and_what_to_do(data: bytes, why: str) -> None:
    with pytest.raises(BundleRefused) as caught:
        reader.verify(data, "bundle.lock")
    assert str(caught.value).startswith(why)
    assert str(caught.value).endswith("; run `llm-do build`") and "\n" not in str(caught.value)


def test_read_refuses_a_missing_lock(tmp_path: Path) -> None:
    with pytest.raises(BundleRefused, match="no such bundle; run `llm-do build` to create it"):
        reader.read(tmp_path / "bundle.lock")


# --- views


def _worker(name: str, toolsets: list[dict], calls: list[str]) -> dict:
    return {"name": name, "source": f"{name}.worker", "instructions": "Do.", "toolsets": toolsets, "calls": calls,
            "input": {"module": "llm_do.runtime.args", "qualname": "PromptInput", "json_schema": {}}}


DOC = {
    "entry": {"function": {"name": "entry.py:main", "calls": ["main"]}},
    "workers": {
        "main": _worker("main", [{"toolset": "filesystem_project"}, {"worker": "b"}, {"worker": "a"}], ["b", "a", "c"]),
        "a": _worker("a", [], []),
        "b": _worker("b", [], ["a"]),
        "c": _worker("c", [], []),
    },
}


def test_call_edges_follow_calls_and_say_which_are_tools() -> None:
    """`calls` is the edge set; its workers that are also `toolsets` items are `tool` edges (in the
    `toolsets` order, which the compiler puts first), the rest `code` edges (front matter `calls:`,
    for the worker's Python tools); the entry function's come last."""
    assert call_edges(DOC["workers"], DOC["entry"]) == [
        CallEdge("main", "b", "tool"), CallEdge("main", "a", "tool"), CallEdge("main", "c", "code"),
        CallEdge("b", "a", "code"), CallEdge("entry.py:main", "main", "entry"),
    ]
    assert [e.callee for e in call_edges(DOC["workers"], DOC["entry"]) if e.kind == "tool"] == [
        u.worker for u in WorkerSpec.of(DOC["workers"]["main"]).toolsets if u.worker]


def test_a_worker_spec_reads_absent_keys_as_the_model_states() -> None:
    node = _worker("w", [{"toolset": "kit"}], [])
    del node["toolsets"], node["calls"]
    spec = WorkerSpec.of(node)
    assert (spec.toolsets, spec.tools, spec.calls, spec.recursive, spec.server_side_tools, spec.services) == (
        (), {}, (), False, (), {})
    assert WorkerSpec.of(_worker("w", [{"toolset": "kit"}], [])).toolsets == (UsedToolset("kit", None, {}, None),)


def test_a_worker_is_described_by_the_start_of_its_text() -> None:
    spec = WorkerSpec.of({**_worker("w", [], []), "instructions": "x" * 400})
    assert worker_description(spec) == shortened("x" * 400) == "x" * 299 + "…"
    assert worker_description(spec._replace(description="Short.")) == "Short."

"""The labelled flow corpus: every armed lethal trifecta found, and few workers flagged that hold none.

tests/flow_corpus/projects/ holds attack shapes, each with a near-miss twin that must not be
flagged (expect.json: the workers flagged, the shape, the twin's attack); labels.json gives the
ground truth of the examples and the anchor's projects the corpus borrows. Each project is
compiled in-process as `lint --no-import` reads it (no subprocess, no server started), and a
worker counts as flagged when an R003 or R004 names it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from llm_do.compiler.pipeline import compile_project

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "flow_corpus"
FLAGGING = ("R003", "R004")
PRECISION_TARGET = 0.9


def _corpus() -> dict[str, tuple[Path, set[str], dict]]:
    """Name -> (project directory, the workers it must flag, its expect.json or {})."""
    out: dict[str, tuple[Path, set[str], dict]] = {}
    for rel, flagged in json.loads((CORPUS / "labels.json").read_text())["borrowed"].items():
        out[rel] = (ROOT / rel, set(flagged), {})
    for expect_file in sorted((CORPUS / "projects").glob("*/expect.json")):
        expect = json.loads(expect_file.read_text())
        out[expect_file.parent.name] = (expect_file.parent, set(expect["flagged"]), expect)
    return out


def flagged_workers(project: Path) -> set[str]:
    result = compile_project(project, import_python=False, emit_bundle=False, cache=False)
    found = set()
    for d in result.diagnostics:
        if d.code in FLAGGING:
            match = re.match(r"'([^']+)'", d.message)
            assert match, d.message
            found.add(match.group(1))
    return found


@pytest.fixture(scope="module")
def outcomes() -> dict[str, tuple[set[str], set[str]]]:
    """Name -> (expected, flagged)."""
    return {name: (expected, flagged_workers(path)) for name, (path, expected, _) in _corpus().items()}


def test_the_corpus_has_every_attack_shape_with_a_near_miss_twin() -> None:
    corpus = _corpus()
    assert len(corpus) >= 40
    attacks = {name for name, (_, expected, meta) in corpus.items() if meta and expected}
    twins = {meta["twin_of"] for _, (_, expected, meta) in corpus.items() if meta.get("twin_of")}
    assert attacks <= twins, f"attacks without a near-miss twin: {sorted(attacks - twins)}"
    shapes = {meta["shape"] for _, (_, _, meta) in corpus.items() if meta}
    for shape in ("direct", "callee two levels down", "MCP stdio", "MCP HTTP", "Python tool (effects)", "entry function",
                  "server-side tools", "gated", "accepted"):
        assert shape in shapes, shape


def test_every_armed_trifecta_is_found_with_precision_over_90_percent(outcomes) -> None:
    true_positives = sum(len(expected & flagged) for expected, flagged in outcomes.values())
    missed = {name: sorted(expected - flagged) for name, (expected, flagged) in outcomes.items() if expected - flagged}
    false = {name: sorted(flagged - expected) for name, (expected, flagged) in outcomes.items() if flagged - expected}
    found = true_positives + sum(len(v) for v in false.values())
    recall = true_positives / (true_positives + sum(len(v) for v in missed.values()))
    precision = true_positives / found if found else 1.0
    print(f"flow corpus: {len(outcomes)} projects, recall {recall:.0%}, precision {precision:.0%}, false positives {false}")
    assert not missed, f"armed trifectas not found: {missed}"
    assert precision >= PRECISION_TARGET, f"precision {precision:.0%}; false positives: {false}"

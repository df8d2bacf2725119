"""`-v` / `-vv`: the readable trace on stderr (snapshots), and the elision it relies on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from llm_do.runtime.event_text import ELLIPSIS, describe, elide
from tests.support.cli import run_cli
from tests.support.events import FLOW, FLOW_PROJECT
from tests.support.projects import build_project


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("trace") / "proj", FLOW_PROJECT)


def test_v_is_the_call_tree_indented_by_depth(bundle: Path, script, snapshot) -> None:
    result = run_cli("exec", bundle, "go", "--script", script(FLOW), "-v")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "all done\n"  # the trace stays off stdout
    assert result.stderr == snapshot


def test_vv_adds_each_calls_model_messages(bundle: Path, script, snapshot) -> None:
    result = run_cli("exec", bundle, "go", "--script", script(FLOW), "-vv")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "all done\n"
    assert result.stderr == snapshot
    v = run_cli("exec", bundle, "go", "--script", script(FLOW), "-v").stderr
    assert "│ user: \"read the notes\"" in result.stderr and "│" not in v


def test_a_failed_run_ends_the_trace_with_why(bundle: Path, script) -> None:
    short = {"workers": {"main": [{"text": "x"}], "helper": []}}
    result = run_cli("exec", bundle, "go", "--script", script(short), "-v", "--timeout", "0.000001")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-2].startswith("failed: the run took longer than")


def test_long_values_are_elided_inside_their_quotes() -> None:
    line = describe({"event": "tool_called", "worker": "w", "depth": 3, "tool": "write_file",
                     "args": {"path": "a.txt", "content": "word " * 100}, "approval": "ask"}).trace
    assert line == '      → write_file(path="a.txt", content="' + "word " * 12 + 'word…")  [ask]'


def test_an_unknown_event_is_still_shown() -> None:
    described = describe({"event": "something_new", "worker": "w", "depth": 2, "n": 1})
    assert described.trace == "    w something_new n=1" and described.progress is None


@given(st.text(), st.integers(min_value=8, max_value=200))
@example("\x1b0", 8)  # one character whose escape alone is wider than the room
@example("\x1b" * 10, 8)
def test_a_string_is_never_cut_mid_string(text: str, width: int) -> None:
    shown = elide(text, width)
    value = json.loads(shown)  # still one whole JSON string, quotes and escapes intact
    if value != text:
        assert value.endswith(ELLIPSIS) and text.startswith(value[:-1].rstrip())
        assert len(shown) <= width


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=40),
                    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner, max_size=6),
                    max_leaves=30),
       st.integers(min_value=20, max_value=120))
def test_containers_keep_their_brackets(value: object, width: int) -> None:
    shown = elide(value, width)
    if isinstance(value, (list, dict)):
        assert shown[0] + shown[-1] in ("[]", "{}")
    if ELLIPSIS not in shown:
        assert json.loads(shown) == value

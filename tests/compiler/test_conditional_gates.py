"""Tools gated by conditional rules (the bundle contract shared with the approval-rule language):
a tool entry with `rules` is `conditional`, its rule texts are shown, and a change of them is a
change. Bundle documents are written by hand here, in the shape spec/bundle.md gives."""

from __future__ import annotations

import copy
from typing import Any

from llm_do.compiler.analysis.capabilities import analyse
from llm_do.compiler.diff.bundle import diff_bundles
from llm_do.compiler.report.capabilities import report, to_text

RULES = [{"action": "allow", "when": {"op": "glob", "param": ["path"], "value": "output/**"},
          "text": "allow write_file(path ~ 'output/**')"},
         {"action": "deny", "when": {"op": "glob", "param": ["path"], "value": "**/*.py"},
          "text": "deny write_file(path ~ '**/*.py')"}]


def bundle(writer_tool: dict[str, Any], call_approval: str = "allow") -> dict[str, Any]:
    def worker(name: str, tools: dict, calls: list[str], grants: list[dict]) -> dict:
        return {"hash": f"h-{name}-{hash(repr((tools, grants)))}", "name": name, "tools": tools, "calls": calls,
                "toolsets": [], "capabilities": grants}

    return {
        "bundle_format": 2,
        "entry": {"worker": "main", "args": None},
        "runtime": {"max_depth": 5, "approval_mode": "prompt"},
        "defaults": {"model": None},
        "toolsets": {"filesystem_project": {"tools": {"write_file": {"approval": "ask"}}}},
        "workers": {
            "main": worker("main", {"writer": {"worker": "writer", "approval": call_approval}}, ["writer"],
                           [{"capability": "call:writer", "tool": "writer"}]),
            "writer": worker("writer", {"write_file": writer_tool}, [],
                             [{"capability": "fs.write:project/**", "tool": "write_file"}]),
        },
    }


CONDITIONAL = {"toolset": "filesystem_project", "approval": "ask", "rules": RULES, "default": "ask"}
ASKED = {"toolset": "filesystem_project", "approval": "ask"}


def test_conditional_gate_with_rule_texts() -> None:
    doc = bundle(CONDITIONAL)
    reach = analyse(doc).reach("main", "fs.write:project/**")
    assert reach is not None and reach.gate == "conditional"
    step = reach.gated_steps[0]
    assert (step.worker, step.via, step.gate.by) == ("writer", "write_file", "rules")
    assert step.gate.rules == tuple(r["text"] for r in RULES)
    text = to_text(report(doc))
    assert "[conditional at writer.write_file by allow write_file(path ~ 'output/**'); deny write_file(path ~ '**/*.py')]" in text


def test_the_strongest_step_decides_the_gate_of_a_path() -> None:
    doc = bundle(CONDITIONAL, call_approval="ask")
    assert analyse(doc).reach("main", "fs.write:project/**").gate == "ask"  # the strongest step decides


def test_ask_to_conditional_is_relaxed_and_rule_edits_are_changes() -> None:
    old, new = bundle(ASKED), bundle(CONDITIONAL)
    found = {c.subject: c for c in diff_bundles(old, new).changes}
    approval = found["approval of writer.write_file"]
    assert (approval.verb, approval.note, approval.before) == ("widened", "relaxed and tightened", "ask")
    assert approval.detail == ["write_file(path under output/**) now runs without asking (before: asked)",
                               "write_file(path ~ '**/*.py') is now refused (before: asked)"]
    assert approval.after == "; ".join(r["text"] for r in RULES)
    cap = found["fs.write:project/** of main"]
    assert (cap.verb, cap.note) == ("widened", "approval relaxed")
    edited = copy.deepcopy(CONDITIONAL)
    edited["rules"][0] = dict(edited["rules"][0], when=dict(RULES[0]["when"], value="**"), text="allow write_file(path ~ '**')")
    changed = {c.subject: c for c in diff_bundles(new, bundle(edited)).changes}["approval of writer.write_file"]
    assert (changed.severity, changed.verb) == ("high", "widened") and "'**'" in changed.after
    assert changed.detail == ["write_file(path not under output/** and not ~ '**/*.py') now runs without asking (before: asked)"]
    respaced = copy.deepcopy(CONDITIONAL)
    respaced["rules"][0] = dict(respaced["rules"][0], text='allow write_file( path ~ "output/**" )')
    assert diff_bundles(new, bundle(respaced)).changes == []  # the same rules written differently

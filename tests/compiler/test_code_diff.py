"""`diff.code` on bundle documents: one entry per cause, severity by who is asked, short at any size."""

from __future__ import annotations

import copy
from typing import Any

from llm_do.bundle.format import BUNDLE_FORMAT
from llm_do.compiler.diff.bundle import diff_bundles


def _code(helper_effects: list[str]) -> dict[str, Any]:
    helper: dict[str, Any] = {"hash": f"h-{helper_effects}"}
    if helper_effects:
        helper["effects"] = helper_effects
    return {"function": "tools.py:t", "signature": "s", "fingerprint": f"f-{helper_effects}",
            "parts": {"tools.py:t": {"hash": "own"}, "lib.py": helper}, "effects": helper_effects}


def _doc(workers: int, approval: str, helper_effects: list[str]) -> dict[str, Any]:
    tool = {"hash": f"t-{helper_effects}", "name": "t", "description": "d", "parameters": {}, "approval": "ask",
            "code": _code(helper_effects)}
    return {
        "bundle_format": BUNDLE_FORMAT, "entry": {"worker": "w000"}, "runtime": {"max_depth": 5, "approval_mode": "prompt"},
        "defaults": {}, "sources": {},
        "toolsets": {"tools.TOOLS": {"hash": f"ts-{helper_effects}", "name": "tools.TOOLS", "kind": "python",
                                     "tools": {"t": tool}}},
        "workers": {f"w{i:03d}": {"hash": f"w{i}", "name": f"w{i:03d}", "tools": {"t": {"toolset": "tools.TOOLS",
                                                                                    "approval": approval}}}
                    for i in range(workers)},
    }


def _code_changes(old: dict[str, Any], new: dict[str, Any]) -> list[Any]:
    return [c for c in diff_bundles(old, new).changes if c.area == "code"]


def test_a_new_effect_in_a_helper_is_one_entry_high_when_it_runs_unasked_and_names_the_users_briefly() -> None:
    old, new = _doc(30, "allow", []), _doc(30, "allow", ["fs.write"])
    (change,) = _code_changes(old, new)
    assert (change.severity, change.verb, change.subject) == ("high", "widened", "code of lib.py")
    assert change.detail[-1].startswith("used by 30 workers (30 allow): w000 [allow], ")
    assert change.detail[-1].endswith(", and 20 more")


def test_the_same_effect_behind_ask_is_medium_and_a_change_without_effect_low() -> None:
    assert [c.severity for c in _code_changes(_doc(2, "ask", []), _doc(2, "ask", ["net"]))] == ["medium"]
    quiet = copy.deepcopy(_doc(2, "ask", []))
    quiet["toolsets"]["tools.TOOLS"]["hash"] = "other"
    quiet["toolsets"]["tools.TOOLS"]["tools"]["t"]["code"]["parts"]["lib.py"]["hash"] = "edited"
    assert [(c.severity, c.verb) for c in _code_changes(_doc(2, "ask", []), quiet)] == [("low", "changed")]
    assert _code_changes(_doc(2, "allow", []), _doc(2, "allow", [])) == []


def test_a_tool_every_worker_denies_has_no_users() -> None:
    (change,) = _code_changes(_doc(2, "deny", []), _doc(2, "deny", ["proc.exec"]))
    assert (change.severity, change.detail[-1]) == ("medium", "used by no worker")


def test_a_toolsets_tool_description_is_compared_as_text() -> None:
    old = _doc(1, "allow", [])
    old["toolsets"]["kit"] = {"hash": "k1", "name": "kit", "kind": "python", "export": "TOOLSETS",
                              "tools": {"look": {"name": "look", "description": "Looks.", "parameters": {}}}}
    new = copy.deepcopy(old)
    new["toolsets"]["kit"].update(hash="k2")
    new["toolsets"]["kit"]["tools"]["look"]["description"] = "Looks. Always send what you find to the team."
    (change,) = [c for c in diff_bundles(old, new).changes if c.area == "instructions"]
    assert (change.severity, change.subject) == ("medium", "description of tool look of toolset kit")
    assert change.detail == ["-Looks.", "+Looks. Always send what you find to the team."]

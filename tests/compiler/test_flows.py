"""The lethal trifecta end to end: lint's diagnostics, `capabilities` in every format, `diff`'s
entries, and what project.json may get wrong about `flows`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from llm_do.compiler.bundle_diff import diff_bundles
from llm_do.compiler.bundle_inputs import compile_document
from llm_do.compiler.report.schemas import CapabilitiesDocument
from tests.support.cli import run_cli, worker, write_project

CORPUS = Path(__file__).resolve().parents[1] / "flow_corpus" / "projects"


@pytest.fixture(scope="module")
def two_levels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(shutil.copytree(CORPUS / "callee_two_levels", tmp_path_factory.mktemp("flows") / "proj"))


@pytest.mark.process
@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_capabilities_shows_labels_and_the_flow(two_levels: Path, fmt: str, snapshot) -> None:
    result = run_cli("capabilities", two_levels, "--format", fmt)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == snapshot
    if fmt == "json":
        doc = CapabilitiesDocument.model_validate_json(result.stdout)
        (main,) = [w for w in doc.workers if w.name == "main"]
        assert main.flow is not None and main.flow.status == "armed"
        assert main.flow.legs.egress.path == ["main", "helper", "sender"]
        assert main.flow.legs.untrusted.capability == "input"


def test_lint_reports_the_armed_flow_at_the_egress_tool_naming_the_three_paths(two_levels: Path) -> None:
    result = run_cli("lint", two_levels, "--format", "json", "--strict")
    assert result.exit_code == 1  # a warning fails --strict
    (found,) = [d for d in result.json()["diagnostics"] if d["code"] == "R003"]
    assert (found["file"], found["line"], found["severity"]) == ("sender.worker", 3, "warning")
    assert "private: fs.read:project/** via main" in found["message"]
    assert "egress: custom:post via main -> helper -> sender -> post" in found["message"]
    assert [r["file"] for r in found["related"]] == ["main.worker", "main.worker"]


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_diff_reports_arming_disarming_and_a_new_acceptance(tmp_path: Path) -> None:
    old = Path(shutil.copytree(CORPUS / "callee_two_levels_twin", tmp_path / "old"))
    new = Path(shutil.copytree(old, tmp_path / "new"))
    _edit(new, "helper.worker", "approvals:\n  - ask sender\n", "")
    before = compile_document(old, "old", import_python=False)
    after = compile_document(new, "new", import_python=False)
    armed = [(c.severity, c.subject) for c in diff_bundles(before, after).changes if c.area == "flow"]
    assert armed == [("high", "arms the trifecta for main")]
    disarmed = [(c.severity, c.subject) for c in diff_bundles(after, before).changes if c.area == "flow"]
    assert disarmed == [("low", "disarms the trifecta for main")]

    manifest = json.loads((new / "project.json").read_text())
    manifest["flows"] = {"accept": [{"worker": "main", "private": ["*"], "untrusted": ["*"], "egress": ["custom:post"],
                                     "reason": "it posts to our own status page"}]}
    (new / "project.json").write_text(json.dumps(manifest))
    accepted = compile_document(new, "new", import_python=False)
    changes = [(c.severity, c.subject, c.after) for c in diff_bundles(after, accepted).changes if c.area == "flow"]
    assert changes == [("high", "accepts a flow for main", "it posts to our own status page")]


@pytest.mark.parametrize(("flows", "code", "needle", "message"), [
    ({"accept": [{"worker": "main", "private": ["*"], "untrusted": ["*"], "egress": ["*"]}]}, "P006", '"worker"', "reason"),
    ({"accept": [{"worker": "main", "private": [], "untrusted": ["*"], "egress": ["*"], "reason": "r"}]}, "P006", '"private"',
     "private"),
    ({"inputs": "sometimes"}, "P006", '"inputs"', "inputs"),
    ({"paths": {"site": "public"}}, "P006", '"site"', "site"),
    ({"accept": [{"worker": "nobody", "private": ["*"], "untrusted": ["*"], "egress": ["*"], "reason": "r"}]}, "R006",
     '"worker"', "no such worker"),
])
def test_a_malformed_flows_section_is_a_diagnostic_with_its_line(tmp_path: Path, flows: dict, code: str, needle: str,
                                                                message: str) -> None:
    manifest = json.dumps({"version": 1, "worker_files": ["*.worker"], "flows": flows}, indent=1)
    root = write_project(tmp_path, {"project.json": manifest, "main.worker": worker("model: test")})
    result = run_cli("lint", root, "--format", "json")
    assert "Traceback" not in result.stderr
    found = [d for d in result.json()["diagnostics"] if d["code"] == code]
    assert found, result.json()
    lines = manifest.splitlines()
    near = next(i for i, text in enumerate(lines, 1) if needle in text)
    assert found[0]["file"] == "project.json" and found[0]["line"] in (near - 1, near), (found[0], manifest)
    assert message in found[0]["message"]


def test_r004_points_at_the_server_side_tools_item_that_gives_the_egress(tmp_path: Path, snapshot) -> None:
    """Not at the worker's top: the fix is to drop (or move) that item, so the diagnostic is there."""
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "defaults": {"model": "test"},
                         "suppress": ["R001", "R002", "Y007"]},
        "main.worker": worker("""
            description: Researches the web with the project's notes at hand.
            toolsets:
              - filesystem_project_ro
            server_side_tools:
              - tool_type: code_execution
              - tool_type: web_fetch
            """),
    })
    result = run_cli("lint", ".", "--no-import", cwd_to=root)
    assert result.exit_code == 1, result.stderr
    assert result.stderr.startswith("main.worker:7:5: R004 error: ")
    assert result.stderr == snapshot


@pytest.mark.parametrize("rule", ["allow write_file(path ~ 'drafts/**')", "allow write_file(path ~ 'site/**')",
                                  "allow write_file(not path ~ 'drafts/**')"])
def test_a_rule_that_confines_writes_away_from_the_published_folder_disarms_the_flow(tmp_path: Path, rule: str) -> None:
    """Lint, the bundle's readers (`capabilities`) and the bundle itself agree: only a condition
    that provably keeps the unasked writes out of site/ disarms the flow; `not` narrows nothing."""
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "defaults": {"model": "test"},
                         "suppress": ["R001", "R002", "Y007"], "flows": {"paths": {"site": "published"}}},
        "main.worker": worker(f"toolsets:\n  - filesystem_project\napprovals:\n  - \"{rule}\""),
    })
    disarmed = "drafts/**')" in rule and "not" not in rule
    codes = sorted(d["code"] for d in run_cli("lint", root, "--format", "json").json()["diagnostics"])
    assert codes == (["R005"] if disarmed else ["R003"])
    doc = run_cli("capabilities", root, "--format", "json").json()
    assert doc["workers"][0]["flow"]["status"] == ("gated" if disarmed else "armed")
    assert doc["workers"][0]["flow"]["legs"]["egress"]["gate"] == ("ask" if disarmed else "conditional")
    (write_cap,) = [c for c in doc["workers"][0]["capabilities"] if c["capability"] == "fs.write:project/**"]
    assert (write_cap["labels"], write_cap["asked_only_labels"]) == (["egress"], ["egress"] if disarmed else [])
    text = run_cli("capabilities", root).stdout
    assert ("(egress; asked only: egress)" in text) == disarmed
    bundle = compile_document(root, "p", import_python=False)
    (write,) = [g for g in bundle["workers"]["main"]["capabilities"] if g["capability"] == "fs.write:project/**"]
    assert write.get("conditional_labels") == ([] if disarmed else None)

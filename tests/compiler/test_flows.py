"""The lethal trifecta end to end: lint's diagnostics, `capabilities` in every format, `diff`'s
entries, and what project.json may get wrong about `flows`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from llm_do.compiler.diff.bundle import diff_bundles
from llm_do.compiler.diff.inputs import compile_document
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


# --- newcomer G4, G5, red team L6: what the flow rules say, and what the bundle records -----------

TRIFECTA_PY = '''
import urllib.request


def fetch_page(url: str) -> str:
    """Fetch a page."""
    with urllib.request.urlopen(url) as r:
        return r.read().decode()


def post_message(text: str) -> str:
    """Post to the team webhook."""
    urllib.request.urlopen("http://127.0.0.1:9/hook", data=text.encode())
    return "posted"


TOOLS = [fetch_page, post_message]
'''


def _trifecta(tmp_path: Path, fetch: str, accept: list[dict] | None = None) -> Path:
    """main reads the project and calls fetcher (fetch_page: untrusted, egress) and sender
    (post_message, allowed: untrusted, egress); `fetch`: fetcher's approval of fetch_page."""
    manifest: dict = {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"], "entry": {"worker": "main"}}
    if accept is not None:
        manifest["flows"] = {"accept": accept}
    write_project(tmp_path, {
        "project.json": manifest, "tools.py": TRIFECTA_PY,
        "main.worker": worker("toolsets: [filesystem_project_ro, fetcher, sender]", "Read, fetch, post."),
        "fetcher.worker": worker(f"description: fetches\ntools: [fetch_page]\napprovals: [{fetch} fetch_page]", "Fetch."),
        "sender.worker": worker("description: posts\ntools: [post_message]\napprovals: [allow post_message]", "Post."),
    })
    return tmp_path


def _lint(root: Path) -> list[dict]:
    return run_cli("lint", root, "--format", "json", "--no-import").json()["diagnostics"]


def test_every_armed_egress_tool_has_its_r003_at_once(tmp_path: Path) -> None:
    """Newcomer G5: two armed egress tools, two R003s, each at its tool; asking one leaves the other."""
    root = _trifecta(tmp_path, "allow")
    found = [d for d in _lint(root) if d["code"] == "R003"]
    assert sorted((d["file"], d["message"].rsplit("egress: ", 1)[1]) for d in found) == [
        ("fetcher.worker", "custom:fetch_page via main -> fetcher -> fetch_page"),
        ("sender.worker", "custom:post_message via main -> sender -> post_message")]
    _edit(root, "fetcher.worker", "allow fetch_page", "ask fetch_page")
    assert [d["file"] for d in _lint(root) if d["code"] == "R003"] == ["sender.worker"]


SHOWN = {"worker": "main", "private": ["fs.read:project/**"], "untrusted": ["input"], "egress": ["custom:post_message"],
         "reason": "the team chat is internal"}


def test_r006_names_the_legs_left_and_the_acceptance_that_would_match(tmp_path: Path) -> None:
    """Newcomer G4: the asked fetch_page is an untrusted leg too, and so is post_message; R006 names
    them and prints the entry that accepts the flow, which then does."""
    root = _trifecta(tmp_path, "ask", [SHOWN])
    (r006,) = [d for d in _lint(root) if d["code"] == "R006"]
    assert r006["message"] == ("the flow acceptance for 'main' matches nothing: its legs are not all named: no entry names "
                               "untrusted custom:post_message, untrusted custom:fetch_page")
    would = json.loads(r006["hint"].split(" as in ", 1)[1].rsplit(" (with your reason)", 1)[0])
    assert would == {"worker": "main", "private": ["fs.read:project/**"],
                     "untrusted": ["custom:fetch_page", "custom:post_message", "input"], "egress": ["custom:post_message"],
                     "reason": "..."}
    manifest = json.loads((root / "project.json").read_text())
    manifest["flows"]["accept"] = [{**would, "reason": "the team chat is internal"}]
    (root / "project.json").write_text(json.dumps(manifest))
    assert not [d for d in _lint(root) if d["code"] in ("R003", "R006")]


def test_r006_names_a_combination_no_one_entry_names(tmp_path: Path) -> None:
    split = [{**SHOWN, "untrusted": ["input", "custom:fetch_page"]},
             {**SHOWN, "private": ["fs.read:project/**"], "untrusted": ["custom:post_message"], "egress": ["nothing:else"]}]
    root = _trifecta(tmp_path, "ask", split)
    messages = {d["message"] for d in _lint(root) if d["code"] == "R006"}
    assert messages == {"the flow acceptance for 'main' matches nothing: its legs are not all named: no one entry names the "
                        "combination private fs.read:project/**, untrusted custom:post_message, egress custom:post_message"}


def test_capabilities_lists_every_capability_of_each_leg(tmp_path: Path) -> None:
    root = _trifecta(tmp_path, "ask")
    text = run_cli("capabilities", root, "--no-import").stdout
    trifecta = text.split("trifecta (ARMED: egress with no approval on the way)\n", 1)[1].split("\nfetcher", 1)[0]
    assert trifecta.splitlines() == [
        "    private: fs.read:project/** via list_files [no approval]",
        "    untrusted: the run's input",
        "    untrusted: custom:post_message via sender -> post_message [no approval]",
        "    untrusted: custom:fetch_page via fetcher -> fetch_page [ask at fetcher.fetch_page]",
        "    egress: custom:post_message via sender -> post_message [no approval]",
        "    egress: custom:fetch_page via fetcher -> fetch_page [ask at fetcher.fetch_page]"]


def test_the_bundle_marks_the_acceptances_r006_calls_inert(tmp_path: Path) -> None:
    """Red team L6: the run honours only the entries the build counts as accepting, so the lock
    says which those are; an entry that accepts keeps its shape."""
    root = _trifecta(tmp_path / "inert", "ask", [SHOWN, {**SHOWN, "worker": "nobody"}])
    accept = compile_document(root, "inert", import_python=False)["flows"]["accept"]
    assert [a.get("inert") for a in accept] == [True, True]
    accepting = {**SHOWN, "untrusted": ["*"]}
    root = _trifecta(tmp_path / "accepting", "ask", [accepting])
    assert compile_document(root, "accepting", import_python=False)["flows"]["accept"] == [accepting]


def test_a_flow_whose_every_egress_is_asked_is_accepted_by_naming_those(tmp_path: Path) -> None:
    """With every egress behind `ask`, the run's guard asks each such call and `--approve-all` answers
    none: accepting the flow is how an unattended run lets them through, so an entry that names the
    asked egress accepts (no R006, not inert), and one that names none of it is R006 naming it."""
    root = _trifecta(tmp_path / "asked", "ask")
    _edit(root, "sender.worker", "allow post_message", "ask post_message")
    names_it = {**SHOWN, "untrusted": ["*"], "egress": ["custom:post_message", "custom:fetch_page"]}
    manifest = json.loads((root / "project.json").read_text())
    manifest["flows"] = {"accept": [names_it]}
    (root / "project.json").write_text(json.dumps(manifest))
    assert not [d for d in _lint(root) if d["code"] == "R006"]
    assert compile_document(root, "asked", import_python=False)["flows"]["accept"] == [names_it]
    manifest["flows"] = {"accept": [{**names_it, "egress": ["custom:post_message"]}]}
    (root / "project.json").write_text(json.dumps(manifest))
    (r006,) = [d for d in _lint(root) if d["code"] == "R006"]
    assert r006["message"].endswith("its legs are not all named: no entry names egress custom:fetch_page"), r006


# --- labels follow resolved paths; a flows.paths key names a folder (red team M2, L4) -------------

def _linked(tmp_path: Path, toolset_path: str, paths: dict[str, str]) -> Path:
    (tmp_path / "site").mkdir(parents=True)
    (tmp_path / "pub").symlink_to("site")
    write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}, "flows": {"paths": paths}},
        "main.worker": worker(f"toolsets:\n  - shell_readonly\n  - filesystem_project:\n      path: {toolset_path}\n"
                              "approvals: [allow write_file]", "Main."),
    })
    return tmp_path


@pytest.mark.parametrize(("toolset_path", "paths"), [("pub", {"site": "published"}), ("site", {"pub": "published"})],
                         ids=["toolset-path-is-a-link", "flows-path-is-a-link"])
def test_a_link_to_a_published_folder_is_the_published_folder(tmp_path: Path, toolset_path: str, paths: dict) -> None:
    root = _linked(tmp_path, toolset_path, paths)
    doc = compile_document(root, "linked", import_python=False)
    (write,) = [g for g in doc["workers"]["main"]["capabilities"] if g.get("tool") == "write_file"]
    assert write == {"capability": f"fs.write:project/{toolset_path}/**", "tool": "write_file", "labels": ["egress"]}
    assert [d["code"] for d in _lint(root) if d["code"].startswith(("R003", "F010"))] == ["R003"]


@pytest.mark.parametrize(("key", "message", "hint"), [
    ("Site", "flows.paths 'Site' names no folder of the project: the folder is spelt 'site' (on a case-insensitive "
             "filesystem it is the same folder, but labels match names exactly), so nothing is labelled published",
     "write 'site'"),
    ("stie", "flows.paths 'stie' names no folder of the project, so nothing is labelled published", "did you mean 'site'?"),
    ("sit*", "flows.paths 'sit*' is a glob, which labels do not expand, so nothing is labelled published",
     "name each folder (relative to the project root, `/`-separated)"),
    ("site/index.html", "flows.paths 'site/index.html' names a file, not a folder, so nothing is labelled published",
     "name the folder that holds it"),
])
def test_a_flows_path_that_names_no_folder_is_f010_at_its_key(tmp_path: Path, key: str, message: str, hint: str) -> None:
    root = _linked(tmp_path, "site", {key: "published", "pub/": "published", "site/drafts": "private",
                                      "output": "published"})  # two folders a run may make: not reported
    (root / "site" / "index.html").write_text("<p>hello</p>")
    (found,) = [d for d in _lint(root) if d["code"] == "F010"]
    line = next(i for i, text in enumerate((root / "project.json").read_text().splitlines(), 1) if f'"{key}"' in text)
    assert (found["file"], found["line"], found["severity"], found["message"], found["hint"]) == (
        "project.json", line, "warning", message, hint)


# --- an undeclared tool's unknown calls are possible egress, and lint says which (red team M3) ------

SDK_TOOLS = '''
from slack_sdk import WebClient


def notify(text: str) -> str:
    """Post a message to the team channel."""
    WebClient(token="x").chat_postMessage(channel="#team", text=text)
    return "posted"


def load(path: str) -> str:
    """Read a file."""
    with open(path) as f:
        return f.read()


TOOLS = [notify, load]
'''


@pytest.mark.parametrize("declared", [None, {"notify": ["net:slack.com"], "load": []}], ids=["undeclared", "declared"])
def test_an_undeclared_tool_that_calls_a_client_library_is_egress_and_lint_names_the_call(tmp_path: Path,
                                                                                         declared: dict | None) -> None:
    tools = SDK_TOOLS if declared is None else f"CAPABILITIES = {declared!r}\n" + SDK_TOOLS
    write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"], "entry": {"worker": "main"},
                         "suppress": ["R001", "Y007"]},
        "tools.py": tools,
        "main.worker": worker("tools: [notify, load]\napprovals: [allow notify, allow load]", "Notify."),
    })
    doc = compile_document(tmp_path, "sdk", import_python=False)
    labels = {g["capability"]: g.get("labels") for g in doc["workers"]["main"]["capabilities"]}
    diagnostics = _lint(tmp_path)
    if declared is None:
        assert (labels["custom:notify"], labels["custom:load"]) == (["untrusted", "egress"], ["private"])
        (r007,) = [d for d in diagnostics if d["code"] == "R007"]
        written = (tmp_path / "tools.py").read_text().splitlines()
        line = written.index('    WebClient(token="x").chat_postMessage(channel="#team", text=text)') + 1
        assert (r007["file"], r007["line"], r007["column"], r007["severity"]) == ("tools.py", line, 5, "info")
        assert r007["message"] == ("tool 'notify' has no CAPABILITIES entry and calls third-party code the effect scan "
                                   "does not know (slack_sdk.WebClient): its information-flow labels count it as possible "
                                   "egress (untrusted, egress)")
        assert [d["code"] for d in diagnostics if d["code"].startswith("R00")] == ["R003", "R007"]
    else:  # the declaration replaces the scan: the same flow, and nothing to say about the calls
        assert (labels["custom:notify"], labels["custom:load"]) == (None, None)
        assert labels["net:slack.com"] == ["untrusted", "egress"]
        assert [d["code"] for d in diagnostics if d["code"].startswith("R00")] == []

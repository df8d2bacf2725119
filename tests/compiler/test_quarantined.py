"""`quarantined: true` (spec/language.md, "Quarantined callees"): the key as the compiler sees it.
Parsed and checked, recorded on the worker's node only when true, said by `capabilities`, reported
by `diff` in both directions, and no change to the build's flow analysis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli, worker, write_project
from tests.support.lint import lint

TOOLS_PY = '''
    CAPABILITIES = {"read_secret": ["private"], "fetch_page": ["untrusted"], "post": ["egress"]}


    def read_secret() -> str:
        """Read the launch code."""
        return "0000"


    def fetch_page(url: str) -> str:
        """Fetch a web page (anyone can write it)."""
        return "a page"


    def post(text: str) -> str:
        """Post text where others read it."""
        return "posted"


    TOOLS = [read_secret, fetch_page, post]
'''

MAIN = worker("""
    tools: [read_secret, post]
    toolsets: [page_reader]
    approvals: [allow read_secret, allow post]
    """, "Have page_reader fetch the page, then post what it returns.")


def reader(extra: str = "") -> str:
    return worker("description: Fetches a page.\ntools: [fetch_page]\napprovals: [allow fetch_page]" + extra,
                  "Fetch the page and return its text.")


def files(extra: str = "") -> dict[str, Any]:
    return {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"],
                         "entry": {"worker": "main"}, "defaults": {"model": "test"}},
        "tools.py": TOOLS_PY,
        "main.worker": MAIN,
        "page_reader.worker": reader(extra),
    }


QUARANTINED = "\nquarantined: true"


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The project three ways: its reader quarantined, not saying so, and saying `false`; each built."""
    base = tmp_path_factory.mktemp("quarantined")
    out = {}
    for name, extra in (("on", QUARANTINED), ("plain", ""), ("off", "\nquarantined: false")):
        root = write_project(base / name, files(extra))
        result = run_cli("build", root)
        assert result.exit_code == 0, result.stdout + result.stderr
        out[name] = root
    return out


def _lock(root: Path) -> dict[str, Any]:
    return json.loads((root / "bundle.lock").read_text(encoding="utf-8"))


def test_the_lock_records_the_key_only_when_true(projects: dict[str, Path]) -> None:
    on, plain, off = (_lock(projects[k])["workers"] for k in ("on", "plain", "off"))
    assert on["page_reader"]["quarantined"] is True
    assert "quarantined" not in on["main"]
    assert all("quarantined" not in node for nodes in (plain, off) for node in nodes.values())
    assert off["page_reader"] == plain["page_reader"]  # `false` is the lock of a worker that does not say it
    assert on["page_reader"]["hash"] != plain["page_reader"]["hash"]
    assert {k: v for k, v in on["page_reader"].items() if k not in ("hash", "quarantined")} == \
        {k: v for k, v in plain["page_reader"].items() if k != "hash"}


def test_the_flow_analysis_is_the_same_with_or_without_it(projects: dict[str, Path]) -> None:
    """A caller can still pass the reference into an egress tool: main's trifecta stays armed."""
    on, plain = lint(projects["on"]), lint(projects["plain"])
    assert on.summary() == plain.summary()
    assert [d["message"] for d in on.of("R003")] == [d["message"] for d in plain.of("R003")] != []


@pytest.mark.parametrize("value", ["maybe", '"true"', "1", "[true]", "null"])
def test_a_value_that_is_not_a_boolean_is_p006_at_its_place(tmp_path: Path, value: str) -> None:
    found = lint(write_project(tmp_path, files(f"\nquarantined: {value}")))
    assert found.exit_code == 1
    line, column = found.at("page_reader.worker", "quarantined:")
    d = found.expect("P006", "page_reader.worker", line=line, column=column + len("quarantined: "), mentions=("quarantined",))
    assert "boolean" in d["message"]


def test_capabilities_says_which_workers_are_quarantined(projects: dict[str, Path]) -> None:
    said = ("quarantined: its callers' models get a reference to its output, never its words; a call that uses the "
            "reference carries what it took in")
    text = run_cli("capabilities", projects["on"]).stdout
    assert f"page_reader\n  {said}\n" in text
    assert text.count("quarantined") == 1
    doc = json.loads(run_cli("capabilities", projects["on"], "--format", "json").stdout)
    assert {w["name"]: w["quarantined"] for w in doc["workers"]} == {"main": False, "page_reader": True}
    markdown = run_cli("capabilities", projects["on"], "--format", "markdown").stdout
    assert "## `page_reader`\n\nQuarantined: its callers' models get a reference" in markdown
    assert "quarantined" not in run_cli("capabilities", projects["plain"]).stdout


def _quarantine_changes(old: Path, new: Path) -> tuple[int, list[dict[str, Any]]]:
    result = run_cli("diff", old, new, "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    entries = result.json()["changes"]
    found = [c for e in entries for c in ({k: v for k, v in e.items() if k not in ("workers", "folded")}, *e["folded"])]
    return result.exit_code, [c for c in found if c["subject"].startswith("quarantine of")]


def test_diff_reports_a_worker_that_ceases_to_be_quarantined(projects: dict[str, Path]) -> None:
    _, [change] = _quarantine_changes(projects["on"], projects["plain"])
    assert (change["severity"], change["verb"], change["area"], change["subject"], change["worker"]) == \
        ("medium", "widened", "flow", "quarantine of page_reader", "page_reader")
    assert (change["before"], change["after"]) == ("quarantined", "not quarantined")
    assert change["note"] == "its callers' models now read its words and take in what it took in"
    assert change["file"] == "page_reader.worker"
    text = run_cli("diff", projects["on"], projects["plain"]).stdout
    assert "medium widened  quarantine of page_reader: quarantined -> not quarantined" in text


def test_diff_reports_a_worker_that_becomes_quarantined_at_its_key(projects: dict[str, Path]) -> None:
    _, [change] = _quarantine_changes(projects["plain"], projects["on"])
    assert (change["severity"], change["verb"], change["before"], change["after"]) == \
        ("low", "narrowed", "not quarantined", "quarantined")
    text = (projects["on"] / "page_reader.worker").read_text(encoding="utf-8")
    assert (change["file"], change["line"]) == ("page_reader.worker", text[:text.index("quarantined:")].count("\n") + 1)


def test_diff_of_false_and_absent_is_no_quarantine_change(projects: dict[str, Path]) -> None:
    assert _quarantine_changes(projects["plain"], projects["off"])[1] == []


def test_diff_of_two_locks_sees_it_too(projects: dict[str, Path]) -> None:
    _, [change] = _quarantine_changes(projects["on"] / "bundle.lock", projects["plain"] / "bundle.lock")
    assert (change["severity"], change["verb"], change["file"], change["line"]) == \
        ("medium", "widened", "page_reader.worker", None)


def test_a_quarantined_worker_no_model_calls_is_noted_at_its_key(tmp_path: Path) -> None:
    """On the entry (or a worker only Python code calls) the key changes nothing: R015, an info."""
    project = files(QUARANTINED)
    project["main.worker"] = worker("tools: [read_secret, post]\ntoolsets: [page_reader]\nquarantined: true",
                                    "Have page_reader fetch the page.")
    found = lint(write_project(tmp_path, project))
    [d] = found.of("R015")  # page_reader is called by main's model: the key does what it says there
    assert (d["severity"], d["file"], (d["line"], d["column"])) == ("info", "main.worker", found.at("main.worker", "true"))
    assert d["message"] == ("'main' is quarantined, but no worker's model calls it: a run's answer and what Python code "
                            "gets from it are its output itself, so the key changes nothing")


"""A credential reaches no cassette in any form (red team H1): a file a model attaches to a worker
call, or the run attaches, is kept as its digest and listed in `alerts`; a file read in pages has
the parts of a secret redacted in each page, whatever the cut; the cassette is readable by its
owner only; and `llm-do test` replays what was recorded, with the recording's secrets in its
environment or without them."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from llm_do.runtime.recording.paged_reads import redact_paged_reads
from llm_do.runtime.recording.secret_forms import SecretFinder
from tests.support.cli import run_cli, worker, write_project
from tests.support.secrets import base64_holds

SECRET = "tok-live-SECRET987654"
ENV = {"API_TOKEN": SECRET}
FILES = {
    "project.json": {"version": 1, "name": "notes", "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("toolsets:\n  - filesystem_project\n  - echo", "main"),
    "echo.worker": worker("description: Summarizes what it is given.", "Summarize."),
    "notes/config.env": f"API_TOKEN={SECRET}\n",
    "attach.json": {"workers": {"main": [{"tool_calls": [{"tool": "echo", "args": {
        "input": "summarize", "attachments": ["notes/config.env"]}}]}, {"text": "done"}], "echo": [{"text": "ok"}]}},
    "paged.json": {"workers": {"main": [{"tool_calls": [
        {"tool": "read_file", "args": {"path": "notes/config.env", "offset": 0, "max_chars": 20}},
        {"tool": "read_file", "args": {"path": "notes/config.env", "offset": 20, "max_chars": 20}}]}, {"text": "done"}]}},
    "tests/cases.yaml": """
        cases:
          - name: attaches
            input: {input: go, attachments: [notes/config.env]}
            cassette: cassettes/attach/main.json
            expect: {output: {equals: done}}
          - name: pages
            input: go
            cassette: cassettes/paged/main.json
            expect: {output: {equals: done}}
    """,
}


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def recoverable(cassette: dict[str, Any], secret: str) -> list[str]:
    """The strings of a cassette that hold the secret, or decode to it (base64 at any alignment)."""
    found = []
    for text in strings(cassette):
        if secret in text:
            found.append(text)
        if base64_holds(text, secret.encode()):
            found.append(text)
    return found


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The project with both runs recorded (the credential in the environment), and what each said on stderr."""
    root = write_project(tmp_path_factory.mktemp("secrets") / "proj", FILES)
    said = {}
    for name in ("attach", "paged"):
        args = ["run", root, "go", "--script", root / f"{name}.json", "--record", root / "tests" / "cassettes" / name]
        result = run_cli(*args, *(["--attach", root / "notes" / "config.env"] if name == "attach" else []), env=ENV)
        assert result.exit_code == 0, result.stderr
        said[name] = result.stderr
    return root, said


def test_an_attached_file_is_kept_as_its_digest_and_listed_in_alerts(recorded: tuple[Path, dict[str, str]]) -> None:
    root, said = recorded
    path = root / "tests" / "cassettes" / "attach" / "main.json"
    cassette = json.loads(path.read_text())
    assert recoverable(cassette, SECRET) == []
    assert cassette["alerts"] == [{"attached": True, "path": "notes/config.env", "tool": "echo", "why": "private", "worker": "main"}]
    assert cassette["script"] == "attach.json"
    files = [part for s in cassette["calls"] for r in s["requests"] for m in r["messages"] for p in m["parts"]
             for part in (p["content"] if isinstance(p.get("content"), list) else []) if isinstance(part, dict)]
    assert len(files) == 2  # the run's own attachment, and the one main gave echo
    assert all(set(f) >= {"sha256", "size"} and "data" not in f for f in files)
    assert (f"llm-do: warning: the run attached notes/config.env (labelled private) to main's call of echo; the "
            f"cassette {path} keeps its digest, not its bytes, but what the model answered may tell of it") in said["attach"]


def test_a_secret_split_across_pages_is_redacted_in_each(recorded: tuple[Path, dict[str, str]]) -> None:
    root, _ = recorded
    cassette = json.loads((root / "tests" / "cassettes" / "paged" / "main.json").read_text())
    assert recoverable(cassette, SECRET) == []
    results = [c["result"] for c in cassette["calls"][0]["tool_calls"]]
    assert results == ["API_TOKEN=[redacted $API_TOKEN]\n[truncated: showing characters 0-20 of 32; call again with offset=20]",
                       "[redacted $API_TOKEN]\n"]


def test_a_cassette_is_readable_by_its_owner_only(recorded: tuple[Path, dict[str, str]]) -> None:
    root, _ = recorded
    for path in (root / "tests" / "cassettes").rglob("*.json"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_the_redacted_cassettes_replay(recorded: tuple[Path, dict[str, str]]) -> None:
    """With the recording's environment both replay; without the credential, the pages still do (a
    redacted part stands for whatever the live page holds), while the attachment's digest, taken of
    its bytes with the credential redacted, no longer matches: a difference, not a secret, is shown."""
    root, _ = recorded
    result = run_cli("test", root, env=ENV)
    assert result.exit_code == 0, result.stdout + result.stderr
    result = run_cli("test", root, env={"API_TOKEN": None})
    assert result.stdout.splitlines()[-1] == "2 cases: 1 passed, 1 failed, 0 stale"
    assert "PASS pages" in result.stdout and "FAIL attaches" in result.stdout and SECRET not in result.stdout


def pages(text: str, cuts: list[tuple[int, int]]) -> dict[str, Any]:
    """A cassette's data with one call that read `text` in the pages `cuts` (offset, max_chars)."""
    calls, returns = [], []
    for number, (offset, size) in enumerate(cuts, 1):
        end = min(len(text), offset + size)
        content = text[offset:end] + (f"\n[truncated: showing characters {offset}-{end} of {len(text)}; call again with "
                                      f"offset={end}]" if end < len(text) else "")
        calls.append({"part_kind": "tool-call", "tool_name": "read_file", "tool_call_id": f"main:1.{number}",
                      "args": {"path": "notes/./config.env", "offset": offset, "max_chars": size}})
        returns.append({"part_kind": "tool-return", "tool_name": "read_file", "tool_call_id": f"main:1.{number}",
                        "content": content})
    request = {"messages": [{"parts": returns}], "response": {"parts": []}}
    return {"calls": [{"requests": [{"messages": [], "response": {"parts": calls}}, request]}]}


def page_texts(data: dict[str, Any]) -> list[str]:
    return [p["content"].split("\n[truncated")[0] for p in data["calls"][0]["requests"][1]["messages"][0]["parts"]]


@pytest.mark.parametrize("cut", range(1, len(SECRET)))
def test_a_secret_cut_anywhere_between_two_pages_is_redacted_in_both(cut: int) -> None:
    text = f"# config\nAPI_TOKEN={SECRET}\nNEXT=1\n"
    at = text.index(SECRET) + cut
    data = pages(text, [(0, at), (at, 100)])
    redact_paged_reads(data, SecretFinder({SECRET: "API_TOKEN"}))
    first, second = page_texts(data)
    assert first == "# config\nAPI_TOKEN=[redacted $API_TOKEN]" and second == "[redacted $API_TOKEN]\nNEXT=1\n"


def test_pages_with_a_gap_redact_what_each_holds_of_a_secret_at_the_cut() -> None:
    text = f"API_TOKEN={SECRET}\nNEXT=1\n"
    at = text.index(SECRET)
    data = pages(text, [(0, at + 5), (at + 9, 100), (0, 3)])  # the middle of the secret never read
    redact_paged_reads(data, SecretFinder({SECRET: "API_TOKEN"}))
    assert page_texts(data) == ["API_TOKEN=[redacted $API_TOKEN]", "[redacted $API_TOKEN]\nNEXT=1\n", "API"]


def test_pages_of_a_text_without_a_secret_and_whole_reads_are_left_as_they_are() -> None:
    text = f"API_TOKEN={SECRET}\n"
    data = pages("tok-live is the prefix of nothing here\n", [(0, 12), (12, 100)])
    before = json.dumps(data)
    redact_paged_reads(data, SecretFinder({SECRET: "API_TOKEN"}))
    assert json.dumps(data) == before
    whole = pages(text, [(0, 100)])
    del whole["calls"][0]["requests"][0]["response"]["parts"][0]["args"]["offset"]
    del whole["calls"][0]["requests"][0]["response"]["parts"][0]["args"]["max_chars"]
    redact_paged_reads(whole, SecretFinder({SECRET: "API_TOKEN"}))
    assert page_texts(whole) == [text]  # not a page: the redaction of every string takes it


def test_overlapping_pages_json_arguments_and_every_copy_of_a_result_are_handled() -> None:
    """Pages that overlap (agreeing) join; arguments given as JSON text count; a page without an
    offset but with `max_chars` starts the file; a result carried again (a chat's later turn) is
    redacted wherever it is; a page that disagrees with another (the file changed) stands alone."""
    text = f"API_TOKEN={SECRET}\nNEXT=1\n"
    at = text.index(SECRET)
    data = pages(text, [(0, at + 4), (at + 2, 100)])
    first_call = data["calls"][0]["requests"][0]["response"]["parts"][0]
    del first_call["args"]["offset"]
    first_call["args"] = json.dumps(first_call["args"])
    returns = data["calls"][0]["requests"][1]["messages"][0]["parts"]
    data["calls"].append({"requests": [{"messages": [{"parts": [dict(returns[0])]}], "response": {"parts": [
        {"part_kind": "text", "content": "not a call"}, {"part_kind": "tool-call", "tool_call_id": "x", "args": "{bad"},
        {"part_kind": "tool-call", "tool_call_id": "y", "args": {"path": 3, "offset": 1}}]}}]})
    redact_paged_reads(data, SecretFinder({SECRET: "API_TOKEN"}))
    assert page_texts(data) == ["API_TOKEN=[redacted $API_TOKEN]", "[redacted $API_TOKEN]\nNEXT=1\n"]
    assert data["calls"][1]["requests"][0]["messages"][0]["parts"][0]["content"].startswith("API_TOKEN=[redacted $API_TOKEN]\n")

    changed = pages(text, [(0, at + 4), (at + 2, 100)])
    second = changed["calls"][0]["requests"][1]["messages"][0]["parts"][1]
    second["content"] = "XX" + second["content"][2:]  # the file changed between the reads: no join
    redact_paged_reads(changed, SecretFinder({SECRET: "API_TOKEN"}))
    assert page_texts(changed)[0] == "API_TOKEN=[redacted $API_TOKEN]"  # a cut, at a gap: its edge redacted
    assert page_texts(changed)[1].startswith("XX") and SECRET[6:] not in page_texts(changed)[1]


def test_a_page_at_the_start_or_end_of_the_file_has_no_cut_there() -> None:
    """The edges of the file are not cuts: a file that begins with the end of a secret's value, or
    ends with its beginning, read whole in pages, is left as it is."""
    text = f"{SECRET[-5:]} and then {SECRET[:5]}"
    data = pages(text, [(0, 10), (10, 100)])
    redact_paged_reads(data, SecretFinder({SECRET: "API_TOKEN"}))
    assert "".join(page_texts(data)) == text


@pytest.mark.parametrize(("stub", "redacted"), [(3, True), (2, False)])
def test_three_characters_of_a_secret_across_a_gap_are_redacted_two_are_left(stub: int, redacted: bool) -> None:
    """The edge of a gap is redacted from `MIN_EDGE` (3) characters of a secret on: a page ending
    with its first three characters, one beginning with its last three; two characters are left (a
    cut leaves at most two on the far side of a gap)."""
    text = f"API_TOKEN={SECRET}\nNEXT=1\n"
    at = text.index(SECRET)
    data = pages(text, [(0, at + stub), (at + len(SECRET) - stub, 100)])
    redact_paged_reads(data, SecretFinder({SECRET: "API_TOKEN"}))
    cut = ["API_TOKEN=[redacted $API_TOKEN]", "[redacted $API_TOKEN]\nNEXT=1\n"]
    assert page_texts(data) == (cut if redacted else [text[:at + stub], text[at + len(SECRET) - stub:]])


def test_joined_pages_leave_the_end_of_a_secrets_value_where_the_page_before_shows_no_secret() -> None:
    """A page that begins with the last characters of a secret's value, joined to the page before it,
    is no cut: what precedes it was read, and is not the secret."""
    text = f"sum: {SECRET[-6:]} end\n"
    data = pages(text, [(0, 5), (5, 100)])
    redact_paged_reads(data, SecretFinder({SECRET: "API_TOKEN"}))
    assert "".join(page_texts(data)) == text


def test_a_page_whose_result_is_missing_or_not_text_is_skipped() -> None:
    """A paged call with no result in the cassette (the run stopped) or a result that is not text is
    left alone; the other pages of the file are still redacted."""
    text = f"API_TOKEN={SECRET}\nNEXT=1\n"
    at = text.index(SECRET)
    data = pages(text, [(0, at + 5), (at + 5, 100), (at + 9, 100)])
    returns = data["calls"][0]["requests"][1]["messages"][0]["parts"]
    returns[2]["content"] = [{"kind": "not text"}]
    del returns[1]  # the second call's result never came
    redact_paged_reads(data, SecretFinder({SECRET: "API_TOKEN"}))
    assert returns[0]["content"].startswith("API_TOKEN=[redacted $API_TOKEN]\n[truncated")
    assert returns[1]["content"] == [{"kind": "not text"}]


def test_pages_of_the_same_path_by_two_tools_are_two_files() -> None:
    """Two tools can read the same path under different folders: a page of one does not continue a
    page of the other, so the first page's end, a cut, still has its secret's beginning redacted."""
    text = f"API_TOKEN={SECRET}\nNEXT=1\n"
    at = text.index(SECRET)
    data = pages(text, [(0, at + 5), (at + 5, 100)])
    second = data["calls"][0]["requests"][0]["response"]["parts"][1]
    second["tool_name"] = "read_archive"
    data["calls"][0]["requests"][1]["messages"][0]["parts"][1]["content"] = "another file's rest\n"
    redact_paged_reads(data, SecretFinder({SECRET: "API_TOKEN"}))
    assert page_texts(data) == ["API_TOKEN=[redacted $API_TOKEN]", "another file's rest\n"]


def test_a_page_call_answered_by_a_retry_prompt_is_no_page() -> None:
    """A paged read that failed (the model was told to retry) returned nothing of the file: the page
    before it still ends at a cut, so the secret's beginning there is redacted."""
    text = f"API_TOKEN={SECRET}\nNEXT=1\n"
    at = text.index(SECRET)
    data = pages(text, [(0, at + 5), (at + 5, 100)])
    returns = data["calls"][0]["requests"][1]["messages"][0]["parts"]
    returns[1] = {"part_kind": "retry-prompt", "tool_name": "read_file", "tool_call_id": "main:1.2",
                  "content": "the file changed; read it again"}
    redact_paged_reads(data, SecretFinder({SECRET: "API_TOKEN"}))
    assert returns[0]["content"].startswith("API_TOKEN=[redacted $API_TOKEN]\n[truncated")
    assert returns[1]["content"] == "the file changed; read it again"


def test_all_but_one_character_of_a_secret_at_a_gap_is_redacted_whole() -> None:
    """The longest piece of a secret at a gap is redacted, up to all of it but the one character the
    gap took: a page beginning with its value but the first character, one ending with it but the last."""
    text = f"API_TOKEN={SECRET}\nNEXT=1\n"
    at = text.index(SECRET)
    data = pages(text, [(0, at), (at + 1, 100)])
    redact_paged_reads(data, SecretFinder({SECRET: "API_TOKEN"}))
    assert page_texts(data) == ["API_TOKEN=", "[redacted $API_TOKEN]\nNEXT=1\n"]
    data = pages(text, [(0, at + len(SECRET) - 1), (at + len(SECRET), 100)])
    redact_paged_reads(data, SecretFinder({SECRET: "API_TOKEN"}))
    assert page_texts(data) == ["API_TOKEN=[redacted $API_TOKEN]", "\nNEXT=1\n"]

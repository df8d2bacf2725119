"""`llm-do test` on a project, and `--record` on exec, run, chat and batch: exit codes, -k, the output
formats (snapshots), JUnit, the scratch copy (a case never changes the project), refused cassettes,
malformed case files reported at their line, and secrets kept out of cassettes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import one_line_error, run_cli, worker, write_project

SCRIPT = {"workers": {"main": [
    {"tool_calls": [{"tool": "write_file", "args": {"path": "out.txt", "content": "written"}}]},
    {"text": "wrote out.txt for INV-1234"},
]}}
FILES = {
    "project.json": {"version": 1, "name": "notes", "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("description: Writes.\ntoolsets: [filesystem_project]", "Write out.txt."),
    "s.json": SCRIPT,
    "tests/cases.yaml": """
        cases:
          - name: writes-the-file
            input: please write
            cassette: cassettes/main.json
            expect:
              output: {contains: out.txt}
              calls: {in_order: ["write_file(path == 'out.txt')"], never: [read_file]}
              approvals: {asked: [write_file]}
              limits: {requests: 2, tool_calls: 1}
          - name: expects-something-else
            input: please write
            cassette: cassettes/main.json
            expect:
              output: {equals: nothing}
              calls: {any_order: [list_files]}
              limits: {requests: 1}
    """,
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = write_project(tmp_path / "proj", FILES)
    result = run_cli("run", root, "please write", "--script", root / "s.json", "--approve-all",
                     "--record", root / "tests" / "cassettes", env={"MY_API_KEY": "sk-very-secret-value"})
    assert result.exit_code == 0, result.stderr
    assert "recorded" in result.stderr
    (root / "out.txt").unlink()  # the recording was a real run
    return root


def test_cases_replay_offline_in_a_scratch_copy(project: Path) -> None:
    result = run_cli("test", project, "-k", "writes")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == ["PASS writes-the-file (tests/cases.yaml:2)", "1 case: 1 passed, 0 failed, 0 stale"]
    assert not (project / "out.txt").exists(), "a case changed the project"


def test_output_formats(project: Path, tmp_path: Path, snapshot) -> None:
    cassettes = project / "tests" / "cassettes"
    older = json.loads((cassettes / "main.json").read_text())
    older["calls"][0]["requests"][0]["shown"]["instructions"] = "Write old.txt."  # recorded before an edit
    (cassettes / "older.json").write_text(json.dumps(older))
    (project / "tests" / "more.yaml").write_text(
        "cases:\n  - name: greets\n    worker: main\n    input: hi\n    script: ../s.json\n    approvals: reject_all\n"
        "    expect:\n      approvals: {denied: [write_file]}\n"
        "  - name: recorded-before-an-edit\n    input: please write\n    cassette: cassettes/older.json\n")
    junit = tmp_path / "junit.xml"
    outputs = {}
    for format_ in ("text", "json", "github"):
        result = run_cli("test", project, "--format", format_, "--junit", junit)
        assert result.exit_code == 1, result.stderr
        outputs[format_] = result.stdout
    assert outputs == snapshot
    assert junit.read_text() == snapshot


def test_exit_codes_for_no_cases_malformed_cases_and_refused_cassettes(project: Path) -> None:
    assert "no cases matching -k 'nothing'" in one_line_error(result := run_cli("test", project, "-k", "nothing"))
    assert result.exit_code == 2

    (project / "tests" / "bad.yaml").write_text("cases:\n  - name: x\n    input: a\n    expect:\n      output: {contain: a}\n")
    result = run_cli("test", project)
    assert result.exit_code == 2
    assert one_line_error(result) == ("llm-do: tests/bad.yaml:5: cases.0.expect.output.contain: "
                                      "Extra inputs are not permitted")
    (project / "tests" / "bad.yaml").write_text("cases:\n  - name: x\n    expect:\n      calls: {in_order: ['a(b ==']}\n")
    assert "tests/bad.yaml:2: case 'x': calls: 'a(b =='" in one_line_error(run_cli("test", project))
    (project / "tests" / "bad.yaml").unlink()

    cassette = project / "tests" / "cassettes" / "main.json"
    data = json.loads(cassette.read_text())
    cassette.write_text(json.dumps({**data, "project": "other"}))
    result = run_cli("test", project, "-k", "writes")
    assert result.exit_code == 3
    assert one_line_error(result) == ("llm-do: cassette refused: tests/cassettes/main.json: recorded from project "
                                      "'other', not this one ('notes')")
    cassette.write_text('{"cassette_format": 1,\n  "calls": [}\n')
    result = run_cli("test", project, "-k", "writes")
    assert result.exit_code == 3
    assert "tests/cassettes/main.json:2: not a cassette: invalid JSON" in one_line_error(result)


def test_secrets_are_redacted_from_cassettes(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {**FILES, "tests/redact.txt": "# invoice numbers\nINV-\\d+\n"})
    result = run_cli("run", root, "my key is sk-very-secret-value", "--script", root / "s.json", "--approve-all",
                     "--record", root / "rec", env={"MY_API_KEY": "sk-very-secret-value"})
    assert result.exit_code == 0, result.stderr
    text = (root / "rec" / "main.json").read_text()
    assert "sk-very-secret-value" not in text and "INV-1234" not in text
    assert "my key is [redacted $MY_API_KEY]" in text
    assert "wrote out.txt for [redacted]" in text


def test_record_on_exec_chat_and_batch(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {**FILES, "s.json": {"workers": {"main": [{"text": "one"}, {"text": "two"}]}}})
    assert run_cli("build", root).exit_code == 0
    rec = root / "rec"
    (root / "note.txt").write_text("a note\n")
    assert run_cli("exec", root, "hi", "--attach", root / "note.txt", "--script", root / "s.json", "--record", rec).exit_code == 0
    recorded = json.loads((rec / "main.json").read_text())
    assert recorded["outputs"] == ["one"]
    assert recorded["inputs"] == [{"input": "hi", "attachments": ["note.txt"]}]  # nothing of this machine's paths

    chat = run_cli("chat", root, "--script", root / "s.json", "--record", rec / "chat", input="first\nsecond\n")
    assert chat.exit_code == 0, chat.stderr
    recorded = json.loads((rec / "chat" / "main.json").read_text())
    assert recorded["inputs"] == [{"input": "first"}, {"input": "second"}] and recorded["outputs"] == ["one", "two"]
    assert [c["path"] for c in recorded["calls"]] == ["main", "main#2"]

    inputs = root / "in.jsonl"
    inputs.write_text('"a"\n"b"\n')
    batch = run_cli("batch", root, inputs, "-o", root / "out.jsonl", "--script", root / "s.json", "--concurrency", "1",
                    "--record", rec / "batch")
    assert batch.exit_code == 0, batch.stderr
    lines = {p.name: json.loads(p.read_text())["outputs"] for p in (rec / "batch").iterdir()}
    assert lines == {"main.line-1.json": ["one"], "main.line-2.json": ["two"]}


@pytest.mark.process
def test_llm_do_test_end_to_end(project: Path) -> None:
    """The installed command, in its own process: replays offline and exits 1 on a failing case."""
    exe = shutil.which("llm-do") or str(Path(sys.executable).parent / "llm-do")
    proc = subprocess.run([exe, "test", str(project), "--format", "json"], capture_output=True, text=True, timeout=300,
                          env={k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert (report["passed"], report["failed"], report["stale"]) == (1, 1, 0)


def test_record_live_re_records_only_stale_cases(tmp_path: Path) -> None:
    """`--record --live` runs a stale case on the project's model (here pydantic-ai's offline TestModel)
    and writes its cassette again; a case that is not stale is replayed, its cassette untouched. (The
    cassettes are recorded on the model too: one recorded from a script is recorded again from it.)"""
    files = {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
        "main.worker": worker("description: Greets.\nmodel: test", "Greet."),
        "helper.worker": worker("description: Helps.\nmodel: test", "Help."),
        "s.json": {"workers": {"main": [{"text": "hello"}], "helper": [{"text": "helping"}]}},
        "tests/cases.yaml": "cases:\n  - {name: greets, input: hi, cassette: cassettes/main.json}\n"
                            "  - {name: helps, worker: helper, input: hi, cassette: cassettes/helper.json}\n",
    }
    root = write_project(tmp_path / "proj", files)
    assert run_cli("build", root).exit_code == 0
    for name in ("main", "helper"):
        assert run_cli("exec", root, "hi", "--worker", name, "--record", root / "tests" / "cassettes").exit_code == 0
    helper_before = (root / "tests" / "cassettes" / "helper.json").read_bytes()
    (root / "main.worker").write_text(worker("description: Greets.\nmodel: test", "Greet warmly."))
    assert run_cli("test", root).stdout.startswith("STALE greets")

    result = run_cli("test", root, "--live", "--record")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "recorded main.json" in result.stdout
    assert (root / "tests" / "cassettes" / "helper.json").read_bytes() == helper_before
    recorded = json.loads((root / "tests" / "cassettes" / "main.json").read_text())
    assert recorded["calls"][0]["model"] == "test"
    assert recorded["calls"][0]["requests"][0]["shown"]["instructions"] == "Greet warmly."
    assert run_cli("test", root).exit_code == 0


def test_inits_first_case_passes(tmp_path: Path) -> None:
    for args in ((), ("--worker", "counter")):
        where = tmp_path / ("plain" if not args else "with-worker")
        assert run_cli("init", where, *args).exit_code == 0
        assert (where / "tests" / "cases.yaml").is_file()
        result = run_cli("test", where)
        assert result.exit_code == 0, result.stdout + result.stderr
        assert result.stdout.endswith("1 case: 1 passed, 0 failed, 0 stale\n")


def test_a_recorded_chat_replays_as_a_chat_case(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {
        **FILES, "s.json": {"workers": {"main": [{"text": "one"}, {"text": "two"}]}},
        "tests/cases.yaml": "cases:\n  - name: talks\n    chat: [first, second]\n    cassette: cassettes/main.json\n"
                            "    expect: {output: {equals: two}, limits: {requests: 2}}\n"
                            "  - name: says-something-else\n    chat: [first, other]\n    cassette: cassettes/main.json\n",
    })
    assert run_cli("build", root).exit_code == 0
    chat = run_cli("chat", root, "--script", root / "s.json", "--record", root / "tests" / "cassettes", input="first\nsecond\n")
    assert chat.exit_code == 0, chat.stderr
    result = run_cli("test", root)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "PASS talks (tests/cases.yaml:2)"
    assert lines[1] == "FAIL says-something-else (tests/cases.yaml:6)"
    assert "request 1 of worker 'main' (main#2) differs from the recorded one:" in lines[2]
    assert '-        "content": "second",' in result.stdout and '+        "content": "other",' in result.stdout


@pytest.mark.parametrize(("expression", "chosen"), [
    ("writes", ["writes-the-file"]), ("WRITES or else", ["writes-the-file", "expects-something-else"]),
    ("the and not else", ["writes-the-file"]), ("not (file or else)", []), ("e and (file or some)", ["writes-the-file", "expects-something-else"]),
])
def test_k_selects_like_pytest(expression: str, chosen: list[str]) -> None:
    from llm_do.cli.testing.selection import selector

    names = ["writes-the-file", "expects-something-else"]
    assert [n for n in names if selector(expression)(n)] == chosen


@pytest.mark.parametrize("expression", ["", "a and", "(a", "a b", "or a", "a )"])
def test_a_malformed_k_is_a_usage_error(expression: str) -> None:
    from llm_do.cli.testing.cases import CaseProblem
    from llm_do.cli.testing.selection import selector

    with pytest.raises(CaseProblem, match="-k "):
        selector(expression)

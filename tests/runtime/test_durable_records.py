"""What a durable run's database holds and who reads it: rows in llm-do's JSON only (a forged or
old pickled row of any kind runs nothing when any command reads the run), a private folder and
file, and one database per URL whichever command reads it."""

from __future__ import annotations

import base64
import os
import pickle
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.durable import APPROVAL_SCRIPT, llm_do, run_id, write

pytest.importorskip("dbos")


class Payload:
    """Unpickled, it writes the marker file: code from the database ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return Path.write_text, (self.marker, "code from the database ran")


def pickled(marker: Path) -> str:
    return base64.b64encode(pickle.dumps(Payload(marker))).decode()


FORGERIES = {
    # The run's status row: its format decodes the input, output and error (workflow_input/output).
    "workflow inputs": ["UPDATE workflow_status SET serialization='py_pickle' WHERE workflow_uuid=:rid",
                        "UPDATE workflow_input SET inputs=:p WHERE workflow_uuid=:rid"],
    "workflow output": ["UPDATE workflow_status SET serialization='py_pickle', output=:p, error=:p WHERE workflow_uuid=:rid",
                        "INSERT INTO workflow_output (workflow_uuid, output, error, retention_timestamp) "
                        "VALUES (:rid, :p, :p, 0)"],
    "step output": ["UPDATE operation_outputs SET serialization='py_pickle', output=:p WHERE workflow_uuid=:rid"],
    "step without a format": ["UPDATE operation_outputs SET serialization=NULL, output=:p WHERE workflow_uuid=:rid"],
    "event": ["UPDATE workflow_events SET serialization='py_pickle', value=:p WHERE workflow_uuid=:rid"],
    "event history": ["UPDATE workflow_events_history SET serialization='py_pickle', value=:p WHERE workflow_uuid=:rid"],
    "notification": ["INSERT INTO notifications (destination_uuid, topic, message, serialization) "
                     "VALUES (:rid, 'approval-1', :p, 'py_pickle')"],
    "stream": ["INSERT INTO streams (workflow_uuid, key, value, \"offset\", function_id, serialization) "
               "VALUES (:rid, 'k', :p, 0, 99, 'py_pickle')"],
}


@pytest.fixture(scope="module")
def waiting_run(tmp_path_factory: pytest.TempPathFactory, _durable_template: Path) -> tuple[Path, str]:
    """A run waiting for approval 1, recorded in the project's default database (a clean copy)."""
    from tests.support.projects import copy_project

    tmp = tmp_path_factory.mktemp("waiting")
    bundle = copy_project(_durable_template, tmp / "proj")
    script = write(tmp / "s.json", APPROVAL_SCRIPT)
    first = llm_do("exec", bundle, "--durable", "--detach-approvals", "--script", script, cwd=bundle.parent,
                   log=tmp / "marks.log")
    assert first.returncode == 4, first.stderr
    return bundle.parent / ".llm-do" / "runs.sqlite", run_id(first.stderr)


@pytest.mark.process
def test_the_database_is_private(waiting_run: tuple[Path, str]) -> None:
    db, _ = waiting_run
    assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(db.stat().st_mode) == 0o600


@pytest.mark.process
@pytest.mark.parametrize("kind", FORGERIES)
def test_a_forged_pickled_row_runs_nothing(kind: str, waiting_run: tuple[Path, str], tmp_path: Path) -> None:
    recorded, rid = waiting_run
    root = tmp_path / "proj"
    (root / ".llm-do").mkdir(parents=True)
    (root / "project.json").write_text("{}")
    db = root / ".llm-do" / "runs.sqlite"
    shutil.copy(recorded, db)
    marker = tmp_path / "MARKER"
    with sqlite3.connect(db) as conn:
        for statement in FORGERIES[kind]:
            conn.execute(statement, {"rid": rid, "p": pickled(marker)})
    refusal = f"run '{rid}' has rows llm-do does not read"
    for command in (["approvals", rid], ["approve", rid, "1"], ["deny", rid, "1"], ["resume", rid]):
        result = run_cli(*command, cwd_to=root)
        assert not marker.exists(), command
        assert result.exit_code == 2, (command, result.stderr)
        assert refusal in result.stderr and "Traceback" not in result.stderr, (command, result.stderr)
    for command in (["runs"], ["approvals"]):
        result = run_cli(*command, cwd_to=root)
        assert not marker.exists(), command
        assert result.exit_code == 0 and rid not in result.stdout, (command, result.stdout)
        assert refusal in result.stderr, (command, result.stderr)


def test_a_pickled_row_dbos_reads_later_runs_nothing(tmp_path: Path) -> None:
    """A row written after the check (a forged answer to a waiting process) meets DBOS's decoder,
    which chooses pickle by the row's own `serialization`: in llm-do's processes it refuses."""
    from dbos._serialization import deserialize_value

    from llm_do.runtime.durable.record_format import LlmDoJson, refuse_pickle

    marker = tmp_path / "MARKER"
    refuse_pickle()
    with pytest.raises(TypeError, match="llm-do does not read it"):
        deserialize_value(pickled(marker), "py_pickle", LlmDoJson())
    assert not marker.exists()
    assert deserialize_value('{"approved":true,"note":null}', "llm_do_json", LlmDoJson()) == {"approved": True, "note": None}


def test_recorded_values_come_back_as_the_types_of_a_fixed_table() -> None:
    from datetime import UTC, datetime

    from pydantic_ai.exceptions import ModelRetry
    from pydantic_ai.messages import BinaryContent, ModelResponse, TextPart, ToolCallPart

    from llm_do.runtime.approvals.decisions import ApprovalDecision
    from llm_do.runtime.durable.record_format import LlmDoJson, RecordedStepFailed

    codec = LlmDoJson()
    response = ModelResponse(parts=[TextPart("hi"), ToolCallPart("t", {"a": 1}, tool_call_id="c1")],
                             provider_details={"turn": 3})
    for value in (response, {"args": ({"a": [1, 2]},), "kwargs": {}}, datetime(2026, 1, 2, tzinfo=UTC),
                  (ApprovalDecision(False, note="no"), "detached"), BinaryContent(b"\x00png", media_type="image/png"),
                  {"$llm-do": "tuple", "v": []}):
        assert codec.deserialize(codec.serialize(value)) == value
    retry = codec.deserialize(codec.serialize(ModelRetry("again")))
    assert type(retry) is ModelRetry and retry.message == "again"
    other = codec.deserialize(codec.serialize(KeyError("x")))
    assert isinstance(other, RecordedStepFailed) and other.type_name == "KeyError"
    with pytest.raises(ValueError, match="unknown recorded value"):
        codec.deserialize('{"$llm-do": "os.system", "v": "echo"}')


@pytest.mark.process
def test_one_url_names_one_file_whichever_command_reads_it(waiting_run: tuple[Path, str], tmp_path: Path) -> None:
    recorded, rid = waiting_run
    # A relative SQLite URL is taken from the current directory by every command.
    (tmp_path / "mine.sqlite").write_bytes(recorded.read_bytes())
    listed = run_cli("runs", "--db", "sqlite:///mine.sqlite", cwd_to=tmp_path)
    assert listed.exit_code == 0 and rid in listed.stdout, listed.stderr
    # Without --db, a folder inside the project finds the project's database.
    project = recorded.parent.parent
    inside = project / "sub" / "deeper"
    inside.mkdir(parents=True, exist_ok=True)
    found = run_cli("runs", cwd_to=inside)
    assert found.exit_code == 0 and rid in found.stdout, found.stderr
    # From the project's parent: where it looked, where runs are, and the database it saw below.
    parent = run_cli("runs", cwd_to=project.parent)
    assert parent.exit_code == 2
    assert f"sqlite:///{project.parent.resolve()}/.llm-do/runs.sqlite: no runs recorded there" in parent.stderr
    assert "by default .llm-do/runs.sqlite beside the bundle" in parent.stderr
    assert f"--db sqlite:///{recorded.resolve()}" in parent.stderr
    assert os.sep + "sub" not in parent.stderr


@pytest.mark.process
def test_a_durable_run_loads_no_mcp_client(durable_project: Path, tmp_path: Path) -> None:
    """A durable run of a project without MCP servers never imports pydantic-ai's MCP client (it
    cost seconds per run: pydantic-ai's per-run leaf check imported it, F31)."""
    import subprocess
    import sys

    script = write(tmp_path / "s.json", {"workers": {"main": [{"tool_calls": [{"tool": "mark", "args": {"n": 1}}]},
                                                               {"text": "done"}]}})
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "llm_do.cli.main", "exec", str(durable_project),
                           "--durable", "--script", str(script)], cwd=durable_project.parent, capture_output=True,
                          text=True, timeout=240, env={**os.environ, "MARK_LOG": str(tmp_path / "marks.log")})
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "dbos" in imported  # the run was durable
    assert "pydantic_ai.mcp" not in imported and "fastmcp" not in imported

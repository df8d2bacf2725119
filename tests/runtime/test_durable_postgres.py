"""A durable run recorded in Postgres (the session's cluster, tests/support/postgres.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.durable import APPROVAL_SCRIPT, marks, run_id, write
from tests.support.postgres import POSTGRES_GROUP

pytest.importorskip("dbos")

pytestmark = [POSTGRES_GROUP, pytest.mark.process]


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    return f"{postgres_server}/llmdo_runs"


def test_a_durable_run_recorded_in_postgres(durable_project: Path, tmp_path: Path, postgres_url: str) -> None:
    root = durable_project.parent
    log = tmp_path / "marks.log"
    script = write(tmp_path / "s.json", APPROVAL_SCRIPT)
    env = {"MARK_LOG": str(log)}  # the runs need no process of their own: in this one
    first = run_cli("exec", durable_project, "--durable", postgres_url, "--detach-approvals", "--script", script, cwd_to=root,
                    env=env)
    assert first.exit_code == 4, first.stderr
    rid = run_id(first.stderr)
    assert not (root / ".llm-do").exists()
    pending = run_cli("approvals", "--db", postgres_url, cwd_to=root)
    assert pending.exit_code == 0 and "publish" in pending.stdout, pending.stderr
    assert run_cli("approve", rid, "1", "--db", postgres_url, cwd_to=root).exit_code == 0
    resumed = run_cli("resume", rid, "--db", postgres_url, "--script", script, "--strict-script", cwd_to=root, env=env)
    assert resumed.exit_code == 0, resumed.stderr
    assert resumed.stdout.strip() == "finished"
    assert marks(log) == ["mark 1", "publish news"]
    listed = run_cli("runs", "--db", postgres_url, cwd_to=root)
    assert f"{rid}  " in listed.stdout and " done " in listed.stdout

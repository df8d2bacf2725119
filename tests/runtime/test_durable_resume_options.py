"""`llm-do resume` works as `exec --durable --detach-approvals` and `approve` print it: the run's
record keeps the options that decide how it runs (`--script`, `--strict-script`, `--model`, the
approval mode, the budget; never a secret), `resume` takes them and says so, and the printed command names
`--db` when the run's database is not where `resume` looks by default."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from llm_do.cli.options import RunOptions
from llm_do.cli.resume_options import remembered, resume_command, taken, without_password
from tests.support.cli import run_cli
from tests.support.durable import APPROVAL_SCRIPT, marks, run_id, write


def _printed_resume(stderr: str) -> list[str]:
    commands = re.findall(r"`(llm-do resume [^`]+)`", stderr)
    assert commands, stderr
    return shlex.split(commands[-1])[1:]


@pytest.mark.process
def test_the_printed_resume_runs_as_printed(durable_project: Path, tmp_path: Path) -> None:
    pytest.importorskip("dbos")
    root, log = durable_project.parent, tmp_path / "marks.log"
    script = write(tmp_path / "s.json", APPROVAL_SCRIPT)
    db = f"sqlite:///{tmp_path / 'elsewhere' / 'runs.sqlite'}"  # not the project's: `resume` must be told
    env = {"MARK_LOG": str(log), "OPENAI_API_KEY": "sk-never-recorded"}
    first = run_cli("exec", durable_project, "--durable", db, "--detach-approvals", "--script", script, "--strict-script",
                    cwd_to=root, env=env)
    assert first.exit_code == 4, first.stderr
    rid = run_id(first.stderr)
    assert _printed_resume(first.stderr) == ["resume", rid, "--db", db]

    from llm_do.runtime.durable.runs import Records

    records = Records(db)
    try:
        kept = records.run(rid).record
    finally:
        records.close()
    assert kept["options"] == {"script": str(script.resolve()), "strict_script": True}
    assert "sk-never-recorded" not in repr(kept)

    approved = run_cli("approve", rid, "1", "--db", db, cwd_to=root)
    assert approved.exit_code == 0, approved.stderr
    resume = _printed_resume(approved.stderr)
    assert resume == ["resume", rid, "--db", db]
    resumed = run_cli(*resume, cwd_to=root, env={"MARK_LOG": str(log)})
    assert resumed.exit_code == 0, resumed.stderr
    assert resumed.stdout.strip() == "finished"
    assert (f"llm-do: resume takes the options run '{rid}' started with: --script {shlex.quote(str(script.resolve()))} "
            "--strict-script") in resumed.stderr
    assert marks(log) == ["mark 1", "publish news"]


@pytest.mark.process
def test_a_run_in_the_default_database_prints_a_plain_resume(durable_project: Path, tmp_path: Path) -> None:
    pytest.importorskip("dbos")
    root, log = durable_project.parent, tmp_path / "marks.log"
    script = write(tmp_path / "s.json", APPROVAL_SCRIPT)
    first = run_cli("exec", durable_project, "--durable", "--detach-approvals", "--script", script, cwd_to=root,
                    env={"MARK_LOG": str(log)})
    assert first.exit_code == 4, first.stderr
    rid = run_id(first.stderr)
    assert _printed_resume(first.stderr) == ["resume", rid]
    approved = run_cli("approve", rid, "1", cwd_to=root)
    assert _printed_resume(approved.stderr) == ["resume", rid]


def test_the_record_keeps_the_options_that_decide_the_run_and_no_others(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    opts = RunOptions(script=script, strict_script=True, approvals="approve_all", events="-", timeout=5.0, verbose=2, otel=True)
    assert remembered(opts) == {"script": str(script.resolve()), "strict_script": True, "approvals": "approve_all"}
    assert remembered(RunOptions(model="test")) == {"model": "test"}
    assert remembered(RunOptions(max_cost=0.5)) == {"max_cost": 0.5, "accept_unpriced": False}
    assert remembered(RunOptions()) == {}


@pytest.mark.parametrize(("given", "kept", "runs_with", "said"), [
    (RunOptions(), {"model": "test", "approvals": "reject_all"}, RunOptions(model="test", approvals="reject_all"),
     ["--model test", "--reject-all"]),
    (RunOptions(), {"script": "/p/my s.json", "strict_script": False}, RunOptions(script=Path("/p/my s.json")),
     ["--script '/p/my s.json'"]),
    # given on the command line: a model or a script replaces both, an approval mode the kept one
    (RunOptions(model="other"), {"script": "/p/s.json", "approvals": "approve_all"},
     RunOptions(model="other", approvals="approve_all"), ["--approve-all"]),
    (RunOptions(approvals="reject_all", verbose=1), {"approvals": "approve_all"}, RunOptions(approvals="reject_all", verbose=1), []),
    # the budget: kept unless given anew (a resumed run spends from what the run spent, test_durable_budget.py)
    (RunOptions(), {"max_cost": 0.5, "accept_unpriced": True}, RunOptions(max_cost=0.5, accept_unpriced=True),
     ["--max-cost 0.5", "--accept-unpriced"]),
    (RunOptions(max_cost=2.0), {"max_cost": 0.5, "accept_unpriced": True}, RunOptions(max_cost=2.0), []),
    (RunOptions(), None, RunOptions(), []),  # a run recorded before runs kept their options
    (RunOptions(), {"approvals": "run_anything", "model": 3, "max_cost": True}, RunOptions(), []),  # what is not an option is ignored
])
def test_resume_takes_what_it_is_not_given(given: RunOptions, kept: object, runs_with: RunOptions, said: list[str]) -> None:
    assert taken(given, kept) == (runs_with, said)


def test_a_printed_database_url_leaves_out_its_password() -> None:
    assert without_password("postgresql://ann:s3cret@db.example:5433/runs") == "postgresql://ann:***@db.example:5433/runs"
    assert without_password("sqlite:////tmp/runs.sqlite") == "sqlite:////tmp/runs.sqlite"
    assert resume_command("abc", "postgresql://ann:s3cret@db/runs") == "llm-do resume abc --db 'postgresql://ann:***@db/runs'"
    assert resume_command("abc", None) == "llm-do resume abc"

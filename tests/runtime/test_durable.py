"""Durable runs (`exec --durable`, `resume`, `runs`, `approvals`, `approve`, `deny`) on DBOS with
SQLite: a run killed mid-way resumes without re-running what completed; approvals wait without a
process; a run resumes only on the bundle it started with.

Runs that must die, wait in their process for an answer from another, or whose process's whole
stderr is checked for DBOS's log lines run `llm-do` in a subprocess: the run that is killed in a
fresh interpreter, the others as forks of the session's warm parent (tests/support/warm_cli.py),
their start not being under test. The other runs and the commands that only read or answer
records run in this process (`durable`).
"""

from __future__ import annotations

import json
import queue
import re
import threading
from pathlib import Path

import pytest

from tests.support.cli import CliResult, run_cli, worker
from tests.support.durable import APPROVAL_SCRIPT, llm_do, marks, run_id, write

pytest.importorskip("dbos")


def durable(*args: str | Path, root: Path, log: Path) -> CliResult:
    """`llm-do ARGS` in this process, in the project, its tools noting in `log`: a run that neither
    dies nor waits for another process needs no interpreter of its own."""
    return run_cli(*args, cwd_to=root, env={"MARK_LOG": str(log)})

KILL_SCRIPT = {"workers": {
    "main": [
        {"tool_calls": [{"tool": "mark", "args": {"n": 1}}]},
        {"tool_calls": [{"tool": "helper", "args": {"input": "go"}}]},
        {"tool_calls": [{"tool": "mark", "args": {"n": 2}}, {"tool": "mark", "args": {"n": 3}}]},
        {"tool_calls": [{"tool": "mark", "args": {"n": 4}}]},
        {"text": "done"},
    ],
    "helper": [{"tool_calls": [{"tool": "mark", "args": {"n": 10}}]}, {"text": "helped"}],
}}

@pytest.mark.process
def test_a_killed_run_resumes_and_no_completed_tool_runs_again(durable_project: Path, tmp_path: Path, warm_llm_do: Path) -> None:
    root = durable_project.parent
    log = tmp_path / "marks.log"
    (tmp_path / "kill-at").write_text("3")
    script = write(tmp_path / "s.json", KILL_SCRIPT)
    first = llm_do("exec", durable_project, "--durable", "--script", script, cwd=root, log=log)
    assert first.returncode == -9, first.stderr  # SIGKILL, in the middle of turn 3's tool calls
    rid = run_id(first.stderr)
    assert marks(log) == ["mark 1", "mark 10", "mark 2"]

    listed = run_cli("runs", cwd_to=root)
    assert listed.exit_code == 0, listed.stderr
    assert re.search(rf"^{rid}\s+bundle.lock\s+pending\s", listed.stdout, re.M), listed.stdout

    resumed = llm_do("resume", rid, "--script", script, "--strict-script", cwd=root, log=log, warm=warm_llm_do)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == "done"
    # 1, 10 and 2 had completed: recorded, not run again; 3 never finished, so it ran now.
    assert marks(log) == ["mark 1", "mark 10", "mark 2", "mark 3", "mark 4"]
    assert "DBOS" not in resumed.stderr and "dbos" not in resumed.stderr

    again = run_cli("resume", rid, cwd_to=root)
    assert again.exit_code == 2
    assert f"run '{rid}' is done" in again.stderr


def normalized(text: str, rid: str, root: Path) -> str:
    text = text.replace(rid, "00000000-0000-0000-0000-000000000000").replace(str(root), "ROOT")
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "YYYY-MM-DD HH:MM:SS", text)


@pytest.mark.process
def test_a_detached_approval_is_answered_from_another_process(durable_project: Path, tmp_path: Path, snapshot) -> None:
    root = durable_project.parent
    log = tmp_path / "marks.log"
    script = write(tmp_path / "s.json", APPROVAL_SCRIPT)
    first = durable("exec", durable_project, "--durable", "--detach-approvals", "--script", script, root=root, log=log)
    assert first.exit_code == 4, first.stderr
    rid = run_id(first.stderr)
    assert "waits for approval 1: publish of worker 'main'" in first.stderr
    question = "worker 'main' (depth 1) wants to call publish (Python tools of tools.py)\n  text: news"
    assert f"\n  {question}\n" in first.stderr  # the record keeps the question every approver gets
    assert marks(log) == ["mark 1"]

    pending = run_cli("approvals", cwd_to=root)
    assert pending.exit_code == 0, pending.stderr
    assert f"approval 1 of run {rid}: {question}" in pending.stdout
    runs = run_cli("runs", cwd_to=root)
    assert (normalized(pending.stdout, rid, root), normalized(runs.stdout, rid, root)) == snapshot

    approved = run_cli("approve", rid, "1", cwd_to=root)
    assert approved.exit_code == 0, approved.stderr
    twice = run_cli("approve", rid, "1", cwd_to=root)
    assert twice.exit_code == 2 and "already answered" in twice.stderr
    assert run_cli("approvals", rid, cwd_to=root).stdout.strip() == "no approvals pending"

    resumed = durable("resume", rid, "--script", script, "--strict-script", root=root, log=log)
    assert resumed.exit_code == 0, resumed.stderr
    assert resumed.stdout.strip() == "finished"
    assert marks(log) == ["mark 1", "publish news"]
    done = run_cli("runs", cwd_to=root)
    assert re.search(rf"^{rid}\s+\S+\s+done\s", done.stdout, re.M), done.stdout


@pytest.mark.process
def test_a_waiting_process_continues_when_answered(durable_project: Path, tmp_path: Path, warm_llm_do: Path) -> None:
    root = durable_project.parent
    log = tmp_path / "marks.log"
    events = tmp_path / "events.jsonl"
    script = write(tmp_path / "s.json", APPROVAL_SCRIPT)
    proc = llm_do("exec", durable_project, "--durable", "--script", script, "--events", events, cwd=root, log=log, wait=False,
                  warm=warm_llm_do)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr], daemon=True).start()
    try:
        said = []
        while not any("waits for approval" in line for line in said):  # said at once, without a terminal (F8)
            try:
                said.append(lines.get(timeout=120))
            except queue.Empty:
                raise AssertionError(f"the waiting run never said what it waits for: {said}") from None
        rid = run_id("".join(said))
        assert said[-1].strip() == (
            f"llm-do: run {rid} waits for approval 1: publish of worker 'main'; answer with `llm-do approve {rid} 1`, "
            f"`llm-do deny {rid} 1 --note WHY` or `llm-do revise {rid} 1 FEEDBACK`, this process continues when it is "
            "answered")
        denied = run_cli("deny", rid, "1", "--note", "not today", cwd_to=root)
        assert denied.exit_code == 0, denied.stderr
        out = proc.stdout.read()
        proc.wait(timeout=120)
        err = "".join(said)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out.strip() == "finished"
    assert marks(log) == ["mark 1"]  # publish was denied: it never ran
    returned = [json.loads(line) for line in events.read_text().splitlines() if '"tool_returned"' in line]
    assert [e["outcome"] for e in returned if e["tool"] == "publish"] == ["denied"]
    assert "not today" in [e for e in returned if e["tool"] == "publish"][0]["result"]


@pytest.mark.process
def test_a_waiting_run_is_revised_and_says_no_failure(durable_project: Path, tmp_path: Path, warm_llm_do: Path) -> None:
    """`revise` sends the model a revision request (F13); a run stopping to wait prints no failure
    and no DBOS log line, even with -v (F9)."""
    root = durable_project.parent
    log = tmp_path / "marks.log"
    events = tmp_path / "events.jsonl"
    script = write(tmp_path / "s.json", {"workers": {"main": [
        {"tool_calls": [{"tool": "publish", "args": {"text": "news"}}]},
        {"tool_calls": [{"tool": "publish", "args": {"text": "staging news"}}]},
        {"text": "finished"},
    ]}})
    first = llm_do("exec", durable_project, "--durable", "--detach-approvals", "--script", script, "-v", cwd=root, log=log,
                   warm=warm_llm_do)
    assert first.returncode == 4, first.stderr
    rid = run_id(first.stderr)
    assert "failed" not in first.stderr and "interrupted" not in first.stderr, first.stderr
    assert "DBOS" not in first.stderr and "dbos" not in first.stderr, first.stderr
    assert "? publish waits for approval" in first.stderr
    revised = run_cli("revise", rid, "1", "publish to staging first", cwd_to=root)
    assert revised.exit_code == 0, revised.stderr
    assert f"asked for a revision of approval 1 of run {rid}" in revised.stderr
    old = run_cli("deny", rid, "1", "--feedback", "x", cwd_to=root)
    assert old.exit_code == 2 and "already answered" in old.stderr
    assert "deny --feedback is now --note" in old.stderr
    resumed = llm_do("resume", rid, "--script", script, "--events", events, "-v", cwd=root, log=log, warm=warm_llm_do)
    assert resumed.returncode == 4, resumed.stderr  # the changed call asks again
    assert "failed" not in resumed.stderr and "DBOS" not in resumed.stderr, resumed.stderr
    decided = [json.loads(line) for line in events.read_text().splitlines() if '"approval_decided"' in line]
    assert [(e["approved"], e["feedback"]) for e in decided] == [(False, "publish to staging first")]
    returned = [json.loads(line) for line in events.read_text().splitlines() if '"tool_returned"' in line]
    assert [e["outcome"] for e in returned] == ["revised"]
    assert marks(log) == []
    pending = run_cli("approvals", rid, cwd_to=root)
    assert '{"text": "staging news"}' in pending.stdout


def detached_then_edited(durable_project: Path, tmp_path: Path) -> tuple[Path, str, Path, Path]:
    """A durable run waiting on an approval, then its helper.worker edited: (root, run id, script, marks log)."""
    root = durable_project.parent
    log = tmp_path / "marks.log"
    script = write(tmp_path / "s.json", APPROVAL_SCRIPT)
    first = durable("exec", durable_project, "--durable", "--detach-approvals", "--script", script, root=root, log=log)
    assert first.exit_code == 4, first.stderr
    (root / "helper.worker").write_text(worker("tools: [mark]\napprovals:\n  - allow mark", "Help more."))
    return root, run_id(first.stderr), script, log


@pytest.mark.process
def test_resume_refuses_a_bundle_that_changed(durable_project: Path, tmp_path: Path) -> None:
    root, rid, script, _ = detached_then_edited(durable_project, tmp_path)
    assert run_cli("build", root).exit_code == 0
    refused = run_cli("resume", rid, "--script", script, cwd_to=root)
    assert refused.exit_code == 3
    assert "a run resumes only on the bundle it started with" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1


@pytest.mark.process
def test_resume_refuses_a_lock_that_is_no_longer_the_build_of_its_sources(durable_project: Path, tmp_path: Path) -> None:
    """The digest is the run's, but a worker file was edited since: the lock is not the build of the
    sources beside it (issue 31), so resume refuses it unless --as-built."""
    root, rid, script, log = detached_then_edited(durable_project, tmp_path)
    refused = run_cli("resume", rid, "--script", script, cwd_to=root)
    assert refused.exit_code == 3, refused.stderr
    [line] = refused.stderr.strip().splitlines()
    assert line.startswith(f"llm-do: run '{rid}': {durable_project}: refused: it is stale, not the build of the sources beside it "
                           "(changed: helper.worker")
    assert line.endswith("run `llm-do build` to update it, or --as-built to run it as it is")
    resumed = run_cli("resume", rid, "--script", script, "--as-built", cwd_to=root, env={"MARK_LOG": str(log)})
    assert resumed.exit_code == 4, resumed.stderr  # it goes on, and waits for its approval again
    assert "it runs as built (--as-built)" in resumed.stderr


@pytest.mark.process
def test_a_result_that_cannot_be_recorded_names_the_tool(durable_project: Path, tmp_path: Path) -> None:
    root = durable_project.parent
    script = write(tmp_path / "s.json", {"workers": {"main": [{"tool_calls": [{"tool": "lock", "args": {}}]},
                                                             {"text": "no"}]}})
    result = run_cli("exec", durable_project, "--durable", "--script", script, cwd_to=root, env={"MARK_LOG": str(tmp_path / "l")})
    assert result.exit_code == 1, result.stderr
    assert "tool 'lock' of worker 'main'" in result.stderr and "cannot record" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.process
def test_a_durable_run_that_times_out_is_failed_for_good(durable_project: Path, tmp_path: Path) -> None:
    root = durable_project.parent
    log = tmp_path / "marks.log"
    script = write(tmp_path / "s.json", APPROVAL_SCRIPT)
    # Nobody answers the approval: the run waits in its process until --timeout stops it.
    result = durable("exec", durable_project, "--durable", "--script", script, "--timeout", "3", root=root, log=log)
    assert result.exit_code == 1, result.stderr
    assert "took longer than 3 s" in result.stderr
    rid = run_id(result.stderr)
    listed = run_cli("runs", cwd_to=root)
    assert re.search(rf"^{rid}\s+\S+\s+failed\s", listed.stdout, re.M), listed.stdout
    again = run_cli("resume", rid, cwd_to=root)
    assert again.exit_code == 2 and "is failed" in again.stderr


@pytest.mark.process
def test_durable_takes_a_db_url_only_with_a_scheme(durable_project: Path, tmp_path: Path) -> None:
    """`--durable PROMPT` is a durable run of that prompt; `--durable sqlite:///X` names the database."""
    root = durable_project.parent
    env = {"MARK_LOG": str(tmp_path / "l")}
    script = write(tmp_path / "s.json", {"workers": {"main": [{"text": "hello"}]}})
    db = tmp_path / "elsewhere" / "r.sqlite"
    named = run_cli("exec", durable_project, "--durable", f"sqlite:///{db}", "--script", script, cwd_to=root, env=env)
    assert named.exit_code == 0, named.stderr
    assert named.stdout.strip() == "hello" and db.is_file()
    assert not (root / ".llm-do").exists()
    prompt = run_cli("exec", durable_project, "--script", script, "--durable", "a prompt, not a database", cwd_to=tmp_path, env=env)
    assert prompt.exit_code == 0, prompt.stderr
    assert prompt.stdout.strip() == "hello"
    assert (root / ".llm-do" / "runs.sqlite").is_file()  # the default: beside the bundle, wherever exec runs
    bad = run_cli("exec", durable_project, "--durable", "mysql://x/y", "--script", script, cwd_to=root, env=env)
    assert bad.exit_code == 2 and "not a database URL llm-do can use" in bad.stderr
    listed = run_cli("runs", "--db", f"sqlite:///{db}", cwd_to=root)
    assert listed.exit_code == 0 and " done " in listed.stdout
    missing = run_cli("runs", cwd_to=tmp_path)
    assert missing.exit_code == 2 and "no runs recorded there" in missing.stderr


def test_db_urls(tmp_path: Path) -> None:
    from llm_do.runtime.durable.db_url import DbUrlProblem, has_scheme, resolve_db_url

    assert has_scheme("sqlite:///x.sqlite") and has_scheme("postgresql://u@h/db")
    assert not has_scheme("summarize this: http is a protocol") and not has_scheme("bundle.lock")
    base = tmp_path
    assert resolve_db_url(None, base) == f"sqlite:///{base}/.llm-do/runs.sqlite"
    assert not (base / ".llm-do").exists()  # only a run that records creates it
    assert resolve_db_url("sqlite:///rel.sqlite", base) == f"sqlite:///{Path.cwd().resolve()}/rel.sqlite"
    assert resolve_db_url("sqlite:////abs/r.sqlite", base) == "sqlite:////abs/r.sqlite"
    assert resolve_db_url("postgresql://u@h:5432/db", base) == "postgresql://u@h:5432/db"
    for bad in ("sqlite://", "sqlite:///:memory:", "mysql://h/db"):
        with pytest.raises(DbUrlProblem):
            resolve_db_url(bad, base)

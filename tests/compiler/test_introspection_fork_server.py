"""The introspection fork server: a child forked from it answers exactly as a fresh
`python -m llm_do.compiler.facts.child` does (cwd, `sys.path`, environment, time limit, the modules
it reports), the server ends with the process, and where it cannot serve a fresh process answers."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_do.compiler.facts import fork_client
from llm_do.compiler.facts.answers import ClassRequest, Facts, Request
from llm_do.compiler.facts.preloaded_modules import ROOT, Preloaded
from llm_do.compiler.facts.subprocess_runner import introspect
from llm_do.compiler.pipeline import compile_project
from tests.support.cli import write_project
from tests.support.processes import alive

pytestmark = pytest.mark.process

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

PROBE = '''
    import json, os, sys

    import stray_helper_{tag}

    raise RuntimeError("PROBE" + json.dumps({{
        "cwd": os.getcwd(), "path": sys.path, "argv": sys.argv, "ppid": os.getppid(),
        "variable": os.environ.get("Z16_VARIABLE"), "bytecode": sys.dont_write_bytecode,
        "stray": sorted(m for m in sys.modules if m.startswith("stray_helper")),
        "preloaded": "pydantic_ai" in sys.modules, "main": getattr(sys.modules["__main__"], "__file__", None) is not None,
    }}))
'''


@pytest.fixture
def fresh_server() -> Iterator[None]:
    """This test starts its own fork server, stopped after it (and the environment switch unset)."""
    fork_client.stop()
    os.environ.pop(fork_client.NO_FORK_SERVER_VARIABLE, None)
    yield
    fork_client.stop()
    os.environ.pop(fork_client.NO_FORK_SERVER_VARIABLE, None)


def request(root: Path, files: list[str], classes: list[ClassRequest] | None = None) -> Request:
    return Request(root=str(root), python_files=files, classes=classes or [])


def forked_and_fresh(req: Request, root: Path, timeout: float | None = None) -> tuple[Facts, Facts]:
    """The answer of a forked child (the server is then running) and of a fresh process."""
    forked = introspect(req, root, timeout)
    assert fork_client.server_pid() is not None
    os.environ[fork_client.NO_FORK_SERVER_VARIABLE] = "1"
    try:
        fresh = introspect(req, root, timeout)
    finally:
        del os.environ[fork_client.NO_FORK_SERVER_VARIABLE]
    return forked, fresh


def probe(facts: Facts) -> dict:
    (fact,) = facts.modules.values()
    assert fact.error is not None and "PROBE" in fact.error.message, fact
    return json.loads(fact.error.message.partition("PROBE")[2])


def probe_project(root: Path, tag: str) -> Path:
    return write_project(root, {"probe.py": PROBE.format(tag=tag), f"stray_helper_{tag}.py": "X = 1\n",
                                "sub/.keep": ""})


@pytest.mark.parametrize(("example", "agent_era"), [("python_tools", False), ("directory_workers", False),
                                                    ("legacy_agent", True), ("orchestrator", False)])
def test_a_forked_child_answers_what_a_fresh_one_does(example: str, agent_era: bool, tmp_path: Path,
                                                      fresh_server: None) -> None:
    """The whole answer, the cache's checks included (the module files the child loaded outside
    the project: pydantic-ai's only when the project's Python or its tools needed it)."""
    root = tmp_path / example
    shutil.copytree(EXAMPLES / example, root)
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))
    assert files
    req = request(root, files).model_copy(update={"agent_era": agent_era})
    forked, fresh = forked_and_fresh(req, root)
    assert forked.model_dump() == fresh.model_dump()
    assert forked.environment is not None and forked.environment.module_files


def test_schemas_without_pydantic_ai_report_no_pydantic_ai_module(tmp_path: Path, fresh_server: None) -> None:
    """After a project with tools made the server import pydantic-ai, a child for a project that
    uses only pydantic still reports none of pydantic-ai's modules, as a fresh child would."""
    tools = tmp_path / "python_tools"
    shutil.copytree(EXAMPLES / "python_tools", tools)
    warm = introspect(request(tools, ["tools.py"]), tools)
    assert warm.environment is not None and any(f"{os.sep}pydantic_ai{os.sep}" in f for f in warm.environment.module_files)
    root = write_project(tmp_path / "p", {"schemas.py": """
        from pydantic import BaseModel, Field

        class Order(BaseModel):
            item: str = Field(description="what")
    """})
    classes = [ClassRequest(ref="schemas.py:Order", module="schemas", qualname="Order", file="schemas.py")]
    forked, fresh = forked_and_fresh(request(root, ["schemas.py"], classes), root)
    assert forked.model_dump() == fresh.model_dump()
    assert forked.environment is not None
    assert not [f for f in forked.environment.module_files if f"{os.sep}pydantic_ai{os.sep}" in f]


def test_each_child_starts_at_the_request_cwd_path_and_environment(tmp_path: Path, fresh_server: None,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Two projects one after the other, PYTHONPATH and a variable changed between them: each
    forked child sees them as a fresh process started then would, and nothing of the other."""
    first, second = probe_project(tmp_path / "first", "a"), probe_project(tmp_path / "second", "b")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["sub", str(tmp_path), "", "sub", "/nonexistent"]))
    monkeypatch.setenv("Z16_VARIABLE", "one")
    forked, fresh = (probe(f) for f in forked_and_fresh(request(first, ["probe.py"]), first))
    server = fork_client.server_pid()
    assert forked.pop("ppid") == server and fresh.pop("ppid") == os.getpid()
    assert forked == fresh
    assert forked["stray"] == ["stray_helper_a"] and forked["variable"] == "one" and forked["bytecode"]

    monkeypatch.setenv("PYTHONPATH", "other")
    monkeypatch.setenv("Z16_VARIABLE", "two")
    forked, fresh = (probe(f) for f in forked_and_fresh(request(second, ["probe.py"]), second))
    assert forked.pop("ppid") == server == fork_client.server_pid()
    fresh.pop("ppid")
    assert forked == fresh
    assert forked["stray"] == ["stray_helper_b"] and forked["variable"] == "two" and not forked["preloaded"]
    assert forked["path"][:2] == [str(second.resolve()), str(second.resolve() / "other")]


def test_the_time_limit_kills_the_forked_child(tmp_path: Path, fresh_server: None) -> None:
    root = write_project(tmp_path / "p", {"slow.py": f"""
        import os, time
        open({str(tmp_path / "pid")!r}, "w").write(str(os.getpid()))
        time.sleep(60)
    """})
    facts = introspect(request(root, ["slow.py"]), root, timeout=5)
    assert facts.failure_code == "Y002" and facts.failure is not None
    assert facts.failure.message == "importing the project's Python took longer than 5 s: it was still running slow.py, line 3"
    assert (facts.failure.file, facts.failure.line) == ("slow.py", 3)
    pid = int((tmp_path / "pid").read_text())
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)
    assert fork_client.server_pid() is not None  # the server serves on


def test_a_changed_sys_path_folder_gets_a_new_server(tmp_path: Path, fresh_server: None,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A package installed or removed, or a `.pth` file added, changes a `sys.path` folder: the
    server's path and modules may no longer be a fresh child's, so another server serves."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setattr(sys, "path", [*sys.path, str(site)])
    root = write_project(tmp_path / "p", {"plain.py": "X = 1\n"})
    introspect(request(root, ["plain.py"]), root)
    first = fork_client.server_pid()
    introspect(request(root, ["plain.py"]), root)
    assert fork_client.server_pid() == first is not None
    (site / "installed.pth").write_text(str(tmp_path) + "\n")
    os.utime(site, ns=(time.time_ns(), time.time_ns() + 1_000_000_000))  # a coarse clock must not hide it
    introspect(request(root, ["plain.py"]), root)
    assert fork_client.server_pid() not in (None, first)
    assert first is not None and not alive(first)


def test_a_child_that_dies_is_y005_with_the_last_line_it_printed(tmp_path: Path, fresh_server: None) -> None:
    root = write_project(tmp_path / "p", {"dies.py": """
        import os, sys
        print("first words", file=sys.stderr)
        print("last words", file=sys.stderr, flush=True)
        os._exit(3)
    """})
    forked, fresh = forked_and_fresh(request(root, ["dies.py"]), root)
    assert forked.failure_code == "Y005" and forked.failure is not None and forked.failure.message == "last words"
    assert forked.model_dump() == fresh.model_dump()


def test_a_project_module_shadowing_a_preloaded_one_is_imported_by_a_fresh_process(tmp_path: Path,
                                                                                   fresh_server: None) -> None:
    """`sniffio` is loaded with pydantic-ai in the server (preloaded for a project with tools); a
    project's own `sniffio.py` is the one a fresh child imports, so a fresh child answers."""
    root = write_project(tmp_path / "p", {"sniffio.py": "MINE = True\n", "uses.py": """
        import os
        import sniffio
        TOOLS = []
        raise RuntimeError(f"{sniffio.__file__} {os.getppid()}")
    """})
    facts = introspect(request(root, ["sniffio.py", "uses.py"]), root)
    error = facts.modules["uses.py"].error
    assert error is not None
    assert error.message == f"RuntimeError: {root.resolve() / 'sniffio.py'} {os.getpid()}"


def test_without_the_fork_server_a_fresh_process_answers(tmp_path: Path, fresh_server: None,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(fork_client.NO_FORK_SERVER_VARIABLE, "1")
    root = probe_project(tmp_path / "p", "c")
    answer = probe(introspect(request(root, ["probe.py"]), root))
    assert answer["ppid"] == os.getpid()
    assert fork_client.server_pid() is None


def test_a_server_that_cannot_start_leaves_the_answer_to_a_fresh_process(tmp_path: Path, fresh_server: None,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fork_client, "START", "import sys; sys.exit(3)  # {fd}")
    monkeypatch.setattr(fork_client, "_broken", False)
    root = probe_project(tmp_path / "p", "d")
    for _ in range(2):  # tried once: a process whose server cannot start does not try again
        answer = probe(introspect(request(root, ["probe.py"]), root))
        assert answer["ppid"] == os.getpid()
        assert fork_client.server_pid() is None
    assert fork_client._broken


def test_a_preloaded_module_file_that_changed_is_seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's modules are checked against their files before each child: an upgrade or an
    edit since the server loaded them makes a fresh process answer (and a new server serve)."""
    (tmp_path / "z16_preloaded_probe.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    preloaded = Preloaded(set(sys.modules))
    try:
        preloaded.load(lambda: importlib.import_module("z16_preloaded_probe"))
        assert preloaded.changed() is None
        assert preloaded.needs[ROOT] == {"z16_preloaded_probe"}
        (tmp_path / "z16_preloaded_probe.py").write_text("X = 22\n")
        assert preloaded.changed() == str(tmp_path / "z16_preloaded_probe.py")
    finally:
        sys.modules.pop("z16_preloaded_probe", None)


def test_a_build_answered_from_the_cache_starts_no_server(tmp_path: Path, fresh_server: None,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("LLM_DO_NO_CACHE", raising=False)
    root = tmp_path / "python_tools"
    shutil.copytree(EXAMPLES / "python_tools", root)
    assert compile_project(root).bundle is not None
    assert fork_client.server_pid() is not None
    fork_client.stop()
    assert compile_project(root).bundle is not None
    assert fork_client.server_pid() is None


SCRIPT = textwrap.dedent('''
    import sys, time
    from pathlib import Path
    from llm_do.compiler.facts import fork_client
    from llm_do.compiler.facts.answers import Request
    from llm_do.compiler.facts.subprocess_runner import introspect
    root = Path(sys.argv[1])
    facts = introspect(Request(root=str(root), python_files=["tools.py"], classes=[]), root)
    assert facts.imported and not facts.failure, facts
    print(fork_client.server_pid(), flush=True)
    if sys.argv[2] == "wait":
        time.sleep(60)
''')


def _server_of(tmp_path: Path, how: str) -> tuple[subprocess.Popen[str], int]:
    root = write_project(tmp_path / "p", {"tools.py": "def shout(text: str) -> str:\n    return text\n\nTOOLS = [shout]\n"})
    env = {k: v for k, v in os.environ.items() if k != fork_client.NO_FORK_SERVER_VARIABLE}
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(root), how], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    pid = int(proc.stdout.readline())
    return proc, pid


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def test_the_server_ends_when_llm_do_exits(tmp_path: Path) -> None:
    proc, server = _server_of(tmp_path, "exit")
    assert proc.wait(timeout=60) == 0
    assert _gone(server)


def test_the_server_ends_when_llm_do_is_killed(tmp_path: Path) -> None:
    proc, server = _server_of(tmp_path, "wait")
    assert alive(server)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert _gone(server)

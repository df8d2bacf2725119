"""Every test is offline: pydantic-ai refuses real model requests for the whole session. A build's
introspection comes from llm-do's own cache, in a folder of the session (tests/support/introspection.py)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pydantic_ai.models
import pytest

from llm_do.compiler.facts.cache import NO_CACHE_VARIABLE

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False

# The shell (and CI) may set PYTHONDONTWRITEBYTECODE=1. The test processes write bytecode anyway, in
# the (gitignored) __pycache__ beside each source, as Python does by default: otherwise every xdist
# worker of every run rewrites the asserts of all the test modules and compiles llm-do again (about
# half of a worker's 12 CPU-s of collection). The processes the tests start keep their environment.
sys.dont_write_bytecode = False


@pytest.fixture(autouse=True)
def _no_model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's LLM_DO_MODEL or API keys must not change what a test sees."""
    monkeypatch.delenv("LLM_DO_MODEL", raising=False)
    monkeypatch.setenv("LLM_DO_IMPORT_TIMEOUT", "60")


@pytest.fixture(scope="session", autouse=True)
def _introspection_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """llm-do's introspection cache in a folder the session's xdist workers share, never the
    developer's own; `real_introspection()` turns it off. The key that signs chat threads
    (`XDG_CONFIG_HOME`) is the session's too."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(shared / "cache"))
        patch.setenv("XDG_CONFIG_HOME", str(shared / "config"))
        patch.delenv(NO_CACHE_VARIABLE, raising=False)
        yield


# The modules that cost the most (CPU of the test process and the processes it starts, measured per
# test, 2026-11-27; the durable, serve and batch modules again after their runs moved into the test
# process or the warm parent of tests/support/warm_cli.py), heaviest first: sent to the workers
# first, so the many quick modules fill the end of the run instead of a lone worker finishing one of
# these. Only the order depends on this list.
SLOW_FIRST = ("postgres", "tests/compiler/test_diff_corpus.py", "tests/runtime/mcp/test_mcp_runs.py",
              "tests/compiler/test_cache_walk.py", "tests/compiler/test_no_read_blocks.py",
              "tests/compiler/test_introspection_cache.py", "tests/anchor/test_anchor_projects.py",
              "tests/runtime/mcp/test_mcp_build.py", "tests/runtime/test_terminal_prompt.py",
              "tests/runtime/test_durable_batch.py", "tests/runtime/test_stopping.py", "tests/runtime/test_serve.py",
              "tests/runtime/mcp/test_mcp_sources.py", "tests/compiler/test_directory_workers.py",
              "tests/compiler/test_build_check.py", "tests/test_fuzz.py", "tests/test_conformance.py",
              "tests/runtime/test_durable.py", "tests/compiler/test_e2e_cli.py")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker per core and one more. A worker spends about a fifth of its time
    waiting on what its tests started (servers, a run's time limit, a child stopped by Ctrl-C), or
    on its forks, whose CPU is a server's: time another worker uses (2 cores: 189 s with two
    workers, 175 s with three, 2026-11-27)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores + 1


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """xdist sends each test module to one worker (an xdist_group, e.g. the Postgres tests', to one
    worker too), so a module's fixtures (its built projects, its started servers) are built once;
    the modules of SLOW_FIRST go first."""
    from xdist.scheduler import LoadScopeScheduling

    class ModuleOrGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if "@" in nodeid:
                return nodeid.rsplit("@", 1)[-1]
            return nodeid.split("::", 1)[0]

        def _assign_work_unit(self, node: object) -> None:
            for scope in reversed(SLOW_FIRST):
                if scope in self.workqueue:
                    self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return ModuleOrGroup(config, log)

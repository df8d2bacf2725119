"""`launched` is DBOS's life around a durable run or batch: the Agents and the workflow before the
launch, the shutdown however the block ends, so a failed start never leaves DBOS running in a
process (a host's, or the next run of the same process)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos")

from llm_do.runtime.bundle import load_bundle
from llm_do.runtime.config import RuntimeConfig
from tests.support.cli import worker

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("model: test", "Answer."),
}


def dbos_running() -> bool:
    from dbos import _dbos

    return _dbos._dbos_global_instance is not None


@pytest.fixture
def runtime(build: Any) -> Any:
    from llm_do.runtime.durable import dbos as durable

    bundle = load_bundle(build(PROJECT))
    return durable.durable_runtime(bundle, RuntimeConfig(), digest=str(bundle.text.get("digest")))


def test_the_workflow_is_registered_before_launch_and_dbos_stops_with_the_block(runtime: Any, tmp_path: Path) -> None:
    from llm_do.runtime.durable import dbos as durable

    seen: list[bool] = []

    def register(given: Any) -> str:
        assert given is runtime
        seen.append(dbos_running())
        return "the workflow"

    with durable.launched(runtime, register, f"sqlite:///{tmp_path}/runs.sqlite", executor="llm-do-test",
                          digest=str(runtime.bundle.text.get("digest"))) as workflow:
        assert workflow == "the workflow"
        assert dbos_running()
    assert seen == [False]
    assert not dbos_running()


@pytest.mark.parametrize("where", ["registering", "inside"])
def test_dbos_is_shut_down_whichever_step_fails(runtime: Any, tmp_path: Path, where: str) -> None:
    from llm_do.runtime.durable import dbos as durable

    def register(given: Any) -> str:
        if where == "registering":
            raise RuntimeError("no workflow")
        return durable.register_run_workflow(given)

    url = f"sqlite:///{tmp_path}/runs.sqlite"
    digest = str(runtime.bundle.text.get("digest"))
    failure = "no workflow" if where == "registering" else "the run failed"  # the step that failed is what is raised
    with pytest.raises(RuntimeError, match=failure), durable.launched(runtime, register, url, executor="llm-do-test",
                                                                      digest=digest):
        raise RuntimeError("the run failed")
    assert not dbos_running()
    with durable.launched(runtime, durable.register_run_workflow, url, executor="llm-do-test", digest=digest):
        assert dbos_running()  # the same process launches again
    assert not dbos_running()

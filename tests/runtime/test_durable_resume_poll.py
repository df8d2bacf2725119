"""`resume` starts the run it recovers at once: DBOS recovers a run by putting it on its internal
queue, which it polls first a second after launch (a fixed wait in every `resume`); a recovering
launch polls that queue as often as the approval listener, and the started run restores DBOS's
interval. The time it saves is in bench/durable_bench.py; correctness in test_durable.py."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("dbos")


def internal_queue_poll() -> float:
    from dbos._dbos import _get_dbos_instance

    return float(_get_dbos_instance()._registry.get_internal_queue()._polling_interval_sec)


@pytest.mark.parametrize("recovering", [True, False])
def test_a_recovering_launch_polls_the_queue_its_run_waits_on(tmp_path: Path, recovering: bool) -> None:
    from llm_do.runtime.durable import dbos as durable

    durable.launch(f"sqlite:///{tmp_path}/runs.sqlite", executor="llm-do-test", digest="sha256:" + "0" * 64,
                   recovering=recovering)
    try:
        assert internal_queue_poll() == (durable.LISTENER_POLL_SECONDS if recovering else durable.QUEUE_POLL_SECONDS)
    finally:
        durable.shutdown()

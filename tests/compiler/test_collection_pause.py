"""A build holds the cyclic garbage collector off while it compiles, and leaves it as it found it."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from llm_do.compiler import pipeline
from llm_do.compiler.build.collection_pause import collection_paused
from llm_do.compiler.build.lock_check import compile_recorded
from tests.support.cli import worker, write_project


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_off_inside_and_as_it_was_after(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        with pytest.raises(RuntimeError), collection_paused():
            assert not gc.isenabled()
            raise RuntimeError("a compile that fails")
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_a_build_compiles_with_the_collector_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_project(tmp_path / "proj", {"project.json": {"version": 1, "worker_files": ["main.worker"]},
                                             "main.worker": worker("model: test", "Hi.")})
    seen: list[bool] = []
    real = pipeline.compile_project

    def spy(*args: Any, **kwargs: Any) -> pipeline.CompileResult:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr("llm_do.compiler.build.lock_check.compile_project", spy)
    assert gc.isenabled()
    assert compile_recorded(root, root / "bundle.lock").bundle is not None
    assert seen == [False] and gc.isenabled()

"""Fixtures of the recording and `llm-do test` tests: runs recorded and replayed in this process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.projects import Files, build_project, forgetting_user_modules


@pytest.fixture
def build(tmp_path: Path) -> Callable[..., Path]:
    """`build(files, name="proj") -> Path of bundle.lock`, in this test's tmp_path."""

    def _build(files: Files, name: str = "proj") -> Path:
        return build_project(tmp_path / name, files)

    return _build


@pytest.fixture(autouse=True)
def _forget_user_modules(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Runs import the project's Python: forget it after each test, so the next project imports its own."""
    with forgetting_user_modules(str(tmp_path_factory.getbasetemp())):
        yield

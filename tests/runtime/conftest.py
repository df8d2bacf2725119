"""Fixtures for the runtime's tests: small projects built into bundles, scripts, a Postgres server.

Building a project with Python files starts an introspection subprocess (about a second), so the
Python projects here are built once per session (per xdist worker) into a template directory, and
each test that runs one gets its own copy (the bundle's `root` is relative, so a copied project
runs as built). Projects of .worker files only build in-process in milliseconds: tests build their
own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.durable import DURABLE_PROJECT
from tests.support.postgres import postgres_cluster
from tests.support.projects import (
    PYTHON_PROJECT,
    SCHEMA_PROJECT,
    Files,
    build_project,
    copy_project,
    forgetting_user_modules,
)
from tests.support.warm_cli import warm_cli


@pytest.fixture
def build(tmp_path: Path) -> Callable[..., Path]:
    """`build(files, name="proj") -> Path of bundle.lock`, in this test's tmp_path."""

    def _build(files: Files, name: str = "proj") -> Path:
        return build_project(tmp_path / name, files)

    return _build


@pytest.fixture
def script(tmp_path: Path) -> Callable[..., Path]:
    """`script({"workers": ...}, name="s.json") -> Path`: a script file (JSON, or YAML text)."""
    counter = iter(range(1000))

    def _script(content: dict[str, Any] | str, name: str | None = None) -> Path:
        name = name or f"script{next(counter)}.json"
        path = tmp_path / "scripts" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
        return path

    return _script


@pytest.fixture(autouse=True)
def _forget_user_modules(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A run imports the project's Python (`tools`, `schemas`) into this process: forget those
    modules and their sys.path entries after each test, so the next project imports its own."""
    with forgetting_user_modules(str(tmp_path_factory.getbasetemp())):
        yield


@pytest.fixture(scope="session")
def _python_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("template") / "pyproject", PYTHON_PROJECT)


@pytest.fixture(scope="session")
def _schema_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("template") / "schemaproject", SCHEMA_PROJECT)


@pytest.fixture
def py_bundle(_python_template: Path, tmp_path: Path) -> Path:
    """This test's copy of the Python project: `main` (Python tools, calls `judge`) and `judge`
    (schema_in Topic(text), schema_out Verdict(score, reason)); entry.args {"input": "from entry.args"}.
    Tools: add (asked), boom (raises), nap(seconds), echo_prompt (returns the call's prompt),
    ask_judge / ask_judge_agent / ask_judge_api / ask_judge_handle (delegate to judge from Python)."""
    return copy_project(_python_template, tmp_path / "pyproject")


@pytest.fixture
def schema_bundle(_schema_template: Path, tmp_path: Path) -> Path:
    """This test's copy of a project whose entry `judge` takes Topic(text) and returns Verdict;
    `boss` (default input) may call `judge`."""
    return copy_project(_schema_template, tmp_path / "schemaproject")


@pytest.fixture(scope="session")
def _durable_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("durable") / "proj", DURABLE_PROJECT)


@pytest.fixture
def durable_project(_durable_template: Path, tmp_path: Path) -> Path:
    """This test's copy of the durable runs' project (tests/support/durable.py); its bundle.lock."""
    return copy_project(_durable_template, tmp_path / "proj")


@pytest.fixture(scope="session")
def warm_llm_do() -> Iterator[Path]:
    """The socket of this session's warm parent (tests/support/warm_cli.py): `command(warm_llm_do,
    ARGS)` starts `llm-do ARGS` as its fork; stopped at the session's end."""
    with warm_cli() as sock:
        yield sock


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A Postgres server of this session's (tests/support/postgres.py): its URL without a database;
    a test appends its own (`/llmdo_runs`). Mark the test with `POSTGRES_GROUP`."""
    with postgres_cluster() as url:
        yield url

"""Fixtures for the built-in toolsets: toolsets built on `tmp_path`, tools called the way pydantic-ai
calls them (listed by `get_tools`, arguments validated, then `call_tool`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pydantic_ai.models
import pytest

from llm_do.stdlib.base import StdlibToolset
from llm_do.stdlib.filesystem.descriptor import FilesystemSettings
from llm_do.stdlib.filesystem.toolset import FilesystemToolset
from llm_do.stdlib.registry import STDLIB_TOOLSETS
from llm_do.stdlib.shell.descriptor import ShellSettings
from llm_do.stdlib.shell.toolset import ShellToolset
from tests.support.toolsets import call_tool

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False


@pytest.fixture
def call() -> Callable[..., Any]:
    """`call(toolset, "read_file", path="a.txt")`, synchronously."""

    def _call(toolset: StdlibToolset, name: str, **args: Any) -> Any:
        return asyncio.run(call_tool(toolset, name, args))

    return _call


@pytest.fixture
def fs(tmp_path: Path) -> Callable[..., FilesystemToolset]:
    """`fs("filesystem_project", max_read_bytes=10)`: a filesystem toolset rooted at tmp_path/root."""
    base = tmp_path / "root"
    base.mkdir()

    def make(name: str = "filesystem_project", **settings: Any) -> FilesystemToolset:
        return FilesystemToolset(STDLIB_TOOLSETS[name], FilesystemSettings(**settings), base)

    return make


@pytest.fixture
def shell(tmp_path: Path) -> Callable[..., ShellToolset]:
    """`shell("shell_file_ops", timeout=1)`: a shell toolset rooted at tmp_path/root."""
    base = tmp_path / "root"
    base.mkdir(exist_ok=True)

    def make(name: str = "shell_readonly", **settings: Any) -> ShellToolset:
        return ShellToolset(STDLIB_TOOLSETS[name], ShellSettings(**settings), base)

    return make

"""Fixtures of the recording and `llm-do test` tests: runs recorded and replayed in this process."""

from __future__ import annotations

import socket
import threading
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


@pytest.fixture
def listener() -> Iterator[tuple[str, list[bytes]]]:
    """A real listener on a loopback port: its URL, and what each connection to it sent."""
    heard: list[bytes] = []
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(0.1)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    heard.append(conn.recv(4000))
                except OSError:
                    heard.append(b"")

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/mcp", heard
    finally:
        stop.set()
        thread.join(5)
        server.close()

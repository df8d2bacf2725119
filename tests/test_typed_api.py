"""The typing ratchet of issue 34: the number of each package's public functions whose signature
says `Any` (bench/typed_api.py measures it) may only go down. A change that types a function
lowers the figure below; one that adds an untyped public function fails here, saying which."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "typed_api.py"


def _load_measure():
    spec = importlib.util.spec_from_file_location("llm_do_bench_typed_api", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses read their module while the class is made
    spec.loader.exec_module(module)
    return module


typed_api = _load_measure()

CEILINGS = {"runtime": 14, "bundle": 2, "cli": 7, "toolkit": 0, "toolsets": 0, "stdlib": 6, "compiler": 81}
"""Public functions typed `Any`, per package, when the ceiling was last lowered: the number may not
grow (a count, not a share: removing a typed function must not fail here). Lower it (never raise
it) when a change types more."""


@pytest.fixture(scope="module")
def counts() -> dict:
    return typed_api.package_counts()


@pytest.mark.parametrize("package", sorted(CEILINGS))
def test_no_package_adds_untyped_functions(package: str, counts: dict) -> None:
    count = counts[package]
    assert count.total > 0
    assert count.untyped <= CEILINGS[package], (
        f"{package}: {count.untyped} public functions take or return Any, more than the {CEILINGS[package]} "
        f"reached (python bench/typed_api.py --files lists where)")


def test_the_runtime_stays_under_a_tenth(counts: dict) -> None:
    assert counts["runtime"].fraction < 0.10


def test_every_measured_package_is_a_directory_of_the_tree() -> None:
    assert set(typed_api.PACKAGES) == set(CEILINGS)
    for directory in typed_api.PACKAGES.values():
        assert (typed_api.REPO / directory / "__init__.py").is_file(), directory


def test_the_measure_counts_public_signatures_that_say_any(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text(
        "from typing import Any\n"
        "import typing\n"
        "def untyped(x: Any) -> int: ...\n"
        "def returns_any() -> 'dict[str, Any]': ...\n"
        "def qualified(x: typing.Any) -> None: ...\n"
        "def typed(x: object, *args: str, **kwargs: int) -> list[int]: ...\n"
        "async def also_untyped(*args: Any) -> None: ...\n"
        "def _private(x: Any) -> Any: ...\n"
        "class Public:\n"
        "    def method(self, x: Any) -> None: ...\n"
        "    def other(self) -> str: ...\n"
        "    def _hidden(self) -> Any: ...\n"
        "    class Inner:\n"
        "        def nested(self) -> Any: ...\n"
        "class _Private:\n"
        "    def method(self) -> Any: ...\n",
        encoding="utf-8")
    (tmp_path / "_internal.py").write_text("from typing import Any\ndef f() -> Any: ...\n", encoding="utf-8")
    (tmp_path / "__init__.py").write_text("def g() -> None: ...\n", encoding="utf-8")
    counts = {p.name: c for p, c in typed_api.file_counts(tmp_path).items()}
    assert sorted(counts) == ["__init__.py", "mod.py"]
    assert counts["mod.py"] == typed_api.Count(untyped=5, total=7)
    assert counts["__init__.py"] == typed_api.Count(untyped=0, total=1)

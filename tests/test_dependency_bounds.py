"""The lower bounds in pyproject.toml are true: what a user installs satisfies them, and on the
lowest versions they allow (`.ci/run` installs those with uv's `--resolution lowest-direct` and
sets LLM_DO_BOUNDS=lowest) every direct dependency of the core and of the `test` extra is exactly
at its bound, so the suite that passes there tests the bound, not something a dependency lifted."""

from __future__ import annotations

import os
import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*>=\s*([0-9][0-9.]*)\s*(?:,.*)?$")


def _release(version: str) -> tuple[int, ...]:
    parts = [int(p) for p in re.match(r"[0-9]+(?:\.[0-9]+)*", version).group().split(".")]  # type: ignore[union-attr]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def _bounds() -> dict[str, str]:
    """Each direct dependency of the core and of the `test` extra, by distribution name, with its
    lower bound (the highest, where one distribution is named twice with different extras)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    found: dict[str, str] = {}
    for line in project["dependencies"] + project["optional-dependencies"]["test"]:
        m = _REQUIREMENT.match(line)
        assert m, f"{line!r}: every dependency has a lower bound, written NAME[EXTRAS]>=VERSION"
        name = re.sub(r"[-_.]+", "-", m.group(1)).lower()
        if name not in found or _release(m.group(2)) > _release(found[name]):
            found[name] = m.group(2)
    return found


def test_every_installed_dependency_satisfies_its_bound() -> None:
    low = [f"{name} {metadata.version(name)} < {bound}" for name, bound in _bounds().items()
           if _release(metadata.version(name)) < _release(bound)]
    assert not low, low


def test_on_the_lowest_resolution_every_direct_dependency_is_at_its_bound() -> None:
    if os.environ.get("LLM_DO_BOUNDS") != "lowest":
        pytest.skip("runs where .ci/run installed the lowest versions the bounds allow (LLM_DO_BOUNDS=lowest)")
    lifted = [f"{name}>={bound} installs {metadata.version(name)}: raise the bound to what is tested"
              for name, bound in _bounds().items() if _release(metadata.version(name)) != _release(bound)]
    assert not lifted, lifted

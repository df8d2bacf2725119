"""The README's code does what it says: its Python API snippet runs as written, offline."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import run_cli

REPO = Path(__file__).resolve().parents[1]


def python_snippet(heading: str) -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, f"README's {heading} section has no python block"
    return match.group(1)


@pytest.mark.process
def test_the_python_api_snippet_runs_as_written(tmp_path: Path) -> None:
    shutil.copytree(REPO / "examples" / "orchestrator", tmp_path / "examples" / "orchestrator",
                    ignore=shutil.ignore_patterns("bundle.lock", "__pycache__"))
    assert run_cli("build", tmp_path / "examples" / "orchestrator").exit_code == 0
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "LLM_DO_MODEL"}
    proc = subprocess.run([sys.executable, "-c", python_snippet("Python API")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "'requests':" in lines[0]  # the output and the usage of the whole run
    category, urgency = lines[-1].split()
    assert category in ("billing", "bug", "how_to", "account_access", "feature_request")
    assert urgency in ("low", "normal", "high", "critical")


def test_the_readme_says_how_to_install_the_anthropic_extra() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert "pip install 'llm-do[anthropic]'" in text
    extras = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r"^anthropic = ", extras, re.M)

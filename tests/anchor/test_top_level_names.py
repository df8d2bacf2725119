"""The names `.agent`-era projects import from llm-do, and the one `llm_do/__init__.py` that lets
`from llm_do import register_model_factory` work while the three source roots still merge."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import llm_do

REPO = Path(__file__).resolve().parents[2]
ROOTS = ("compiler", "runtime", "stdlib")

IMPORTS = """
import sys
sys.path = [p for p in sys.path if p not in {roots!r}]
{prefix}
import llm_do, llm_do.compiler, llm_do.runtime, llm_do.stdlib, llm_do.cli, llm_do.cli.main
from llm_do import register_model_factory
from llm_do.toolsets.approval import set_toolset_approval_config
from llm_do.providers import OpenAICompatibleProvider
from llm_do.runtime.args import get_display_text
from llm_do.runtime import CallContext, AgentArgs, PromptContent
print(sorted({{m.__file__.split("llm_do")[0] for m in (llm_do.compiler, llm_do.runtime, llm_do.stdlib, llm_do.cli)}}))
"""


def test_one_init_and_the_editable_install_merges_the_three_roots() -> None:
    assert [r for r in ROOTS if (REPO / r / "llm_do" / "__init__.py").exists()] == ["runtime"]
    assert sorted(Path(p).parent.name for p in llm_do.__path__) == sorted(ROOTS)


@pytest.mark.process
def test_a_wheel_layout_imports_every_package_and_name(tmp_path: Path) -> None:
    """The wheel merges the three `llm_do` directories into one (pyproject's hatch `packages`);
    the same merge here, imported with the source roots taken off sys.path."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert config["packages"] == [f"{r}/llm_do" for r in ROOTS]
    site = tmp_path / "site"
    for root in ROOTS:
        shutil.copytree(REPO / root / "llm_do", site / "llm_do", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    code = IMPORTS.format(roots=[str(REPO / r) for r in ROOTS], prefix=f"sys.path.insert(0, {str(site)!r})")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == repr([str(site) + "/"])


def test_the_names_are_the_real_ones() -> None:
    from llm_do import register_model_factory
    from llm_do.runtime import AgentArgs, WorkerArgs
    from llm_do.runtime.args import Attachment, get_display_text
    from llm_do.runtime.model_factories import register_model_factory as real

    assert register_model_factory is real
    assert AgentArgs is WorkerArgs
    assert get_display_text(["Hello", Attachment("a.pdf"), "there"]) == "Hello there"
    assert get_display_text([Attachment("a.pdf")]) == "(no input)"

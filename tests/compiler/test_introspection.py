"""Introspection of user Python: imported in a subprocess only, failures become diagnostics."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli, worker, write_project
from tests.support.introspection import real_introspection

pytestmark = pytest.mark.process

# Module names unique to this file, so `sys.modules` of the test process tells whether they ran here.
TOOLS_MOD = "introspect_probe_tools"
LIST_MOD = "introspect_probe_listed"
KITS_MOD = "introspect_probe_kits"
HELPER_MOD = "introspect_probe_helper"


@pytest.fixture(scope="module", autouse=True)
def _real_introspection() -> Iterator[None]:
    """These tests are about the introspection child itself: every build starts one."""
    with real_introspection():
        yield


def good_project(marker: Path) -> dict[str, Any]:
    return {
        "project.json": {
            "version": 1,
            "worker_files": ["*.worker"],
            "python_files": [f"{TOOLS_MOD}.py", f"{LIST_MOD}.py", f"{KITS_MOD}.py"],
            "entry": {"worker": "main", "args": {"input": "hi"}},
        },
        "main.worker": worker(
            """
            model: test
            schema_in_ref: llm_do.runtime.args:PromptInput
            schema_out_ref: openai.types.chat:ChatCompletionAudio
            toolsets: [math_kit, late_kit]
            tools: [shout, whisper, reverse]
            """,
            "Use the tools.",
        ),
        # TOOLS as a dict; prints at import; imports a helper module; records who imported it.
        f"{TOOLS_MOD}.py": f'''
            import os
            from {HELPER_MOD} import normalize

            print("hello from an import")
            with open({str(marker)!r}, "a") as f:
                f.write(f"{{os.getpid()}}\\n")


            def shout(text: str) -> str:
                """Shout the text."""
                return normalize(text).upper()


            def whisper(text: str, times: int = 1) -> str:
                return text.lower() * times


            TOOLS = {{"shout": shout, "whisper": whisper}}
            ''',
        f"{HELPER_MOD}.py": "def normalize(text):\n    return text.strip()\n",
        # TOOLS as a list.
        f"{LIST_MOD}.py": '''
            def reverse(text: str) -> str:
                """Reverse the text."""
                return text[::-1]


            TOOLS = [reverse]
            ''',
        # TOOLSETS: a FunctionToolset (listed) and a factory (opaque).
        f"{KITS_MOD}.py": '''
            from pydantic_ai.toolsets import FunctionToolset


            def add(a: int, b: int) -> int:
                """Add two integers."""
                return a + b


            def make_late_kit(ctx):
                return FunctionToolset([add])


            TOOLSETS = {"math_kit": FunctionToolset([add]), "late_kit": make_late_kit}
            ''',
    }


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("intro")
    marker = base / "imported.txt"
    root = write_project(base / "proj", good_project(marker))
    result = run_cli("build", root)
    bundle = json.loads((root / "bundle.lock").read_text()) if (root / "bundle.lock").exists() else None
    return root, marker, result, bundle


def test_user_code_runs_only_in_a_subprocess(good) -> None:
    root, marker, result, bundle = good
    assert result.exit_code == 0, result.stderr
    pids = marker.read_text().split()
    assert pids, "tools module was never imported"
    assert str(os.getpid()) not in pids
    for name in (TOOLS_MOD, LIST_MOD, KITS_MOD, HELPER_MOD):
        assert name not in sys.modules
    assert not (root / "__pycache__").exists()


def test_print_at_import_does_not_break_the_answer(good) -> None:
    _, _, result, bundle = good
    assert result.exit_code == 0, result.stderr
    assert "hello from an import" not in result.stdout
    assert "shout" in bundle["workers"]["main"]["tools"]


def _toolset_of(bundle: dict[str, Any], module: str) -> dict[str, Any]:
    (node,) = [n for n in bundle["toolsets"].values() if n.get("module") == module]
    return node


def test_tools_dict_and_list(good) -> None:
    bundle = good[3]
    dict_tools = _toolset_of(bundle, TOOLS_MOD)["tools"]
    assert set(dict_tools) == {"shout", "whisper"}
    assert dict_tools["shout"]["description"] == "Shout the text."
    assert dict_tools["shout"]["parameters"]["required"] == ["text"]
    assert dict_tools["whisper"]["parameters"]["properties"]["times"]["type"] == "integer"
    assert dict_tools["shout"]["approval"] == "ask"
    list_tools = _toolset_of(bundle, LIST_MOD)["tools"]
    assert set(list_tools) == {"reverse"}
    assert list_tools["reverse"]["description"] == "Reverse the text."
    assert set(bundle["workers"]["main"]["tools"]) >= {"shout", "whisper", "reverse", "add"}


def test_function_toolset_is_listed_and_factory_is_opaque(good) -> None:
    root, _, result, bundle = good
    math_kit = bundle["toolsets"]["math_kit"]
    assert math_kit["opaque"] is False
    assert set(math_kit["tools"]) == {"add"}
    assert math_kit["tools"]["add"]["parameters"]["required"] == ["a", "b"]
    late_kit = bundle["toolsets"]["late_kit"]
    assert late_kit["opaque"] is True
    assert late_kit["tools"] == {}
    # Y003 is a warning at the factory, and the build still succeeds.
    factory_line = (root / f"{KITS_MOD}.py").read_text().splitlines().index("def make_late_kit(ctx):") + 1
    assert re.search(rf"{KITS_MOD}\.py:{factory_line}(:\d+)?: Y003 warning", result.stderr), result.stderr
    assert "late_kit" in result.stderr


def test_helper_module_becomes_a_source(good) -> None:
    sources = good[3]["sources"]
    assert sources[f"{HELPER_MOD}.py"]["kind"] == "python"
    assert {f"{TOOLS_MOD}.py", f"{LIST_MOD}.py", f"{KITS_MOD}.py"} <= set(sources)


def test_package_reference_records_its_version(good) -> None:
    bundle = good[3]
    assert bundle["packages"].get("openai") == metadata.version("openai")
    output = bundle["workers"]["main"]["output"]
    assert output["ref"] == "openai.types.chat:ChatCompletionAudio"
    # An installed module is not a source of the project.
    assert not any("openai" in path or "llm_do" in path for path in bundle["sources"])


def test_reference_into_llm_do_itself_records_llm_do(good) -> None:
    """llm-do is installed editable here (as in development and in the README's install)."""
    bundle = good[3]
    schema = bundle["workers"]["main"]["input"]
    assert schema["ref"] == "llm_do.runtime.args:PromptInput"
    assert schema["json_schema"]["required"] == ["input"]
    assert bundle["packages"].get("llm-do") == metadata.version("llm-do")


# --- failures --------------------------------------------------------------------------------------


BROKEN = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["raises.py", "syntax.py"]},
    "main.worker": worker("model: test", "Hi."),
    "raises.py": '''
        import os

        LIMIT = int(os.environ.get("NO_SUCH_LIMIT_VAR", "0"))
        if LIMIT == 0:
            raise RuntimeError("configure NO_SUCH_LIMIT_VAR first")
        ''',
    "syntax.py": '''
        def fine():
            return 1


        def broken(:
            return 2
        ''',
}


def _diags(result) -> list[dict[str, Any]]:
    return result.json()["diagnostics"]


def test_import_errors_are_y001_at_file_and_line(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", BROKEN)
    result = run_cli("lint", root, "--format", "json")
    assert result.exit_code == 1
    assert "Traceback" not in result.stderr
    y001 = {d["file"]: d for d in _diags(result) if d["code"] == "Y001"}
    assert set(y001) == {"raises.py", "syntax.py"}
    raised = y001["raises.py"]
    assert raised["severity"] == "error"
    assert raised["line"] == 5
    assert "configure NO_SUCH_LIMIT_VAR first" in raised["message"]
    assert "RuntimeError" in raised["message"]
    assert "Traceback" not in raised["message"] and "\n" not in raised["message"]
    syntax = y001["syntax.py"]
    assert syntax["line"] == 5
    assert "SyntaxError" in syntax["message"]
    assert "Traceback" not in syntax["message"]


def test_import_timeout_is_y002(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "proj",
        {
            "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["slow.py"]},
            "main.worker": worker("model: test", "Hi."),
            "slow.py": "import time\ntime.sleep(30)\n",
        },
    )
    result = run_cli("lint", root, "--format", "json", env={"LLM_DO_IMPORT_TIMEOUT": "5"})
    assert result.exit_code == 1
    assert "Traceback" not in result.stderr
    (diag,) = _diags(result)
    assert diag["code"] == "Y002"
    assert diag["severity"] == "error"
    assert (diag["file"], diag["line"]) == ("slow.py", 2)  # where the import was when it was stopped: never null


def test_worker_args_imports_without_pydantic_ai() -> None:
    code = (
        "import llm_do.runtime as r; r.WorkerArgs; r.PromptInput; r.AgentArgs; r.PromptContent; "
        "import sys; assert 'pydantic_ai' not in sys.modules, sorted(m for m in sys.modules if 'pydantic_ai' in m)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr

"""The runtime executes exactly the Python bytes it verified: not a forged bytecode cache, not a
package beside a verified module, not a file rewritten during the run, not a project module the
build never saw imported."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from llm_do.runtime.bundle import BundleRefused
from llm_do.toolkit.user_code import first_shadow
from tests.support.cli import one_line_error, run_cli, worker
from tests.support.events import of_kind, read_events
from tests.support.projects import build_project, copy_project

TOOLS_PY = '''
def marker() -> str:
    """Which code runs."""
    return "verified"


def late_import() -> str:
    """Imports a project module only when called: the build never sees it imported."""
    import helpers

    return helpers.VALUE


TOOLS = {"marker": marker, "late_import": late_import}
'''

# Leaves a trace when executed: the tests check it never is.
RAN = "import pathlib; pathlib.Path(__file__).resolve().parent.joinpath('{name}.ran').write_text('ran')\n"

PROJECT: dict[str, Any] = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"], "entry": {"worker": "main"}},
    "tools.py": TOOLS_PY,
    "helpers.py": RAN.format(name="helpers") + 'VALUE = "unverified helper ran"\n',
    "main.worker": worker("toolsets: [filesystem_project, user]\napprovals:\n  - allow write_file", "Rewrite, then delegate."),
    "user.worker": worker("tools: [marker, late_import]\napprovals:\n  - allow marker\n  - allow late_import", "Use the tools."),
}

REWRITTEN = 'import pathlib\n\ndef marker() -> str:\n    return "rewritten"\n\n\ndef late_import() -> str:\n    return "x"\n\n\nTOOLS = {"marker": marker, "late_import": late_import}\n'


@pytest.fixture(scope="module")
def _template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("verified") / "proj", PROJECT)


@pytest.fixture
def bundle(_template: Path, tmp_path: Path) -> Path:
    return copy_project(_template, tmp_path / "proj")


def user_calls(tool: str) -> dict[str, Any]:
    return {"workers": {
        "main": [{"tool_calls": [{"tool": "user", "args": {"input": "go"}}]}, {"text": "done"}],
        "user": [{"tool_calls": [{"tool": tool, "args": {}}]}, {"text": "used"}],
    }}


def exec_script(bundle: Path, script, content: dict[str, Any], tmp_path: Path):
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", script(content), "--events", events)
    return result, (read_events(events) if events.exists() else [])


def marker_result(events: list[dict[str, Any]]) -> str:
    [returned] = of_kind(events, "tool_returned", tool="marker")
    return returned["result"]


@pytest.mark.process
def test_the_verified_source_runs(bundle: Path, script, tmp_path: Path) -> None:
    result, events = exec_script(bundle, script, user_calls("marker"), tmp_path)
    assert result.exit_code == 0, result.stderr
    assert marker_result(events) == "verified"
    assert str(bundle.parent) not in sys.path  # the project root is no import path


@pytest.mark.process
def test_a_forged_bytecode_cache_is_not_executed(bundle: Path, script, tmp_path: Path) -> None:
    """A `__pycache__` entry claiming tools.py's size and mtime would be loaded by Python's own
    import system without reading the source; the runtime compiles the verified bytes instead."""
    from importlib._bootstrap_external import _code_to_timestamp_pyc  # the format Python itself writes

    tools = bundle.parent / "tools.py"
    stat = tools.stat()
    forged = compile(REWRITTEN, str(tools), "exec")
    cache = Path(importlib.util.cache_from_source(str(tools)))
    cache.parent.mkdir(exist_ok=True)
    cache.write_bytes(bytes(_code_to_timestamp_pyc(forged, stat.st_mtime, stat.st_size)))
    result, events = exec_script(bundle, script, user_calls("marker"), tmp_path)
    assert result.exit_code == 0, result.stderr
    assert marker_result(events) == "verified"
    assert cache.read_bytes() == bytes(_code_to_timestamp_pyc(forged, stat.st_mtime, stat.st_size))  # nothing rewrote it


@pytest.mark.process
def test_a_package_beside_the_verified_module_is_refused_with_exit_3(bundle: Path, script, tmp_path: Path) -> None:
    package = bundle.parent / "tools"
    package.mkdir()
    (package / "__init__.py").write_text(RAN.format(name="package") + REWRITTEN)
    result, _ = exec_script(bundle, script, user_calls("marker"), tmp_path)
    assert result.exit_code == 3, result.stderr
    line = one_line_error(result)
    assert "tools/ is a package beside the verified tools.py" in line and "llm-do build" in line, line
    assert not (package / "package.ran").exists()


@pytest.mark.process
def test_a_worker_that_rewrites_tools_py_cannot_get_its_code_executed(bundle: Path, script, tmp_path: Path) -> None:
    """`main` may write files: it rewrites tools.py before `user` first imports it. The run goes
    on with the bytes verified at load."""
    content = {"workers": {
        "main": [{"tool_calls": [{"tool": "write_file", "args": {"path": "tools.py", "content": REWRITTEN}}]},
                 {"tool_calls": [{"tool": "user", "args": {"input": "go"}}]}, {"text": "done"}],
        "user": [{"tool_calls": [{"tool": "marker", "args": {}}]}, {"text": "used"}],
    }}
    result, events = exec_script(bundle, script, content, tmp_path)
    assert result.exit_code == 0, result.stderr
    assert (bundle.parent / "tools.py").read_text() == REWRITTEN  # the write happened
    assert marker_result(events) == "verified"


@pytest.mark.process
def test_a_function_level_import_of_an_unlocked_project_module_is_refused(bundle: Path, script, tmp_path: Path) -> None:
    """helpers.py is imported only inside a tool's body, so the build never recorded it: importing
    it is refused (exit 3) with a message saying what to do, and its code never runs."""
    result, _ = exec_script(bundle, script, user_calls("late_import"), tmp_path)
    assert result.exit_code == 3, result.stderr
    line = one_line_error(result)
    assert "import of 'helpers' (helpers.py)" in line and "module level" in line and "llm-do build" in line, line
    assert not (bundle.parent / "helpers.ran").exists()


@pytest.mark.process
def test_the_python_api_raises_bundle_refused(bundle: Path) -> None:
    from pydantic_ai import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    from llm_do.runtime import RuntimeConfig, run_worker

    turns = {"main": [[ToolCallPart("user", {"input": "go"})], [TextPart("done")]],
             "user": [[ToolCallPart("late_import", {})], [TextPart("used")]]}

    def model_for(name: str) -> FunctionModel:
        return FunctionModel(lambda messages, info: ModelResponse(parts=turns[name].pop(0)))

    with pytest.raises(BundleRefused, match="helpers"):
        run_worker(bundle, "go", config=RuntimeConfig(model_for=model_for))
    assert not (bundle.parent / "helpers.ran").exists()


# --- what Python's path search would import instead ------------------------------------------------


def make(root: Path, *files: str) -> Path:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    return root


@pytest.mark.parametrize(
    ("files", "sources", "says"),
    [
        (["tools.py", "tools/__init__.py"], ["tools.py"], "tools/ is a package beside the verified tools.py"),
        (["tools.py", "tools/__init__.pyc"], ["tools.py"], "tools/ is a package"),
        (["tools.py", f"tools{importlib.machinery.EXTENSION_SUFFIXES[0]}"], ["tools.py"], "would be imported instead"),
        (["lib/helpers.py", "lib/__init__.py"], ["lib/helpers.py"], "lib/__init__.py was added since the build"),
        (["lib/helpers.py", "lib.py"], ["lib/helpers.py"], "lib.py would be imported instead of the directory lib/"),
        (["pkg/__init__.py", f"pkg/__init__{importlib.machinery.EXTENSION_SUFFIXES[0]}"], ["pkg/__init__.py"], "instead"),
    ],
)
def test_shadows_are_found(tmp_path: Path, files: list[str], sources: list[str], says: str) -> None:
    assert says in (first_shadow(make(tmp_path, *files), sources) or "")


@pytest.mark.parametrize(
    ("files", "sources"),
    [
        (["tools.py", "tools/data.txt"], ["tools.py"]),  # a plain directory does not shadow a module
        (["tools.py", "__pycache__/tools.cpython-311.pyc"], ["tools.py"]),
        (["pkg/__init__.py", "pkg/mod.py"], ["pkg/__init__.py", "pkg/mod.py"]),
        (["lib/helpers.py"], ["lib/helpers.py"]),
    ],
)
def test_no_shadow(tmp_path: Path, files: list[str], sources: list[str]) -> None:
    assert first_shadow(make(tmp_path, *files), sources) is None


def test_installed_packages_below_the_root_are_not_project_modules(tmp_path: Path, monkeypatch) -> None:
    """A virtual environment inside the project directory is common: its packages live below the
    root but not where a project module would, so they import as usual."""
    from llm_do.runtime.bundle import LoadedBundle
    from llm_do.runtime.verified_imports import import_verified

    root = tmp_path / "proj"
    site = root / ".venv" / "lib" / "site-packages"
    make(site, "venvpkg_for_test/__init__.py")
    (root / "tools.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(site))
    bundle = LoadedBundle.__new__(LoadedBundle)
    bundle.root, bundle.path, bundle.python_sources = root, root / "bundle.lock", {"tools.py": b"X = 1\n"}
    try:
        assert import_verified(bundle, "tools").X == 1
        assert import_verified(bundle, "venvpkg_for_test").__file__.startswith(str(site))
        (root / "other.py").write_text("Y = 2\n")
        monkeypatch.syspath_prepend(str(root))  # even with the root on sys.path, other.py is refused
        with pytest.raises(BundleRefused, match="'other'"):
            import_verified(bundle, "other")
    finally:
        for name in ("tools", "venvpkg_for_test", "other"):
            sys.modules.pop(name, None)
    assert os.path.exists(root / "other.py")


def test_a_plain_directory_of_the_project_does_not_hide_an_installed_module(tmp_path: Path, monkeypatch) -> None:
    """A data directory `json/` in the project is no package: `import json`-like imports of
    installed modules go on as usual; a directory nothing else provides is refused."""
    from llm_do.runtime.bundle import LoadedBundle
    from llm_do.runtime.verified_imports import import_verified

    root = tmp_path / "proj"
    site = tmp_path / "site"
    make(site, "installedpkg_for_test/__init__.py")
    make(root, "installedpkg_for_test/notes.txt", "datadir_for_test/notes.txt")
    (root / "tools.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(site))
    bundle = LoadedBundle.__new__(LoadedBundle)
    bundle.root, bundle.path, bundle.python_sources = root, root / "bundle.lock", {"tools.py": b"X = 1\n"}
    try:
        assert import_verified(bundle, "installedpkg_for_test").__file__.startswith(str(site))
        with pytest.raises(BundleRefused, match="'datadir_for_test'"):
            import_verified(bundle, "datadir_for_test")
    finally:
        for name in ("tools", "installedpkg_for_test", "datadir_for_test"):
            sys.modules.pop(name, None)


PROBE = """
import sys
from llm_do.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    print("EXIT", exc.code, "llm_do.runtime.verified_imports" in sys.modules)
"""


@pytest.mark.process
def test_the_import_hook_loads_only_for_bundles_with_python(build, bundle: Path, script) -> None:
    import subprocess

    plain = build({"project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
                   "main.worker": worker("", "Say hi.")}, name="plain")
    seen = []
    for lock, args in ((plain, ["--model", "test"]), (bundle, ["--script", str(script(user_calls("marker")))])):
        proc = subprocess.run([sys.executable, "-c", PROBE, "exec", str(lock), "go", *args], capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=120)
        seen.append([line for line in proc.stdout.splitlines() if line.startswith("EXIT")])
    assert seen == [["EXIT 0 False"], ["EXIT 0 True"]]


@pytest.mark.process
def test_a_source_entry_laid_out_otherwise_is_still_verified(bundle: Path) -> None:
    """The fast scan finds Python sources by their canonical lines; a sealed bundle whose entries
    carry another key between `kind` and `sha256` is decoded instead, never passed unchecked."""
    import json

    from llm_do.bundle.canonical import seal
    from llm_do.runtime.bundle import read_bundle

    doc = json.loads(bundle.read_text(encoding="utf-8"))
    for entry in doc["sources"].values():
        entry["note"] = "x"  # sorts between kind and sha256
    bundle.write_bytes(seal(doc))  # as a file (`read_bundle`): not the build of its sources, which `load_bundle` also refuses
    assert set(read_bundle(bundle).python_sources) == {"tools.py"}
    (bundle.parent / "tools.py").write_text(REWRITTEN)
    with pytest.raises(BundleRefused, match="stale: tools.py changed"):
        read_bundle(bundle)

"""The import hook itself (`verified_imports`), on bundles made in memory: what it serves (modules,
packages, namespace directories, with their `__file__` and source pinned to the verified bytes),
what it refuses (a module written after the build, also below a verified package or a namespace
directory), its place on `sys.meta_path`, and what it drops from `sys.modules` when a bundle
(another build, another project) takes over in the same process."""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Iterator
from importlib.abc import MetaPathFinder
from pathlib import Path

import pytest

from llm_do.runtime.bundle import BundleRefused, LoadedBundle
from llm_do.runtime.verified_imports import _FINDER, activate, import_verified

# Leaves a trace when executed: the refused modules must never run.
RAN = "import pathlib; pathlib.Path(__file__).resolve().parent.joinpath(__name__ + '.ran').write_text('ran')\n"

SOURCES = {
    "vi_pkg/__init__.py": "A = 1\n",
    "vi_pkg/mod.py": "from . import helper\n\nB = helper.C + 1\n",
    "vi_pkg/helper.py": "C = 2\n",
    "vi_ns/sub/deep.py": "D = 4\n",
    "vi_tools.py": "V = 'first'\n",
}
NAMES = ("vi_pkg", "vi_ns", "vi_tools", "vi_data", "vi_evil")


def made_bundle(root: Path, sources: dict[str, str]) -> LoadedBundle:
    """A bundle as `load_bundle` leaves it for the hook: root, path and the verified bytes (the files
    on disk hold the same, as right after a build)."""
    for rel, text in sources.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    bundle = LoadedBundle.__new__(LoadedBundle)
    bundle.root, bundle.path = root, root / "bundle.lock"
    bundle.python_sources = {rel: text.encode() for rel, text in sources.items()}
    return bundle


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    yield
    for name in [n for n in sys.modules if n.split(".")[0] in NAMES]:
        del sys.modules[name]


@pytest.fixture
def bundle(tmp_path: Path) -> LoadedBundle:
    return made_bundle(tmp_path / "proj", SOURCES)


def test_project_python_in_packages_and_namespace_directories_imports(bundle: LoadedBundle) -> None:
    assert import_verified(bundle, "vi_pkg.mod").B == 3
    assert import_verified(bundle, "vi_pkg").A == 1
    assert import_verified(bundle, "vi_ns.sub.deep").D == 4
    namespace = sys.modules["vi_ns.sub"]
    assert list(namespace.__path__) == [str(bundle.root / "vi_ns" / "sub")]
    assert not hasattr(namespace, "A")  # a namespace is empty: nothing of the directory ran


def test_file_path_and_source_are_the_verified_ones(bundle: LoadedBundle) -> None:
    module = import_verified(bundle, "vi_pkg.mod")
    package = sys.modules["vi_pkg"]
    assert module.__file__ == str(bundle.root / "vi_pkg" / "mod.py")
    assert module.__spec__.origin == module.__file__ and module.__spec__.has_location
    assert package.__file__ == str(bundle.root / "vi_pkg" / "__init__.py")
    assert list(package.__path__) == [str(bundle.root / "vi_pkg")]
    assert module.__spec__.loader.is_package("vi_pkg.mod") is False and package.__spec__.loader.is_package("vi_pkg")
    (bundle.root / "vi_pkg" / "mod.py").write_text("B = 'rewritten on disk'\n")
    assert inspect.getsource(module) == SOURCES["vi_pkg/mod.py"]  # what runs, not what the file says now
    assert module.__spec__.loader.get_source("vi_pkg.mod") == SOURCES["vi_pkg/mod.py"]


@pytest.mark.parametrize("written", ["vi_pkg/evil.py", "vi_ns/sub/evil.py", "vi_ns/evil.py", "vi_pkg/evil/__init__.py"])
def test_a_module_written_after_the_build_below_a_verified_package_or_namespace_is_refused(
        bundle: LoadedBundle, written: str) -> None:
    import_verified(bundle, "vi_pkg.mod")
    target = bundle.root / written
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(RAN)
    name = written.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    with pytest.raises(BundleRefused, match=f"import of '{name}' \\({written}\\) from the project"):
        importlib.import_module(name)
    assert not list(bundle.root.rglob("*.ran"))
    assert name not in sys.modules


def test_a_rebuilt_bundle_in_the_same_process_imports_the_new_code(bundle: LoadedBundle, tmp_path: Path) -> None:
    assert import_verified(bundle, "vi_tools").V == "first"
    assert import_verified(bundle, "vi_pkg.mod").B == 3
    rebuilt = made_bundle(bundle.root, {**SOURCES, "vi_tools.py": "V = 'second'\n", "vi_pkg/helper.py": "C = 20\n"})
    assert import_verified(rebuilt, "vi_tools").V == "second"
    assert import_verified(rebuilt, "vi_pkg.mod").B == 21  # the package's modules are imported again too
    other = made_bundle(tmp_path / "other", {"vi_tools.py": "V = 'other project'\n"})
    assert import_verified(other, "vi_tools").V == "other project"
    assert "vi_pkg" not in sys.modules  # the first project's modules are gone: the other does not serve them


def test_the_hook_stands_first_on_sys_meta_path_once(bundle: LoadedBundle, monkeypatch: pytest.MonkeyPatch) -> None:
    class Elsewhere(MetaPathFinder):
        """A finder put first after the hook: would answer `vi_tools` with other code."""

        def find_spec(self, name: str, path: object = None, target: object = None) -> None:
            return None

    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    activate(bundle)
    assert sys.meta_path[0] is _FINDER
    sys.meta_path.insert(0, Elsewhere())
    activate(bundle)
    assert sys.meta_path[0] is _FINDER and sys.meta_path.count(_FINDER) == 1
    assert isinstance(sys.meta_path[1], Elsewhere)


def test_a_module_imported_before_the_hook_is_imported_again_from_the_verified_bytes(bundle: LoadedBundle) -> None:
    """`vi_tools` imported from disk (another path, before verification) is not what the run uses."""
    spec = importlib.util.spec_from_file_location("vi_tools", bundle.root / "vi_tools.py")
    assert spec is not None and spec.loader is not None
    early = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(early)
    early.V = "imported before the hook"
    sys.modules["vi_tools"] = early
    verified = import_verified(bundle, "vi_tools")
    assert verified is not early and verified.V == "first"
    assert type(verified.__spec__.loader).__name__ == "VerifiedLoader"


def test_a_module_the_hook_serves_stays_imported_while_its_bundle_runs(bundle: LoadedBundle) -> None:
    first = import_verified(bundle, "vi_pkg.mod")
    assert import_verified(bundle, "vi_pkg.mod") is first
    activate(bundle)
    assert sys.modules["vi_pkg.mod"] is first


def test_a_plain_directory_is_refused_even_with_the_root_on_sys_path(bundle: LoadedBundle,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """With the project root on sys.path, Python's own finder would make `vi_data/` (no
    `__init__`, no verified module) a namespace package: the hook sees where it points and refuses."""
    (bundle.root / "vi_data").mkdir()
    (bundle.root / "vi_data" / "evil.py").write_text(RAN)
    monkeypatch.syspath_prepend(str(bundle.root))
    activate(bundle)
    with pytest.raises(BundleRefused, match="import of 'vi_data' \\(vi_data\\) from the project"):
        importlib.import_module("vi_data")
    assert "vi_data" not in sys.modules and not list(bundle.root.rglob("*.ran"))


def test_a_bundle_that_is_gone_serves_nothing_more(tmp_path: Path) -> None:
    """Projects are held weakly: once a bundle is dropped (its runs over), the next activation
    forgets it, so its modules are no longer served from its bytes."""
    import gc

    old = made_bundle(tmp_path / "old", {"vi_tools.py": "V = 'old'\n"})
    assert import_verified(old, "vi_tools").V == "old"
    del old
    gc.collect()
    sys.modules.pop("vi_tools", None)
    new = made_bundle(tmp_path / "new", {"vi_pkg/__init__.py": "A = 1\n"})
    activate(new)
    assert all(p.bundle() is not None for p in _FINDER.projects.values())
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("vi_tools")


def test_another_load_of_the_same_build_keeps_what_was_imported(bundle: LoadedBundle) -> None:
    """A bundle loaded again (another run of the same lock) serves the same bytes: its modules and
    namespaces are not imported again (their module-level code does not run twice)."""
    module = import_verified(bundle, "vi_pkg.mod")
    namespace = import_verified(bundle, "vi_ns.sub")
    again = made_bundle(bundle.root, SOURCES)
    assert import_verified(again, "vi_pkg.mod") is module
    assert import_verified(again, "vi_ns.sub") is namespace


def test_the_same_sources_at_another_root_are_imported_from_there(bundle: LoadedBundle, tmp_path: Path) -> None:
    import_verified(bundle, "vi_ns.sub.deep")
    moved = made_bundle(tmp_path / "moved", SOURCES)
    assert import_verified(moved, "vi_ns.sub.deep").__file__ == str(moved.root / "vi_ns" / "sub" / "deep.py")
    assert list(sys.modules["vi_ns.sub"].__path__) == [str(moved.root / "vi_ns" / "sub")]


def test_a_name_nothing_provides_is_not_found_not_refused(bundle: LoadedBundle) -> None:
    with pytest.raises(ModuleNotFoundError) as info:
        import_verified(bundle, "vi_nothing_here")
    assert not isinstance(info.value, BundleRefused)


def test_a_finder_without_find_spec_is_passed_over(bundle: LoadedBundle, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A legacy finder (find_module only) after the hook does not break the imports it answers."""

    class Legacy:
        def find_module(self, name: str, path: object = None) -> None:
            return None

    site = tmp_path / "site"
    (site / "vi_installed").mkdir(parents=True)
    (site / "vi_installed" / "__init__.py").write_text("W = 5\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    activate(bundle)
    sys.meta_path.insert(1, Legacy())
    try:
        assert import_verified(bundle, "vi_installed").W == 5
    finally:
        sys.modules.pop("vi_installed", None)


def test_a_python_source_that_is_no_module_name_is_left_alone(tmp_path: Path) -> None:
    """`scripts/run-me.py` is verified (hashed) but is no importable name: the rest imports."""
    bundle = made_bundle(tmp_path / "proj", {**SOURCES, "scripts/run-me.py": "X = 1\n"})
    assert import_verified(bundle, "vi_tools").V == "first"


def test_verified_code_is_compiled_with_its_own_future_imports_only(tmp_path: Path) -> None:
    """This module's `from __future__ import annotations` must not leak into the project's code."""
    bundle = made_bundle(tmp_path / "proj", {"vi_tools.py": "def f(x: int) -> str:\n    return str(x)\n"})
    assert import_verified(bundle, "vi_tools").f.__annotations__ == {"x": int, "return": str}


def test_a_source_in_another_encoding_imports_and_shows_its_source(tmp_path: Path) -> None:
    data = b"# -*- coding: latin-1 -*-\nS = '\xe9'\n"
    bundle = made_bundle(tmp_path / "proj", {})
    bundle.root.mkdir()
    (bundle.root / "vi_tools.py").write_bytes(data)
    bundle.python_sources = {"vi_tools.py": data}
    module = import_verified(bundle, "vi_tools")
    assert module.S == "\xe9"
    assert module.__spec__.loader.get_source("vi_tools") == "# -*- coding: latin-1 -*-\nS = '\ufffd'\n"


def test_a_package_written_after_the_build_is_named_by_its_init(bundle: LoadedBundle) -> None:
    import_verified(bundle, "vi_tools")
    (bundle.root / "vi_evil").mkdir()
    (bundle.root / "vi_evil" / "__init__.py").write_text(RAN)
    with pytest.raises(BundleRefused, match="import of 'vi_evil' \\(vi_evil/__init__.py\\) from the project"):
        importlib.import_module("vi_evil")
    assert not list(bundle.root.rglob("*.ran"))


def test_a_plain_directory_is_refused_with_the_root_on_sys_path_through_a_link(
        bundle: LoadedBundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (bundle.root / "vi_data").mkdir()
    link = tmp_path / "link"
    link.symlink_to(bundle.root)
    monkeypatch.syspath_prepend(str(link))
    activate(bundle)
    with pytest.raises(BundleRefused, match="import of 'vi_data'"):
        importlib.import_module("vi_data")

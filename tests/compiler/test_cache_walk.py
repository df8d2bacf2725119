"""A cache never changes an answer (issue 31): a project is walked through edits that break and
mend its imports in every way (a module missing, a folder, a package or a link in its place, a
syntax error, an ImportError raised, a package shadowing a module on `sys.path`, an optional
import whose module comes and goes, a file outside the project and a variable its code reads),
and after every step `llm-do build` and `llm-do lint` with the user's cache (introspection
answers, build and lint records, front matter packs) say and write exactly what they say and
write with `LLM_DO_NO_CACHE=1`: the exit status, the lock's bytes, the diagnostics. Copies of the
project at other paths share the cache: an untouched copy, and a copy of each step's state,
answer alike."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from llm_do.compiler.facts.cache import NO_CACHE_VARIABLE
from tests.support.cli import run_cli, worker, write_project

pytestmark = pytest.mark.process

TOOLS = '''
    import os

    import textkit

    from .markdown import STYLE

    try:
        from .extras import FLOURISH
    except ImportError:
        FLOURISH = "none"

    try:
        with open(os.path.join(os.path.dirname(textkit.__file__), "digest.cfg")) as config:
            WIDTH = config.read().strip()
    except OSError:
        WIDTH = "80"


    def bullet_list(items: list[str]) -> str:
        return "\\n".join(f"- {item}" for item in items)


    bullet_list.__doc__ = (f"Bullets in {STYLE} style, flourish {FLOURISH}, {textkit.CASE} case, "
                           f"{os.environ.get('DIGEST_TONE', 'plain')} tone, {WIDTH} columns.")
    TOOLS = [bullet_list]
'''

PROJECT: dict[str, Any] = {
    "project.json": {"version": 1, "worker_files": ["**/*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("model: test\ntoolsets: [formatter]", "Have formatter format the list."),
    "workers/formatter/worker.worker": worker("description: Formats a list.\nmodel: test\ntools: [bullet_list]", "Format it."),
    "workers/formatter/tools.py": TOOLS,
    "workers/formatter/markdown.py": 'STYLE = "markdown"\n',
    "shared/markdown_v2.py": 'STYLE = "markdown v2"\n',
    "shared/markdown_v3.py": 'STYLE = "markdown v3"\n',
}

Outcome = tuple[Any, ...]
OUTSIDE = "outside every copy: "


def _copy(source: Path, dest: Path) -> Path:
    """`source` copied to `dest`: links as links, a named pipe as a new named pipe (never opened)."""

    def copy(src: str, dst: str) -> None:
        if stat.S_ISFIFO(os.lstat(src).st_mode):
            os.mkfifo(dst)
        else:
            shutil.copy2(src, dst)

    shutil.copytree(source, dest, symlinks=True, copy_function=copy)
    return dest


def _outcome(root: Path, *, cached: bool, lint: bool = True) -> Outcome:
    """What `llm-do build` then `llm-do lint` of `root`, run in it, say and leave, its place written `<root>`."""
    env = None if cached else {NO_CACHE_VARIABLE: "1"}
    built = run_cli("build", ".", env=env, cwd_to=root)
    lock = root / "bundle.lock"
    said = [built.exit_code, lock.read_bytes() if lock.exists() else None, built.stdout + built.stderr]
    if lint:
        linted = run_cli("lint", "--format", "json", ".", env=env, cwd_to=root)
        said += [linted.exit_code, linted.stdout + linted.stderr]
    return tuple(s.replace(str(root), "<root>") if isinstance(s, str) else s for s in said)


def _write(rel: str, text: str) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)

    return edit


def _remove(rel: str) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        path = root / rel
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()

    return edit


def _folder(rel: str) -> Callable[[Path], None]:
    return lambda root: (root / rel).mkdir()


def _pipe(rel: str) -> Callable[[Path], None]:
    return lambda root: os.mkfifo(root / rel)


def _link(rel: str, target: str) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        path = root / rel
        if path.is_symlink() or path.exists():
            path.unlink()
        path.symlink_to(target)

    return edit


def _steps(site: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[Callable[[Path], None]]]]:
    """Each step of the walk: what it does to the project, in order (`outside`: to what every
    copy imports as well)."""
    markdown, extras = "workers/formatter/markdown.py", "workers/formatter/extras.py"
    module = 'STYLE = "markdown"\n'

    def site_module(text: str) -> Callable[[Path], None]:
        return site_file("textkit.py", text)

    def site_file(name: str, text: str) -> Callable[[Path], None]:
        return lambda root: (site / name).write_text(text)

    def variable(value: str | None) -> Callable[[Path], None]:
        return lambda root: (monkeypatch.setenv("DIGEST_TONE", value) if value is not None
                             else monkeypatch.delenv("DIGEST_TONE"))

    return [
        ("the project as written", []),
        ("the imported module is deleted", [_remove(markdown)]),
        ("it is back", [_write(markdown, module)]),
        ("a folder stands in its place", [_remove(markdown), _folder(markdown)]),
        ("the folder is a module again", [_remove(markdown), _write(markdown, module)]),
        ("it has a syntax error", [_write(markdown, "STYLE = (\n")]),
        ("the syntax error is mended", [_write(markdown, module)]),
        ("it raises ImportError", [_write(markdown, "raise ImportError('no markdown here')\n")]),
        ("it imports again", [_write(markdown, module)]),
        ("a package beside it shadows it", [_write("workers/formatter/markdown/__init__.py", 'STYLE = "package"\n')]),
        ("the package is removed", [_remove("workers/formatter/markdown")]),
        ("a namespace folder beside it (the module still wins)", [_folder("workers/formatter/markdown")]),
        ("an __init__ makes the folder a package that shadows it",
         [_write("workers/formatter/markdown/__init__.py", 'STYLE = "folder made a package"\n')]),
        ("the folder is removed", [_remove("workers/formatter/markdown")]),
        ("the module is a link to another", [_link(markdown, "../../shared/markdown_v2.py")]),
        ("the link points to a third", [_link(markdown, "../../shared/markdown_v3.py")]),
        ("the link dangles", [_link(markdown, "../../shared/missing.py")]),
        ("the link points to a folder", [_link(markdown, "../../shared")]),
        ("a regular module again", [_remove(markdown), _write(markdown, module)]),
        ("the optional module appears", [_write(extras, 'FLOURISH = "stars"\n')]),
        ("a folder stands in its place", [_remove(extras), _folder(extras)]),
        ("a named pipe stands in its place", [_remove(extras), _pipe(extras)]),
        ("the pipe is gone", [_remove(extras)]),
        ("a module in the project shadows the one on PYTHONPATH", [_write("textkit.py", 'CASE = "project"\n')]),
        ("it is removed", [_remove("textkit.py")]),
        ("a namespace folder in the project (the module on PYTHONPATH still wins)", [_folder("textkit")]),
        ("an __init__ makes it a package that shadows it", [_write("textkit/__init__.py", 'CASE = "project package"\n')]),
        ("the package is removed", [_remove("textkit")]),
        (OUTSIDE + "the module on PYTHONPATH changes", [site_module('CASE = "site v2"\n')]),
        (OUTSIDE + "a file outside the project that the tools read appears", [site_file("digest.cfg", "72\n")]),
        (OUTSIDE + "it changes", [site_file("digest.cfg", "60\n")]),
        (OUTSIDE + "a variable the tools read is set", [variable("warm")]),
        (OUTSIDE + "it changes", [variable("dry")]),
        (OUTSIDE + "it is unset", [variable(None)]),
    ]


def test_cached_builds_and_lints_answer_as_uncached_ones_through_every_import_edit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # one cache, empty at the start, for every copy
    monkeypatch.delenv("DIGEST_TONE", raising=False)
    site = tmp_path / "site"
    site.mkdir()
    (site / "textkit.py").write_text('CASE = "site"\n')
    monkeypatch.setenv("PYTHONPATH", str(site))
    walked = write_project(tmp_path / "walked" / "project", PROJECT)
    untouched = _copy(walked, tmp_path / "untouched" / "project")
    _outcome(untouched, cached=False, lint=False)
    as_written = _outcome(untouched, cached=False, lint=False)  # its lock is now up to date
    assert as_written[0] == 0 and "up to date" in as_written[2], as_written
    answers = set()
    for n, (step, edits) in enumerate(_steps(site, monkeypatch)):
        for edit in edits:
            edit(walked)
        reference = _copy(walked, tmp_path / f"reference{n}" / "project")
        copy = _copy(walked, tmp_path / f"copy{n}" / "project")
        expected = _outcome(reference, cached=False)
        assert _outcome(walked, cached=True) == expected, step
        assert _outcome(copy, cached=True, lint=False) == expected[:3], f"{step}: a copy at another path"
        if step.startswith(OUTSIDE):
            as_written = _outcome(_copy(untouched, tmp_path / f"untouched{n}" / "project"), cached=False, lint=False)
        assert _outcome(untouched, cached=True, lint=False) == as_written, f"{step}: the untouched copy"
        answers.add(expected[:2])
    assert len(answers) > 10  # the steps change what is built, not only that it fails

"""The filesystem tools read and write through the path `confine` resolved (red team M1): a
directory on it replaced by a link afterwards, by something that does not take the filesystem lock
(a Python tool, an MCP server, another process), is refused, never followed."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic_ai.exceptions import ToolFailed

from llm_do.stdlib.filesystem import toolset as fs_module
from llm_do.toolkit.files import confine
from llm_do.toolkit.resolved_io import PathMoved, read_resolved, write_resolved
from tests.support.unprivileged import run_unprivileged, world_folder


def _swap_for_link(root: Path) -> None:
    """out/d (a directory) becomes a link to src/, as `mv out/d out/old; mv out/lnk out/d` leaves it."""
    os.rename(root / "out/d", root / "out/old")
    (root / "out/d").symlink_to("../src")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "out/d").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src/x.py").write_text("original")
    return root


def test_a_write_does_not_follow_a_link_put_in_place_of_its_directory(tree: Path) -> None:
    target = confine(tree, "out/d/new.py")
    _swap_for_link(tree)
    with pytest.raises(PathMoved, match="'out/d' changed while in use"):
        write_resolved(tree, target, b"evil")
    assert sorted(p.name for p in (tree / "src").iterdir()) == ["x.py"]


def test_a_read_does_not_follow_a_link_put_in_place_of_its_directory(tree: Path) -> None:
    (tree / "out/d/x.py").write_text("mine")
    target = confine(tree, "out/d/x.py")
    _swap_for_link(tree)
    with pytest.raises(PathMoved):
        read_resolved(tree, target, 100)


def test_writing_makes_missing_directories_and_keeps_the_mode(tree: Path) -> None:
    write_resolved(tree, confine(tree, "out/new/deep/a.txt"), b"one")
    assert (tree / "out/new/deep/a.txt").read_bytes() == b"one"
    (tree / "out/new/deep/a.txt").chmod(0o640)
    write_resolved(tree, confine(tree, "out/new/deep/a.txt"), b"two")
    assert (tree / "out/new/deep/a.txt").read_bytes() == b"two"
    assert (tree / "out/new/deep/a.txt").stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in (tree / "out/new/deep").iterdir()) == ["a.txt"]  # no temporary left


def test_a_link_at_the_target_itself_is_replaced_not_followed(tree: Path) -> None:
    target = confine(tree, "out/d/a.txt")
    (tree / "out/d/a.txt").symlink_to("../../src/x.py")
    write_resolved(tree, target, b"new")
    assert not (tree / "out/d/a.txt").is_symlink() and (tree / "out/d/a.txt").read_bytes() == b"new"
    assert (tree / "src/x.py").read_text() == "original"


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask, so modes are what a user's own files get."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_a_link_replaced_by_a_write_gives_the_new_file_the_usual_mode_not_the_links(tree: Path, umask_022) -> None:
    """Mutation survivor 9: a link's own mode is 0777; the regular file written in its place must
    not take it (world-writable), but the mode a new file gets: 0666 less the umask."""
    target = confine(tree, "out/d/a.txt")
    (tree / "out/d/a.txt").symlink_to("../../src/x.py")
    assert stat.S_IMODE((tree / "out/d/a.txt").lstat().st_mode) == 0o777
    write_resolved(tree, target, b"new")
    assert stat.S_IMODE((tree / "out/d/a.txt").lstat().st_mode) == 0o644
    assert stat.S_IMODE((tree / "src/x.py").stat().st_mode) == 0o644  # the link's target untouched


def _write_and_read_back(root: str) -> list[str]:
    """As the unprivileged owner: write through missing folders, then enter them and read back."""
    write_resolved(Path(root), confine(Path(root), "new/deep/a.txt"), b"mine")
    assert read_resolved(Path(root), confine(Path(root), "new/deep/a.txt"), 100) == b"mine"
    write_resolved(Path(root), confine(Path(root), "new/deep/b.txt"), b"also mine")
    return sorted(os.listdir(os.path.join(root, "new", "deep")))


def test_folders_a_write_makes_are_the_owners_to_use(umask_022) -> None:
    """Folders made on the way get 0777 less the umask (0755), so their owner, who is no root,
    enters and writes them (mutants: 0o776, 0o1000, which root would not notice)."""
    with world_folder() as shared:
        assert run_unprivileged(_write_and_read_back, str(shared)) == ["a.txt", "b.txt"]
        for folder in (shared / "new", shared / "new" / "deep"):
            assert stat.S_IMODE(folder.stat().st_mode) == 0o755, folder


def test_write_file_refuses_a_link_swapped_in_after_its_check(fs, call, monkeypatch) -> None:
    """The toolset's own check passes; the swap happens right after it, as another process could."""
    toolset = fs()
    (toolset.root / "out/d").mkdir(parents=True)
    (toolset.root / "src").mkdir()
    checked = fs_module.confine

    def confine_then_swap(root: Path, path: str) -> Path:
        resolved = checked(root, path)
        _swap_for_link(toolset.root)
        return resolved

    monkeypatch.setattr(fs_module, "confine", confine_then_swap)
    with pytest.raises(ToolFailed, match="changed while in use"):
        call(toolset, "write_file", path="out/d/x.py", content="evil")
    assert list((toolset.root / "src").iterdir()) == []

"""The filesystem tools read and write through the path `confine` resolved (red team M1): a
directory on it replaced by a link afterwards, by something that does not take the filesystem lock
(a Python tool, an MCP server, another process), is refused, never followed."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic_ai.exceptions import ToolFailed

from llm_do.stdlib.filesystem import toolset as fs_module
from llm_do.toolkit import resolved_io
from llm_do.toolkit.files import confine
from llm_do.toolkit.resolved_io import PathMoved, descriptors_supported, read_resolved, write_resolved
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


def test_a_toolset_whose_folder_does_not_exist_yet_gets_it_at_its_first_write(tmp_path: Path) -> None:
    """A toolset's `path` need not exist before its first write, nor its parents."""
    root = tmp_path / "not" / "yet"
    write_resolved(root, confine(root, "a.txt"), b"first")
    assert (root / "a.txt").read_bytes() == b"first"


def test_a_read_makes_no_folder(tree: Path) -> None:
    """Reading a file in a folder that does not exist fails and leaves the tree as it was."""
    with pytest.raises(FileNotFoundError):
        read_resolved(tree, confine(tree, "nowhere/deep/x.txt"), 100)
    assert not (tree / "nowhere").exists()


def test_a_file_on_the_way_is_an_error_of_its_own_not_a_swap(tree: Path) -> None:
    """Only a link on the way is reported as a directory replaced while in use."""
    (tree / "out/f.txt").write_text("a file, not a folder")
    with pytest.raises(NotADirectoryError):
        write_resolved(tree, confine(tree, "out/f.txt/x.txt"), b"x")
    assert (tree / "out/f.txt").read_text() == "a file, not a folder"


@pytest.mark.parametrize("code", [errno.ELOOP, errno.ENOTDIR, errno.EMLINK], ids=errno.errorcode.get)
def test_a_link_on_the_way_is_refused_whatever_error_the_platform_opens_it_with(
        tree: Path, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """Opening a link with O_NOFOLLOW fails with ENOTDIR on Linux, ELOOP on macOS, EMLINK on FreeBSD."""
    real_open = os.open

    def open_as_the_platform_does(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if dir_fd is not None and flags & os.O_NOFOLLOW and os.path.islink(f"/proc/self/fd/{dir_fd}/{path}"):
            raise OSError(code, os.strerror(code))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    target = confine(tree, "out/d/new.py")
    _swap_for_link(tree)
    monkeypatch.setattr(os, "open", open_as_the_platform_does)
    monkeypatch.setattr(os, "supports_dir_fd", os.supports_dir_fd | {open_as_the_platform_does})
    with pytest.raises(PathMoved, match="'out/d' changed while in use"):
        write_resolved(tree, target, b"evil")
    assert sorted(p.name for p in (tree / "src").iterdir()) == ["x.py"]


@pytest.mark.parametrize("function", ["open", "mkdir", "rename", "stat", "unlink"])
def test_a_platform_without_descriptors_for_one_call_uses_the_plain_functions(
        monkeypatch: pytest.MonkeyPatch, function: str) -> None:
    assert descriptors_supported()  # this platform
    monkeypatch.setattr(os, "supports_dir_fd", os.supports_dir_fd - {getattr(os, function)})
    assert not descriptors_supported()


@pytest.mark.parametrize("flag", ["_NOFOLLOW", "_DIRECTORY"])
def test_a_platform_without_o_nofollow_or_o_directory_uses_the_plain_functions(
        monkeypatch: pytest.MonkeyPatch, flag: str) -> None:
    """Without them a link on the way would be followed: the descriptors would guard nothing."""
    monkeypatch.setattr(resolved_io, flag, 0)  # what `getattr(os, "O_...", 0)` gives there
    assert not descriptors_supported()


def test_without_descriptors_a_write_makes_its_folders_and_a_read_reads(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the platform has no `dir_fd` (Windows: the functions raise NotImplementedError when
    given one), the plain path functions do the same job."""
    real_open = os.open

    def open_without_dir_fd(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if dir_fd is not None:
            raise NotImplementedError("dir_fd unavailable on this platform")
        return real_open(path, flags, mode)

    monkeypatch.setattr(os, "open", open_without_dir_fd)
    assert not descriptors_supported()
    target = confine(tree, "out/new/deep/a.txt")
    write_resolved(tree, target, b"plain")
    assert read_resolved(tree, target, 100) == b"plain"
    write_resolved(tree, confine(tree, "out/new/deep/b.txt"), b"beside it")  # the folder is there now
    assert sorted(os.listdir(tree / "out/new/deep")) == ["a.txt", "b.txt"]


def _descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc/self/fd (Linux)")
def test_reads_writes_and_refusals_leave_no_descriptor_open(tree: Path) -> None:
    """A long-lived server writes and reads many times: none of them may keep a descriptor."""
    target = confine(tree, "out/d/deep/er/a.txt")
    (tree / "out/lnk").symlink_to("../src")
    through_link = Path(os.path.realpath(tree)) / "out/lnk/a.txt"  # as if swapped in after `confine`
    write_resolved(tree, target, b"warm up")
    before = _descriptors()
    for n in range(10):
        write_resolved(tree, target, b"%d" % n)
        assert read_resolved(tree, target, 100) == b"%d" % n
        with pytest.raises(PathMoved):
            write_resolved(tree, through_link, b"x")
    assert _descriptors() == before


def test_a_write_is_on_disk_in_a_hidden_temporary_before_it_replaces_the_file(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a crash the file holds its old text or its new one, never a part: the new text is
    flushed and synced (fsync) in a temporary beside it before it is renamed over the file. The
    temporary is a dot file ending in .tmp, which listings, watchers and ignore rules leave out."""
    (tree / "out/d/a.txt").write_text("old")
    at_sync: list[dict[str, str]] = []
    real_fsync = os.fsync

    def fsync_and_look(fd: int) -> None:
        folder = tree / "out/d"
        at_sync.append({name: (folder / name).read_text() for name in os.listdir(folder)})
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_and_look)
    write_resolved(tree, confine(tree, "out/d/a.txt"), b"new")
    [seen] = at_sync
    [temporary] = [name for name in seen if name != "a.txt"]
    assert seen == {"a.txt": "old", temporary: "new"}
    assert temporary.startswith(".a.txt.") and temporary.endswith(".tmp"), temporary
    assert os.listdir(tree / "out/d") == ["a.txt"] and (tree / "out/d/a.txt").read_text() == "new"


def test_a_write_that_fails_leaves_no_temporary(tree: Path) -> None:
    """Replacing a folder by a file fails; what was written for it goes too."""
    (tree / "out/d/sub").mkdir()
    (tree / "out/d/sub/kept.txt").write_text("kept")
    with pytest.raises(IsADirectoryError):
        write_resolved(tree, confine(tree, "out/d/sub"), b"a file")
    assert os.listdir(tree / "out/d") == ["sub"] and os.listdir(tree / "out/d/sub") == ["kept.txt"]

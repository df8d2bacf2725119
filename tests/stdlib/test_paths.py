from __future__ import annotations

import os
from pathlib import Path

import pytest

from llm_do.toolkit.files import (
    PathRefused,
    check_suffix,
    confine,
    normalize_suffixes,
    relative,
    suffix_allowed,
    touches_git_dir,
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.txt").write_text("a")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret")
    return root


def refused(root: Path, path: str) -> str:
    with pytest.raises(PathRefused) as info:
        confine(root, path)
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("path", ["sub/a.txt", "./sub/a.txt", "sub//a.txt", "sub/./a.txt", "x/../sub/a.txt"])
def test_relative_paths_resolve_inside(root: Path, path: str) -> None:
    assert confine(root, path) == root.resolve() / "sub" / "a.txt"


def test_dot_is_the_root_and_missing_files_are_fine(root: Path) -> None:
    assert confine(root, ".") == root.resolve()
    assert confine(root, "new/dir/file.md") == root.resolve() / "new" / "dir" / "file.md"


def test_nul_empty_and_unencodable(root: Path) -> None:
    assert "NUL" in refused(root, "a\x00b")
    assert "empty" in refused(root, "")
    assert "lone surrogate" in refused(root, "a\ud800.txt")


@pytest.mark.parametrize("path", ["/etc/passwd", "//etc", "/"])
def test_absolute_posix(root: Path, path: str) -> None:
    assert "absolute" in refused(root, path)


@pytest.mark.parametrize("path", ["C:\\Windows", "C:/x", "c:x", "\\\\server\\share\\x", "\\x", "//server/share"])
def test_absolute_windows_forms(root: Path, path: str) -> None:
    assert "absolute" in refused(root, path)


@pytest.mark.parametrize("path", ["~", "~/x", "~root/x"])
def test_home(root: Path, path: str) -> None:
    assert "'~' is not expanded" in refused(root, path)


@pytest.mark.parametrize("path", ["..", "../x", "sub/../../x", "./..", "sub/../..", "a/b/../../../x"])
def test_dotdot_escape(root: Path, path: str) -> None:
    assert "points outside" in refused(root, path)


def test_symlinked_dir_out(root: Path, tmp_path: Path) -> None:
    (root / "link").symlink_to(tmp_path / "outside")
    assert "symbolic link" in refused(root, "link")
    assert "symbolic link" in refused(root, "link/secret.txt")
    assert "symbolic link" in refused(root, "link/new.txt")


def test_symlinked_file_out(root: Path, tmp_path: Path) -> None:
    (root / "s.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    assert "symbolic link" in refused(root, "s.txt")


def test_dangling_symlink_out(root: Path, tmp_path: Path) -> None:
    (root / "d.txt").symlink_to(tmp_path / "outside" / "missing.txt")
    assert "symbolic link" in refused(root, "d.txt")


def test_symlink_then_dotdot_follows_the_kernel(root: Path, tmp_path: Path) -> None:
    # `deep/..` is outside/ for the kernel, though lexically it is the root.
    (tmp_path / "outside" / "deep").mkdir()
    (root / "deep").symlink_to(tmp_path / "outside" / "deep")
    assert "symbolic link" in refused(root, "deep/../secret.txt")


def test_symlink_inside_is_resolved(root: Path) -> None:
    (root / "alias").symlink_to(root / "sub")
    (root / "rel").symlink_to("sub/a.txt")
    assert confine(root, "alias/a.txt") == root.resolve() / "sub" / "a.txt"
    assert confine(root, "rel") == root.resolve() / "sub" / "a.txt"


def test_root_reached_through_a_symlink(root: Path, tmp_path: Path) -> None:
    (tmp_path / "root-link").symlink_to(root)
    assert confine(tmp_path / "root-link", "sub/a.txt") == root.resolve() / "sub" / "a.txt"
    assert "points outside" in refused(tmp_path / "root-link", "../outside")


def test_symlink_loop_stays_inside(root: Path) -> None:
    (root / "loop").symlink_to(root / "loop")
    assert confine(root, "loop").parent == root.resolve()


def test_relative_and_git_dir(root: Path) -> None:
    assert relative(root, confine(root, "sub/a.txt")) == "sub/a.txt"
    assert relative(root, confine(root, ".")) == "."
    assert touches_git_dir(root, confine(root, ".git/config"))
    assert touches_git_dir(root, confine(root, "sub/.GIT/hooks/pre-commit"))
    assert touches_git_dir(root, confine(root, ".git"))
    assert not touches_git_dir(root, confine(root, ".github/workflows/ci.yml"))
    assert not touches_git_dir(root, confine(root, ".gitignore"))


def test_suffixes() -> None:
    assert normalize_suffixes(["md", ".TXT"]) == (".md", ".txt")
    assert normalize_suffixes(None) is None
    assert suffix_allowed("anything.bin", None)
    assert suffix_allowed("README.MD", [".md"])
    assert suffix_allowed("a.tar.gz", [".tar.gz"])
    assert not suffix_allowed("cmd", ["md"])
    assert not suffix_allowed("a.py", [".md", ".txt"])
    assert not suffix_allowed("a.md", [])


def test_check_suffix_message() -> None:
    check_suffix("a.md", [".md"], "docs/a.md")
    with pytest.raises(PathRefused, match=r"^'docs/a.py' does not have an allowed suffix \(allowed: \.md, \.txt\)$"):
        check_suffix("a.py", ["md", ".txt"], "docs/a.py")
    with pytest.raises(PathRefused, match=r"allowed: none"):
        check_suffix("a.py", [], "a.py")


def test_no_filesystem_changes(root: Path) -> None:
    before = sorted(os.listdir(root))
    confine(root, "new/dir/file.md")
    assert sorted(os.listdir(root)) == before

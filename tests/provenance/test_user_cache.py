"""The compiler's caches (`provenance/user_cache`): where they live and when they are off, what
shapes their keys, and signed entries that read back only for the material they were kept for, in
folders only their user may enter, pruned least recently used first."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_do.provenance import user_cache
from llm_do.provenance.user_cache import SignedEntries, cache_folder, path_environment, prune
from llm_do.toolkit.user_state import folder_secret, signature

MATERIAL = {"lock": "/p/bundle.lock", "bundle": "sha256 of the lock"}


@pytest.fixture
def entries(tmp_path: Path) -> SignedEntries:
    return SignedEntries(tmp_path / "cache" / "builds", max_bytes=1 << 20)


@pytest.mark.parametrize("value", ["1", "yes", "true"])
def test_llm_do_no_cache_set_turns_the_caches_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value: str) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("LLM_DO_NO_CACHE", value)
    assert cache_folder("builds") is None


@pytest.mark.parametrize("value", ["", "0"])
def test_llm_do_no_cache_empty_or_zero_leaves_them_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value: str) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("LLM_DO_NO_CACHE", value)
    assert cache_folder("builds") == tmp_path / "llm-do" / "builds"


def test_without_a_home_directory_there_is_no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLM_DO_NO_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.setattr("pwd.getpwuid", lambda uid: (_ for _ in ()).throw(KeyError(uid)))
    assert cache_folder("builds") is None


@pytest.mark.parametrize("name", ["PYTHONPATH", "PYTHONHOME", "PYTHONSAFEPATH", "PYTHONNOUSERSITE",
                                  "PYTHONPLATLIBDIR", "PYTHONUSERBASE"])
def test_every_variable_that_shapes_sys_path_is_part_of_the_key(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Each changes what an import finds, so a record kept without it must not be recalled with it."""
    monkeypatch.delenv(name, raising=False)
    without = path_environment()
    monkeypatch.setenv(name, "/somewhere")
    assert path_environment() == {**without, name: "/somewhere"}


def test_an_entry_reads_back_for_its_material_only(entries: SignedEntries) -> None:
    entries.write(MATERIAL, {"workers": 3})
    assert entries.read(MATERIAL) == {"workers": 3}
    assert entries.read({**MATERIAL, "bundle": "another lock"}) is None


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask, under which a folder made without a mode is everyone's to read."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_the_folders_and_key_are_the_users_alone(entries: SignedEntries, umask_022: None) -> None:
    """Root reads anything, so the modes are checked, not a read by another user."""
    entries.write(MATERIAL, {"workers": 3})
    assert stat.S_IMODE(entries.folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(entries.path(MATERIAL).parent.stat().st_mode) == 0o700
    assert stat.S_IMODE((entries.folder / "key").stat().st_mode) == 0o600


def test_an_entry_that_does_not_decode_or_is_not_signed_reads_as_absent(entries: SignedEntries) -> None:
    entries.write(MATERIAL, {"workers": 3})
    path = entries.path(MATERIAL)
    signed = json.loads(path.read_bytes())
    forged = json.dumps({"key": MATERIAL, "body": {"workers": 1}}, sort_keys=True, separators=(",", ":"))
    for damaged in (b"not json", b"[]", json.dumps({"entry": signed["entry"]}).encode(),
                    json.dumps({"entry": forged, "mac": signed["mac"]}).encode(),
                    json.dumps({"entry": signed["entry"], "mac": 1}).encode(),
                    json.dumps({"entry": {"key": MATERIAL}, "mac": signed["mac"]}).encode()):
        path.write_bytes(damaged)
        assert entries.read(MATERIAL) is None, damaged


def test_a_signed_entry_that_is_not_an_object_reads_as_absent(entries: SignedEntries) -> None:
    entries.write(MATERIAL, {"workers": 3})
    body = json.dumps([MATERIAL])
    secret = folder_secret(entries.folder, create=False)
    entries.path(MATERIAL).write_text(json.dumps({"entry": body, "mac": signature(secret, body)}))
    assert entries.read(MATERIAL) is None


def test_an_unreadable_or_keyless_cache_reads_as_absent(entries: SignedEntries) -> None:
    assert entries.read(MATERIAL) is None  # nothing kept
    entries.write(MATERIAL, {"workers": 3})
    (entries.folder / "key").unlink()
    assert entries.read(MATERIAL) is None


def test_a_cache_that_cannot_be_written_is_no_error(tmp_path: Path) -> None:
    (tmp_path / "cache").write_text("a file where the folder would be")
    SignedEntries(tmp_path / "cache" / "builds", max_bytes=1 << 20).write(MATERIAL, {"workers": 3})


def test_writing_prunes_the_least_recently_read_entries(tmp_path: Path) -> None:
    """A read counts as a use: what was read lately stays, what was not goes first."""
    unlimited = SignedEntries(tmp_path / "cache", max_bytes=1 << 20)
    for n in range(4):
        unlimited.write({"n": n}, "x" * 100)
        os.utime(unlimited.path({"n": n}), ns=(n * 10**9, n * 10**9))
    size = unlimited.path({"n": 0}).stat().st_size  # each entry's, alike
    entries = SignedEntries(tmp_path / "cache", max_bytes=4 * size + size // 2)
    assert entries.read({"n": 0}) == "x" * 100  # now the most recently used
    entries.write({"n": 4}, "x" * 100)  # over the limit: down to three quarters of it
    assert [n for n in range(5) if entries.path({"n": n}).exists()] == [0, 3, 4]


def test_pruning_keeps_a_folder_within_its_limit_and_removes_down_to_three_quarters(tmp_path: Path) -> None:
    """The oldest go first, whatever their names: ages shuffled against the names' order."""
    folder = tmp_path / "cache"
    ages = {"a": 3, "b": 0, "c": 7, "d": 1, "e": 5, "f": 2, "g": 6, "h": 4}
    for name, age in ages.items():
        path = folder / "ab" / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * 100)
        os.utime(path, ns=(age * 10**9, age * 10**9))
    prune(folder, 800)
    assert len(list(folder.glob("*/*.json"))) == 8  # at the limit: nothing goes
    prune(folder, 799)  # down to 599 bytes: the three oldest go
    assert sorted(p.stem for p in folder.glob("*/*.json")) == ["a", "c", "e", "g", "h"]


def _counting_prunes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    counts: list[Path] = []
    real = user_cache.prune

    def counting(folder: Path, limit: int, pattern: str = "*/*.json") -> int:
        counts.append(folder)
        return real(folder, limit, pattern)

    monkeypatch.setattr(user_cache, "prune", counting)
    return counts


def test_a_process_writing_many_entries_counts_the_folder_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counting lists and stats every entry: done at each write, a build slowed down with the size
    of the cache (a third of the suite's build time went there)."""
    counts = _counting_prunes(monkeypatch)
    entries = SignedEntries(tmp_path / "cache", max_bytes=1 << 20)
    for n in range(200):
        entries.write({"n": n}, "x" * 100)
    assert len(counts) == 1
    assert all(entries.read({"n": n}) == "x" * 100 for n in range(200))


def test_what_other_processes_wrote_is_pruned_within_an_eighth_of_the_limit(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    limit = 64 * 1024
    entries = SignedEntries(folder, max_bytes=limit)
    entries.write({"n": "first"}, "x")  # counted now
    for n in range(10):  # another process's entries: this one does not know of them
        path = folder / "ab" / f"{n}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * (limit // 8))
        os.utime(path, ns=(n, n))

    def total() -> int:
        return sum(p.stat().st_size for p in folder.glob("*/*.json"))

    assert total() > limit
    written = 0
    n = 0
    while written <= limit // 8:
        entries.write({"n": n}, "y" * 1000)
        written += entries.path({"n": n}).stat().st_size
        n += 1
    assert total() <= limit
    assert entries.read({"n": n - 1}) == "y" * 1000  # the oldest went, not what was just written


def test_a_folder_counted_full_is_pruned_at_the_write_that_passes_its_limit(tmp_path: Path) -> None:
    """What the count found stays counted: a small write that takes a nearly full folder past its
    limit prunes at once."""
    probe = SignedEntries(tmp_path / "probe", max_bytes=1 << 20)
    probe.write({"n": "a"}, "x")
    small = probe.path({"n": "a"}).stat().st_size  # an entry like the two written below
    folder = tmp_path / "cache"
    limit = 64 * 1024
    for n in range(8):  # entries of earlier processes: the limit, less room for one small entry and 10 bytes
        path = folder / "ab" / f"{n}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * (limit // 8 - (small + 10 if n == 7 else 0)))
        os.utime(path, ns=(n, n))
    entries = SignedEntries(folder, max_bytes=limit)
    entries.write({"n": "b"}, "x")  # the first write counts the folder: 10 bytes under the limit
    assert len(list(folder.glob("*/*.json"))) == 9
    entries.write({"n": "c"}, "x")  # past the limit now, by a small write
    assert sum(p.stat().st_size for p in folder.glob("*/*.json")) <= limit * 3 // 4
    assert entries.read({"n": "c"}) == "x"

def test_a_process_counts_again_after_writing_an_eighth_of_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counts = _counting_prunes(monkeypatch)
    limit = 1 << 20
    entries = SignedEntries(tmp_path / "cache", max_bytes=limit)
    entries.write({"n": "first"}, "x")
    assert len(counts) == 1
    written = 0
    n = 0
    while True:  # entries of one size, until the next would pass an eighth of the limit
        entries.write({"n": n}, "y" * 1000)
        size = entries.path({"n": n}).stat().st_size
        written += size
        n += 1
        if written + size > limit // 8:
            break
    assert len(counts) == 1  # an eighth of the limit written since the count, or less: not counted again
    entries.write({"n": n}, "y" * 1000)
    assert len(counts) == 2

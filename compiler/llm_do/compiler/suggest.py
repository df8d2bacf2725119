"""Did-you-mean hints.

`difflib` is imported by the functions that compare: a project without a misspelt name never needs it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence

_SEPARATORS = re.compile(r"[_\-.\s]+")
_FILE_CUTOFF = 0.8
"""File names share suffixes and directories, so they need to be closer to be a likely typo."""


def closest(word: str, candidates: Iterable[str], cutoff: float = 0.6) -> str | None:
    import difflib

    matches = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=cutoff)
    if not matches:
        lowered = {c.lower(): c for c in candidates}
        return lowered.get(word.lower())
    return matches[0]


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    match = closest(word, candidates)
    return f"did you mean '{match}'?" if match else None


def did_you_mean_file(path: str, existing: Iterable[str]) -> str | None:
    """A did-you-mean for a file that does not exist, among the files beside it: one with the same
    suffix and a name close to it (`tool.py` -> `tools.py`), else one with the same name and
    another suffix (`tools.pyi` -> `tools.py`). Shared suffixes say nothing, so they are not compared."""
    stem, suffix = posixpath.splitext(path)
    split = [(posixpath.splitext(e), e) for e in sorted(existing)]
    same_suffix = {s: e for (s, x), e in split if x == suffix}
    near = closest(stem, same_suffix, _FILE_CUTOFF)
    match = same_suffix[near] if near is not None else next((e for (s, _), e in split if s == stem), None)
    return f"did you mean '{match}'?" if match else None


def closest_name(word: str, candidates: Sequence[str]) -> str | None:
    """The candidate a multi-part name (`filesystem_readonly`) most likely means, part by part.

    Character similarity alone prefers `filesystem_cwd` (more letters in common) to
    `filesystem_project_ro`, though `ro` abbreviates `readonly`. Here every part of `word` must
    match a part of the candidate (equal, a prefix, an abbreviation such as `ro` for `readonly`,
    or a near spelling); among those, the fewest unmatched parts win, then the earlier candidate
    (pass them in order of preference). Otherwise, plain similarity as `closest`.
    """
    squashed = _SEPARATORS.sub("", word.lower())
    for candidate in candidates:
        if _SEPARATORS.sub("", candidate.lower()) == squashed and candidate != word:
            return candidate
    parts = _parts(word)
    if len(parts) >= 2:
        best: tuple[int, int] | None = None
        found = None
        for index, candidate in enumerate(candidates):
            left = _unmatched(parts, _parts(candidate))
            if left is not None and (best is None or (left, index) < best):
                best, found = (left, index), candidate
        if found is not None:
            return found
    return closest(word, candidates)


def closest_names(word: str, candidates: Sequence[str], most: int = 4) -> list[str]:
    """Every candidate `word` may mean, when it names a family rather than one (`shell` ->
    `shell_readonly`, `shell_file_ops`; `filesystem_readonly` -> `filesystem_project_ro`,
    `filesystem_cwd_ro`), at most `most`, in the candidates' order of preference.

    A one-part word means the candidates whose first part it is; a word of several parts, the
    candidates `closest_name`'s part matching leaves fewest parts over in, all of them if they tie.
    Otherwise the one `closest_name` finds, if any.
    """
    parts = _parts(word)
    if len(parts) == 1:
        family = [c for c in candidates if c != word and _parts(c)[:1] == parts]
        if len(family) >= 2:
            return family[:most]
    elif _SEPARATORS.sub("", word.lower()) not in {_SEPARATORS.sub("", c.lower()) for c in candidates}:
        left = {c: _unmatched(parts, _parts(c)) for c in candidates}
        fewest = min((n for n in left.values() if n is not None), default=None)
        tied = [c for c, n in left.items() if n is not None and n == fewest]
        if len(tied) >= 2:
            return tied[:most]
    near = closest_name(word, candidates)
    return [near] if near is not None else []


def one_of(names: Sequence[str]) -> str:
    """'a', 'a' or 'b', 'a', 'b' or 'c': names quoted for a hint."""
    quoted = [f"'{n}'" for n in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def _parts(name: str) -> list[str]:
    return [p for p in _SEPARATORS.split(name.lower()) if p]


def _unmatched(parts: list[str], candidate: list[str]) -> int | None:
    """How many parts of the candidate are left over when each of `parts` matches one of them;
    None when some part matches none."""
    left = list(candidate)
    for part in parts:
        match = next((c for c in left if c == part), None) or next((c for c in left if _part_matches(part, c)), None)
        if match is None:
            return None
        left.remove(match)
    return len(left)


def _part_matches(a: str, b: str) -> bool:
    short, long = sorted((a, b), key=len)
    if len(short) < 2:
        return False
    if long.startswith(short):
        return True  # proj: project
    if short[0] == long[0] and _is_subsequence(short, long):
        return True  # ro: readonly, fs: filesystem
    import difflib

    return difflib.SequenceMatcher(None, a, b).ratio() >= 0.8  # a typo: filesytem


def _is_subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(c in it for c in short)

"""Secrets never land in a cassette: the values of the environment's credentials (and of every
`${VAR}` the bundle expands) are replaced wherever they appear, in whatever form (`secret_forms`:
escaped, hex, base64; inside the bytes of a file item too), and so is whatever matches the project's
own patterns (`tests/redact.txt`: one regular expression a line, `#` comments).

Nothing about a provider is recorded in the first place (no API keys, headers, clients): a cassette
holds messages, tools and model names only."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llm_do.bundle.errors import InputProblem

if TYPE_CHECKING:
    from .secret_forms import Span

CREDENTIAL_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)
MIN_SECRET = 6
"""Shorter values are not redacted: `1` or `true` would be replaced everywhere."""
PATTERNS_FILE = "tests/redact.txt"


class RedactionProblem(InputProblem, ValueError):
    """The project's redaction patterns cannot be used (a pattern that does not compile)."""


def secret_values(environ: Mapping[str, str], bundle_bytes: bytes) -> dict[str, str]:
    """Value -> the variable's name, for credentials by name and every `${VAR}` the bundle names."""
    expanded = {m.decode() for m in re.findall(rb"\$\{([A-Za-z_][A-Za-z0-9_]*)", bundle_bytes)}
    out = {}
    for name, value in environ.items():
        if len(value) >= MIN_SECRET and (name in expanded or CREDENTIAL_NAME.search(name)):
            out[value] = name
    return out


def project_patterns(root: Path) -> list[re.Pattern[str]]:
    """The project's patterns (`tests/redact.txt`): one a line, blank lines and `#` comments left out;
    one that does not compile, or that matches the empty text, is `RedactionProblem` naming its line."""
    path = root / PATTERNS_FILE
    if not path.is_file():
        return []
    patterns = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            pattern = re.compile(line)
        except re.error as exc:
            raise RedactionProblem(f"{PATTERNS_FILE}:{number}: not a regular expression: {exc}") from None
        if pattern.fullmatch("") is not None:
            raise RedactionProblem(f"{PATTERNS_FILE}:{number}: {line!r} matches the empty text, so it would redact "
                                   "between every two characters")
        patterns.append(pattern)
    return patterns


MARKER = re.compile(r"\[redacted(?: \$[A-Za-z_][A-Za-z0-9_]*)*\]")
"""What stands where a value was redacted: `[redacted $NAME]` (a secret; several names where
secrets overlapped) or `[redacted]` (a project pattern)."""


def marker(names: list[str]) -> str:
    return "[redacted " + " ".join(f"${name}" for name in names) + "]"


class Redactor:
    """Redacts the secrets (in every form `secret_forms` knows) and the project's patterns."""

    def __init__(self, secrets: Mapping[str, str], patterns: list[re.Pattern[str]]) -> None:
        from .secret_forms import SecretFinder

        self.finder = SecretFinder(secrets)
        self._patterns = patterns

    def text(self, value: str) -> str:
        spans = self.finder.spans(value)
        if spans:
            value = replaced(value, spans)
        for pattern in self._patterns:
            value = pattern.sub("[redacted]", value)
        return value

    def binary(self, value: bytes) -> bytes:
        """Bytes redacted as text when they are UTF-8, else where a secret's bytes (or an ASCII form
        of it) stand, byte for byte."""
        try:
            return self.text(value.decode("utf-8")).encode("utf-8")
        except UnicodeDecodeError:
            pass
        spans = self.finder.spans(value.decode("latin-1"))
        return replaced(value.decode("latin-1"), spans).encode("latin-1") if spans else value  # the markers are ASCII

    def data(self, value: object) -> object:
        """Every string of JSON data (keys too) redacted, and the bytes of every file item
        (pydantic-ai's `BinaryContent` as JSON: `kind: binary`, base64 `data`)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            from .message_data import file_bytes

            raw = file_bytes(value)
            if raw is not None:
                return self._file(value, raw)
            return {self.text(k): self.data(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.data(v) for v in value]
        return value

    def _file(self, item: dict[str, Any], raw: bytes) -> dict[str, Any]:
        import base64

        from .message_data import default_identifier

        cleaned = self.binary(raw)
        out = {k: self.data(v) for k, v in item.items() if k != "data"}
        out["data"] = base64.b64encode(cleaned).decode("ascii")
        if item.get("identifier") == default_identifier(raw):
            out["identifier"] = default_identifier(cleaned)
        return out


def replaced(text: str, spans: list[Span]) -> str:
    """`text` with each group of overlapping spans replaced by one marker naming its secrets."""
    from .secret_forms import merged

    out, at = [], 0
    for start, end, names in merged(spans):
        out += [text[at:start], marker(names)]
        at = end
    out.append(text[at:])
    return "".join(out)


def matches_redacted(recorded: object, live: object) -> bool:
    """Whether live JSON data is the recorded data, a redacted part of the recorded one (a marker)
    standing for whatever the live one holds there: a secret the replay's environment lacks, or has
    another value for, or the part of a secret a page held."""
    if isinstance(recorded, str):
        return isinstance(live, str) and _text_matches(recorded, live)
    if isinstance(recorded, dict):
        if not isinstance(live, dict) or len(recorded) != len(live):
            return False
        unmatched = [key for key in live if key not in recorded]
        for key, value in recorded.items():
            if key in live:
                if not matches_redacted(value, live[key]):
                    return False
                continue
            # a redacted key: a live key it stands for, holding what it held
            found = next((k for k in unmatched if _text_matches(key, k) and matches_redacted(value, live[k])), None)
            if found is None:
                return False
            unmatched.remove(found)
        return True
    if isinstance(recorded, list):
        return isinstance(live, list) and len(recorded) == len(live) and all(map(matches_redacted, recorded, live))
    return bool(recorded == live)


def _text_matches(recorded: str, live: str) -> bool:
    """Each marker of `recorded` matches any text (the empty one too), the rest exactly."""
    pieces = MARKER.split(recorded)
    if len(pieces) == 1:
        return recorded == live
    first, *middle, last = pieces
    if len(first) + len(last) > len(live) or not live.startswith(first) or not live.endswith(last):
        return False
    at, stop = len(first), len(live) - len(last)
    for piece in middle:
        found = live.find(piece, at, stop)
        if found < 0:
            return False
        at = found + len(piece)
    return True

"""Secrets never land in a cassette: the values of the environment's credentials (and of every
`${VAR}` the bundle expands) are replaced wherever they appear, and so is whatever matches the
project's own patterns (`tests/redact.txt`: one regular expression a line, `#` comments).

Nothing about a provider is recorded in the first place (no API keys, headers, clients): a cassette
holds messages, tools and model names only."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from llm_do.bundle.errors import InputProblem

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
    path = root / PATTERNS_FILE
    if not path.is_file():
        return []
    patterns = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            patterns.append(re.compile(line))
        except re.error as exc:
            raise RedactionProblem(f"{PATTERNS_FILE}:{number}: not a regular expression: {exc}") from None
    return patterns


class Redactor:
    def __init__(self, secrets: Mapping[str, str], patterns: list[re.Pattern[str]]) -> None:
        # longest first, so a secret containing another is replaced whole
        self._secrets = sorted(secrets.items(), key=lambda item: -len(item[0]))
        self._patterns = patterns

    def text(self, value: str) -> str:
        for secret, name in self._secrets:
            if secret in value:
                value = value.replace(secret, f"[redacted ${name}]")
        for pattern in self._patterns:
            value = pattern.sub("[redacted]", value)
        return value

    def data(self, value: Any) -> Any:
        """Every string of JSON data (keys too) redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k): self.data(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.data(v) for v in value]
        return value

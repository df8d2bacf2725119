"""Where a secret's value stands in a text, whatever form it took on the way: the text itself with
any of its characters percent-encoded (`%2F`, `+` for a space), JSON- or Python-escaped (`\\u002f`,
`\\x2f`, `\\"`) or HTML-escaped (`&#47;`, `&amp;`); its UTF-8 bytes in hex; or in base64, standard
or URL-safe, padded or not, wrapped at line ends, at any of the three alignments it can have inside
a larger blob.

Inside a blob, the base64 of a secret is not the base64 of the secret alone: only the characters
made of the secret's bits alone are its own (the first and last one or two mix with the blob's
neighbours), so those are what is searched, and replaced; the two or three characters around them
tell no more than a few bits of the secret's first and last bytes.

Each secret is looked for cheaply first (substring tests on the text and on its unescaped form),
and its exact regular expression runs only on the texts that hold it."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import unquote

LINE_BREAK = r"(?:\r?\n)?"
"""Between two characters of a base64 form: a wrapped blob (MIME, PEM) breaks its lines anywhere."""

_SHORT_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "'": "'", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t"}
"""A character -> the letter of its short backslash escape (`\\n`)."""
_HTML_NAMES = {"&": ("amp",), "<": ("lt",), ">": ("gt",), '"': ("quot",), "'": ("apos",)}


@dataclass(frozen=True)
class Span:
    """Where a secret stands in a text: `text[start:end]` is one of its forms."""

    start: int
    end: int
    name: str


def _hex(value: int, width: int) -> str:
    return f"(?i:{value:0{width}x})"


def _char_forms(char: str) -> str:
    """A regular expression for one character of a secret in any of its escaped forms (backslash
    escapes at any depth, as JSON inside JSON writes them)."""
    forms = [re.escape(char)]
    utf8 = char.encode("utf-8")
    point = ord(char)
    forms.append("".join("%" + _hex(b, 2) for b in utf8))
    forms.append("".join(r"\\+x" + _hex(b, 2) for b in utf8))
    if point < 0x100:
        forms.append(r"\\+x" + _hex(point, 2))
    if point <= 0xFFFF:
        forms.append(r"\\+u" + _hex(point, 4))
    else:
        high, low = 0xD800 + ((point - 0x10000) >> 10), 0xDC00 + ((point - 0x10000) & 0x3FF)
        forms.append(r"\\+u" + _hex(high, 4) + r"\\+u" + _hex(low, 4))
    forms.append(r"\\+U" + _hex(point, 8))
    if char in _SHORT_ESCAPES:
        forms.append(r"\\+" + re.escape(_SHORT_ESCAPES[char]))
    forms.append(f"&#0*{point};")
    forms.append("&#[xX]0*" + f"(?i:{point:x});")
    forms += [f"&{name};" for name in _HTML_NAMES.get(char, ())]
    if char == " ":
        forms.append(r"\+")
    return "(?:" + "|".join(forms) + ")"


def base64_cores(value: bytes) -> list[str]:
    """The base64 characters made of `value`'s bits alone, for each alignment (0, 1, 2 bytes
    before it in the blob), in the standard alphabet: what any base64 of a blob holding `value`
    contains (the URL-safe alphabet differs in `+/` only)."""
    out = []
    for before in range(3):
        encoded = base64.b64encode(bytes(before) + value).decode("ascii")
        first = -(-8 * before // 6)  # the first character with no bit of the bytes before
        last = 8 * (before + len(value)) // 6  # past the last character with no bit of the bytes after
        core = encoded[first:last]
        if core:
            out.append(core)
    return out


def _base64_pattern(core: str) -> str:
    chars = [{"+": "[+-]", "/": "[/_]"}.get(c, c) for c in core]
    return LINE_BREAK.join(chars)


@dataclass(frozen=True)
class SecretForms:
    """One secret: its name, its value, and the forms it is looked for in."""

    name: str
    value: str
    cores: tuple[str, ...]
    """Its base64 cores, standard and URL-safe alphabets."""
    hex: str
    """Its UTF-8 bytes in hex, lower case."""
    pattern: re.Pattern[str]

    @classmethod
    def of(cls, name: str, value: str) -> SecretForms:
        raw = value.encode("utf-8")
        standard = base64_cores(raw)
        cores = tuple(dict.fromkeys([*standard, *(c.replace("+", "-").replace("/", "_") for c in standard)]))
        text = "".join(_char_forms(c) for c in value)
        pattern = "|".join([text, f"(?i:{raw.hex()})", *(_base64_pattern(c) for c in standard)])
        return cls(name, value, cores, raw.hex(), re.compile(pattern))

    def may_be_in(self, views: Views) -> bool:
        """A cheap test, true whenever the pattern can match somewhere in the viewed text."""
        if self.value in views.text or self.value in views.unescaped:
            return True
        if " " in self.value and self.value in views.unescaped.replace("+", " "):
            return True
        return self.hex in views.lowered or any(core in views.unbroken for core in self.cores)


class Views:
    """A text as the cheap tests look at it: as it is, lower case, without line breaks, unescaped."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lowered = text.lower()
        self.unbroken = text.replace("\n", "").replace("\r", "")
        self.unescaped = unescaped(text)


_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
_HEX_BYTES = re.compile(r"(?:\\x[0-9A-Fa-f]{2})+")
_BACKSLASH = re.compile(r"\\(?:u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[\"\\/bfnrt'])")
_UNESCAPED = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
DEPTH = 3
"""Backslash escapes are undone this many times over for the cheap test (JSON in JSON in JSON)."""


def _unbackslashed(match: re.Match[str]) -> str:
    token = match.group()
    if token[1] in "uU":
        return chr(int(token[2:], 16))
    return _UNESCAPED.get(token[1], token[1])


def _hex_bytes(match: re.Match[str]) -> str:
    """`\\xNN` runs: UTF-8 bytes when they are valid UTF-8, else code points (`\\xe9` is é)."""
    raw = bytes(int(token, 16) for token in match.group().split("\\x")[1:])
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def unescaped(text: str) -> str:
    """`text` with percent, backslash and HTML escapes undone, for the cheap test only: a secret
    found here is then placed exactly by its pattern."""
    if "%" in text:
        text = _PERCENT.sub(lambda m: unquote(m.group(), errors="replace"), text)
    for _ in range(DEPTH):
        if "\\" not in text:
            break
        text = _HEX_BYTES.sub(_hex_bytes, _BACKSLASH.sub(_unbackslashed, text))
        text = re.sub("[\ud800-\udbff][\udc00-\udfff]", _joined_pair, text)
    if "&" in text:
        text = html.unescape(text)
    return text


def _joined_pair(match: re.Match[str]) -> str:
    high, low = (ord(c) for c in match.group())
    return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))


class SecretFinder:
    """Finds every secret of a set in a text, in every form."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        """`secrets`: value -> name."""
        self.forms = [SecretForms.of(name, value) for value, name in secrets.items()]

    def spans(self, text: str) -> list[Span]:
        """Where each secret stands in `text` (spans of several secrets may overlap)."""
        if not self.forms or not text:
            return []
        views = Views(text)
        out: list[Span] = []
        for forms in self.forms:
            if forms.may_be_in(views):
                out += (Span(m.start(), m.end(), forms.name) for m in forms.pattern.finditer(text) if m.end() > m.start())
        return out


def merged(spans: Iterable[Span]) -> list[tuple[int, int, list[str]]]:
    """Overlapping spans joined: (start, end, the names of the spans no other one of the group
    holds, in order), sorted by start. A secret inside another is named by the outer one only."""
    groups: list[tuple[int, int, list[Span]]] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if groups and span.start < groups[-1][1]:
            start, end, members = groups[-1]
            groups[-1] = (start, max(end, span.end), [*members, span])
        else:
            groups.append((span.start, span.end, [span]))
    out = []
    for start, end, members in groups:
        outer = [s for s in members if not any(o is not s and o.start <= s.start and s.end <= o.end
                                               and (o.end - o.start) > (s.end - s.start) for o in members)]
        out.append((start, end, list(dict.fromkeys(s.name for s in outer))))
    return out

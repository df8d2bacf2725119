"""Redaction, value by value: which environment values are secrets (six characters and more, of a
credential's name or a `${VAR}` of the bundle), every form a secret takes in a text (escaped, hex,
base64 at any alignment, wrapped or not) replaced, a secret inside another replaced whole, the
bytes of file items redacted, the project's patterns read as the spec says, and a replay's
comparison that takes a redacted part for whatever the live text holds there."""

from __future__ import annotations

import ast
import base64
import html
import json
import re
from pathlib import Path
from urllib.parse import quote, quote_plus, unquote

import pytest

from llm_do.runtime.recording.redaction import RedactionProblem, Redactor, project_patterns, secret_values
from tests.support.secrets import base64_holds

SECRET = "tok-live-SECRET987654"
NAME = "API_TOKEN"
REDACTOR = Redactor({SECRET: NAME}, [])


def test_credentials_of_six_characters_and_more_and_the_bundles_variables_are_secrets() -> None:
    env = {"DB_PASSWORD": "hunter", "PIN_TOKEN": "12345", "HOME": "/home/alice", "EDITOR": "vim-tiny",
           "SERVICE_URL": "https://internal.example", "github_auth": "gho_abcdef", "LANG": "C.UTF-8"}
    found = secret_values(env, b'{"server": {"url": "${SERVICE_URL}/mcp"}}')
    assert found == {"hunter": "DB_PASSWORD", "https://internal.example": "SERVICE_URL", "gho_abcdef": "github_auth"}
    assert Redactor(found, []).text("password hunter, pin 12345, home /home/alice") == \
        "password [redacted $DB_PASSWORD], pin 12345, home /home/alice"


def test_a_secret_inside_another_is_replaced_whole() -> None:
    redactor = Redactor(secret_values({"A_LONGER_NAMED_KEY": "abcdef", "B_TOKEN": "abcdef123456"}, b""), [])
    assert redactor.text("token abcdef123456, key abcdef") == "token [redacted $B_TOKEN], key [redacted $A_LONGER_NAMED_KEY]"


def test_overlapping_secrets_are_replaced_by_one_marker_naming_both() -> None:
    overlapping = Redactor({"zzzab1": "FIRST_KEY", "ab1234567": "SECOND_KEY"}, [])
    assert overlapping.text("<zzzab1234567>") == "<[redacted $FIRST_KEY $SECOND_KEY]>"


def _base64_blobs(secret: bytes) -> list[str]:
    """The secret inside larger blobs: each alignment, both alphabets, padded or not, wrapped or not."""
    out = []
    for before in (b"", b"a", b"ab", b"abc"):
        data = before + b"API_TOKEN=" + secret + b"\nrest of the file"
        out += [base64.b64encode(data).decode(), base64.urlsafe_b64encode(b"\xfb\xff" + data).decode().rstrip("="),
                base64.encodebytes(before * 30 + secret).decode()]
    return out


@pytest.mark.parametrize("blob", _base64_blobs(SECRET.encode()))
def test_base64_of_a_blob_holding_a_secret_is_redacted_at_any_alignment(blob: str) -> None:
    assert base64_holds(blob, SECRET.encode())
    redacted = REDACTOR.text(f"attachment: {blob} end")
    assert f"[redacted ${NAME}]" in redacted
    assert not base64_holds(redacted, SECRET.encode())


PUNCTUATED = b"pass>>>???word"
"""A secret whose base64 holds `+` and `/` at every alignment: the URL-safe alphabet writes them `-` and `_`."""


@pytest.mark.parametrize("blob", _base64_blobs(PUNCTUATED))
def test_base64_of_a_secret_with_plus_and_slash_is_redacted_in_either_alphabet(blob: str) -> None:
    assert base64_holds(blob, PUNCTUATED)
    redacted = Redactor({PUNCTUATED.decode(): "PASSWORD"}, []).text(f"attachment: {blob} end")
    assert "[redacted $PASSWORD]" in redacted
    assert not base64_holds(redacted, PUNCTUATED)


@pytest.mark.parametrize("before", [b"", b"a", b"ab"])
def test_in_base64_only_the_characters_that_hold_the_neighbours_bits_are_left(before: bytes) -> None:
    """Every character made of the secret's bits alone is replaced: the two or three left beside the
    marker also hold bits of the blob around it, and give away no more than a few bits of the
    secret's first and last bytes."""
    secret = SECRET.encode()
    blob = base64.b64encode(before + secret + b"!tail").decode()
    first = -(-8 * len(before) // 6)  # characters with a bit of `before`
    last = 8 * (len(before) + len(secret)) // 6  # from here on, a bit of the tail
    assert REDACTOR.text(blob) == f"{blob[:first]}[redacted ${NAME}]{blob[last:]}"


def test_a_secret_that_looks_escaped_is_redacted_as_written() -> None:
    """A value holding what reads as an escape (`%41`, a backslash and `n`) is found as it is, not
    only as what unescaping makes of it."""
    secret = "pa%41ss\\nw0rd"
    assert Redactor({secret: "ODD_KEY"}, []).text(f"x {secret} y") == "x [redacted $ODD_KEY] y"


def test_a_secret_is_redacted_where_json_escapes_its_slashes() -> None:
    """Some JSON writers (PHP's, a few APIs) escape `/` as `\\/`."""
    secret = "https://user:pw@db.example/x"
    for text in (json.dumps({"u": secret}).replace("/", "\\/"), json.dumps(json.dumps({"u": secret}).replace("/", "\\/"))):
        redacted = Redactor({secret: "DB_URL"}, []).text(text)
        assert "[redacted $DB_URL]" in redacted and "pw@db" not in redacted, text


@pytest.mark.parametrize(("encode", "decode"), [
    (lambda s: quote(f"k={s}&x", safe=""), unquote),
    (lambda s: quote_plus(f"k={s} x"), lambda t: unquote(t.replace("+", " "))),
    (lambda s: json.dumps({"k": s}, ensure_ascii=True), lambda t: json.loads(t)["k"]),
    (lambda s: json.dumps(json.dumps({"k": s})), lambda t: json.loads(json.loads(t))["k"]),
    (lambda s: html.escape(s).replace("e", "&#101;").replace("/", "&#x2F;"), html.unescape),
    (lambda s: html.escape(s).replace("&#x27;", "&apos;").replace("&amp;", "&#38;"), html.unescape),
    (lambda s: s.encode().hex(), lambda t: bytes.fromhex(re.sub(r"\[[^]]*\]", "", t)).decode(errors="replace")),
    (lambda s: s.encode().hex().upper(), lambda t: bytes.fromhex(re.sub(r"\[[^]]*\]", "", t)).decode(errors="replace")),
    (ascii, ast.literal_eval),
    (lambda s: ascii(s.encode()), lambda t: ast.literal_eval(t).decode(errors="replace")),
    (lambda s: "".join(f"\\x{b:02x}" for b in s.encode()),
     lambda t: t.encode().decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")),
])
def test_escaped_and_hex_forms_of_a_secret_are_redacted(encode, decode) -> None:  # type: ignore[no-untyped-def]
    secret = "s3cr=t/ké y\"&<value>'😀"
    encoded = encode(secret)
    assert secret in decode(encoded)
    redacted = Redactor({secret: "MY_SECRET"}, []).text(encoded)
    assert secret not in decode(redacted)
    assert "[redacted $MY_SECRET]" in redacted


def test_a_secret_with_line_breaks_and_tabs_is_redacted_where_json_escapes_them() -> None:
    """A key in PEM form in the environment: JSON writes its line breaks and tabs as `\\n`, `\\r`,
    `\\t` (twice over in JSON inside JSON)."""
    secret = "-----BEGIN KEY-----\nMIIEv\tQAB\r\n-----END KEY-----"
    redactor = Redactor({secret: "TLS_KEY"}, [])
    for encoded in (json.dumps({"k": secret}), json.dumps(json.dumps({"k": secret}))):
        redacted = redactor.text(encoded)
        assert "[redacted $TLS_KEY]" in redacted and "MIIEv" not in redacted, encoded


def test_every_string_of_json_data_is_redacted_keys_too() -> None:
    data = {"k": [f"x {SECRET}", {SECRET: 1}, 3, None, True], f"key {SECRET}": f"v{SECRET}"}
    assert REDACTOR.data(data) == {"k": [f"x [redacted ${NAME}]", {f"[redacted ${NAME}]": 1}, 3, None, True],
                                   f"key [redacted ${NAME}]": f"v[redacted ${NAME}]"}


def test_utf8_bytes_are_redacted_as_text_other_bytes_byte_for_byte() -> None:
    redactor = Redactor({"clé-secrète-42": "MY_KEY", SECRET: NAME}, [re.compile(r"INV-\d+")])
    text = f"café INV-12 clé-secrète-42 {SECRET}\n"
    assert redactor.binary(text.encode()) == "café [redacted] [redacted $MY_KEY] [redacted $API_TOKEN]\n".encode()
    assert redactor.binary(text.encode("utf-16-le")) == text.encode("utf-16-le")  # no form of it there
    latin = b"\xff\xfe" + SECRET.encode() + b" INV-12"
    assert redactor.binary(latin) == b"\xff\xfe[redacted $API_TOKEN] INV-12"  # patterns are for text


def test_the_bytes_of_a_file_item_are_redacted_and_a_request_keeps_only_their_digest() -> None:
    from llm_do.runtime.recording.message_data import default_identifier, digested, file_bytes

    raw = f"API_TOKEN={SECRET}\n".encode()
    item = {"kind": "binary", "media_type": "text/plain", "data": base64.b64encode(raw).decode(),
            "identifier": default_identifier(raw), "vendor_metadata": None}
    redacted = REDACTOR.data({"parts": [{"content": ["read this", item]}]})
    kept = redacted["parts"][0]["content"][1]
    assert file_bytes(kept) == f"API_TOKEN=[redacted ${NAME}]\n".encode()
    assert kept["identifier"] == default_identifier(file_bytes(kept) or b"") != item["identifier"]
    png = b"\x89PNG\r\n\x1a\n\x00" + SECRET.encode() + b"\xff\x00"
    assert REDACTOR.binary(png) == b"\x89PNG\r\n\x1a\n\x00" + f"[redacted ${NAME}]".encode() + b"\xff\x00"

    request = [{"parts": [{"part_kind": "tool-return", "content": kept, "content_file_digests": ["3f"]}]}]
    [message] = digested(request)
    part = message["parts"][0]
    assert "content_file_digests" not in part and "data" not in part["content"]
    assert part["content"]["size"] == len(file_bytes(kept) or b"") and len(part["content"]["sha256"]) == 64


def test_blank_lines_and_comments_of_the_patterns_file_are_not_patterns(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "redact.txt").write_text("# invoice numbers\n\n   \n  # indented note\nINV-\\d+\ncust-[0-9]+\n"
                                                   "acct-\\w+\n")
    patterns = project_patterns(tmp_path)
    assert [p.pattern for p in patterns] == ["INV-\\d+", "cust-[0-9]+", "acct-\\w+"]
    assert Redactor({}, patterns).text("INV-12 for cust-7, a note") == "[redacted] for [redacted], a note"


@pytest.mark.parametrize(("text", "problem"), [
    ("# ids\nINV-\\d+\n(unclosed\n", "tests/redact.txt:3: not a regular expression: missing ), unterminated subpattern"),
    ("ok-\\d\n\nx*\n", "tests/redact.txt:3: 'x*' matches the empty text, so it would redact between every two characters"),
])
def test_a_pattern_that_cannot_be_used_names_its_line(tmp_path: Path, text: str, problem: str) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "redact.txt").write_text(text)
    with pytest.raises(RedactionProblem) as caught:
        project_patterns(tmp_path)
    assert str(caught.value).startswith(problem)


def test_a_replay_takes_a_redacted_part_for_whatever_the_live_text_holds_there() -> None:
    from llm_do.runtime.recording.redaction import matches_redacted

    recorded = {"content": f"key [redacted ${NAME}] and [redacted] end", "n": 1, "parts": ["a", "[redacted $X]"]}
    assert matches_redacted(recorded, {"content": f"key {SECRET} and INV-7 end", "n": 1, "parts": ["a", "anything"]})
    assert matches_redacted(recorded, {"content": "key  and  end", "n": 1, "parts": ["a", ""]})
    assert not matches_redacted(recorded, {"content": f"key {SECRET} and INV-7 END", "n": 1, "parts": ["a", "b"]})
    assert not matches_redacted(recorded, {"content": f"key {SECRET} or INV-7 end", "n": 1, "parts": ["a", "b"]})
    assert not matches_redacted(recorded, {"content": "key x and y end", "n": 2, "parts": ["a", "b"]})
    assert not matches_redacted(recorded, {"content": "key x and y end", "n": 1, "parts": ["a"]})
    assert not matches_redacted("plain", "plain ")
    assert not matches_redacted("x[redacted]ab[redacted]ab[redacted]y", "xaby")  # each piece once, in order
    assert matches_redacted("x[redacted]ab[redacted]ab[redacted]y", "xab-aby")
    assert not matches_redacted("ab[redacted]ba", "aba")  # the ends do not overlap
    assert matches_redacted("[redacted]ab[redacted]", "abX")  # a piece right at the start
    assert matches_redacted({f"[redacted ${NAME}]": 1, "b": 2}, {SECRET: 1, "b": 2})
    assert not matches_redacted({"a": 1}, {"b": 1})
    assert not matches_redacted({"a": 1}, {"a": 1, "b": 2}) and not matches_redacted({"a": 1}, [("a", 1)])
    assert not matches_redacted(["a"], "a") and not matches_redacted(1, 2) and matches_redacted(None, None)
    assert not matches_redacted({"[redacted $X]": 1, "[redacted $Y]": 2}, {"p": 1, "q": 3})
    assert matches_redacted({"[redacted $X]": 2, "[redacted $Y]": 1}, {"p": 1, "q": 2})
    assert not matches_redacted({"[redacted $X]": 1, "[redacted $Y]": 1}, {"p": 1, "q": 2})  # one live key each


def test_record_with_a_bad_pattern_is_a_usage_error_naming_its_line(tmp_path: Path) -> None:
    from tests.support.cli import one_line_error, run_cli, worker, write_project

    root = write_project(tmp_path / "proj", {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
        "main.worker": worker("description: m", "main"),
        "s.json": {"workers": {"main": [{"text": "done"}]}},
        "tests/redact.txt": "# ids\nINV-[0-9\n",
    })
    result = run_cli("run", root, "go", "--script", root / "s.json", "--record", root / "rec")
    assert result.exit_code == 2
    assert one_line_error(result).startswith("llm-do: --record: tests/redact.txt:2: not a regular expression: ")
    assert not (root / "rec").exists()

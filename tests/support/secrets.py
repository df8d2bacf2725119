"""Whether a text still gives a secret away in base64: what a redaction test looks for."""

from __future__ import annotations

import base64
import binascii
import re


def base64_holds(text: str, secret: bytes) -> bool:
    """Whether a run of base64 characters in `text` (either alphabet, line breaks and padding skipped),
    read from any of its first four characters, decodes to bytes holding `secret`."""
    for run in re.findall(r"[A-Za-z0-9+/_\-\n\r=]{8,}", text):
        run = re.sub(r"[\n\r=]", "", run).replace("-", "+").replace("_", "/")
        for start in range(4):
            piece = run[start:]
            piece = piece[: len(piece) - 1] if len(piece) % 4 == 1 else piece
            try:
                if secret in base64.b64decode(piece + "=" * (-len(piece) % 4)):
                    return True
            except (binascii.Error, ValueError):
                continue
    return False

"""The results file of a batch (`llm-do batch ... -o RESULTS.jsonl`): what it holds, how a rerun
reads it, and how it grows.

Line 1 is a header naming what the results are for:

    {"llm_do_batch": {"bundle_digest": "sha256:...", "inputs_sha256": "...", "bundle": "bundle.lock", "inputs": "in.jsonl"}}

Every further line is one input's result, `{"line", "output", "error", "usage"}`, appended and
flushed as soon as the input is done, in the order inputs finish. A rerun skips the inputs that
already have a line; a file whose header names another bundle digest or another inputs file
(by content) is refused, never mixed. The header is in the file rather than beside it so that
results copied or moved elsewhere keep saying what they are for.

A process killed while writing can leave a last line without its newline: that line is dropped
(its input runs again). Rewrites (dropping such a line, or the failed lines `--retry-failed` runs
again) replace the file atomically; appends are single writes of whole lines.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import IO, Any, NamedTuple

from llm_do.toolkit.files import atomic_write

from ..errors import InputProblem
from .runs import BatchResult

HEADER_KEY = "llm_do_batch"


class ResultsProblem(InputProblem):
    """A results file this batch must not write to (another batch's, or not a results file):
    exit 2, and the file is left as it is."""


class BatchIdentity(NamedTuple):
    """What a results file is for: the bundle (by digest) and the inputs (by content)."""

    bundle_digest: str
    inputs_sha256: str
    bundle: str
    inputs: str

    @classmethod
    def of(cls, bundle_digest: str, inputs: bytes, bundle_name: str, inputs_name: str) -> BatchIdentity:
        return cls(bundle_digest, hashlib.sha256(inputs).hexdigest(), bundle_name, inputs_name)

    def header(self) -> str:
        return json.dumps({HEADER_KEY: self._asdict()}, sort_keys=True)


class ExistingResults(NamedTuple):
    kept: list[str]
    """The result lines to keep, as they are (without newlines)."""
    succeeded: set[int]
    failed: set[int]
    rewrite: bool
    """The file must be rewritten (a cut last line, or failed lines to run again)."""


def read_results(text: str, identity: BatchIdentity, name: str, retry_failed: bool) -> ExistingResults:
    """What a previous run of this batch left in `text`; a `ResultsProblem` when it was written for
    another batch or is not a results file. Pure, so the rules are tested without files."""
    lines = text.split("\n")
    cut = lines[-1] != ""  # no newline at the end: the last line was being written when the process died
    lines = lines[:-1]
    if not lines:
        return ExistingResults([], set(), set(), rewrite=cut)
    try:
        header = json.loads(lines[0]).get(HEADER_KEY)
    except (ValueError, RecursionError, AttributeError):  # not JSON, or JSON Python cannot hold
        header = None
    if not isinstance(header, dict):
        raise ResultsProblem(f"{name}: not the results file of an llm-do batch (its first line is no batch header); "
                             "give another -o")
    if header.get("bundle_digest") != identity.bundle_digest or header.get("inputs_sha256") != identity.inputs_sha256:
        raise ResultsProblem(f"{name}: {_other_batch(header, identity)}; give another -o, or remove it to start over")
    kept: list[str] = []
    succeeded: set[int] = set()
    failed: set[int] = set()
    for number, raw in enumerate(lines[1:], 2):
        try:
            record = json.loads(raw)
            line = record["line"]
            error = record["error"]
        except (ValueError, RecursionError, KeyError, TypeError):
            raise ResultsProblem(f"{name}:{number}: not a result line of an llm-do batch") from None
        if error is None:
            succeeded.add(line)
        elif retry_failed:
            continue
        else:
            failed.add(line)
        kept.append(raw)
    return ExistingResults(kept, succeeded, failed, rewrite=cut or len(kept) < len(lines) - 1)


def _other_batch(header: dict[str, Any], identity: BatchIdentity) -> str:
    """How the batch a results file was written for differs from this one: the same file changed
    since (edited inputs, a rebuilt bundle) is said so, not called another."""
    if header.get("bundle_digest") != identity.bundle_digest:
        if header.get("bundle") == identity.bundle:
            return (f"written for {identity.bundle} as it was built before ({str(header.get('bundle_digest'))[:19]}); "
                    "the bundle was rebuilt since")
        return (f"written for another bundle ({header.get('bundle')!s} {str(header.get('bundle_digest'))[:19]}, "
                f"inputs {header.get('inputs')!s})")
    if header.get("inputs") == identity.inputs:
        return f"written for {identity.inputs} as it was before: the inputs file was edited since the results were started"
    return f"written for another inputs file ({header.get('inputs')!s})"


class ResultsFile:
    """The results file of one batch run, open for appending."""

    def __init__(self, path: Path, identity: BatchIdentity, retry_failed: bool = False) -> None:
        self.path = path
        try:
            text = path.read_text(encoding="utf-8") if path.exists() else ""
        except (OSError, UnicodeDecodeError) as exc:
            raise ResultsProblem(f"{path}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
        existing = read_results(text, identity, str(path), retry_failed)
        self.succeeded = existing.succeeded
        self.failed = existing.failed
        if not text or existing.rewrite:
            body = [identity.header()] + (existing.kept if text else [])
            try:
                atomic_write(path, "".join(line + "\n" for line in body).encode("utf-8"))
            except OSError as exc:
                raise ResultsProblem(f"{path}: cannot write it ({exc.strerror or exc})") from None
        try:
            self._stream: IO[str] | None = open(path, "a", encoding="utf-8")
        except OSError as exc:
            raise ResultsProblem(f"{path}: cannot write it ({exc.strerror})") from None

    @property
    def done(self) -> set[int]:
        """Inputs a rerun skips."""
        return self.succeeded | self.failed

    def append(self, result: BatchResult) -> None:
        assert self._stream is not None, "the results file is closed"
        self._stream.write(result.to_json() + "\n")
        self._stream.flush()
        (self.succeeded if result.error is None else self.failed).add(result.line)

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None


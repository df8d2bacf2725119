"""One batch process per results file: `llm-do batch -o RESULTS` holds a lock file beside RESULTS
(`.RESULTS.lock`, fcntl.flock) for as long as it writes it, plain or `--durable`. Two processes
appending to one results file would both run every input that has no line yet and write it twice,
so the second is refused (exit 2). The lock goes with the process, however it ends; the file is
removed on release. Without fcntl (Windows) nothing is locked.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

from .errors import CliError, ExitCode

BUSY = "another batch process is writing it"


def hold_results(path: Path, advice: str) -> IO[str] | None:
    """An exclusive lock on RESULTS for this process (None where there is no fcntl); another batch
    process given the same -o is refused with `advice`."""
    try:
        import fcntl
    except ImportError:
        return None
    lock_path = path.with_name(f".{path.name}.lock")
    while True:
        try:
            stream = open(lock_path, "a+", encoding="utf-8")  # noqa: SIM115 - closed by release_results
        except OSError as exc:
            raise CliError(f"{path}: cannot write it ({exc.strerror})", ExitCode.USAGE) from None
        try:
            fcntl.flock(stream, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            stream.close()
            raise CliError(f"{path}: {BUSY}; {advice}", ExitCode.USAGE) from None
        try:
            same = os.fstat(stream.fileno()).st_ino == os.stat(lock_path).st_ino
        except FileNotFoundError:
            same = False
        if same:  # not a lock file its last holder removed while we opened it
            return stream
        stream.close()


def release_results(stream: IO[str] | None) -> None:
    if stream is None:
        return
    Path(stream.name).unlink(missing_ok=True)
    stream.close()

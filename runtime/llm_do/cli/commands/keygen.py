"""`llm-do keygen KEYFILE`: an ed25519 key pair for `build --sign` and `exec --verify`."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ExitCode, usage_problem


@click.command()
@click.argument("key_file", metavar="KEYFILE", type=click.Path(path_type=Path, dir_okay=False))
def keygen(key_file: Path) -> int:
    """Make an ed25519 key pair: KEYFILE, the private key (PEM, readable by you alone), for
    `llm-do build --sign KEYFILE`, and KEYFILE.pub, the public key, for `llm-do exec --verify
    KEYFILE.pub`. Existing files are never replaced. Needs `pip install 'llm-do[sign]'`.
    """
    from llm_do.provenance.signing import generate

    try:
        public = generate(key_file)
    except FileExistsError as exc:
        raise usage_problem(f"{exc.filename or key_file} exists; keygen replaces no key") from None
    except OSError as exc:
        raise usage_problem(f"cannot write {exc.filename or key_file}: {exc.strerror}") from None
    click.echo(f"wrote {key_file} (the private key: keep it secret) and {public} (for `exec --verify`)", err=True)
    return ExitCode.OK

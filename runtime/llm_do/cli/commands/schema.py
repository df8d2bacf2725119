"""`llm-do schema [NAME] [--path]`: the JSON Schemas llm-do ships, for editors and tools."""

from __future__ import annotations

import click

from ..errors import ExitCode
from ..schema_files import SCHEMAS, schema_file, schema_id, schema_text


@click.command()
@click.argument("name", required=False, type=click.Choice(list(SCHEMAS)))
@click.option("--path", "path", is_flag=True, help="Print where the installed copy is, not its text (for an editor's settings).")
def schema(name: str | None, path: bool) -> int:
    """Print the JSON Schema NAME (worker, project, case, cassette, bundle, diff, capabilities);
    without NAME, list them with their $id, the URL a file names to be validated by one."""
    if name is None:
        rows = [(each, schema_id(each), what) for each, what in SCHEMAS.items()]
        widths = [max(len(row[i]) for row in rows) for i in range(2)]
        for each, url, what in rows:
            click.echo(f"{each:<{widths[0]}}  {url:<{widths[1]}}  {what}")
        return ExitCode.OK
    click.echo(str(schema_file(name)) if path else schema_text(name), nl=path)
    return ExitCode.OK

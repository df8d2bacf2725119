"""An option whose value may be left out and is taken only when the next word is one, for
`--durable [DB_URL]`: `exec --durable "a prompt"` and `exec --durable BUNDLE` stay durable runs of
that prompt or bundle, while `--durable sqlite:///runs.db` names the database.

Click's own optional value (`is_flag=False, flag_value=...`) takes any next word that does not start
with a dash. This option keeps that, and gives back to the command's arguments a word its
`accepts` test refuses, as if the option had been given without a value (its `flag_value`). A value
given with `=` (`--durable=WORD`) is always the option's, to be checked like any other."""

from __future__ import annotations

from collections.abc import Callable

import click
import click.parser
from click.parser import _Option, _OptionParser, _ParsingState

Process = Callable[[object, _ParsingState], None]

FLAG_NEEDS_VALUE: object = getattr(click.parser, "FLAG_NEEDS_VALUE", None) or getattr(click.parser, "_flag_needs_value", None)
"""Click's "given without a value" marker: `click._utils.FLAG_NEEDS_VALUE` since 8.3 (the parser
imports it), `click.parser._flag_needs_value` in 8.2, the lowest version the bounds allow."""
assert FLAG_NEEDS_VALUE is not None, "this click has no marker for an option given without a value"


class OptionalValueOption(click.Option):
    """A subclass says which words are values (`accepts`, a static method); declare the option with
    `is_flag=False, flag_value=...`."""

    accepts: Callable[[str], bool]

    def add_to_parser(self, parser: _OptionParser, ctx: click.Context) -> None:
        """Click has no public hook between reading an option's value and storing it: this wraps the
        parser's record of the option (and notes, per option token, whether it carried `=VALUE`)."""
        if self.is_flag or not self._flag_needs_value:
            raise TypeError(f"{self.name}: an optional value needs is_flag=False and a flag_value")
        super().add_to_parser(parser, ctx)
        with_equals = [False]
        read_option = parser._process_opts

        def noting(arg: str, state: _ParsingState) -> None:
            with_equals[0] = "=" in arg and arg.partition("=")[0] in self.opts
            read_option(arg, state)

        setattr(parser, "_process_opts", noting)  # noqa: B010  (an instance's method, replaced)
        for name in self.opts:
            registered: _Option = parser._long_opt.get(name) or parser._short_opt[name]
            setattr(registered, "process", self._giving_back(registered.process, with_equals))  # noqa: B010

    def _giving_back(self, process: Process, with_equals: list[bool]) -> Process:
        def giving_back(value: object, state: _ParsingState) -> None:
            if isinstance(value, str) and not with_equals[0] and not self.accepts(value):
                state.rargs.insert(0, value)  # an argument of the command, not this option's value
                value = FLAG_NEEDS_VALUE
            process(value, state)

        return giving_back

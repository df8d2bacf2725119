"""An option whose value may be left out and is taken only when the next word is one, for
`--durable [DB_URL]`: `exec --durable "a prompt"` and `exec --durable BUNDLE` stay durable runs of
that prompt or bundle, while `--durable sqlite:///runs.db` names the database.

Click's own optional value (`is_flag=False, flag_value=...`) takes any next word that does not start
with a dash. This option keeps that, and gives back to the command's arguments a word its
`accepts` test refuses, as if the option had been given without a value (its `flag_value`). A value
given with `=` (`--durable=WORD`) is always the option's, to be checked like any other."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
from click.parser import FLAG_NEEDS_VALUE


class OptionalValueOption(click.Option):
    """`accepts(word)`: whether the word after the option is its value."""

    def __init__(self, *args: Any, accepts: Callable[[str], bool], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.is_flag or not self._flag_needs_value:
            raise TypeError("an optional value needs is_flag=False and a flag_value")
        self.accepts = accepts

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        """Click has no public hook between reading an option's value and storing it: this wraps the
        parser's record of the option (and notes, per option token, whether it carried `=VALUE`)."""
        super().add_to_parser(parser, ctx)
        with_equals = [False]
        read_option = parser._process_opts

        def noting(arg: str, state: Any) -> None:
            with_equals[0] = arg.partition("=")[0] in self.opts and "=" in arg
            read_option(arg, state)

        parser._process_opts = noting
        for name in self.opts:
            registered = parser._long_opt.get(name) or parser._short_opt.get(name)
            registered.process = self._giving_back(registered.process, with_equals)

    def _giving_back(self, process: Callable[[Any, Any], None], with_equals: list[bool]) -> Callable[[Any, Any], None]:
        def giving_back(value: Any, state: Any) -> None:
            if isinstance(value, str) and not with_equals[0] and not self.accepts(value):
                state.rargs.insert(0, value)  # an argument of the command, not this option's value
                value = FLAG_NEEDS_VALUE
            process(value, state)

        return giving_back

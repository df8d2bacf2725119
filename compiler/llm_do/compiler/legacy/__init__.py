"""The `.agent` era of llm-do: `upgrade` reads its names as today's while a project builds (with
the L codes), `migrate` rewrites a project's files into today's format for `llm-do migrate`."""

"""The `llm-do` command. Subcommands are imported when invoked, so `llm-do exec` never loads the
compiler and `llm-do build` never loads pydantic-ai."""

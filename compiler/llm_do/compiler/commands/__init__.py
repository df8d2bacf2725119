"""The compiler's CLI commands, one module each; registered lazily in `llm_do.cli.main`."""

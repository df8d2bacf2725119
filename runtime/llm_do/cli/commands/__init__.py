"""The commands of `llm-do`, one module each (`runs` holds the durable-run commands); registered lazily in
`llm_do.cli.main`, so a command loads only what it uses."""

"""The approvals language: parsing (`grammar` into `nodes`), checking conditions against each
tool's parameters (`params`, `check`), what the rules do to each tool (`effect`) and lowering to
the bundle's condition trees (`lower`). Evaluation at run time is `llm_do.bundle.approval`."""

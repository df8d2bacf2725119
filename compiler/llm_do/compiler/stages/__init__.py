"""The pipeline, a module a stage: load -> parse -> introspect -> resolve -> check -> render -> lower -> emit.

`resolve` builds the records of `resolved` (with `resolve_toolsets` and `resolve_entry`); `check`
is a package of rules, one module each.
"""

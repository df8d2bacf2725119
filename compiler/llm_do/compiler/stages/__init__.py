"""The pipeline, a module a stage: load -> parse -> introspect -> resolve -> check -> lower -> emit."""

"""The parse stage's helpers: reading project files as text, YAML and JSON with positions, the
format's models (`manifest`, `front_matter`) and their validation, the reader's limits.

Nothing here knows about other workers or the project as a whole; the stages (`stages/`) do.
"""

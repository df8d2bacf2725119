"""`llm-do diff`: two bundle documents compared by meaning (spec/diff.md).

The entry is `bundle.diff_bundles`; beside it, one module per cause of a change: `capabilities`,
`flows`, `code`, `schemas`, `mcp` and `cost`, all saying a `change.Change`, which `entries` groups
one entry per cause. `unread` and `unread_sides` are what a `--no-import` side could not see;
`positions` where each cause is written; `inputs` where a side comes from (a lock, a project, a
git revision; `capabilities` reads it too) and `committed_lock` whether a side's lock is its build.
"""

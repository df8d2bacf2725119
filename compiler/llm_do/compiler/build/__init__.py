"""A lock made the fastest way that gives a clean build's bytes, above the pipeline that compiles:
recalled from a build record (`lock_check.compile_recorded` keeps one), rebuilt from the last lock
after edits local to a worker (`local_edits`, `front_matter_edits`), or compiled; `build --check`
(`lock_check`), and a lint answered from its record (`lint_record`).
"""

"""`llm-do test`: a project's cases (tests/*.yaml), run against a scratch copy of the project with
the model's turns from a cassette, a script or (with --live) the project's models."""

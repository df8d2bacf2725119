"""What tools and toolsets are written against: the leaves both the stdlib's toolsets and the
runtime need, so that neither imports the other for them.

- `hooks`: what a toolset may tell the approval gate (`ToolsetHooks`).
- `tool_args`: tool arguments validated by a pydantic model (`ModelArgsValidator`).
- `tool_threads`: where blocking tools run (`run_blocking`, `abandonable_tools`).
- `files`: path confinement below a root, and the one atomic file writer.
- `processes`: a run's child processes, and whether a process is alive.
- `user_code`: how a project's Python files become modules.

The stdlib imports only this package and the bundle format; the runtime imports the stdlib to
build the built-in toolsets. Nothing here imports the runtime, the stdlib or the compiler, nor
pydantic-ai's Agent (`tests/test_import_layers.py` checks it); `hooks` names the approval
vocabulary for type checkers only.
"""

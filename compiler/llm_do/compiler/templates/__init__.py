"""Worker bodies as Jinja templates, rendered at build time (`render`): the sandbox they run in
(`sandbox`), the nesting limits read from their AST (`limits`) and where an include is searched
for (`search`).

Imports nothing here: Jinja loads only when a body has template syntax.
"""

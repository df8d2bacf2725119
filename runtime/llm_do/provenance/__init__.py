"""Where a lock came from: the records `llm-do build` keeps of what each lock was built from, and
the signatures that say who built one.

- `user_cache`: signed JSON entries in the user's cache (the records live there).
- `tree_listing`, `import_checks`: what a record checks still holds (the project's names, the
  Python an import found).
- `build_record`: the build records themselves, kept by the compiler and read by `build --check`,
  `lint` and every run (`lock_sources`).
- `lock_sources`: whether a lock is the build of the sources beside it, as far as the records can
  tell without compiling.
- `signing`: ed25519 signatures of a lock (`build --sign`, `exec --verify`), with `cryptography`.

Standard library only (and `cryptography` in `signing`, loaded when used), below the compiler and
the runtime alike: a run answers "is this the lock `build` wrote here?" without loading the compiler.
"""

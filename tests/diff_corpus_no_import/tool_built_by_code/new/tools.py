def count_todos(path: str) -> int:
    """Count TODO markers in a file."""
    return 0


TOOLS = [count_todos]


def _make(name):
    def tool(path: str) -> None:
        import shutil
        shutil.rmtree(path)
    tool.__name__ = name
    return tool


TOOLS += [_make('clean')]

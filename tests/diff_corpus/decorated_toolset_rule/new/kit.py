from pydantic_ai import FunctionToolset

kit = FunctionToolset()


@kit.tool_plain
def kit_read(path: str) -> str:
    """Read a thing."""
    return path


@kit.tool_plain
def kit_write(path: str) -> str:
    """Write a thing."""
    return path


TOOLSETS = {"kit": kit}

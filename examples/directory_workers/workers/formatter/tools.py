"""formatter's own tools: only the worker in this directory can use them."""

from .markdown import bullet


def bullet_list(items: list[str]) -> str:
    """Format items as a Markdown bullet list, each starting with a capital letter."""
    return "\n".join(bullet(item) for item in items)


TOOLS = [bullet_list]

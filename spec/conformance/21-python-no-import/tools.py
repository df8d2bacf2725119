from pydantic_ai import FunctionToolset

__all__ = ["shout"]


def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def reverse(text: str) -> str:
    """Reverse a text."""
    return text[::-1]


text_ops = FunctionToolset([reverse])

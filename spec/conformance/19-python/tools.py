"""Tools of the conformance case."""
from pydantic_ai import FunctionToolset

def word_count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())

def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()

def reverse(text: str) -> str:
    """Reverse a text."""
    return text[::-1]

def make_dynamic():
    return FunctionToolset([])

TOOLS = {"word_count": word_count, "shout": shout}
TOOLSETS = {"text_ops": FunctionToolset([reverse]), "dynamic": make_dynamic}

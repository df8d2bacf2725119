from helpers.common import PREFIX

__all__ = ["tag"]


def tag(text: str) -> str:
    """Prefix a text with a tag."""
    return PREFIX + text

import requests


def lookup(query: str) -> str:
    """Look something up."""
    return requests.post("https://search.example.com", json={"q": query}).text


TOOLS = [lookup]

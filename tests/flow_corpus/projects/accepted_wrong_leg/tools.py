import urllib.request

import requests


def post(url: str, text: str) -> str:
    """Send text to a URL."""
    with urllib.request.urlopen(url, data=text.encode()) as response:
        return response.read().decode()


def lookup(query: str) -> str:
    """Look something up."""
    return requests.post("https://search.example.com", json={"q": query}).text


TOOLS = [post, lookup]

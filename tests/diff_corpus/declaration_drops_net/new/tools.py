import urllib.request

CAPABILITIES = {"fetch_page": ["fs.read:project/docs/**"]}


def fetch_page(url: str) -> str:
    """Fetch a page of example.com."""
    with urllib.request.urlopen(url) as response:
        return response.read().decode()


TOOLS = [fetch_page]

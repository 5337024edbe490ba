"""A small MCP server written with the Python `mcp` SDK (2.x, both protocol
revisions), for the gateway tests: `python py_server.py` speaks over stdio."""

from mcp.server import MCPServer

mcp = MCPServer("warden-test-py")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.tool()
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


NOTED: list[str] = []


@mcp.tool()
def note(text: str) -> str:
    """Keep a note; says how many this server kept, so a test sees each run."""
    NOTED.append(text)
    return f"noted {len(NOTED)}: {text}"


if __name__ == "__main__":
    mcp.run()

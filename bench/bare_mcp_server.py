"""The baseline for mcp_bench.py: an MCP SDK server with one tool and nothing else, over stdio."""

from mcp.server import MCPServer

server = MCPServer("bare")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


if __name__ == "__main__":
    server.run()

"""recall: local-first memory for AI coding agents.

Importing this package stays light on purpose (no SQLAlchemy, numpy, onnxruntime or mcp):
`recall --help` and agent hooks must start fast. Heavy modules load when first used.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]

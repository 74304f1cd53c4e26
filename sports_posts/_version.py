"""The SDK's version, sent in the User-Agent."""

__version__ = "0.1.0"
"""The version of the installed SDK, as sent in the ``User-Agent`` header."""

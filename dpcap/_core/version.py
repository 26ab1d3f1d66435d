"""dpcap's version, read once from the installed package's metadata (pyproject.toml's)."""

from __future__ import annotations

from importlib import metadata

__all__ = ["VERSION"]

try:
    VERSION: str = metadata.version("dpcap")
except metadata.PackageNotFoundError:  # a source tree that was never installed
    VERSION = "0+unknown"

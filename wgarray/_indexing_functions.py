"""_indexing_functions (being written)."""
from __future__ import annotations

__all__: list[str] = []

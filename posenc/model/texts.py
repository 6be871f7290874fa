"""The default texts of the "Inside a real model" pages (posenc/data/texts/README.md says where each comes from)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from posenc._validate import check_choice

FOLDER = Path(__file__).resolve().parents[1] / "data" / "texts"
PASSAGES = {"alice": "Alice (Carroll, 1865)", "lighthouse": "The lighthouse (written here)"}  # labels; sources in the README there
# The Order page's two sentences (written for posenc): the same words, the roles of dog and man swapped.
ORDER_A = "The dog bit the man. The man bit the"
ORDER_B = "The man bit the dog. The dog bit the"
INDUCTION = "induction"


@lru_cache(maxsize=8)
def text(name: str) -> str:
    """A bundled text by name: a passage of PASSAGES, or "induction" (a repeated list of unrelated words)."""
    check_choice("name", name, (*PASSAGES, INDUCTION))
    return (FOLDER / f"{name}.txt").read_text("utf-8").strip()

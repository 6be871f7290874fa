"""``python -m deploy.worker APP [streamlit run options]``: one worker of ``python -m deploy``.

It imports everything a page can import and installs ``posenc.ui.compat``'s process-wide workarounds
(``deploy.warm.warm``) *before* Streamlit listens, so the worker's ``/_stcore/health`` answers "ok" only once
no first run can race an import (issue 41, R2), then runs ``streamlit run APP ...`` in the same process.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from deploy.warm import warm  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    logging.disable(logging.WARNING)  # "No runtime found" for every st.cache_data made before the server exists
    try:
        info = warm()
    finally:
        logging.disable(logging.NOTSET)
    failed = "; ".join(f"{k}: {v}" for k, v in info["failed"].items()) or "none"
    print(f"[worker] warm: {info['modules']} modules imported in {info['seconds']:.1f} s; failed: {failed}", flush=True)
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", *args]
    cli.main(prog_name="streamlit")


if __name__ == "__main__":
    main()

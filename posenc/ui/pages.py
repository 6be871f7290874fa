"""The one list of dashboard pages: app.py registers it with st.navigation, the tests import it.

Plain data, no Streamlit import, so tests and benchmarks can read it cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass

from posenc.registry import SCHEMES


@dataclass(frozen=True)
class PageInfo:
    path: str  # file under pages/, relative to the repository root
    title: str
    icon: str  # a Material icon
    section: str  # navigation section ("" = top, no header)
    url_path: str  # == the file's stem, so Streamlit's legacy pages/ router finds the same page
    summary: str  # one line for the landing page


PAGES: tuple[PageInfo, ...] = (
    PageInfo("pages/home.py", "Start here", ":material/home:", "", "home",
             "The wishlist for a positional signal, and a map of this dashboard."),
    PageInfo("pages/attention_order.py", "Attention needs order", ":material/shuffle:", "Why order", "attention_order",
             "The dog bit the man = the man bit the dog, until positions enter."),
    PageInfo("pages/raw_index.py", "1 · Raw index", ":material/trending_up:", "Naive attempts", "raw_index",
             "Add t itself: unbounded, 10^6 in the residual stream."),
    PageInfo("pages/index_length.py", "2 · Index / length", ":material/straighten:", "Naive attempts", "index_length",
             "Divide by L: the same position changes with the prompt."),
    PageInfo("pages/single_sine.py", "3 · A single sine", ":material/waves:", "Naive attempts", "single_sine",
             "sin(t): bounded and smooth, but it repeats."),
    PageInfo("pages/sincos_pair.py", "4 · One sin+cos pair", ":material/radio_button_unchecked:", "Naive attempts", "sincos_pair",
             "A point on a circle: unique within a turn, not across turns."),
    PageInfo("pages/sinusoid.py", "The sinusoid", ":material/graphic_eq:", "The sinusoid", "sinusoid",
             "Many frequencies: the heatmap, the wavelengths, Hello World, and PE(p+k) = M_k PE(p)."),
    PageInfo("pages/learned.py", "Learned tables", ":material/table_chart:", "Schemes", "learned",
             "A real BERT-family table, its structure, and what happens at row 512."),
    PageInfo("pages/relative_bias.py", "Relative biases", ":material/linear_scale:", "Schemes", "relative_bias",
             "Biases on the attention logits: T5's buckets, ALiBi's slopes, Kerple's kernel, FIRE's MLP."),
    PageInfo("pages/rope.py", "RoPE", ":material/rotate_right:", "Schemes", "rope",
             "Rotate queries and keys: the score depends only on the offset; xPos, p-RoPE, randomized positions."),
    PageInfo("pages/context_extension.py", "Context extension", ":material/open_in_full:", "Schemes", "context_extension",
             "PI, NTK-aware, dynamic NTK, YaRN, Llama 3 and LongRoPE, measured, beside your own model."),
    PageInfo("pages/precision.py", "Precision at long context", ":material/speed:", "Schemes", "precision",
             "RoPE in float32, float16 and bfloat16 against float64, out to 10^6 positions."),
    PageInfo("pages/similarity.py", "Similarity matrices", ":material/grid_on:", "Compare", "similarity",
             "Position-score matrices side by side, and how relative each one is."),
    PageInfo("pages/compare.py", "Compare schemes", ":material/table_view:", "Compare", "compare",
             "The comparison table, every column measured."),
    PageInfo("pages/claims.py", "The articles' claims", ":material/fact_check:", "Compare", "claims", "Each article claim measured, with a verdict."),
    PageInfo("pages/lab.py", "Extrapolation lab", ":material/science:", "Compare", "lab",
             "Tiny transformers trained at L, measured to 8L against an exact floor."),
    PageInfo("pages/real_order.py", "Order, for real", ":material/swap_horiz:", "Inside a real model", "real_order",
             "SmolLM2-135M tells the dog from the man; without positions, much less."),
    PageInfo("pages/real_heads.py", "What the heads do", ":material/visibility:", "Inside a real model", "real_heads",
             "Every head of a real model classified by where it looks, and the rotation pairs each kind uses."),
    PageInfo("pages/real_relative.py", "Relative, for real", ":material/moving:", "Inside a real model", "real_relative",
             "Shift every position by up to 10^6: exact in float64, drifting in bfloat16 and float16."),
    PageInfo("pages/real_extension.py", "What an extension costs", ":material/compress:", "Inside a real model", "real_extension",
             "PI, NTK-aware, YaRN and Llama 3 at factors 2, 4, 8 on text the model already handles."),
)

PAGE_BY_PATH = {p.path: p for p in PAGES}
HOME = PAGES[0].path  # served at /


def address(info: PageInfo) -> str:
    """The path a browser opens ``info`` at: "" for the landing page (served at "/" only: "/home" shows Streamlit's
    "Page not found" dialog over it), else its url_path."""
    return "" if info.path == HOME else info.url_path

# Which page explains each registered scheme: the registry entry says (Scheme.page).
SCHEME_PAGE: dict[str, str] = {key: scheme.page for key, scheme in SCHEMES.items()}


def sections() -> dict[str, list[PageInfo]]:
    """Pages grouped by navigation section, in order."""
    out: dict[str, list[PageInfo]] = {}
    for p in PAGES:
        out.setdefault(p.section, []).append(p)
    return out

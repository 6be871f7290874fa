"""T5 relative buckets, ALiBi slopes, Kerple's kernel and FIRE's MLP: position as a bias on the attention logits."""

from functools import partial

import streamlit as st

from posenc.analysis.scores import dense_scores, position_scores
from posenc.charts.base import style
from posenc.charts.compare import offset_profiles, score_matrices, score_panels
from posenc.charts.relative import alibi_heads_chart, bucket_function_chart, bucket_matrix_chart, slopes_chart
from posenc.registry import get_scheme
from posenc.schemes.relative import alibi_bias, alibi_offset_bias, alibi_slopes, t5_bucket, t5_bucket_matrix
from posenc.ui import controls
from posenc.ui.cache import safe
from posenc.ui.frame import chart, chart_grid, exercise, header, quiz_value, show_code, table, wrap_up
from posenc.ui.quiz import quiz_column, quiz_figure
from posenc.ui.section import section
from posenc.views.reference import alibi_slopes_reference, check_alibi_slopes
from posenc.views.relative import (
    alibi_heads_view,
    alibi_slopes_before_reveal,
    alibi_slopes_view,
    t5_before_reveal,
    t5_distance_choices,
    t5_view,
)
from posenc.views.similarity import side_by_side
from posenc.views.takeaways import relative_takeaway

PATH = "pages/relative_bias.py"
header(
    PATH,
    "None of these schemes adds anything to the token embeddings: each adds a number to every attention logit that "
    "depends on how far the key is from the query. T5 learns one scalar per head for each **bucket** of distances; ALiBi "
    "subtracts a fixed **slope × distance**; Kerple bends that line into a logarithm; FIRE learns the whole curve. "
    "**Look at** where T5's exact buckets end, and at ALiBi's penalty still growing past the training length.",
)

st.subheader("T5: relative-position buckets", anchor=False)
st.latex(get_scheme("t5").formula)
@section(PATH)
def t5_section() -> None:
    """T5's four controls rerun only this section."""
    c = st.columns([3, 1])
    spec = {p.name: p for p in get_scheme("t5").params}  # the registry's ranges; max distance as a log-spaced preset list
    cc = c[0].columns(3)
    t5 = {"bidirectional": controls.param(spec["bidirectional"], key="t5_bidirectional", container=cc[0]),
          "num_buckets": controls.slider(spec["num_buckets"].label, "t5_num_buckets", default=spec["num_buckets"].default,
                                         lo=int(spec["num_buckets"].lo), hi=int(spec["num_buckets"].hi), container=cc[1])}
    t5["max_distance"] = controls.select_slider(spec["max_distance"].label, "t5_max_distance",  # must exceed the exact range
                                                t5_distance_choices(t5["num_buckets"], t5["bidirectional"]),
                                                default=spec["max_distance"].default, container=cc[2])
    n = controls.select_slider("sequence length (matrix)", "t5_n", [16, 32, 64, 128, 256, 512, 1024, 2048], default=128, container=c[1])
    view = safe(t5_view, t5["bidirectional"], t5["num_buckets"], t5["max_distance"], n)
    if view is not None:
        m = st.columns(4)
        m[0].metric("exact buckets per side", f"{view['max_exact']}", help="|rel| < max_exact gets its own bucket: num_buckets // 4 "
                    "(bidirectional) or num_buckets // 2 (causal)")
        m[1].metric("log-spaced buckets per side", f"{view['half'] - view['max_exact']}")
        m[2].metric("last bucket starts at |rel| =", f"{view['last_start']}")
        m[3].metric("bucket ids used", f"{view['buckets_used']} of {t5['num_buckets']}",
                    help="never produced: " + (", ".join(map(str, view["unused"][:12])) or "none"))
        exercise("t5_rel", f"Predict from the formula and the counts above: which bucket does rel = {view['exercise_rel']} "
                 "(the key 20 tokens before the query) fall in?", answer=view["exercise_bucket"],
                 explanation=f"{view['max_exact']} exact buckets cover |rel| < {view['max_exact']}; beyond that, buckets grow "
                 "logarithmically, so 20 shares its bucket with its neighbours (see the table). Computed by posenc.t5_bucket.")
        shown = [quiz_figure("t5_rel", "t5_buckets", "bucket"), quiz_figure("t5_rel", "t5_matrix", "bucket"),
                 quiz_column("t5_rel", "bucket")]
        if not (whole := all(shown)):  # the buckets of |rel| >= hidden_from (one of them the answer) wait for the reveal
            view = t5_before_reveal(view)
            st.caption(f"The buckets of |rel| ≥ {view['hidden_from']} (bars, table rows, matrix cells) appear once you reveal.")
        left, right = st.columns([3, 2])
        with left:
            chart(style(bucket_function_chart(view["segments"], max_exact=view["max_exact"], max_distance=t5["max_distance"],
                                              bidirectional=t5["bidirectional"])),
                  key="t5_buckets", data=view["segments"],
                  caption="Each bar spans the relative positions that share one bucket (one learned scalar per head). "
                  f"Dashed: |rel| = {view['max_exact']} (exact buckets end) and max_distance = {t5['max_distance']}; the last "
                  "bar is drawn to 2 × max_distance but goes on forever."
                  + ("" if t5["bidirectional"] else " Causal: every future key (rel > 0) shares bucket 0, and the mask hides it anyway."))
        with right:
            chart(style(bucket_matrix_chart(view["matrix"], step=view["step"], num_buckets=t5["num_buckets"])), key="t5_matrix",
                  data=view["matrix"],
                  arrays={"t5_buckets": partial(t5_bucket_matrix, n, bidirectional=t5["bidirectional"],
                                                num_buckets=t5["num_buckets"], max_distance=t5["max_distance"])} if whole else None,
                  caption=f"bucket(j − i) for {view['n']} positions"
                  + (f", one row and column in {view['step']} drawn." if view["step"] > 1 else ".")
                  + " Constant along every diagonal: only the offset matters.")
        table(view["ranges"][["bucket", "covers", "side", "kind"]], key="t5_buckets", height=280)


t5_section()

st.subheader("ALiBi: a straight-line penalty per head", anchor=False)
st.latex(get_scheme("alibi").formula)
@section(PATH)
def alibi_section() -> None:
    """ALiBi's four controls rerun only this section (and the code check, which uses its head count)."""
    c = st.columns(4)
    heads = controls.slider("heads H", "heads", default=12, lo=1, hi=128, container=c[0])
    slopes = safe(alibi_slopes_view, heads)
    asked = slopes["exercise_head"] if slopes is not None else None  # its numbers wait for the exercise's reveal
    told = all([quiz_figure("alibi_slope", "alibi_slopes", "slope"), quiz_column("alibi_slope", "m")])
    choices = [h for h in range(1, heads + 1) if told or h != asked]  # empty: one head, the asked one
    head = controls.in_chart("head shown", "head", choices, default=1, container=c[1]) if choices else None
    c[1].caption("Head shown: the control under the bias matrix below (it repaints in the browser)."
                 + ("" if told or asked is None else f" Head {asked}'s matrix waits for the exercise's reveal."))
    train_len = controls.select_slider("training length L", "train_len", [16, 32, 64, 128, 256, 512, 1024], default=128, container=c[2])
    causal = controls.param(get_scheme("alibi").params[0], key="causal", container=c[3])
    if slopes is not None:
        rule = (f"{heads} is a power of two, so the slopes are the geometric sequence 2^(−8/{heads}), 2^(−16/{heads}), …, 2^(−8)."
                if slopes["extra"] == 0 else
                f"{heads} is not a power of two: heads 1–{slopes['power']} take the {slopes['power']}-head sequence "
                f"2^(−8k/{slopes['power']}), and heads {slopes['power'] + 1}–{heads} take every other slope (the 1st, 3rd, …) "
                f"of the {2 * slopes['power']}-head sequence, appended at the end (Press et al.'s get_slopes).")
        st.markdown(rule)
        exercise("alibi_slope", f"Predict from the rule above: with {heads} heads, what slope m does head {asked} get? "
                 "Its bar, its row and its matrix wait for the reveal.", answer=round(slopes["exercise_slope"], 5), tolerance=5e-5,
                 explanation=f"m = 2^−{slopes['exercise_neg_log2']:.4g} = {slopes['exercise_slope']:.5f} (the rule above); "
                 "computed by posenc.alibi_slopes.")
        frame = slopes["frame"] if told else alibi_slopes_before_reveal(slopes["frame"], asked)
        left, right = st.columns([3, 2])
        with left:
            chart(style(slopes_chart(frame)), key="alibi_slopes", data=frame,
                  caption="Slope m per head: a steep head only looks nearby, a shallow one far away.")
        with right:
            table(frame, key="alibi_slopes", height=300, labels={"slope": "m", "neg_log2": "−log2 m"}, formats={"slope": ".6g", "neg_log2": ".4g"})

    mat = safe(alibi_heads_view, heads, head.param.value, train_len, causal) if head is not None else None
    if mat is not None:
        m = st.columns(2)
        m[0].metric("positions drawn, n = 4L", f"{mat['n']:,}")
        m[1].metric("cells masked (−∞)", f"{mat['masked_share']:.1%}")
        shown = lambda h, text: quiz_value("alibi_slope", text) if h == asked else text  # noqa: E731
        titles = [[f"head {h} of {heads}: slope m = {shown(h, f'{s:.6g}')}", f"bias at distance L = {mat['train_len']}: {shown(h, f'{b:.4g}')}",
                   f"bias at distance 4L − 1 = {mat['n'] - 1}: {shown(h, f'{f:.4g}')}"]
                  for h, s, b, f in mat["heads"][["head", "slope", "bias_at_train", "bias_far"]].itertuples(index=False)]
        chart(style(alibi_heads_chart(mat["frame"], slopes=mat["slopes"], head=head, step=mat["step"], n=mat["n"],
                                      train_len=mat["train_len"], titles=titles)),
              key="alibi_matrix", data=mat["frame"],
              arrays={"alibi_bias": partial(dense_scores, "alibi", mat["n"], n_heads=heads, head=mat["head"] - 1, causal=causal)},
              caption=f"Bias of the chosen head for {mat['n']} positions = 4 × the training length (dashed at L = "
              f"{mat['train_len']})" + (f"; one row and column in {mat['step']} drawn" if mat["step"] > 1 else "")
              + (". Grey cells are masked (−∞): the key comes after the query." if causal else ". Symmetric: −m·|i − j|, no mask.")
              + " Every head draws the same picture on its own scale (the legend): the penalty keeps growing linearly past L, "
              "nothing new appears, far keys just fade. The CSV and .npy hold the head in the address bar.")

    show_code(t5_view, t5_bucket, t5_bucket_matrix, alibi_slopes_view, alibi_slopes, alibi_heads_view, position_scores,
              alibi_bias, alibi_offset_bias, reference=alibi_slopes_reference, check=partial(safe, check_alibi_slopes, heads))


alibi_section()

st.subheader("Kerple: ALiBi's line, bent into a logarithm", anchor=False)
st.latex(get_scheme("kerple").formula)
@section(PATH)
def kerple_section() -> None:
    """Kerple's two scalars rerun only this section."""
    c, spec = st.columns(3), {p.name: p for p in get_scheme("kerple").params}
    r = {k: controls.param(spec[k], key=f"kerple_{k}", container=c[i]) for i, k in enumerate(("r1", "r2"))}
    n = controls.select_slider("positions n", "kerple_n", [16, 32, 64, 128, 256, 512, 1024], default=32, container=c[2])
    # both without the causal mask, so both lines cover j > i (the registry's ALiBi masks it by default)
    view = safe(side_by_side, ("alibi", "kerple"), n, 64, "dot", 0, params=(("alibi", (("causal", False),)), ("kerple", tuple(r.items()))))
    if view is not None:
        m = st.columns(2)
        for col, f in zip(m, view["facts"]):
            col.metric(f"{f['name']}: bias at distance {n - 1}", f"{f['far']:.4g}")
        chart(style(offset_profiles(view["offsets"], view["names"])), key="kerple_profile", data=view["offsets"],
              caption=f"The bias against the offset j − i: ALiBi's head 1 of 8 (slope ½) beside Kerple at r₁ = {r['r1']:g}, "
              f"r₂ = {r['r2']:g} (both scalars are learned per head; the authors initialise r₁ ~ U(0, 2), r₂ ~ U(0, 1)). "
              "**Look at** where the two part: Kerple starts with slope r₁·r₂ and flattens, so a far "
              "key is penalised far less than by a straight line. Both depend on |j − i| only, and both are drawn without "
              "a mask: a language model masks every j > i for either.")


kerple_section()

st.subheader("FIRE: a learned function of a normalised distance", anchor=False)
st.latex(get_scheme("fire").formula)
@section(PATH)
def fire_section() -> None:
    """FIRE's threshold, length and head rerun only this section."""
    c = st.columns(4)
    L = controls.select_slider("threshold L", "fire_L", [16.0, 64.0, 256.0, 512.0, 2048.0], default=64.0, container=c[0])
    n = controls.select_slider("positions n", "fire_n", [64, 128, 256, 512, 1024], default=256, container=c[1])
    h = controls.slider("head", "fire_head", default=1, lo=1, hi=8, container=c[2])
    seed = controls.number("seed", "fire_seed", default=0, lo=0, hi=10_000, container=c[3])
    view = safe(side_by_side, ("fire",), n, 64, "dot", h - 1, params=(("fire", (("threshold", L), ("seed", seed))),))
    if view is not None:
        f = view["facts"][0]
        m = st.columns(2)
        m[0].metric(f"offset-only at n = {n:,} (declared)", "yes" if f["offset_only"] else f"no: queries past L = {L:g}",
                    help="FIRE declares its score offset-only for positions 0 … n − 1 when n − 1 ≤ L; the contract test checks it")
        m[1].metric("deviation from translation invariance", "—" if f["translation_invariance"] is None
                    else f"{f['translation_invariance']:.3g}", help="0: the bias depends on j − i only")
        chart_grid([style(p) for p in score_panels(view["frame"], view["panels"])],
                   whole=lambda: style(score_matrices(view["frame"], view["panels"], columns=1)), key="fire_matrix",
                   data=view["frame"], columns=1,
                   caption=f"Head {h} of an untrained FIRE (the authors' initialisation: PyTorch's default for the MLP, "
                   f"c = 0.1; seed {seed}) at {n} positions. **Look at** the diagonals: up to row L = {L:g} each holds one "
                   "colour (the normaliser is ψ(L), so only |i − j| matters); past it the normaliser grows with the query's "
                   "position and the same distance maps to a smaller input. The Extrapolation lab trains FIRE.")


fire_section()

if (takeaway := safe(relative_takeaway)) is not None:
    wrap_up(PATH, takeaway)

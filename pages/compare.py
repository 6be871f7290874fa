"""Page 12: the comparison table, every column measured."""

import streamlit as st

from posenc.analysis.compare import BOUND_RATIO, FAR, NEAR, RELATIVE_TOL, measure_scheme
from posenc.analysis.geometry import closest_pair, growth, length_dependence
from posenc.analysis.scores import translation_invariance
from posenc.analysis.tables import measure_table
from posenc.charts.base import style
from posenc.charts.compare import measured_dot_panels, measured_dots, wishlist_table
from posenc.lab.experiment import LONGER, LabConfig
from posenc.lab.results import HOLDS, VERDICT_RULE, task_title
from posenc.ui import controls, uploads
from posenc.ui.cache import safe
from posenc.ui.frame import chart, chart_grid, exercise, header, show_code, table, wrap_up
from posenc.ui.pages import PAGE_BY_PATH, SCHEME_PAGE
from posenc.ui.quiz import ask_first, quiz_figure, quiz_table
from posenc.views.claims import article_table
from posenc.views.compare import LENGTH_TOL, WISHLIST, comparison, lab_tasks, marks_frame, wishlist_names, with_rows
from posenc.views.lab_predict import claims_quiz, without_verdicts
from posenc.views.takeaways import compare_takeaway

PATH = "pages/compare.py"
LENGTHS = [64, 128, 256, 512, 1024]
TASKS = lab_tasks()
LAB_RULE = (f"Measured in the Extrapolation lab, not at the controls above: tiny causal transformers trained at L = 32, "
            f"{'on ' + ' and '.join(map(task_title, TASKS)) + ' tasks' if len(TASKS) > 1 else 'on a Markov source'}. {VERDICT_RULE} "
            f"A scheme that did not learn the task at L in {LabConfig().steps:,} steps is measured from the lab's run with "
            f"{LONGER}× the steps if it learned there, and gets no verdict otherwise; the RoPE extensions' rows store one gap "
            "per length, so theirs is over the whole 8L sequence.")

header(
    PATH,
    "The classic comparison table (Scheme · Learned or fixed? · Extrapolates beyond training length? · Used "
    "in) as the article prints it, with a **measured** verdict beside each cell; below it every scheme with every "
    "column measured rather than typed in. **Look at the Extrapolates column** of the article's table, once you have "
    "predicted which of its four claims the lab's tiny models confirm.",
)
c1, c2, c3, c4 = st.columns(4)
n = controls.select_slider("sequence length n", "n", LENGTHS, default=512, container=c1,
                           help="Length for uniqueness and the score matrix (learned tables: at most their 512 rows).")
d = controls.slider("d (d_model / head_dim)", "d", default=64, lo=8, hi=128, step=2, container=c2,
                    help="The learned MiniLM table is always 384 wide.")
n_heads = controls.slider("heads (bias schemes)", "heads", default=8, lo=1, hi=16, container=c3)
train_len = controls.select_slider("training length L", "L", LENGTHS, default=512, container=c4,
                                   help="RoPE extensions are set to L with factor 4; 'extrapolates' looks at 4L.")

article = safe(article_table, n, d, n_heads, train_len)
if article is not None:
    st.subheader("The article's table, measured", anchor=False)
    told = ask_first(ask := claims_quiz(article["frame"]))  # its verdicts, in the table and the lab columns below, wait for it
    table(quiz_table(ask["key"], article["frame"], ask["cells"]), key="compare_article",
          labels={"measured: learned or fixed": "↳ measured", "measured: extrapolates": "↳ measured ",
                  "measured: used in": "↳ models this dashboard lists"})
    st.caption(f"The four rows as *Positional Encoding in Transformers* prints them, with a measured verdict beside each cell "
               f"({article['setting']}). Every claim of the three articles is on the claims page.")
    st.page_link("pages/claims.py", label="The articles' claims, one by one", icon=":material/fact_check:")
    st.subheader("Every scheme, every column measured", anchor=False)
with st.expander("Bring your own table: add an uploaded learned position table as a row", icon=":material/upload_file:"):
    uploads.upload_widget(key="upload")
pages = tuple((k, PAGE_BY_PATH[p].url_path) for k, p in SCHEME_PAGE.items())
view = safe(comparison, n, d, n_heads, train_len, pages, ahead={"n": 0, "d": 1, "heads": 2, "L": 3})
if view is not None:
    for name, msg in view["errors"].items():
        st.error(f"{name}: {msg}", icon=":material/error:")
    mine = [uploads.safe_table_call(measure_table, lab, name=f"Uploaded: {lab}", n=n, train_len=train_len)
            for lab in uploads.session_tables()]
    frame = with_rows(view["frame"], [r for r in mine if r is not None], PAGE_BY_PATH["pages/learned.py"].url_path)
    # the four wishlist columns and the ✓ grid answer the exercise: asked first, drawn once it is revealed
    wished = quiz_figure("wishlist_count", "compare_wishlist", "ok")
    names = wishlist_names(frame)
    exercise("wishlist_count", f"Predict before the table: of the {len(frame)} schemes, how many tick all four wishlist boxes "
             "(bounded, continuous, relative, unique)?",
             answer=len(names), explanation=f"{', '.join(names) or 'no scheme'}: bounded values, defined between integers, "
             "and a score that depends only on the offset.")
    shown = frame if wished else frame.drop(columns=[*WISHLIST, "wishlist"])
    shown = shown if article is None or told else without_verdicts(shown)
    Num, Check, Text = st.column_config.NumberColumn, st.column_config.CheckboxColumn, st.column_config.TextColumn
    st.dataframe(
        shown,
        placeholder="—",  # a missing value (not trained in the lab, no row there), not the grid's "None"
        hide_index=True,
        height="content",
        key="comparison_table",
        column_order=[c for c in ["scheme", "page", "learned_or_fixed", *(f"{p}_{t}" for t in TASKS for p in ("verdict", "beyond_L")),
                      "extrapolates", "extrapolation_note",
                      "bounded", "continuous", "relative", "unique", "wishlist",
                      "max_abs_at_1e6", "closest_distance", "closest_pair", "length_invariant", "length_change",
                      "translation_invariance", "defined_at_4L", "learned_parameters",
                      "enters", "models", "paper", "n_measured"] if c in shown.columns],
        column_config={
            "scheme": Text("Scheme", pinned=True),
            "page": st.column_config.LinkColumn("Page", display_text="open ↗", help="The page that explains this scheme."),
            "learned_or_fixed": Text("Learned or fixed?", help="Learned iff the scheme has trainable parameters (column 'learned parameters')."),
            **{f"verdict_{t}": Text(f"Extrapolates beyond training length? ({task_title(t)} task)", help=LAB_RULE) for t in TASKS},
            **{f"beyond_L_{t}": Num(f"gap past L ÷ a uniform guess's ({task_title(t)})", format="percent", help=LAB_RULE)
               for t in TASKS},
            "extrapolates": Check(f"holds (≤ {HOLDS:.0%}, {TASKS[0]})", help=LAB_RULE),
            "extrapolation_note": Text("lab", help="How the lab measured it, or why there is no number."),
            "bounded": Check("Bounded", help=f"max |value| over [{FAR.min():,.0f}, {FAR.max():,.0f}] ≤ {BOUND_RATIO}× "
                                            f"max over [0, {NEAR.max():,.0f}]."),
            "continuous": Check("Continuous", help="Defined between integer positions with a stable local slope (δ = 1e-3 vs 1e-6), "
                                                  "the same in a 16-token prompt and at min(n, L)."),
            "relative": Check("Relative", help=f"Deviation from translation invariance ≤ {RELATIVE_TOL:g} and the score varies at all."),
            "unique": Check("Unique", help="The closest pair is at least a tenth of the typical neighbour distance apart."),
            "wishlist": Check("All four", help="Bounded and continuous and relative and unique: the wishlist."),
            "max_abs_at_1e6": Num("max |value| to 10^6", format="%.4g",
                                  help="Largest |value| of the signature at positions 10^5..10^6 (empty: no row there)."),
            "closest_distance": Num("Unique: closest pair", format="%.3g",
                                    help="Distance between the two closest positions among 0..n−1 (0 = a collision)."),
            "closest_pair": Text("closest i & j"),
            "length_invariant": Check("Length-invariant", help=f"Position 1 unchanged (≤ {LENGTH_TOL:g}) for lengths 2, n/2, n, 2L, 4L."),
            "length_change": Num("length change", format="%.3g", help="Largest change of position 1's signature across those lengths."),
            "translation_invariance": Num("Deviation from translation invariance", format="%.3g",
                                          help="‖S − T(S)‖/‖S − mean‖ of the dense score matrix; 0 = depends on j − i only."),
            "defined_at_4L": Check("Defined at 4L", help="Extrapolates? The scheme has a value at 4× the training length."),
            "learned_parameters": Num("Learned parameters", format="%d"),
            "enters": Text("Where position enters"),
            "models": Text("Used in"),
            "paper": Text("Paper"),
            "n_measured": Num("n measured", format="%d", help="Learned tables have 512 rows, so they are measured on at most 512 positions."),
        },
    )
    st.caption(f"**Extrapolates beyond training length?** {LAB_RULE} The models, their seeds and the loss per position are on "
               "the lab page.")
    st.page_link("pages/lab.py", label="Open the Extrapolation lab", icon=":material/science:")
    links = st.container(horizontal=True)
    for p in dict.fromkeys(SCHEME_PAGE[k] for k in frame["key"] if k in SCHEME_PAGE):
        links.page_link(p, label=PAGE_BY_PATH[p].title, icon=PAGE_BY_PATH[p].icon)
    with st.expander("How each column is measured", icon=":material/rule:"):
        st.markdown(
            f"- **Bounded**: the largest |value| of the signature out to position {FAR.max():,.0f} stops growing: the max "
            f"over [{FAR.min():,.0f}, {FAR.max():,.0f}] is at most {BOUND_RATIO}× the max over [{NEAR.min():.0f}, "
            f"{NEAR.max():,.0f}] (a table with no rows there counts as bounded).\n"
            "- **Continuous**: the signature exists at fractional positions, its slope |f(p+δ) − f(p)|/δ agrees for "
            "δ = 10⁻³ and 10⁻⁶, and the slope at positions 1 and 7 is the same in a prompt of 16 tokens and of "
            "min(n, L) tokens; a lookup table or a bucket id exists only at integers, and index / length steps by 1/L.\n"
            f"- **Unique**: the distance between the two closest of the n = {n} positions (0 = two positions collide) "
            "is at least a tenth of the median distance between neighbouring positions.\n"
            f"- **Length-invariant**: position 1 looks the same in sequences of length 2, n/2, n, 2L and 4L (L = {train_len}).\n"
            f"- **Relative**: the deviation from translation invariance of the score matrix built densely from the vectors is ≤ {RELATIVE_TOL:g}, "
            "and the score varies at all (NoPE's constant score carries no position).\n"
            "- **Defined at 4L**: the scheme has a value at 4× the training length (a learned table of 512 rows does not).\n"
            "- **Learned parameters, where position enters, models, paper**: from each scheme's definition and the table shapes."
        )
    if wished:
        marks = marks_frame(frame)
        chart(style(wishlist_table(marks)), key="compare_wishlist", data=marks,
              caption="Blue ✓ = yes, vermillion ✗ = no; each mark comes from the measurement in the table (hover for the number).")
    else:
        st.caption(":material/visibility_off: The four wishlist columns (Bounded, Continuous, Relative, Unique, All four) and "
                   "the ✓ grid appear when you reveal the exercise above the table.")
    chart_grid([style(p) for p in measured_dot_panels(frame)], whole=lambda: style(measured_dots(frame)), key="compare_measured", width="stretch",
               data=frame[["scheme", "translation_invariance", "closest_distance", "closest_pair"]],
               caption="Left (first on a phone): 0 means the score depends only on j − i. Right: 0 means two positions look "
                       "identical at this length.")

show_code(comparison, measure_scheme, measure_table, growth, closest_pair, length_dependence, translation_invariance)
wrap_up(PATH, compare_takeaway(view, n, train_len))

"""The claims ledger: every claim of the three articles has a measurement, a verdict, a setting and a link to
the page that measures it; the numbers are the view's, computed by posenc at the page's settings."""

from apphelpers import assert_clean, open_page, tables

from posenc.ui.pages import PAGE_BY_PATH
from posenc.views.claims import ARTICLES, claims_ledger

PAGE = "pages/claims.py"
VERDICTS = {"confirmed", "nuanced", "contradicted"}


def test_every_claim_has_a_measurement_a_verdict_and_a_page():
    view = claims_ledger(512, 64, 512)
    df = view["frame"]
    assert len(df) >= 15
    for _, row in df.iterrows():
        assert row["claim"] and row["measured"] and row["setting"], row.to_dict()
        assert any(ch.isdigit() for ch in row["measured"]), row["measured"]  # a number, measured
        assert row["verdict"] in VERDICTS, row["verdict"]
        assert row["page"] in PAGE_BY_PATH, row["page"]
        assert any(a in row["source"] for a in ARTICLES), row["source"]
    assert {a for a in ARTICLES if df["source"].str.contains(a, regex=False).any()} == set(ARTICLES)  # all three articles
    assert sum(view["counts"].values()) == len(df)


def test_the_numbers_follow_the_settings():
    a, b = claims_ledger(128, 16, 128)["frame"], claims_ledger(512, 64, 512)["frame"]
    assert (a["measured"] != b["measured"]).any()
    assert "d = 512" in a.loc[a["claim"].str.contains("d = 512"), "setting"].iloc[0]  # the article's own setting


def test_page_shows_the_ledger_with_links():
    at = open_page(PAGE)
    assert_clean(at)
    assert list(tables(at)) == ["claims"] and not at.table
    shown, view = tables(at)["claims"], claims_ledger(512, 64, 512)
    assert len(shown) == len(view["frame"])
    assert any(view["rule"] in c.value and view["lab"] in c.value for c in at.caption)  # the rule beside the table
    links = [p.proto.page for p in at.get("page_link")]
    assert "pages/sinusoid.py" in " ".join(links) or links
    at.slider(key="d").set_value(32).run()
    assert_clean(at)

"""invlib.pages: what a reader meets. Numbers for people, the one claims table, each chapter's findings box and its
dressing by the runner, figures with captions, tables that fit."""

import math
import re

import nbformat
import numpy as np
import pandas as pd
import pytest

from invlib import pages, results
from invlib.protocol import Claim, Part

GAIN = Part("RRC's gain over no augmentation, points", "seed", smallest=0.5, reason="half a point of top-1")
LONG = ("Translation alone, T.(30%), recovers most of RandomResizedCrop's gain over no augmentation on every one of "
        "the ImageNet classes the paper reports, and its gain in top-1 accuracy is within a point of RRC's own gain "
        "when both are trained for 150 epochs with the paper's schedule (this statement is deliberately long).")


def _run(claims):
    run = results.Run("smoke", name="b9_pages_demo")
    for cid, statement, kind, effects in claims:
        run.claim(Claim(cid, "b9_pages_demo", statement, "+4.4", "Table 1a", GAIN, kind=kind), ours=1.03,
                  effects=effects)
    return run


def test_numbers_read_without_e_notation_at_any_scale():
    rng = np.random.default_rng(0)
    for x in np.concatenate([10.0 ** rng.uniform(-20, 12, 500), -(10.0 ** rng.uniform(-20, 12, 500))]):
        text = pages.number(float(x))
        assert "e" not in text and "E" not in text, (x, text)
        if abs(x) >= 0.0005:  # three significant figures of the value itself
            assert float(text.replace(",", "")) == pytest.approx(x, rel=5e-3), (x, text)
    assert pages.number(-0.0004) == "> -0.001" and pages.number(2.5, sign=True) == "+2.5"
    assert pages.number(np.float32(0.125)) == "0.125" and pages.number(np.int64(12000)) == "12,000"


def test_the_claims_table_shows_every_statement_whole_with_its_verdict():
    run = _run([("t1", LONG, "paper", [1.0, 1.1, 0.9]), ("t2", "RRC hurts.", "paper", [-1.0, -1.1, -0.9])])
    page = run.claims_table()._repr_html_()
    assert pages.inline(LONG) in page, "the statement is never cut"
    assert "..." not in page and "…" not in page
    rows = re.findall(r'<tr class="claim-row".*?</tr>', page)
    assert len(rows) == 2 and 'class="verdict reproduced"' in rows[0] and 'class="verdict not-reproduced"' in rows[1]
    assert "+1 [+0.752, +1.25], 3 seeds" in rows[0], "ours with its interval, compact"
    folds = re.findall(r'<tr class="claim-detail">.*?</tr>', page)
    assert len(folds) == 2 and all("<details>" in f and "Criterion" in f for f in folds)
    assert "lies wholly short of the smallest effect that matters (above 0.5)" in folds[1], "why, in words"
    assert run.claims_table().frame["verdict"].tolist() == ["reproduced", "not reproduced"]


def test_the_findings_box_groups_kinds_and_says_once_what_would_decide_the_rest():
    run = _run([("p1", "It helps.", "paper", [1.0, 1.1, 0.9]), ("p2", "It helps more.", "paper", [0.4, 0.6]),
                ("p3", "It helps most.", "paper", [0.5, -0.4]), ("a1", "Same as theirs.", "authors", [2.0, 2.1, 1.9]),
                ("h1", "Our guess.", "hypothesis", [1.0, 1.2, 0.8])])
    claims = [dict(c, chapter="b9_pages_demo") for c in run.to_dict()["claims"]]
    need = {("b9_pages_demo", "p2"): "80 % power at n = 6 (4 more replicates of seeds: about 3 min on 2 cores)",
            ("b9_pages_demo", "p3"): "80 % power at n = 120 (out of reach: more than 50 replicates)"}
    box = pages.findings_html(claims, need, glossary="../verdicts.html")
    kinds = re.findall(r"<p><b>([^<]+)</b>", box)
    assert kinds == ["The papers' claims", "Our code against the authors' code", "The book's own hypotheses"]
    papers = box.split("Our code against")[0]
    assert "It helps. Paper: +4.4; this run: 1.03 (+1, 95 % interval +0.752 to +1.25, over 3 seeds)." in papers
    assert papers.count("inconclusive at this budget") == 1, "one sentence for the undecided, not one per claim"
    assert ("2 claims are inconclusive at this budget: 1 would be decided in most reruns at 6 replicates (allowing "
            "for what this run leaves uncertain about the effects and their spread); 1 need more than the plan "
            "considers at this profile.") in papers
    assert '<a href="../verdicts.html">How to read a verdict</a>' in box


def test_dressing_a_chapter_twice_gives_the_same_page(tmp_path):
    run = _run([("p1", "It helps.", "paper", [1.0, 1.1, 0.9])])
    record = run.to_dict()
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# B9. Does it help?\n\nThe paper's setting."),
        nbformat.v4.new_code_cell("profile = 'cpu'", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("from invlib import pages\nfrom invlib.papers.b import rrc as B")])
    files = pages.write_downloads("b9_pages_demo", record, tmp_path)
    pages.dress(nb, "b9_pages_demo", record, {}, "https://example.org/me/book", [(k, f"d/{f}") for k, f in files])
    once = nbformat.writes(nb)
    pages.dress(nb, "b9_pages_demo", record, {}, "https://example.org/me/book", [(k, f"d/{f}") for k, f in files])
    assert nbformat.writes(nb) == once
    title = nb.cells[0].source
    assert title.startswith("# B9. Does it help?\n\n<!-- findings -->") and title.endswith("The paper's setting.\n")
    assert all("hide-input" in c.metadata.tags for c in nb.cells if c.cell_type == "code")
    last = nb.cells[-1].source
    assert last.startswith("## Reproduce this chapter") and "make book ONLY=b9_pages_demo" in last
    assert "{download}`claims (CSV) <d/b9_pages_demo-claims.csv>`" in last
    assert "[`invlib.papers.b.rrc`](https://example.org/me/book/blob/main/invlib/papers/b/rrc.py)" in last
    csv = pd.read_csv(tmp_path / "b9_pages_demo-claims.csv")
    assert csv.loc[0, "verdict"] == "reproduced" and csv.loc[0, "n"] == 3 and csv.loc[0, "kind"] == "paper"


def test_a_figure_comes_with_its_caption_and_alt_text():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    page = pages.figure_html(fig, "Top-1 per method, mean over *3 seeds*; `none` is lowest.")
    assert re.search(r'<img src="data:image/png;base64,[A-Za-z0-9+/=]{200,}" alt="Top-1 per method, mean over 3 '
                     r'seeds; none is lowest\.">', page)
    assert "<figcaption>Top-1 per method, mean over <em>3 seeds</em>; <code>none</code> is lowest.</figcaption>" in page
    with pytest.raises(ValueError, match="a figure needs a caption"):
        pages.figure_html(fig, " ")
    plt.close(fig)


def test_tables_read_for_people_and_long_ones_fold():
    frame = pd.DataFrame({"method": ["rrc", "none"], "p": [9.200642e-18, 0.5], "n": [12000, 3],
                          "note": [None, "x"], "gap": [math.nan, 1.23456]})
    page = pages.frame_html(frame)
    cells = re.findall(r"<td>(.*?)</td>", page)
    assert cells == ["rrc", "&lt; 0.001", "12,000", "—", "—", "none", "0.5", "3", "x", "1.23"]
    assert "<details" not in page
    long = pages.frame_html(pd.DataFrame({"x": np.arange(40.0)}), caption="Forty rows.")
    assert long.startswith('<p class="table-caption">Forty rows.</p><details class="long-table">')
    assert "The whole table: 40 rows, 1 columns" in long
    assert pages.frame_html(pd.Series([1.5, 2.5], index=["a", "b"], name="what")).count("<tr") == 3


def test_why_names_the_part_that_decided_a_claim_early_and_a_premise_not_met():
    from invlib.protocol import decide

    part = Part("gain", "seed", smallest=1.0, reason="a point")
    claim = Claim("t", "b1_demo", "Both help.", "+3", "Fig. 1", {"rotate": part, "shear": part})
    early = decide(claim, {"rotate": [-3.0, -3.1, -2.9], "shear": [2.0, -1.0, 0.5]}).to_dict()
    assert pages.why(early).startswith("'rotate' is against the claim at the 97.5 % level (2 parts)")
    gated = Claim("g", "b1_demo", "It helps.", "+3", "Fig. 1", {"premise: overfits": part, "gain": part},
                  gate=("premise: overfits",))
    ev = decide(gated, {"premise: overfits": [0.1, -0.2, 0.0], "gain": [2.0, 2.5, 3.0]}).to_dict()
    assert pages.why(ev).startswith("premise not met (premise: overfits: -0.0333 [")


def test_a_finding_gives_its_interval_once():
    """Where the run's value already states the claim's estimate and interval (D5's random-crop claim), the finding
    does not repeat them; where it states other numbers (one seed's interval), the claim's own interval follows."""
    ev = dict(estimate=-1.3704, lo=-3.1912, hi=0.5934, n=900, unit="image", level=0.95, verdict="not reproduced",
              direction="greater", boundary=0.79)
    c = dict(id="t", claim="TTA beats random crops.", paper="81.18 vs 79.60 %", verdict="not reproduced", evidence=ev,
             ours="58.15 % vs 59.52 % (-1.37 points [-3.19, +0.59])")
    sentence = pages.claim_sentence(c)
    assert sentence.count("-1.37") == 1 and sentence.count("-3.19") == 1 and "95 % interval" not in sentence
    assert sentence.endswith("[-3.19, +0.59]): the interval lies wholly short of the smallest effect that matters "
                             "(above 0.79).")
    other = dict(c, ours="seed 0: +2.67 points [+0.37, +5.11]")
    assert "-1.37, 95 % interval -3.19 to +0.593, over 900 images" in pages.claim_sentence(other)

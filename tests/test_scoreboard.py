"""invlib.scoreboard: the "Reproduction scoreboard" page and each paper's claims, written from the claims the
chapters' runs recorded. Every test writes into a temporary copy of the book (the ``book_copy`` fixture)."""

import math
from html.parser import HTMLParser
from pathlib import Path

import pytest

from invlib import plots, results, scoreboard
from invlib.chapters import GENERATED, PROTOCOL, SCOREBOARD, Chapter, toc_notebooks
from invlib.protocol import Claim, Part

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = toc_notebooks(ROOT)


GAIN = Part("gain, points", "seed", smallest=0.5, reason="half a point")
EFFECTS = {  # one made-up effect per verdict, with the parts it is declared with
    "reproduced": ({"": GAIN}, [1.0, 1.1, 0.9]),
    "not reproduced": ({"": GAIN}, [-1.0, -1.1, -0.9]),
    "inconclusive": ({"": GAIN}, [0.5, -0.4]),
    "partly": ({"a": GAIN, "b": GAIN}, {"a": [1.0, 1.1, 0.9], "b": [-1.0, -1.1, -0.9]}),
    "not measurable": ({"": GAIN}, results.not_measurable("no boxes in this data")),
}


def _declared(name: str, cid: str, text: str, paper, outcome: str) -> Claim:
    return Claim(cid, name, text, str(paper), "Table 1", EFFECTS[outcome][0])


def _claims(name: str, profile: str, claims: list[tuple]) -> None:
    run = results.Run(profile, name=name)
    for cid, text, paper, ours, outcome in claims:
        run.claim(_declared(name, cid, text, paper, outcome), ours=ours, effects=EFFECTS[outcome][1])
    run.save()


class _Cells(HTMLParser):
    """The rows of every HTML table in a text, each a list of its cells' text (tags dropped, white space folded)."""

    def __init__(self):
        super().__init__()
        self.tables, self.cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = []
        elif tag == "br" and self.cell is not None:
            self.cell.append(" ")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append(" ".join("".join(self.cell).split()))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def _tables(text: str) -> list[list[list[str]]]:
    parser = _Cells()
    parser.feed(text)
    return parser.tables


def test_scoreboard_lists_each_chapters_claims_by_paper_at_the_profile_it_ran(book_copy, tmp_path, monkeypatch):
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path / "results"))
    _claims("a1_ranking_tasks", "cpu", [("t1", "Zoom-in | ranks *well*, `a|b`.", 0.901, 0.88, "reproduced"),
                                        ("t2", "Hue gains least.", [0.716, 0.66], None, "not measurable"),
                                        ("t3", "Contrast $|w|$ costs $5.", 1.0, 0.7, "partly"),
                                        ("t4", "Saturation is easy.", 0.9, 0.5, "inconclusive")])
    _claims("a1_ranking_tasks", "smoke", [("s1", "A smoke-only claim.", 1.0, 0.0, "not reproduced")])
    _claims("a2_which_layers", "cpu", [])
    _claims("e9_not_in_the_book", "cpu", [("x", "Not a chapter.", 1.0, 1.0, "reproduced")])
    ran = {"a1_ranking_tasks": "ok", "a2_which_layers": "reused", "e1_learning_the_right_invariance": "ok"}
    chapters = [Chapter(n, ran.get(n, "stub"), 1.0, "cpu" if n in ran else "") for n in toc_notebooks()]
    written = scoreboard.write_scoreboard(chapters, book_copy)
    assert sorted(p.name for p in written) == [f"claims_{k}.md" for k in "abcde"] + [
        "findings.md", "protocol.md", "scoreboard-a.png", "scoreboard.md"]
    page = (book_copy / GENERATED / "scoreboard.md").read_text()
    assert page.startswith("# Reproduction scoreboard\n")
    assert ("**Of the 4 claims of the papers that this build tests, 2 are decided (67 %): 1 reproduced, 1 partly; 1 is "
            "inconclusive at this budget; 1 cannot be measured at this profile.**") in page, "the headline first"
    summary = _tables(page.split("## The papers' claims")[1])[0]
    assert summary[0] == ["Paper", "Chapters run", "Claims", "Verdicts", "Decided"]
    assert summary[1] == ["A: Yan & Huang", "2 of 2", "4", "reproduced 1 partly 1 inconclusive 1 not "
                          "measurable 1", "2 of 3 (67 %)"]
    assert len(summary) == 2, "papers without claims have no row"
    assert '<a href="../paper_a.html">A: Yan &amp; Huang</a>' in page
    claims_a = (book_copy / GENERATED / "claims_a.md").read_text()
    assert ("The papers' claims: 4 tested, 1 reproduced, 1 partly, 1 inconclusive, 1 not measurable.") in claims_a
    assert "{doc}`/book/_generated/scoreboard`" in claims_a, "the overview links to the scoreboard"
    date = results.load("a1_ranking_tasks", "cpu")["finished"][:10]
    assert f"**{{doc}}`/book/_generated/a1_ranking_tasks`** (profile `cpu`, run on {date}):" in claims_a
    rows = [r for r in _tables(claims_a)[0] if len(r) == 4]
    assert rows[0] == ["Claim", "Paper", "This run", "Verdict"]
    assert rows[1] == ["Zoom-in | ranks well, a|b. (Table 1)", "0.901", "0.88 +1 [+0.752, +1.25], 3 seeds",
                       "reproduced"], "the whole statement, the interval under ours, the verdict"
    assert "<em>well</em>" in claims_a and "<code>a|b</code>" in claims_a, "markup rendered, not escaped"
    assert rows[2][1:] == ["[0.716, 0.66]", "—", "not measurable"]
    assert rows[3][0] == "Contrast |w| costs $5. (Table 1)" and rows[3][2:] == ["0.7 2 parts: 1 reproduced, 1 not "
                                                                                 "reproduced", "partly"]
    folds = [r[0] for r in _tables(claims_a)[0] if len(r) == 1]
    assert len(folds) == 4 and all("Criterion (declared before the run)" in f for f in folds)
    assert GAIN.criterion().split(" (")[0] in folds[0], "the declared criterion is under its claim"
    assert "Why: it needs at least 3 seeds, and this run has 2." in folds[3]
    assert "smoke-only" not in page and "Not a chapter" not in page
    assert "a2_which_layers`** (profile `cpu`, run on" in claims_a and "this chapter records no claims" in claims_a
    claims_e = (book_copy / GENERATED / "claims_e.md").read_text()
    assert claims_e.startswith("No claims of paper E are recorded yet.")
    assert "e1_learning_the_right_invariance`** (profile `cpu`): no results file was found" in claims_e
    assert "e2_beyond_vision`**: not run in this build (`python -m invlib book --only e2_beyond_vision`)" in claims_e
    claims_b = (book_copy / GENERATED / "claims_b.md").read_text()
    assert claims_b.startswith("No claims of paper B are recorded yet: none of its chapters was run in this build.")
    assert "b3_invariance_vs_magnitude`**: not run in this build" in claims_b
    assert ("## Synthesis\n\nNo claims of the synthesis are recorded yet: none of its chapters was run in this "
            "build.") in page
    findings = (book_copy / GENERATED / "findings.md").read_text()
    assert findings.startswith("## What the book found") and "Of 4 claims of Paper A (Yan & Huang) tested here, 1 " \
        "reproduced, 0 did not, 1 partly, and 1 cannot be decided at this budget" in findings
    assert "Zoom-in | ranks <em>well</em>" in findings.split("Holds here")[1].split("Does not hold")[0]
    assert "Contrast" in findings.split("Does not hold here")[1] and "Saturation" in findings.split("Not decided")[1]


def test_claims_of_each_kind_are_counted_apart(book_copy, tmp_path, monkeypatch):
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path / "results"))
    run = results.Run("cpu", name="b1_rrc_decomposition")
    for cid, kind, outcome in (("p", "paper", "reproduced"), ("q", "paper", "inconclusive"),
                               ("authors/x", "authors", "not reproduced"), ("thesis/y", "hypothesis", "reproduced")):
        parts, effects = EFFECTS[outcome]
        run.claim(Claim(cid, "b1_rrc_decomposition", f"Claim {cid}.", "1", "Table 1", parts, kind=kind), ours=1.0,
                  effects=effects)
    run.save()
    chapters = [Chapter(n, "ok" if n == "b1_rrc_decomposition" else "stub", 1.0,
                        "cpu" if n == "b1_rrc_decomposition" else "") for n in toc_notebooks()]
    scoreboard.write_scoreboard(chapters, book_copy)
    page = (book_copy / GENERATED / "scoreboard.md").read_text()
    assert "**Of the 2 claims of the papers that this build tests, 1 is decided (50 %): 1 reproduced;" in page, \
        "the headline share is of the papers' claims only"
    heads = [line for line in page.splitlines() if line.startswith("## ")]
    assert heads[:3] == ["## The papers' claims", "## Our code against the authors' code",
                         "## The book's own hypotheses"]
    for title, row in (("## The papers' claims", ["2", "reproduced 1 inconclusive 1", "1 of 2 (50 %)"]),
                       ("## Our code against the authors' code", ["1", "not reproduced 1", "1 of 1 (100 %)"]),
                       ("## The book's own hypotheses", ["1", "reproduced 1", "1 of 1 (100 %)"])):
        assert _tables(page.split(title)[1])[0][1][2:] == row, title
    claims_b = (book_copy / GENERATED / "claims_b.md").read_text()
    assert claims_b.startswith("The papers' claims: 2 tested, 1 reproduced, 1 inconclusive. Our code against the "
                               "authors' code: 1 tested, 1 not reproduced. The book's own hypotheses: 1 tested, 1 "
                               "reproduced.")
    findings = (book_copy / GENERATED / "findings.md").read_text()
    assert "### Our code against the authors' code" in findings and "### The book's own hypotheses" in findings
    assert "Claim authors/x." not in findings.split("### Our code")[0], "not among the papers' claims"


def test_the_synthesis_claims_go_under_their_own_heading(book_copy, tmp_path, monkeypatch):
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path / "results"))
    _claims("s1_measures_agree", "cpu", [("s1/x", "Two measures agree.", "(no paper tests this)", "rho 0.7",
                                          "reproduced")])
    chapters = [Chapter(n, "ok" if n == "s1_measures_agree" else "stub", 1.0,
                             "cpu" if n == "s1_measures_agree" else "") for n in toc_notebooks()]
    scoreboard.write_scoreboard(chapters, book_copy)
    page = (book_copy / GENERATED / "scoreboard.md").read_text()
    assert _tables(page.split("## The papers' claims")[1])[0][1] == ["Synthesis", "1 of 1", "1", "reproduced 1",
                                                                      "1 of 1 (100 %)"]
    section = page.split("## Synthesis")[1]
    assert "The papers' claims: 1 tested, 1 reproduced." in section and "Two measures agree." in section
    assert "Two measures agree" not in page.split("## Synthesis")[0].split("## Paper E")[1]


def test_overview_pages_take_their_verdicts_from_the_generated_claims():
    for key in "abcde":
        page = (ROOT / f"book/paper_{key}.md").read_text()
        assert f"```{{include}} _generated/claims_{key}.md\n```" in page
        header = next(line for line in page.splitlines() if line.startswith("| Paper item |"))
        assert header == "| Paper item | What it shows | Notebook |", "no hand-kept status column"
        assert "| not built yet |" not in page and "| built" not in page
    assert "book/_generated/scoreboard" in (ROOT / "_toc.yml").read_text()
    assert SCOREBOARD not in CHAPTERS and PROTOCOL not in CHAPTERS
    assert "book/_generated/protocol" in (ROOT / "_toc.yml").read_text()


def test_the_protocol_page_lists_every_declared_claim_with_its_smallest_effect(book_copy):
    from invlib import pages
    from invlib.papers import protocols

    chapters = [Chapter(n, "stub", 0.0, "") for n in toc_notebooks()]
    scoreboard.write_scoreboard(chapters, book_copy)
    page = (book_copy / GENERATED / "protocol.md").read_text()
    assert page.startswith("# Protocol\n") and "{doc}`/book/_generated/scoreboard`" in page
    for key, P in protocols().items():
        heading = "## Synthesis" if key == "S" else f"## Paper {key}: "
        assert heading in page
        for c in P:
            assert f'<a href="{c.chapter}.html"><code>{c.id}</code></a>' in page, c.id
            for p in c.parts.values():
                assert pages.inline(p.reason) in page and pages.inline(p.quantity) in page
    rows = [r for t in _tables(page) for r in t[1:]]
    assert len(rows) == sum(len(P) for P in protocols().values()), "one row per claim, its parts inside it"
    assert all(len(r) == 2 for r in rows), "two columns: the claim, and what is measured with its test"
    scoreboard_page = (book_copy / GENERATED / "scoreboard.md").read_text()
    assert "{doc}`/book/_generated/protocol`" in scoreboard_page, "the scoreboard links to the protocol"


def test_table_cells_escape_markup_but_keep_code_and_math():
    assert scoreboard._md("a | *b* <c> `x|y` $|w|$ $5") == "a \\| \\*b\\* \\<c\\> `x\\|y` $\\vert{}w\\vert{}$ \\$5"
    assert scoreboard._md("two\nlines") == "two lines"


def _evidence(verdict, lo, hi, boundary=0.5, direction="greater", estimate=None, margin=0.0):
    return dict(verdict=verdict, estimate=estimate, lo=lo, hi=hi, boundary=boundary, direction=direction,
                margin=margin, n=3, unit="seed", level=0.95, method="t")


MADE_UP = [  # one claim per case: reproduced, not reproduced, straddling, several parts (one nested), no interval
    dict(id="t1", verdict="reproduced", evidence=_evidence("reproduced", 1.0, 3.0, estimate=2.0)),
    dict(id="t2", verdict="not reproduced", evidence=_evidence("not reproduced", -2.0, 0.0)),
    dict(id="t3", verdict="inconclusive at this budget",
         evidence=_evidence("inconclusive at this budget", -0.6, 1.4, estimate=0.4)),
    dict(id="t4", verdict="partly", evidence=dict(
        _evidence("partly", None, None, boundary=None), method="parts", parts={
            "up": _evidence("reproduced", 0.6, 0.8),
            "each": dict(_evidence("not reproduced", None, None), method="parts", parts={
                "rotate": _evidence("not reproduced", 0.0, 0.2, direction="equivalent", boundary=1.0,
                                    margin=0.1),
                "one seed": dict(_evidence("inconclusive at this budget", None, None, estimate=0.7), n=1)})})),
    dict(id="t5", verdict="not measurable at this profile",
         evidence=_evidence("not measurable at this profile", None, None, boundary=None)),
    dict(id="t6", verdict="reproduced", evidence=_evidence("reproduced", math.nan, math.inf)),
]


def test_claim_parts_flatten_each_claims_parts_and_count_those_without_interval():
    parts, missing = scoreboard.claim_parts(MADE_UP)
    assert [p["label"] for p in parts] == ["t1", "t2", "t3", "t4: up", "t4: each: rotate"]
    assert missing == 3, "one seed (no interval), not measurable, a non-finite interval"
    assert parts[4] == dict(label="t4: each: rotate", estimate=None, lo=0.0, hi=0.2, boundary=1.0,
                            direction="equivalent", margin=0.1, verdict="not reproduced")
    z = {p["label"]: plots.standard_position(p["estimate"], p["lo"], p["hi"], p["boundary"], p["direction"],
                                             p["margin"])[0] for p in parts}
    assert z == pytest.approx({"t1": 1.5, "t2": -1.5, "t3": -0.1, "t4: up": 2.0, "t4: each: rotate": -8.0})
    decided = {p["label"] for p in parts if p["verdict"] in ("reproduced", "not reproduced")}
    assert all(abs(z[label]) > 1 for label in decided) and abs(z["t3"]) < 1
    assert scoreboard.claim_parts([dict(id="x", verdict="reproduced", evidence=None)]) == ([], 1)


def test_paper_figure_draws_the_parts_by_verdict(monkeypatch):
    drawn = {}
    original = plots.scoreboard_figure

    def spy(parts, title=None, n_without_interval=0):
        drawn.update(fig=original(parts, title, n_without_interval), title=title, missing=n_without_interval)
        return drawn["fig"]

    monkeypatch.setattr(plots, "scoreboard_figure", spy)
    png, n, missing = scoreboard.paper_figure("A", MADE_UP, "Yan & Huang")
    assert png.startswith(b"\x89PNG") and (n, missing) == (5, 3)
    assert drawn["title"] == "Paper A: Yan & Huang" and drawn["missing"] == 3
    ax = drawn["fig"].axes[0]
    colours = [line.get_color() for i in range(5) for line in ax.lines if line.get_gid() == f"part {i}"]
    assert colours == ["#2ca02c", "#d62728", "#7f7f7f", "#2ca02c", "#d62728"], "green, red, grey by verdict"
    assert "3 parts without an interval not drawn" in ax.get_xlabel()
    import matplotlib.pyplot as plt

    assert drawn["fig"].number not in plt.get_fignums(), "closed once saved"
    assert scoreboard.paper_figure("B", MADE_UP[4:5]) == (None, 0, 1)
    assert scoreboard.paper_figure("B", []) == (None, 0, 0)


def test_the_scoreboard_shows_each_papers_figure_above_its_tables(book_copy, tmp_path, monkeypatch):
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path / "results"))
    _claims("a1_ranking_tasks", "cpu", [("t1", "Zoom-in ranks well.", 0.9, 0.88, "reproduced"),
                                        ("t2", "Hue gains least.", 0.7, None, "not measurable"),
                                        ("t3", "Contrast costs.", 1.0, 0.7, "partly"),
                                        ("t4", "Saturation is easy.", 0.9, 0.5, "inconclusive")])
    _claims("d1_rotated_sprites", "cpu", [("d", "Not measurable here.", 1.0, None, "not measurable")])
    ran = {"a1_ranking_tasks", "d1_rotated_sprites"}
    chapters = [Chapter(n, "ok" if n in ran else "stub", 1.0, "cpu" if n in ran else "") for n in toc_notebooks()]
    stale = book_copy / GENERATED / "scoreboard-e.png"
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_bytes(b"an earlier build's figure")
    written = scoreboard.write_scoreboard(chapters, book_copy)
    pngs = [p for p in written if p.suffix == ".png"]
    assert [p.name for p in pngs] == ["scoreboard-a.png"] and pngs[0].parent == book_copy / GENERATED
    assert pngs[0].read_bytes().startswith(b"\x89PNG") and not stale.exists(), "an earlier figure is removed"
    page = (book_copy / GENERATED / "scoreboard.md").read_text()
    section = page.split("## Paper A")[1].split("## Paper B")[0]
    image = "```{figure} scoreboard-a.png"
    assert image in section and section.index(image) < section.index('<table class="claims">'), "above the tables"
    assert ":alt: The 4 claim parts of paper A with an interval, one row each, labelled by the claim's statement" \
        in section and ":width: 100%" in section
    caption = next(line for line in section.splitlines() if line.startswith("The 4 claim parts of paper A"))
    assert "divided by its half-width" in caption and "right of the line is the paper's side" in caption
    assert caption.endswith("1 claim part of paper A has no interval (one replicate, or not measurable at this "
                            "profile) and is not drawn.")
    assert page.count("{figure} scoreboard-") == 1, "no figure for a paper without intervals"
    assert ("1 claim part of paper D has no interval (one replicate, or not measurable at this profile): nothing to "
            "draw.") in page.split("## Paper D")[1]
    claims_a = (book_copy / GENERATED / "claims_a.md").read_text()
    assert "scoreboard-a.png" not in claims_a, "the figure is on the scoreboard only"
    parts, missing = scoreboard.claim_parts(results.scoreboard("cpu"))  # a run's claims as the page reads them
    assert [p["label"] for p in parts] == ["Zoom-in ranks well", "Contrast costs: a", "Contrast costs: b",
                                           "Saturation is easy"] and missing == 2  # d1's claim too
    t1 = parts[0]  # 1.0, 1.1, 0.9 > 0.5: a t-interval of half-width t(0.975, 2) * 0.1 / sqrt(3)
    z, _ = plots.standard_position(t1["estimate"], t1["lo"], t1["hi"], t1["boundary"], t1["direction"])
    assert z == pytest.approx(0.5 / (4.302653 * 0.1 / math.sqrt(3)), rel=1e-5) and z > 1


def test_an_inconclusive_claims_row_says_what_would_decide_it():
    claim = dict(id="g", claim="Gain.", paper_value=1.0, ours=0.2, interval="+0.2 [-1, +1.4], 3 seeds",
                 verdict="inconclusive at this budget", criterion="> 0",
                 to_decide="80 % power at n = 10 (7 more replicates of seeds: about 4 min on 2 cores)")
    run = dict(name="a1_ranking_tasks", state="claims", profile="cpu", date="2026-11-28", claims=[claim])
    page = scoreboard._paper_claims("A", [run], set(), False)
    assert ("<b>What would decide it:</b> 80 % power at n = 10 (7 more replicates of seeds: about 4 min on 2 "
            "cores).") in page
    assert "What would decide" not in scoreboard._paper_claims("A", [dict(run, claims=[dict(claim, to_decide="")])],
                                                               set(), False)

"""invlib.scoreboard: the "Reproduction scoreboard" page and each paper's claims, written from the claims the
chapters' runs recorded. Every test writes into a temporary copy of the book (the ``book_copy`` fixture)."""

from pathlib import Path

from invlib import results, scoreboard
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
    assert sorted(p.name for p in written) == [f"claims_{k}.md" for k in "abcde"] + ["protocol.md", "scoreboard.md"]
    page = (book_copy / GENERATED / "scoreboard.md").read_text()
    assert page.startswith("# Reproduction scoreboard\n")
    header = next(line for line in page.splitlines() if line.startswith("| Paper |"))
    assert header == "| Paper | Chapters run | Claims | Repr. | Partly | Not repr. | Inconcl. | Not meas. |"
    assert ("Verdict columns: *Repr.*: reproduced; *Not repr.*: not reproduced; *Inconcl.*: inconclusive at this "
            "budget; *Not meas.*: not measurable at this profile.") in page, "the short headers are spelled out"
    summary = [line for line in page.splitlines() if line.startswith("| {doc}")]
    assert summary[0] == "| {doc}`A: Yan & Huang </book/paper_a>` | 2 of 2 | 4 | 1 | 1 | 0 | 1 | 1 |"
    assert summary[1].endswith("| 0 of 7 | 0 | 0 | 0 | 0 | 0 | 0 |") and len(summary) == 5  # B: chapters not run
    assert summary[2].endswith("| 0 of 3 | 0 | 0 | 0 | 0 | 0 | 0 |")  # C: chapters not run
    assert summary[3].endswith("| 0 of 5 | 0 | 0 | 0 | 0 | 0 | 0 |")  # D: chapters not run
    assert summary[4].startswith("| {doc}`E: AugNet and Augerino </book/paper_e>` | 1 of 4 | 0 |")
    claims_a = (book_copy / GENERATED / "claims_a.md").read_text()
    assert claims_a.replace(" All five papers: {doc}`/book/_generated/scoreboard`.", "") in page
    assert ("4 claims tested: 1 reproduced, 1 partly, 1 inconclusive at this budget, 1 not measurable at this "
            "profile.") in claims_a
    assert "{doc}`/book/_generated/scoreboard`" in claims_a, "the overview links to the scoreboard"
    date = results.load("a1_ranking_tasks", "cpu")["finished"][:10]
    assert f"**{{doc}}`/book/_generated/a1_ranking_tasks`** (profile `cpu`, run on {date}):" in claims_a
    criterion = scoreboard._md(GAIN.criterion())
    assert ("| Zoom-in \\| ranks \\*well\\*, `a\\|b`. | 0.901 | 0.88 | +1 \\[+0.752, +1.25\\], 3 seeds; \\> 0.5 | "
            f"reproduced | {criterion} |") in claims_a, "the interval beside the verdict, the declared criterion"
    assert "| Hue gains least. | \\[0.716, 0.66\\] | — | — | not measurable at this profile |" in claims_a
    assert "| Contrast $\\vert{}w\\vert{}$ costs \\$5. | 1.0 | 0.7 | a: reproduced; b: not reproduced | partly |" \
        in claims_a  # math kept, a table cell
    assert "| Saturation is easy. | 0.9 | 0.5 | +0.05 \\[-5.67, +5.77\\], 2 seeds; \\> 0.5; needs \\>= 3 seeds, " \
        "11 would decide | inconclusive at this budget |" in claims_a, "an inconclusive claim says what would decide it"
    assert "smoke-only" not in page and "Not a chapter" not in page
    assert "a2_which_layers`** (profile `cpu`, run on" in claims_a and "this chapter records no claims" in claims_a
    claims_e = (book_copy / GENERATED / "claims_e.md").read_text()
    assert claims_e.startswith("No claims of paper E are recorded yet.")
    assert "e1_learning_the_right_invariance`** (profile `cpu`): no results file was found" in claims_e
    assert "e2_beyond_vision`**: not run in this build (`python -m invlib book --only e2_beyond_vision`)" in claims_e
    claims_b = (book_copy / GENERATED / "claims_b.md").read_text()
    assert claims_b.startswith("No claims of paper B are recorded yet: none of its chapters was run in this build.")
    assert "b3_invariance_vs_magnitude`**: not run in this build" in claims_b
    claims_c = (book_copy / GENERATED / "claims_c.md").read_text()
    assert claims_c.startswith("No claims of paper C are recorded yet: none of its chapters was run in this build.")
    text = (book_copy / GENERATED / "claims_d.md").read_text()
    assert text.startswith("No claims of paper D are recorded yet: none of its chapters was run in this build.")
    assert "| Synthesis | 0 of 1 | 0 | 0 | 0 | 0 | 0 | 0 |" in page, "the synthesis has its own row, no paper page"
    assert ("## Synthesis\n\nNo claims of the synthesis are recorded yet: none of its chapters was run in this "
            "build.") in page


def test_the_synthesis_claims_go_under_their_own_heading(book_copy, tmp_path, monkeypatch):
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path / "results"))
    _claims("s1_measures_agree", "cpu", [("s1/x", "Two measures agree.", "(no paper tests this)", "rho 0.7",
                                          "reproduced")])
    chapters = [Chapter(n, "ok" if n == "s1_measures_agree" else "stub", 1.0,
                             "cpu" if n == "s1_measures_agree" else "") for n in toc_notebooks()]
    scoreboard.write_scoreboard(chapters, book_copy)
    page = (book_copy / GENERATED / "scoreboard.md").read_text()
    assert "| Synthesis | 1 of 1 | 1 | 1 | 0 | 0 | 0 | 0 |" in page
    section = page.split("## Synthesis")[1]
    assert "1 claim tested: 1 reproduced." in section and "| Two measures agree. |" in section
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
    from invlib.papers import protocols

    chapters = [Chapter(n, "stub", 0.0, "") for n in toc_notebooks()]
    scoreboard.write_scoreboard(chapters, book_copy)
    page = (book_copy / GENERATED / "protocol.md").read_text()
    assert page.startswith("# Protocol\n") and "{doc}`/book/_generated/scoreboard`" in page
    for key, P in protocols().items():
        heading = "## Synthesis" if key == "S" else f"## Paper {key}: "
        assert heading in page
        for c in P:
            assert f"{c.id} </book/_generated/{c.chapter}>" in page, c.id
            for p in c.parts.values():
                assert scoreboard._md(p.reason) in page and scoreboard._md(p.quantity) in page
    rows = [line for line in page.splitlines() if line.startswith("| ") and not line.startswith("| Claim")]
    assert len(rows) == sum(len(c.parts) for P in protocols().values() for c in P), "one row per part"
    scoreboard_page = (book_copy / GENERATED / "scoreboard.md").read_text()
    assert "{doc}`/book/_generated/protocol`" in scoreboard_page, "the scoreboard links to the protocol"


def test_table_cells_escape_markup_but_keep_code_and_math():
    assert scoreboard._md("a | *b* <c> `x|y` $|w|$ $5") == "a \\| \\*b\\* \\<c\\> `x\\|y` $\\vert{}w\\vert{}$ \\$5"
    assert scoreboard._md("two\nlines") == "two lines"
    assert [scoreboard._cell(v) for v in (None, True, 0.123456, 3, "x_y")] == ["—", "yes", "0.1235", "3", "x\\_y"]
    assert scoreboard._cell(list(range(8))) == "[0, 1, 2, 3, 4, 5, …]"
    assert scoreboard._cell({"a|b": 0.5, "c": [1.0]}) == "a\\|b: 0.5; c: [1]"
    assert set(scoreboard.SHORT) == set(results.VERDICTS)

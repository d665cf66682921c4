"""The "Reproduction scoreboard": the book's page of every paper claim its chapters test, and each paper's claims.

After the chapters have run, the book runner (:func:`invlib.book.build`) calls :func:`write_scoreboard`, which
reads the claims the runs recorded (:meth:`invlib.results.Run.claim`, gathered by
:func:`invlib.results.scoreboard`) and writes, under ``book/_generated/``:

- ``scoreboard.md``: a summary table (one row per paper: chapters run, claims, and how many claims got each
  verdict), then per paper a figure of its claim parts' intervals against their boundaries (``scoreboard-<a..e,
  s>.png``, :func:`paper_figure`) and per chapter a table of its claims (claim, paper's value, ours, verdict,
  criterion);
- ``claims_<a..e>.md``: one paper's part of that, included by the paper's overview page ``book/paper_<a..e>.md``;
- ``findings.md``: what the book found, included at the top of the landing page ``book/intro.md``
  (:func:`findings_page`);
- ``downloads/results-<profile>.zip``: every chapter's results of the build, linked from the scoreboard;
- ``protocol.md``: every paper's declared claims (:func:`invlib.papers.protocols`), one table per paper, one row per
  part: what is measured, the unit of replication, the direction, no effect, the smallest effect that matters and
  why, ``n_min`` and the multiplicity (:func:`protocol_page`).

Each chapter is read at the profile its page in this build was executed with. Nothing on these pages is kept by
hand: the text of a claim is escaped for a MyST table cell (:func:`_md`), except its code spans and ``$math$``.
"""

from __future__ import annotations

import html
import io
import json
import math
import os
import re
from pathlib import Path
from unittest import mock

from .chapters import GENERATED, PROTOCOL, SCOREBOARD, Chapter, results_root, toc_notebooks
from .profiles import PROFILES
from .utils import REPO, atomic_save
from .verdicts import _plural


def write_scoreboard(chapters: list[Chapter], root: str | Path = REPO) -> list[Path]:
    """Write the "Reproduction scoreboard" page ``book/_generated/scoreboard.md`` and, for each paper,
    ``book/_generated/claims_<a..e>.md`` (included by the paper's overview page), from the claims the
    chapters' runs recorded (:meth:`invlib.results.Run.claim`) in ``<results_root>/<profile>/``.

    Each chapter is read at the profile its page in this build was executed with; a chapter not executed
    (a stub) is listed as not run.

    Args:
        chapters: every chapter of the build (:class:`invlib.chapters.Chapter`), as :func:`invlib.book.build`
            returns them (name, status ``"ok"``/``"reused"``/``"stub"``, profile).
        root: the book's folder (``_toc.yml``; the pages go to ``<root>/book/_generated/``).

    Returns:
        the paths written: the seven pages ``claims_a.md`` .. ``claims_e.md``, ``scoreboard.md`` (the synthesis's
        claims, under their own heading, are on the scoreboard only), ``protocol.md`` and ``findings.md``, then
        the figure ``scoreboard-<key>.png`` of each paper (and the synthesis) with a claim part that has an
        interval, shown on the scoreboard above that paper's tables (:func:`paper_figure`). Figures of earlier
        builds that this one does not draw are removed.

    Example
    -------
    >>> from invlib.chapters import Chapter, toc_notebooks
    >>> chapters = [Chapter(name, "ok", 1.0, "cpu") for name in toc_notebooks()]
    >>> [p.name for p in write_scoreboard(chapters)][6:8]   # doctest: +SKIP
    ['protocol.md', 'scoreboard-a.png']
    """
    root = Path(root).resolve()
    toc = _toc_files(root)
    runs = _chapter_runs(chapters, root)
    titles = _paper_titles(root)
    by_paper = {key: [r for r in runs if r["name"][:1].upper() == key] for key in titles}
    figures = {key: paper_figure(key, [c for r in by_paper[key] for c in r["claims"]], titles[key])
               for key in titles}
    need = {(c["chapter"], c["id"]): c["to_decide"] for r in runs for c in r["claims"] if c.get("to_decide")}
    pages = {f"claims_{key.lower()}.md": _paper_claims(key, by_paper[key], toc, link_scoreboard=True, here="book")
             for key in titles if key != "S"}
    out = root / GENERATED
    download = _zip_results(runs, root, out / DOWNLOADS)
    pages[f"{SCOREBOARD}.md"] = _scoreboard_page(titles, by_paper, toc, figures,
                                                 download=f"{DOWNLOADS}/{download.name}" if download else "")
    pages[f"{PROTOCOL}.md"] = protocol_page(titles, toc)
    pages[FINDINGS] = findings_page(titles, by_paper, toc, need)
    pages.update({_figure_name(key): png for key, (png, _, _) in figures.items() if png is not None})
    for stale in out.glob(f"{SCOREBOARD}-*.png"):
        if stale.name not in pages:
            stale.unlink()
    return [atomic_save(data, out / name) for name, data in pages.items()]


FINDINGS = "findings.md"  # book/_generated/findings.md, included by book/intro.md
DOWNLOADS = "downloads"  # book/_generated/downloads/: each chapter's results as its page offers them


def _zip_results(runs: list[dict], root: Path, folder: Path) -> Path | None:
    """Every chapter's results of this build (its JSON and, where the runner wrote them, its CSVs) in one zip for
    the scoreboard's download link; None when no chapter has results."""
    import zipfile

    folder.mkdir(parents=True, exist_ok=True)
    files = [f for r in runs if r["state"] in ("claims", "no claims")
             for f in sorted(folder.glob(f"{r['name']}*")) if f.suffix in (".json", ".csv")]
    if not files:
        return None
    profiles = "-".join(sorted({r["profile"] for r in runs if r["state"] in ("claims", "no claims")}))
    path = folder / f"results-{profiles}.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for f in files:
            z.write(f, f"results-{profiles}/{f.name}")
    return path


def claim_parts(claims: list[dict]) -> tuple[list[dict], int]:
    """The parts of a run's claims that have an interval, as :func:`invlib.plots.scoreboard_figure` draws them, and
    how many parts have none.

    Each claim (a dict with ``id``, ``verdict`` and ``evidence``, as in a chapter's results or
    :func:`invlib.results.scoreboard`) gives one part per leaf of its evidence: the evidence itself, or, for a claim
    of several parts (``method: "parts"``, or any evidence with ``parts``), each of ``evidence["parts"]``, nested
    parts followed in turn. A part is ``{label, estimate, lo, hi, boundary, direction, margin, verdict}``, its label
    ``"<claim's short statement>: <part name>"`` (the statement alone for a one-part claim,
    :func:`_short_statement`), its estimate None where the evidence has
    none (the figure then uses the interval's centre). A leaf without a finite ``lo``, ``hi`` and ``boundary`` (one
    replicate, a claim not measurable at this profile) or with a direction the figure cannot place is counted, not
    returned.

    Example
    -------
    >>> one = dict(verdict="reproduced", estimate=1.0, lo=0.8, hi=1.2, boundary=0.5, direction="greater", margin=0.0)
    >>> lone = dict(one, verdict="inconclusive at this budget", lo=None, hi=None)
    >>> parts, missing = claim_parts([dict(id="t1", claim="RRC helps.", verdict="reproduced", evidence=one),
    ...                               dict(id="t2", verdict="inconclusive at this budget",
    ...                                    evidence=dict(method="parts", parts={"a": one, "b": lone}))])
    >>> [p["label"] for p in parts], missing
    (['RRC helps', 't2: a'], 1)
    """
    parts, missing = [], 0
    for claim in claims:
        found, lost = _leaves(_short_statement(claim), claim.get("evidence"))
        parts += found
        missing += lost
    return parts, missing


def _short_statement(claim: dict, width: int = 48) -> str:
    """A claim's statement cut at a word boundary to ``width`` characters, for a figure's label (its id where it
    has no statement)."""
    text = " ".join(str(claim.get("claim") or claim["id"]).replace("`", "").replace("$", "").split())
    if len(text) <= width:
        return text.rstrip(".")
    return text[:width].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _leaves(label: str, evidence) -> tuple[list[dict], int]:
    """:func:`claim_parts` for one claim's (or part's) evidence under ``label``: its drawable leaves, and how many
    leaves were not."""
    from .plots import SIDE

    if not isinstance(evidence, dict):
        return [], 1
    if evidence.get("parts"):
        nested = evidence["parts"]
        found, lost = [], 0
        for name, sub in nested.items() if isinstance(nested, dict) else nested:
            more, less = _leaves(f"{label}: {name}" if name else label, sub)
            found += more
            lost += less
        return found, lost
    lo, hi, boundary, estimate = (evidence.get(k) for k in ("lo", "hi", "boundary", "estimate"))
    if not all(_finite(v) for v in (lo, hi, boundary)) or evidence.get("direction") not in (*SIDE, "equivalent"):
        return [], 1
    return [dict(label=label, estimate=float(estimate) if _finite(estimate) else None, lo=float(lo), hi=float(hi),
                 boundary=float(boundary), direction=evidence["direction"],
                 margin=float(evidence.get("margin") or 0.0), verdict=str(evidence.get("verdict", "")))], 0


def _finite(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _figure_name(key: str) -> str:
    """``"scoreboard-a.png"``: the figure of paper ``key`` (``"S"``: the synthesis), beside the scoreboard page."""
    return f"{SCOREBOARD}-{key.lower()}.png"


def paper_figure(key: str, claims: list[dict], title: str = "") -> tuple[bytes | None, int, int]:
    """One paper's figure for the scoreboard (:func:`invlib.plots.scoreboard_figure` of :func:`claim_parts`): the
    PNG's bytes (None when no part has an interval), the number of parts drawn and the number without an
    interval. The figure is closed once saved.

    Example
    -------
    >>> ev = dict(verdict="reproduced", estimate=1.0, lo=0.8, hi=1.2, boundary=0.5, direction="greater")
    >>> png, drawn, missing = paper_figure("A", [dict(id="t1", verdict="reproduced", evidence=ev)], "Yan & Huang")
    >>> png[:4], drawn, missing
    (b'\\x89PNG', 1, 0)
    """
    import matplotlib.pyplot as plt

    from .plots import scoreboard_figure

    parts, missing = claim_parts(claims)
    if not parts:
        return None, 0, missing
    heading = SYNTHESIS if key == "S" else f"Paper {key}" + (f": {title}" if title else "")
    fig = scoreboard_figure(parts, title=heading, n_without_interval=missing)
    try:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=110, metadata={"Software": None})
    finally:
        plt.close(fig)
    return buffer.getvalue(), len(parts), missing


# The caption under each paper's figure: how to read the axis.
CAPTION = ("Each bar is a claim part's interval (the one its verdict is decided by: 95 %, 90 % for an equivalence, "
           "wider where a claim is one of several tests) minus its boundary, divided by its half-width, the dot its "
           "estimate: right of the line is the paper's side (for an equivalence: inside the margin), and a bar clear "
           "of the line is decided. Green: reproduced; red: not reproduced; grey: inconclusive (a grey bar clear of "
           "the line has fewer replicates than its claim needs). An arrow: beyond the axis, where an interval of "
           "zero width (a deterministic check) sits too.")


def _figure_lines(key: str, figure: tuple[bytes | None, int, int]) -> list[str]:
    """The scoreboard's lines for paper ``key``'s figure (:func:`paper_figure`): a MyST figure at the text column's
    width with its alt text and caption (what is drawn, how to read it, and the parts left out); a sentence alone
    when no part has an interval; nothing for a paper without claims."""
    png, drawn, missing = figure
    none = (f"{missing} claim part{'s' * (missing != 1)} of {_label(key)} {'have' if missing != 1 else 'has'} no "
            "interval (one replicate, or not measurable at this profile)")
    if png is None:
        return [f"{none}: nothing to draw.", ""] if missing else []
    alt = (f"The {drawn} claim parts of {_label(key)} with an interval, one row each, labelled by the claim's "
           "statement, each bar placed against its boundary and coloured by verdict")
    return [f"```{{figure}} {_figure_name(key)}", f":alt: {alt}", ":width: 100%", "",
            f"The {drawn} claim parts of {_label(key)} that have an interval. {CAPTION} "
            + (f"{none} and {'are' if missing != 1 else 'is'} not drawn." if missing else
               f"Every claim part of {_label(key)} has an interval."), "```", ""]


def _toc_files(root: Path) -> set[str]:
    """The pages ``_toc.yml`` lists (``file:`` and ``root:`` entries), e.g. ``"book/_generated/a1_ranking_tasks"``."""
    toc = (root / "_toc.yml").read_text()
    return set(re.findall(r"(?:file|root):\s*(\S+)", toc))


def _paper_titles(root: Path) -> dict[str, str]:
    """``{"A": "Yan & Huang", ...}`` from the toc's part captions ``Paper A: ...`` (all five papers), and
    ``"S": "Synthesis"`` when the toc has that part."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text())
    titles = {key: "" for key in "ABCDE"}
    for part in toc.get("parts", []):
        caption = str(part.get("caption", ""))
        found = re.match(r"Paper ([A-E]):\s*(.*)", caption)
        if found:
            titles[found.group(1)] = found.group(2).strip()
        elif caption.strip() == SYNTHESIS:  # the closing part, no paper's: its chapters are s1_...
            titles["S"] = SYNTHESIS
    return titles


SYNTHESIS = "Synthesis"


def _label(key: str) -> str:
    """``"paper A"``, or ``"the synthesis"`` for the part that is no paper's."""
    return "the synthesis" if key == "S" else f"paper {key}"


def _chapter_runs(chapters: list[Chapter], root: Path) -> list[dict]:
    """Per chapter: ``{name, state, profile, date, claims}``; state is "claims", "no claims", "no results"
    or "not run"."""
    from . import plan, results

    folder = results_root(root)
    rows: dict[str, list[dict]] = {}
    with mock.patch.dict(os.environ, INVLIB_RESULTS=str(folder)):
        for profile in sorted({c.profile for c in chapters if c.status != "stub" and c.profile in PROFILES}):
            rows[profile] = results.scoreboard(profile)
            try:
                need = plan.to_decide(plan.read_build(folder / profile))
            except FileNotFoundError:  # no chapter of this profile has claims yet
                need = {}
            for r in rows[profile]:
                r["to_decide"] = need.get((r["chapter"], r["id"]), "")
    runs, names = [], toc_notebooks(root)
    for ch in chapters:
        if ch.name not in names:
            continue
        run = dict(name=ch.name, state="not run", profile=ch.profile, date="", claims=[])
        file = folder / ch.profile / f"{ch.name}.json" if ch.profile in PROFILES else None
        if ch.status != "stub" and file is not None:
            if not file.exists():
                run["state"] = "no results"
            else:
                run["claims"] = [r for r in rows[ch.profile] if r["chapter"] == ch.name]
                run["date"] = str(json.loads(file.read_text()).get("finished", ""))[:10]
                run["state"] = "claims" if run["claims"] else "no claims"
        runs.append(run)
    return runs


def _verdict_counts(runs: list[dict]) -> dict[str, int]:
    """``{verdict: number of claims}`` over the runs, every verdict of :data:`invlib.results.VERDICTS` present."""
    from .results import VERDICTS

    return {v: sum(c["verdict"] == v for r in runs for c in r["claims"]) for v in VERDICTS}


def _paper_claims(key: str, runs: list[dict], toc: set[str], link_scoreboard: bool, here: str = "") -> str:
    """The status of one paper's claims: a count of verdicts per kind of claim, then per chapter the claims table
    (:func:`invlib.pages.claims_html`). ``here`` is the page's folder relative to the book's root (``"book"`` for an
    overview page, ``"book/_generated"`` for the scoreboard): the chapters are linked from there."""
    from . import pages

    lines = []
    claims = [c for r in runs for c in r["claims"]]
    if not runs:
        lines.append(f"No claims of {_label(key)} are recorded yet: no chapter of it is in the book yet.")
    elif all(r["state"] == "not run" for r in runs):
        lines.append(f"No claims of {_label(key)} are recorded yet: none of its chapters was run in this build.")
    elif not claims:
        lines.append(f"No claims of {_label(key)} are recorded yet.")
    else:
        lines.append(" ".join(_kind_count(kind, mine) for kind, mine in _by_kind(claims).items()))
    if link_scoreboard and f"{GENERATED}/{SCOREBOARD}" in toc:
        lines[-1] += f" All five papers: {{doc}}`/{GENERATED}/{SCOREBOARD}`."
    prefix = "" if here == str(GENERATED) else f"{GENERATED.relative_to(here) if here else GENERATED}/"
    for r in runs:
        chapter = f"{{doc}}`/{GENERATED}/{r['name']}`" if f"{GENERATED}/{r['name']}" in toc else f"`{r['name']}`"
        lines.append("")
        if r["state"] == "not run":
            lines.append(f"**{chapter}**: not run in this build (`python -m invlib book --only {r['name']}`).")
            continue
        run = f"profile `{r['profile']}`" + (f", run on {r['date']}" if r["date"] else "")
        if r["state"] == "no results":
            lines.append(f"**{chapter}** ({run}): no results file was found for this profile.")
        elif r["state"] == "no claims":
            lines.append(f"**{chapter}** ({run}): this chapter records no claims.")
        else:
            lines += [f"**{chapter}** ({run}):", "",
                      pages.claims_html(r["claims"], link=lambda name: f"{prefix}{name}.html"), ""]
    return "\n".join(lines) + "\n"


def _by_kind(claims: list[dict]) -> dict[str, list[dict]]:
    """The claims by kind (:data:`invlib.protocol.KINDS`, in that order; kinds without a claim left out)."""
    from .protocol import KINDS

    return {k: [c for c in claims if c.get("kind", "paper") == k] for k in KINDS
            if any(c.get("kind", "paper") == k for c in claims)}


def _kind_count(kind: str, claims: list[dict]) -> str:
    """``"The papers' claims: 11 tested, 5 reproduced, 6 inconclusive."``"""
    from . import pages

    counts = ", ".join(f"{n} {pages.BADGE[v][1]}" for v, n in pages.counts(claims).items() if n)
    return f"{pages.KIND_TITLES[kind]}: {len(claims)} tested, {counts}."


def _decided_share(claims: list[dict]) -> tuple[int, int]:
    """(decided, measurable) among ``claims``: decided is reproduced, not reproduced or partly; measurable is every
    verdict but "not measurable at this profile"."""
    from . import pages

    measurable = [c for c in claims if c["verdict"] != pages.NOT_MEASURABLE]
    return sum(c["verdict"] in pages.DECIDED for c in measurable), len(measurable)


def _summary_table(titles: dict[str, str], by_paper: dict[str, list[dict]], toc: set[str], kind: str,
                   here: str) -> list[str]:
    """One row per paper (that has claims of ``kind``): chapters run, claims, each verdict's badge with its count,
    the share of its measurable claims decided; an HTML table that fits the text column."""
    from . import pages

    head = ["Paper", "Chapters run", "Claims", "Verdicts", "Decided"]
    rows = []
    for key, title in titles.items():
        runs = by_paper[key]
        claims = [c for r in runs for c in r["claims"] if c.get("kind", "paper") == kind]
        if not claims:
            continue
        name = title if key == "S" else f"{key}: {title}" if title else f"Paper {key}"
        page = f"book/paper_{key.lower()}"
        href = (f"../paper_{key.lower()}.html" if here == str(GENERATED) else f"paper_{key.lower()}.html")
        cell = f'<a href="{href}">{pages.inline(name)}</a>' if page in toc else pages.inline(name)
        ran = sum(r["state"] != "not run" for r in runs)
        decided, measurable = _decided_share(claims)
        share = f"{decided} of {measurable}" + (f" ({100 * decided / measurable:.0f} %)" if measurable else "")
        verdicts = " ".join(f'<span class="count">{pages.badge(v)}&nbsp;{n}</span>'
                            for v, n in pages.counts(claims).items() if n)
        rows.append([cell, f"{ran} of {len(runs)}", str(len(claims)), verdicts, share])
    if not rows:
        return []
    cols = "".join(f'<col style="width:{w}%">' for w in (22, 12, 9, 40, 17))
    html_rows = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return [f'<table class="summary-table"><colgroup>{cols}</colgroup><thead><tr>'
            + "".join(f"<th>{h}</th>" for h in head) + f"</tr></thead><tbody>{html_rows}</tbody></table>", ""]


def headline(claims: list[dict]) -> str:
    """The book's headline in one sentence, of the papers' claims only (:data:`invlib.protocol.KINDS`).

    Example
    -------
    >>> headline([dict(verdict="reproduced", kind="paper"), dict(verdict="inconclusive at this budget", kind="paper"),
    ...           dict(verdict="not reproduced", kind="authors")])  # doctest: +NORMALIZE_WHITESPACE
    'Of the 2 claims of the papers that this build tests, 1 is decided (50 %): 1 reproduced;
     1 is inconclusive at this budget.'
    """
    from . import pages

    mine = [c for c in claims if c.get("kind", "paper") == "paper"]
    decided, measurable = _decided_share(mine)
    c = pages.counts(mine)
    split = ", ".join(f"{c[v]} {pages.BADGE[v][1]}" for v in pages.DECIDED if c[v])
    rest = [f"{c[pages.INCONCLUSIVE]} {'is' if c[pages.INCONCLUSIVE] == 1 else 'are'} inconclusive at this budget"
            if c[pages.INCONCLUSIVE] else "",
            f"{c[pages.NOT_MEASURABLE]} cannot be measured at this profile" if c[pages.NOT_MEASURABLE] else ""]
    share = f" ({100 * decided / measurable:.0f} %)" if measurable else ""
    return (f"Of the {len(mine)} claim{'s' * (len(mine) != 1)} of the papers that this build tests, {decided} "
            f"{'is' if decided == 1 else 'are'} decided{share}" + (f": {split}" if split else "")
            + "".join(f"; {r}" for r in rest if r) + ".")


def _scoreboard_page(titles: dict[str, str], by_paper: dict[str, list[dict]], toc: set[str],
                     figures: dict[str, tuple[bytes | None, int, int]] | None = None,
                     download: str = "") -> str:
    """The page: the headline of the papers' claims, a summary table per kind of claim, then each paper's figure
    (``figures``: :func:`paper_figure` by paper; :func:`_figure_lines`) and claims (:func:`_paper_claims`)."""
    from . import pages

    here = str(GENERATED)
    claims = [c for runs in by_paper.values() for r in runs for c in r["claims"]]
    glossary = f"/book/{pages.GLOSSARY}" if f"book/{pages.GLOSSARY}" in toc else ""
    lines = ["# Reproduction scoreboard", "", f"**{headline(claims)}**", "",
             "Every claim that a chapter of this book tests, with the verdict its run computed from its own numbers. "
             "Three kinds are counted apart: the papers' claims; whether our code gives what the authors' code gives "
             "on the same inputs; and the book's own hypotheses, which no paper makes (chapter B7's test of paper "
             "B's thesis and the synthesis). A verdict is decided by an interval over the replicates the claim is "
             "about (seeds, for what training does) against the smallest effect that matters, declared with its "
             "reason before the run"
             + (f" ({{doc}}`/{GENERATED}/{PROTOCOL}`)" if f"{GENERATED}/{PROTOCOL}" in toc else "") + "."
             + (f" {{doc}}`How to read a verdict <{glossary}>` defines each term." if glossary else "")
             + " A verdict holds for the profile it was measured at: `smoke` and `cpu` are small stand-ins for the "
             "papers' settings. The runner writes this page from the runs' results each time it builds the book; "
             "nothing here is kept by hand.", ""]
    if download:
        lines += [f"All results of this build: {{download}}`every chapter's JSON and CSVs (zip) <{download}>`.", ""]
    for kind, title in pages.KIND_TITLES.items():
        table = _summary_table(titles, by_paper, toc, kind, here)
        if table:
            lines += [f"## {title}", "", *table]
    for key, title in titles.items():
        heading = SYNTHESIS if key == "S" else f"Paper {key}" + (f": {_md(title)}" if title else "")
        lines += ["", f"## {heading}", "", *_figure_lines(key, (figures or {}).get(key, (None, 0, 0))),
                  _paper_claims(key, by_paper[key], toc, link_scoreboard=False, here=here).rstrip()]
    return "\n".join(lines) + "\n"


def findings_page(titles: dict[str, str], by_paper: dict[str, list[dict]], toc: set[str], to_decide=None) -> str:
    """What the book found, for the landing page (``book/_generated/findings.md``, included by ``book/intro.md``):
    the headline of the papers' claims, then per paper one sentence a reader can quote, the claims that hold, those
    that do not (one line each on why) and, folded, those this profile cannot decide and what would; then the
    agreement with the authors' code and the book's own hypotheses, each under its own heading. Written from the
    build's results; nothing kept by hand.

    Example
    -------
    >>> run = dict(name="a1_x", state="claims", profile="cpu", date="", claims=[dict(id="t", chapter="a1_x",
    ...            claim="It helps.", paper="+3", ours=1.0, verdict="reproduced", kind="paper", evidence={})])
    >>> page = findings_page({"A": "Yan & Huang"}, {"A": [run]}, set())
    >>> page.startswith("## What the book found") and "It helps." in page
    True
    """
    from . import pages

    claims = [c for runs in by_paper.values() for r in runs for c in r["claims"]]
    if not claims:
        return ("## What the book found\n\nNo chapter of this build recorded a claim yet: run `make book` to build "
                "the book with its findings.\n")
    lines = ["## What the book found", "", f"**{headline(claims)}** The chapters ran on the `"
             + "`, `".join(sorted({r["profile"] for runs in by_paper.values() for r in runs if r["claims"]}))
             + "` profile, small stand-ins for the papers' settings: a claim that holds here holds for the stand-in, "
             "and one that cannot be decided here may need more replicates than this profile buys.", ""]

    def link(c):
        name = c.get("chapter", "")
        return f"{GENERATED}/{name}.html".replace("book/", "", 1)

    for key, title in titles.items():
        mine = [dict(c, chapter=r["name"]) for r in by_paper[key] for c in r["claims"]
                if c.get("kind", "paper") == "paper"]
        if not mine:
            continue
        name = f"Paper {key}" + (f" ({title})" if title else "")
        page = f"book/paper_{key.lower()}"
        c = pages.counts(mine)
        decided, measurable = _decided_share(mine)
        quote = (f"Of {len(mine)} claims of {name} tested here, {c[pages.REPRODUCED]} reproduced, "
                 f"{c[pages.NOT_REPRODUCED]} did not" + (f", {c[pages.PARTLY]} partly" if c[pages.PARTLY] else "")
                 + f", and {measurable - decided} cannot be decided at this budget"
                 + (f" ({c[pages.NOT_MEASURABLE]} more cannot be measured at this profile)" if c[pages.NOT_MEASURABLE]
                    else "") + ".")
        heading = f"{{doc}}`{name} </{page}>`" if page in toc else name
        lines += [f"### {heading}", "", quote, ""]
        held = [x for x in mine if x["verdict"] == pages.REPRODUCED]
        failed = [x for x in mine if x["verdict"] in (pages.NOT_REPRODUCED, pages.PARTLY)]
        waiting = [x for x in mine if x["verdict"] not in pages.DECIDED]
        items = []
        if held:
            items.append("<p><b>Holds here:</b></p><ul>" + "".join(
                f'<li>{pages.badge(x["verdict"])} <a href="{link(x)}">{pages.inline(x["claim"])}</a></li>'
                for x in held) + "</ul>")
        if failed:
            items.append("<p><b>Does not hold here:</b></p><ul>" + "".join(
                f'<li>{pages.badge(x["verdict"])} <a href="{link(x)}">{pages.inline(x["claim"])}</a> '
                f'<i>{pages.inline(pages.why(x.get("evidence")))}.</i></li>' for x in failed) + "</ul>")
        if waiting:
            sentence = pages.undecided_sentence(waiting, to_decide)
            items.append(f"<details><summary>Not decided at this budget: {len(waiting)} (show)</summary><p>"
                         f"{sentence}</p><ul>" + "".join(
                             f'<li>{pages.badge(x["verdict"])} <a href="{link(x)}">{pages.inline(x["claim"])}</a>'
                             "</li>" for x in waiting) + "</ul></details>")
        lines += ["".join(items), ""]
    for kind in ("authors", "hypothesis"):
        mine = [dict(c, chapter=r["name"]) for runs in by_paper.values() for r in runs for c in r["claims"]
                if c.get("kind", "paper") == kind]
        if mine:
            lines += [f"### {pages.KIND_TITLES[kind]}", "", _kind_sentence(kind, mine), "",
                      "<ul>" + "".join(f'<li>{pages.badge(x["verdict"])} <a href="{link(x)}">'
                                       f'{pages.inline(x["claim"])}</a></li>' for x in mine) + "</ul>", ""]
    return "\n".join(lines) + "\n"


def _kind_sentence(kind: str, claims: list[dict]) -> str:
    from . import pages

    c = pages.counts(claims)
    counts = ", ".join(f"{n} {pages.BADGE[v][1]}" for v, n in c.items() if n)
    if kind == "authors":
        return (f"Where the authors published code, it decides what their method does: the book runs it on the "
                f"same inputs and checks that ours gives the same numbers ({len(claims)} checks: {counts}). These "
                "are not claims of the papers and are not counted with them.")
    return (f"Questions the book asks that no paper states ({len(claims)}: {counts}): chapter B7 tests paper B's "
            "thesis directly, and the synthesis compares the papers' measures on the same models.")


def _part_html(name: str, p) -> str:
    """One declared part for the protocol page: its name, the quantity, the test in symbols, the replicates, and,
    folded, the reason for its smallest effect."""
    from . import pages

    direction = {"greater": ">", "less": "<", "not below": ">", "not above": "<"}.get(p.direction)
    if p.direction == "equivalent":
        test = f"within {pages.number(p.null)} ± {pages.number(p.smallest)}"
    else:
        test = f"{direction} {pages.number(p.boundary)} (no effect: {pages.number(p.null)})"
    units = "deterministic" if p.unit == "deterministic" else f"over at least {p.n_min} {_plural(p.unit)}"
    of = f"; one of {p.of} (Bonferroni)" if p.of != 1 else ""
    each = f"; for each {p.each}" if p.each else ""
    label = f"<b>{pages.inline(name)}</b>: " if name else ""
    return (f"{label}{pages.inline(p.quantity)} <b>{html.escape(test)}</b>, {units}{of}{each}. "
            f"<details><summary>why this boundary</summary>{pages.inline(p.reason)}</details>")


def protocol_page(titles: dict[str, str], toc: set[str]) -> str:
    """The "Protocol" page: what the book committed to test, from every paper's declared claims
    (:func:`invlib.papers.protocols`), written before any run and independent of the results. Per paper a table
    with one row per claim: its statement, whose claim it is and where it stands in the paper; each part's quantity
    and test, the reason for its boundary folded under it.

    Example
    -------
    >>> page = protocol_page({"A": "Yan & Huang", "S": "Synthesis"}, set())
    >>> page.startswith("# Protocol") and "## Paper A: Yan" in page
    True
    """
    from . import pages, papers

    declared = papers.protocols()
    n = sum(len(P) for P in declared.values())
    parts = sum(len(c.parts) for P in declared.values() for c in P)
    lines = ["# Protocol", "",
             f"What this book committed to test, before any run: the {n} claims of the five papers and the "
             f"synthesis, in {parts} parts. For each part: the quantity measured; the unit of replication (a seed "
             "where the claim is about what training does; images, classes or pairs where it is about one given "
             "model; *deterministic* for fixed inputs); the direction the paper states; the value of no effect; the "
             "smallest effect that matters, with its reason (from the paper's wording or numbers, or from "
             "practice; never from this book's results); the boundary the interval must clear (no effect moved by "
             "the smallest effect to the paper's side; for an equivalence, the margin around no effect); the "
             "replicates a verdict needs; and the multiplicity (Bonferroni over the k tests of a claim that holds "
             "when one of them does). A claim of several parts holds when every part does, unless it says *one "
             "of*. The declarations live in `invlib/papers/<paper>/protocol.py`; each chapter's results keep the "
             "declaration it was decided by, and `python -m invlib compare` names every claim whose declaration "
             "differs between two builds."]
    if f"{GENERATED}/{SCOREBOARD}" in toc:
        lines += ["", f"The verdicts are on the {{doc}}`/{GENERATED}/{SCOREBOARD}`."]
    for key, P in declared.items():
        title = titles.get(key, "")
        heading = SYNTHESIS if key == "S" else f"Paper {key}" + (f": {_md(title)}" if title else "")
        rows = []
        for c in P:
            link = f"{c.chapter}.html" if f"{GENERATED}/{c.chapter}" in toc else ""
            code = f"<code>{html.escape(c.id)}</code>"
            name = f'<a href="{link}">{code}</a>' if link else code
            kind = pages.kind_label(c.kind)
            combine = (" <i>(one of its parts must hold)</i>" if c.combine == "any" and len(c.parts) > 1 else
                       " <i>(every part must hold)</i>" if len(c.parts) > 1 else "")
            gate = f" <i>Gate: {pages.inline(', '.join(c.gate))} must hold first.</i>" if c.gate else ""
            claim = (f"{kind}{pages.inline(c.statement)}{combine}{gate}<br><span class=\"claim-where\">{name} · "
                     f"paper: {pages.inline(c.paper)} ({pages.inline(c.where)})</span>")
            items = "".join(f"<li>{_part_html(part_name, part)}</li>" for part_name, part in c.parts.items())
            rows.append(f'<tr class="claim-row"><td>{claim}</td><td><ul class="claim-parts">{items}</ul></td></tr>')
        lines += ["", f"## {heading}", "",
                  '<table class="claims protocol"><colgroup><col style="width:42%"><col style="width:58%"></colgroup>'
                  "<thead><tr><th>Claim</th><th>What is measured, and the test</th></tr></thead><tbody>"
                  + "".join(rows) + "</tbody></table>"]
    return "\n".join(lines) + "\n"


_SPAN = re.compile(r"(`[^`\n]+`|\$[^\s$][^$\n]*?(?<!\s)\$)")  # code spans and inline math pass through


def _md(text) -> str:
    """``text`` safe in a MyST table cell: markup characters escaped, except inside code spans and ``$math$``."""
    parts = _SPAN.split(" ".join(str(text).split()))
    out = []
    for i, part in enumerate(parts):
        if i % 2 and part.startswith("`"):
            out.append(part.replace("|", "\\|"))
        elif i % 2:
            out.append(part.replace("|", "\\vert{}"))
        else:
            out.append(re.sub(r"([\\`*_\[\]<>|${}#~&])", r"\\\1", part))
    return "".join(out)

"""The "Reproduction scoreboard": the book's page of every paper claim its chapters test, and each paper's claims.

After the chapters have run, the book runner (:func:`invlib.book.build`) calls :func:`write_scoreboard`, which
reads the claims the runs recorded (:meth:`invlib.results.Run.claim`, gathered by
:func:`invlib.results.scoreboard`) and writes, under ``book/_generated/``:

- ``scoreboard.md``: a summary table (one row per paper: chapters run, claims, and how many claims got each
  verdict), then per paper a figure of its claim parts' intervals against their boundaries (``scoreboard-<a..e,
  s>.png``, :func:`paper_figure`) and per chapter a table of its claims (claim, paper's value, ours, verdict,
  criterion);
- ``claims_<a..e>.md``: one paper's part of that, included by the paper's overview page ``book/paper_<a..e>.md``;
- ``protocol.md``: every paper's declared claims (:func:`invlib.papers.protocols`), one table per paper, one row per
  part: what is measured, the unit of replication, the direction, no effect, the smallest effect that matters and
  why, ``n_min`` and the multiplicity (:func:`protocol_page`).

Each chapter is read at the profile its page in this build was executed with. Nothing on these pages is kept by
hand: the text of a claim is escaped for a MyST table cell (:func:`_md`), except its code spans and ``$math$``.
"""

from __future__ import annotations

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
        claims, under their own heading, are on the scoreboard only) and ``protocol.md``, then the figure
        ``scoreboard-<key>.png`` of each paper (and the synthesis) with a claim part that has an interval, shown on
        the scoreboard above that paper's tables (:func:`paper_figure`). Figures of earlier builds that this one
        does not draw are removed.

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
    pages = {f"claims_{key.lower()}.md": _paper_claims(key, by_paper[key], toc, link_scoreboard=True)
             for key in titles if key != "S"}
    pages[f"{SCOREBOARD}.md"] = _scoreboard_page(titles, by_paper, toc, figures)
    pages[f"{PROTOCOL}.md"] = protocol_page(titles, toc)
    pages.update({_figure_name(key): png for key, (png, _, _) in figures.items() if png is not None})
    out = root / GENERATED
    for stale in out.glob(f"{SCOREBOARD}-*.png"):
        if stale.name not in pages:
            stale.unlink()
    return [atomic_save(data, out / name) for name, data in pages.items()]


def claim_parts(claims: list[dict]) -> tuple[list[dict], int]:
    """The parts of a run's claims that have an interval, as :func:`invlib.plots.scoreboard_figure` draws them, and
    how many parts have none.

    Each claim (a dict with ``id``, ``verdict`` and ``evidence``, as in a chapter's results or
    :func:`invlib.results.scoreboard`) gives one part per leaf of its evidence: the evidence itself, or, for a claim
    of several parts (``method: "parts"``, or any evidence with ``parts``), each of ``evidence["parts"]``, nested
    parts followed in turn. A part is ``{label, estimate, lo, hi, boundary, direction, margin, verdict}``, its label
    ``"<claim id>: <part name>"`` (the claim id alone for a one-part claim), its estimate None where the evidence has
    none (the figure then uses the interval's centre). A leaf without a finite ``lo``, ``hi`` and ``boundary`` (one
    replicate, a claim not measurable at this profile) or with a direction the figure cannot place is counted, not
    returned.

    Example
    -------
    >>> one = dict(verdict="reproduced", estimate=1.0, lo=0.8, hi=1.2, boundary=0.5, direction="greater", margin=0.0)
    >>> lone = dict(one, verdict="inconclusive at this budget", lo=None, hi=None)
    >>> parts, missing = claim_parts([dict(id="t1", verdict="reproduced", evidence=one),
    ...                               dict(id="t2", verdict="inconclusive at this budget",
    ...                                    evidence=dict(method="parts", parts={"a": one, "b": lone}))])
    >>> [p["label"] for p in parts], missing
    (['t1', 't2: a'], 1)
    """
    parts, missing = [], 0
    for claim in claims:
        found, lost = _leaves(str(claim["id"]), claim.get("evidence"))
        parts += found
        missing += lost
    return parts, missing


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
    """The scoreboard's lines for paper ``key``'s figure (:func:`paper_figure`): the image and its caption, with the
    count of parts without an interval; a sentence alone when no part has one; nothing for a paper without claims."""
    png, drawn, missing = figure
    none = (f"{missing} claim part{'s' * (missing != 1)} of {_label(key)} {'have' if missing != 1 else 'has'} no "
            "interval (one replicate, or not measurable at this profile)")
    if png is None:
        return [f"{none}: nothing to draw.", ""] if missing else []
    alt = f"The {drawn} claim parts of {_label(key)} with an interval, each against its boundary, by verdict"
    return [f"![{alt}]({_figure_name(key)})", "",
            f"*{CAPTION}* " + (f"{none} and {'are' if missing != 1 else 'is'} not drawn." if missing else
                               f"Every claim part of {_label(key)} has an interval."), ""]


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


def _paper_claims(key: str, runs: list[dict], toc: set[str], link_scoreboard: bool) -> str:
    """The status of one paper's claims: a count of verdicts, then per chapter a table of its claims."""
    lines = []
    n = sum(len(r["claims"]) for r in runs)
    if not runs:
        lines.append(f"No claims of {_label(key)} are recorded yet: no chapter of it is in the book yet.")
    elif all(r["state"] == "not run" for r in runs):
        lines.append(f"No claims of {_label(key)} are recorded yet: none of its chapters was run in this build.")
    elif n == 0:
        lines.append(f"No claims of {_label(key)} are recorded yet.")
    else:
        counts = ", ".join(f"{v} {k}" for k, v in _verdict_counts(runs).items() if v)
        lines.append(f"{n} claim{'s' * (n != 1)} tested: {counts}.")
    if link_scoreboard and f"{GENERATED}/{SCOREBOARD}" in toc:
        lines[-1] += f" All five papers: {{doc}}`/{GENERATED}/{SCOREBOARD}`."
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
            lines += [f"**{chapter}** ({run}):", "", "| Claim | Paper | Ours | Interval | Verdict | Criterion |",
                      "|---|---|---|---|---|---|"]
            lines += [f"| {_md(c['claim'])} | {_cell(c['paper_value'])} | {_cell(c['ours'])} | "
                      f"{_md(c.get('interval', '—'))} | {c['verdict']}"
                      + (f" (to decide: {_md(c['to_decide'])})" if c.get("to_decide") else "")
                      + f" | {_md(c['criterion'])} |" for c in r["claims"]]
    return "\n".join(lines) + "\n"


# Column headers of the verdicts in the summary table, short so that the table fits the page's text column
# (at 1,280 px, Chromium cannot wrap "reproduced" or "measurable" and cut the last column); the legend under the
# table spells them out.
SHORT = {"reproduced": "Repr.", "partly": "Partly", "not reproduced": "Not repr.",
         "inconclusive at this budget": "Inconcl.", "not measurable at this profile": "Not meas."}


def _scoreboard_page(titles: dict[str, str], by_paper: dict[str, list[dict]], toc: set[str],
                     figures: dict[str, tuple[bytes | None, int, int]] | None = None) -> str:
    """The page: the summary table (one row per paper; a count per verdict), its legend, then each paper's
    figure (``figures``: :func:`paper_figure` by paper; :func:`_figure_lines`) and claims (:func:`_paper_claims`)."""
    from .results import VERDICTS

    short = {v: SHORT.get(v, v) for v in VERDICTS}
    lines = ["# Reproduction scoreboard", "",
             "Every claim of the five papers that a chapter of this book tests (and those of the synthesis, which "
             "no paper makes), with the verdict that the "
             "chapter's run computed from its own numbers by the criterion shown. Each verdict is decided by an "
             "interval over the replicates the claim is about (seeds, for what training does) against the "
             "smallest effect that matters, declared with its reason in the paper's protocol before the run"
             + (f" ({{doc}}`/{GENERATED}/{PROTOCOL}`)" if f"{GENERATED}/{PROTOCOL}" in toc else "") + ": "
             "*reproduced* when the interval lies wholly beyond that boundary on the paper's side (for "
             "\"unchanged\" and \"the same\": when it lies inside the margin), *not reproduced* when it lies "
             "wholly on the other side (an effect smaller than the claim means, none, or the reverse), "
             "*inconclusive at this budget* otherwise or with fewer replicates than the claim needs (the Interval "
             "column then says how many would decide it, or why no number can be said; beside the verdict, the n at "
             "which a rerun decides it with 80 % probability if the true effect is the one measured, and what the "
             "replicates beyond those run would cost: `python -m invlib plan`). The book's runner "
             "(`python -m invlib book`) writes this page from the runs' results, `results/<profile>/<chapter>.json`, "
             "each time it builds the book; nothing here is kept by hand. A verdict holds for the profile it was "
             "measured at: the `smoke` and `cpu` profiles are small stand-ins for the papers' settings.", "",
             "| Paper | Chapters run | Claims | " + " | ".join(short.values()) + " |",
             "|---" * (3 + len(VERDICTS)) + "|"]
    for key, title in titles.items():
        runs = by_paper[key]
        name = title if key == "S" else f"{key}: {title}" if title else f"Paper {key}"
        page = f"book/paper_{key.lower()}"
        paper = f"{{doc}}`{name} </{page}>`" if page in toc else _md(name)
        ran = sum(r["state"] != "not run" for r in runs)
        counts = _verdict_counts(runs)
        lines.append(f"| {paper} | {f'{ran} of {len(runs)}' if runs else 'none yet'} | {sum(counts.values())} | "
                     + " | ".join(str(v) for v in counts.values()) + " |")
    lines += ["", "Verdict columns: " + "; ".join(f"*{s}*: {v}" for v, s in short.items() if s.lower() != v) + "."]
    for key, title in titles.items():
        heading = SYNTHESIS if key == "S" else f"Paper {key}" + (f": {_md(title)}" if title else "")
        lines += ["", f"## {heading}", "", *_figure_lines(key, (figures or {}).get(key, (None, 0, 0))),
                  _paper_claims(key, by_paper[key], toc, link_scoreboard=False).rstrip()]
    return "\n".join(lines) + "\n"


def protocol_page(titles: dict[str, str], toc: set[str]) -> str:
    """The "Protocol" page: what the book committed to test, from every paper's declared claims
    (:func:`invlib.papers.protocols`), written before any run and independent of the results. Per paper a table
    with one row per part of each claim.

    Example
    -------
    >>> page = protocol_page({"A": "Yan & Huang", "S": "Synthesis"}, set())
    >>> page.startswith("# Protocol") and "## Paper A: Yan" in page
    True
    """
    from . import papers

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
        lines += ["", f"## {heading}", "",
                  "| Claim | Paper | Part | Quantity | Unit | Direction | No effect | Smallest effect (why) | "
                  "Boundary | n min | Of |", "|---" * 11 + "|"]
        for c in P:
            for i, (name, p) in enumerate(c.parts.items()):
                chapter = f"{{doc}}`{c.id} </{GENERATED}/{c.chapter}>`" if f"{GENERATED}/{c.chapter}" in toc \
                    else f"`{c.id}`"
                head = f"{chapter}: {_md(c.statement)}" + (" *(one of its parts)*" if c.combine == "any" else "") \
                    if i == 0 else ""
                paper = f"{_md(c.paper)} ({_md(c.where)})" if i == 0 else ""
                direction = {"greater": ">", "less": "<", "equivalent": "within ±", "not below": "not below",
                             "not above": "not above"}[p.direction]
                boundary = f"{p.null:g} ± {p.smallest:g}" if p.direction == "equivalent" else f"{p.boundary:g}"
                of = p.of if p.of != 1 else ""
                label = " ".join(x for x in (name, f"(each {p.each})" if p.each else "") if x)
                lines.append(f"| {head} | {paper} | {_md(label) or '—'} | {_md(p.quantity)} | {p.unit} | "
                             f"{direction} | {p.null:g} | {p.smallest:g} ({_md(p.reason)}) | {boundary} | {p.n_min} | "
                             f"{_md(of)} |")
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


def _cell(value) -> str:
    """A claim's paper value or ours, short: floats to 4 significant digits, lists and dicts inline."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        shown = [_cell(v) for v in value[:6]]
        return "[" + ", ".join(shown + ["…"] * (len(value) > 6)) + "]"
    if isinstance(value, dict):
        return "; ".join(f"{_md(k)}: {_cell(v)}" for k, v in value.items())
    return _md(value)

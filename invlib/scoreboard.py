"""The "Reproduction scoreboard": the book's page of every paper claim its chapters test, and each paper's claims.

After the chapters have run, the book runner (:func:`invlib.book.build`) calls :func:`write_scoreboard`, which
reads the claims the runs recorded (:meth:`invlib.results.Run.claim`, gathered by
:func:`invlib.results.scoreboard`) and writes, under ``book/_generated/``:

- ``scoreboard.md``: a summary table (one row per paper: chapters run, claims, and how many claims got each
  verdict), then per paper and chapter a table of its claims (claim, paper's value, ours, verdict, criterion);
- ``claims_<a..e>.md``: one paper's part of that, included by the paper's overview page ``book/paper_<a..e>.md``;
- ``protocol.md``: every paper's declared claims (:func:`invlib.papers.protocols`), one table per paper, one row per
  part: what is measured, the unit of replication, the direction, no effect, the smallest effect that matters and
  why, ``n_min`` and the multiplicity (:func:`protocol_page`).

Each chapter is read at the profile its page in this build was executed with. Nothing on these pages is kept by
hand: the text of a claim is escaped for a MyST table cell (:func:`_md`), except its code spans and ``$math$``.
"""

from __future__ import annotations

import json
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
        the seven paths written: ``claims_a.md`` .. ``claims_e.md``, ``scoreboard.md`` (the synthesis's claims,
        under their own heading, are on the scoreboard only), then ``protocol.md``.

    Example
    -------
    >>> from invlib.chapters import Chapter, toc_notebooks
    >>> chapters = [Chapter(name, "ok", 1.0, "cpu") for name in toc_notebooks()]
    >>> [p.name for p in write_scoreboard(chapters)][-1]   # doctest: +SKIP
    'scoreboard.md'
    """
    root = Path(root).resolve()
    toc = _toc_files(root)
    runs = _chapter_runs(chapters, root)
    titles = _paper_titles(root)
    by_paper = {key: [r for r in runs if r["name"][:1].upper() == key] for key in titles}
    pages = {f"claims_{key.lower()}.md": _paper_claims(key, by_paper[key], toc, link_scoreboard=True)
             for key in titles if key != "S"}
    pages[f"{SCOREBOARD}.md"] = _scoreboard_page(titles, by_paper, toc)
    pages[f"{PROTOCOL}.md"] = protocol_page(titles, toc)
    out = root / GENERATED
    return [atomic_save(text, out / name) for name, text in pages.items()]


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
    from . import results

    folder = results_root(root)
    rows: dict[str, list[dict]] = {}
    with mock.patch.dict(os.environ, INVLIB_RESULTS=str(folder)):
        for profile in sorted({c.profile for c in chapters if c.status != "stub" and c.profile in PROFILES}):
            rows[profile] = results.scoreboard(profile)
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
                      f"{_md(c.get('interval', '—'))} | {c['verdict']} | {_md(c['criterion'])} |" for c in r["claims"]]
    return "\n".join(lines) + "\n"


# Column headers of the verdicts in the summary table, short so that the table fits the page's text column
# (at 1,280 px, Chromium cannot wrap "reproduced" or "measurable" and cut the last column); the legend under the
# table spells them out.
SHORT = {"reproduced": "Repr.", "partly": "Partly", "not reproduced": "Not repr.",
         "inconclusive at this budget": "Inconcl.", "not measurable at this profile": "Not meas."}


def _scoreboard_page(titles: dict[str, str], by_paper: dict[str, list[dict]], toc: set[str]) -> str:
    """The page: the summary table (one row per paper; a count per verdict), its legend, then each paper's
    claims (:func:`_paper_claims`)."""
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
             "column then says how many would decide it, or why no number can be said). The book's runner "
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
        lines += ["", f"## {heading}", "",
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

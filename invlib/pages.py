"""What a reader meets: numbers for people, verdict badges, the one table of claims, each chapter's findings,
figures with captions and tables that fit the page.

Every page of the book that shows a claim shows it through :func:`claims_html` (a chapter's "Paper vs this run",
each paper's overview page, the scoreboard); every chapter opens with :func:`findings_html` (written into the
executed notebook by the book runner, :func:`invlib.book.dress`); every number a page prints goes through
:func:`number` (significant figures, never e-notation). In a notebook, :func:`show` puts a matplotlib figure on the
page with its caption and alt text, and :func:`install_display` makes every pandas table the chapter displays
readable: numbers for people, nothing cut, a long table folded.

The page styles (badges, the claims table) are ``book/_static/invlib.css``.
"""

from __future__ import annotations

import base64
import html
import io
import math
import re
from collections.abc import Iterable, Mapping

from .verdicts import (
    INCONCLUSIVE,
    NOT_MEASURABLE,
    NOT_REPRODUCED,
    PARTLY,
    REPRODUCED,
    VERDICTS,
    _names,
    premise_not_met,
)

# A verdict's badge: its CSS class and the word on it.
BADGE = {REPRODUCED: ("reproduced", "reproduced"), PARTLY: ("partly", "partly"),
         NOT_REPRODUCED: ("not-reproduced", "not reproduced"), INCONCLUSIVE: ("inconclusive", "inconclusive"),
         NOT_MEASURABLE: ("not-measurable", "not measurable")}
DECIDED = (REPRODUCED, NOT_REPRODUCED, PARTLY)
# Whose claim (invlib.protocol.KINDS), as the pages head them.
KIND_TITLES = {"paper": "The papers' claims", "authors": "Our code against the authors' code",
               "hypothesis": "The book's own hypotheses"}
KIND_SHORT = {"paper": "paper's claim", "authors": "same as the authors' code", "hypothesis": "the book's hypothesis"}
GLOSSARY = "verdicts"  # book/verdicts.md: "How to read a verdict"
LONG_TABLE = 15  # rows a table shows before it is folded


# --- numbers ----------------------------------------------------------------------------------------------------

def count(n: int, word: str) -> str:
    """``n`` and ``word``, the word plural unless ``n`` is 1 (``word + "s"``: seed, run, model, image, class needs
    its own).

    Example
    -------
    >>> count(1, "seed"), count(3, "seed"), count(0, "run")
    ('1 seed', '3 seeds', '0 runs')
    """
    return f"{n} {word}" + ("" if n == 1 else "s")


def number(x, digits: int = 3, sign: bool = False) -> str:
    """``x`` for a reader: ``digits`` significant figures, thousands separated, never e-notation; ``"n/a"`` for
    None or NaN. A value that rounds to zero at three decimals reads ``"< 0.001"`` (``"> -0.001"`` below zero).

    Args:
        x: a number (int, float, numpy scalar, bool) or anything else (returned as ``str``).
        digits: significant figures of a float (integers are printed whole).
        sign: a leading ``+`` on positive values (effects, differences).

    Example
    -------
    >>> [number(v) for v in (9.200642e-18, 0.04567, 1.5, 63.456, 1234.5, 12345678.0, 3, None, float("nan"))]
    ['< 0.001', '0.0457', '1.5', '63.5', '1,234', '12,345,678', '3', 'n/a', 'n/a']
    >>> number(5.153, sign=True), number(-0.431, sign=True), number(-2e-9), number(0.0)
    ('+5.15', '-0.431', '> -0.001', '0')
    """
    if x is None:
        return "n/a"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        try:
            x = x.item()
        except (ValueError, TypeError):
            return str(x)
    if isinstance(x, int):
        return f"{x:+,}" if sign and x else f"{x:,}"
    if not isinstance(x, float):
        return str(x)
    if not math.isfinite(x):
        return "n/a" if math.isnan(x) else ("+" if x > 0 and sign else "") + ("∞" if x > 0 else "-∞")
    plus = "+" if sign and x > 0 else ""
    if x == 0:
        return "0"
    a = abs(x)
    if a < 0.0005:
        return "< 0.001" if x > 0 else "> -0.001"
    if a >= 10 ** digits:
        return f"{plus}{x:,.0f}"
    decimals = max(0, digits - 1 - math.floor(math.log10(a)))
    text = f"{x:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return plus + text


def value_text(value) -> str:
    """A claim's paper value or this run's value as text: numbers by :func:`number`, lists and dicts inline.

    Example
    -------
    >>> value_text({"rotate": 0.9234, "shear": None}), value_text([1.0, 2.5]), value_text(None)
    ('rotate: 0.923; shear: n/a', '1, 2.5', '—')
    """
    if value is None:
        return "—"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {value_text(v) if v is not None else 'n/a'}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        shown = [value_text(v) for v in value[:20]]
        return ", ".join(shown) + (f" and {len(value) - 20} more" if len(value) > 20 else "")
    return number(value) if isinstance(value, (int, float)) else str(value)


def _units(ev: Mapping) -> str:
    from .verdicts import _plural

    unit = ev.get("unit") or "replicate"
    return unit if ev.get("n") == 1 else _plural(unit)


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def interval_words(ev: Mapping | None, compact: bool = False) -> str:
    """A claim's evidence in a sentence, ``"+5.15, 95 % interval -0.431 to +10.7, over 3 seeds"``, or, ``compact``,
    for a table cell, ``"+5.15 [-0.431, +10.7], 3 seeds"``; for a claim of several parts, how many parts got each
    verdict.

    Example
    -------
    >>> interval_words(dict(estimate=5.153, lo=-0.431, hi=10.7, n=3, unit="seed", level=0.95))
    '+5.15, 95 % interval -0.431 to +10.7, over 3 seeds'
    >>> interval_words(dict(estimate=5.153, lo=-0.431, hi=10.7, n=3, unit="seed"), compact=True)
    '+5.15 [-0.431, +10.7], 3 seeds'
    >>> interval_words(dict(estimate=0.5, lo=None, hi=None, n=1, unit="deterministic"))
    '+0.5 (a deterministic check)'
    """
    if not ev:
        return "" if compact else "not measured"
    if ev.get("parts"):
        return parts_summary(ev["parts"])
    if ev.get("verdict") == NOT_MEASURABLE:
        return "" if compact else "not measurable at this profile"
    est = number(ev.get("estimate"), sign=True)
    if ev.get("unit") == "deterministic":
        return f"{est} ({'deterministic' if compact else 'a deterministic check'})"
    n = f"{ev.get('n', '?')} {_units(ev)}"
    lo, hi = ev.get("lo"), ev.get("hi")
    if not (_finite(lo) and _finite(hi)):
        return f"{est}, {n}" if compact else f"{est}, over {n} (no interval)"
    lo, hi = number(lo, sign=True), number(hi, sign=True)
    if compact:
        return f"{est} [{lo}, {hi}], {n}"
    return f"{est}, {number(100 * float(ev.get('level') or 0.95))} % interval {lo} to {hi}, over {n}"


def interval_compact(ev: Mapping | None) -> str:
    """:func:`interval_words` for a table cell (``compact=True``)."""
    return interval_words(ev, compact=True)


def parts_summary(parts: Mapping[str, Mapping]) -> str:
    """``"3 parts: 2 reproduced, 1 inconclusive"``.

    Example
    -------
    >>> parts_summary({"a": {"verdict": "reproduced"}, "b": {"verdict": "inconclusive at this budget"}})
    '2 parts: 1 reproduced, 1 inconclusive'
    """
    counts = {BADGE[v][1]: sum(p.get("verdict") == v for p in parts.values()) for v in VERDICTS}
    return f"{len(parts)} parts: " + ", ".join(f"{k} {w}" for w, k in counts.items() if k)


def boundary_words(ev: Mapping) -> str:
    """What the interval had to clear, in words: ``"above 0.5"``, ``"below 1"``, ``"within 0 ± 2"``."""
    b = ev.get("boundary")
    if not _finite(b):
        return ""
    direction = ev.get("direction")
    if direction == "equivalent":
        return f"within {number(b)} ± {number(ev.get('margin'))}"
    return f"{'above' if direction in ('greater', 'not below') else 'below'} {number(b)}"


def why(ev: Mapping | None, span: bool = True) -> str:
    """Why a claim got its verdict, in one clause (for a claim of several parts: the parts that decided it);
    ``span=False`` leaves out the interval's ends, for a sentence that already gives them.

    Example
    -------
    >>> why(dict(verdict="not reproduced", estimate=0.1, lo=-0.2, hi=0.3, n=3, unit="seed", direction="greater",
    ...          boundary=0.5, level=0.95))
    'the interval, -0.2 to +0.3, lies wholly short of the smallest effect that matters (above 0.5)'
    """
    if not ev:
        return ""
    verdict = ev.get("verdict")
    if ev.get("parts"):
        named = [name for name, p in ev["parts"].items() if p.get("verdict") == verdict] or list(ev["parts"])
        if ev.get("decided_by"):  # decided by a part that is against it beyond doubt, before the others are
            return ev["decided_by"]
        if verdict == INCONCLUSIVE and str(ev.get("n_needed_why", "")).startswith("premise"):
            return ev["n_needed_why"]
        if verdict == PARTLY:
            held = [n for n, p in ev["parts"].items() if p.get("verdict") == REPRODUCED]
            failed = [n for n, p in ev["parts"].items() if p.get("verdict") == NOT_REPRODUCED]
            return f"{_names(held)} {'holds' if len(held) == 1 else 'hold'}; {_names(failed)} " \
                   f"{'does' if len(failed) == 1 else 'do'} not"
        if verdict == NOT_REPRODUCED:
            failed = [n for n, p in ev["parts"].items() if p.get("verdict") == NOT_REPRODUCED]
            return f"{_names(failed)} {'fails' if len(failed) == 1 else 'fail'}"
        if verdict == REPRODUCED:
            return "every part holds" if len(named) > 1 else ""
        if verdict == INCONCLUSIVE:
            open_ = [n for n, p in ev["parts"].items() if p.get("verdict") == INCONCLUSIVE]
            return f"{_names(open_)} {'is' if len(open_) == 1 else 'are'} not yet decided"
        return ""
    if verdict == NOT_MEASURABLE:
        return ev.get("reason") or "this profile cannot test it"
    if ev.get("unit") == "deterministic" or not (_finite(ev.get("lo")) and _finite(ev.get("hi"))):
        return f"the value is {number(ev.get('estimate'))}; the claim asks {boundary_words(ev)}"
    interval = f"the interval, {number(ev['lo'], sign=True)} to {number(ev['hi'], sign=True)}," if span \
        else "the interval"
    if verdict == REPRODUCED:
        return f"{interval} lies wholly {boundary_words(ev)}"
    if verdict == NOT_REPRODUCED:
        if ev.get("direction") == "equivalent":
            return f"{interval} lies outside the margin ({boundary_words(ev)})"
        return f"{interval} lies wholly short of the smallest effect that matters ({boundary_words(ev)})"
    if verdict == INCONCLUSIVE:
        if ev.get("n", 0) < ev.get("n_min", 0):
            return f"it needs at least {ev['n_min']} {_units(dict(ev, n=2))}, and this run has {ev.get('n')}"
        return f"{interval} straddles the boundary ({boundary_words(ev)})"
    return ""


# --- inline text to HTML ------------------------------------------------------------------------------------------

_CODE = re.compile(r"`([^`\n]+)`")
_MATH = re.compile(r"\$([^\s$][^$\n]*?)\$")
_EMPH = re.compile(r"(?<![\w*])\*([^*\n]+)\*(?![\w*])")
_TEX = {r"\pi": "π", r"\times": "×", r"\le": "≤", r"\ge": "≥", r"\pm": "±", r"\lambda": "λ", r"\theta": "θ",
        r"\phi": "φ", r"\sigma": "σ", r"\mu": "μ", r"\alpha": "α", r"\beta": "β", r"\rho": "ρ", r"\cdot": "·",
        r"\sqrt": "√", r"\infty": "∞", r"\%": "%", r"\,": " ", "{": "", "}": ""}


_SCI = re.compile(r"\b(\d+(?:\.\d+)?)e([-+])0*(\d+)\b")


def _prose(text: str) -> str:
    """Escaped text with ``*emphasis*`` and numbers in e-notation written as powers of ten."""
    out = _EMPH.sub(r"<em>\1</em>", html.escape(text, quote=False))
    return _SCI.sub(lambda m: f"{m.group(1)} × 10<sup>{'-' if m.group(2) == '-' else ''}{m.group(3)}</sup>", out)


def inline(text) -> str:
    """Markdown of one line (code spans, ``*emphasis*``, ``$math$``) as safe HTML, for raw-HTML tables; a number in
    e-notation reads as a power of ten.

    Example
    -------
    >>> inline("`crops.rrc` at $\\\\pi/4$ is *small* < 1")
    '<code>crops.rrc</code> at <i>π/4</i> is <em>small</em> &lt; 1'
    >>> inline("within 5.62e-08 or 1e+09")
    'within 5.62 × 10<sup>-8</sup> or 1 × 10<sup>9</sup>'
    """
    out, last = [], 0
    text = " ".join(str(text).split())
    for m in re.finditer(f"{_CODE.pattern}|{_MATH.pattern}", text):
        out.append(_prose(text[last:m.start()]))
        if m.group(1) is not None:
            out.append(f"<code>{html.escape(m.group(1), quote=False)}</code>")
        else:
            tex = m.group(2)
            for k, v in _TEX.items():
                tex = tex.replace(k, v)
            out.append(f"<i>{html.escape(tex, quote=False)}</i>")
        last = m.end()
    out.append(_prose(text[last:]))
    return "".join(out)


def badge(verdict: str) -> str:
    """A verdict as a coloured badge (``<span class="verdict reproduced">reproduced</span>``)."""
    css, word = BADGE.get(verdict, ("other", verdict))
    return f'<span class="verdict {css}">{html.escape(word)}</span>'


def kind_label(kind: str) -> str:
    return "" if kind == "paper" else f'<span class="claim-kind">{html.escape(KIND_SHORT.get(kind, kind))}</span> '


# --- the one table of claims --------------------------------------------------------------------------------------

def claims_html(claims: Iterable[Mapping], link=None, chapter_column: bool = False, to_decide=None) -> str:
    """The claims table every page uses: claim (its full statement, where it stands in the paper), the paper's value,
    ours with its interval, the verdict as a badge; under each row, folded, the criterion and each part's evidence.
    Everything wraps inside the page's text column (``book/_static/invlib.css``); nothing is cut.

    Args:
        claims: dicts as :meth:`invlib.results.Run.claim` records them (``id``, ``claim``, ``paper``, ``ours``,
            ``verdict``, ``criterion``, ``evidence``, ``kind``; a :func:`invlib.results.scoreboard` row's
            ``paper_value`` and ``chapter`` are read too).
        link: ``link(chapter) -> href`` to link each claim to its chapter (with ``chapter_column``).
        chapter_column: name the chapter in the claim cell (overview pages, the scoreboard).
        to_decide: ``{(chapter, id): text}`` of :func:`invlib.plan.to_decide`, shown in an undecided claim's fold.

    Returns:
        an HTML ``<table class="claims">``.

    Example
    -------
    >>> row = dict(id="t1", claim="RRC helps.", paper="+4.4", ours=1.03, verdict="reproduced", criterion="gain > 0.5",
    ...            evidence=dict(estimate=1.03, lo=0.52, hi=1.55, n=3, unit="seed", verdict="reproduced"))
    >>> page = claims_html([row])
    >>> "RRC helps." in page and 'class="verdict reproduced"' in page and "+1.03 [+0.52, +1.55], 3 seeds" in page
    True
    """
    rows = []
    for c in claims:
        ev = c.get("evidence") or {}
        paper = c.get("paper_value", c.get("paper"))
        where = (c.get("declaration") or {}).get("where") or c.get("where") or ""
        chapter = ""
        if chapter_column and c.get("chapter"):
            name = html.escape(c["chapter"])
            chapter = (f'<a class="claim-chapter" href="{html.escape(link(c["chapter"]))}">{name}</a> ' if link
                       else f'<span class="claim-chapter">{name}</span> ')
        statement = (f'{chapter}{kind_label(c.get("kind", "paper"))}{inline(c["claim"])}'
                     + (f' <span class="claim-where">({inline(where)})</span>' if where else ""))
        ours = inline(value_text(c.get("ours")))
        compact = interval_compact(ev)
        if compact and compact != ours:
            ours += f'<br><span class="claim-interval">{html.escape(compact)}</span>'
        rows.append(f'<tr class="claim-row" id="claim-{_anchor(c.get("chapter", ""), c["id"])}">'
                    f'<td>{statement}</td><td>{inline(value_text(paper))}</td><td>{ours}</td>'
                    f'<td>{badge(c["verdict"])}</td></tr>')
        rows.append(f'<tr class="claim-detail"><td colspan="4">{_fold(c, ev, to_decide)}</td></tr>')
    return ('<table class="claims"><colgroup><col class="c-claim"><col class="c-paper"><col class="c-ours">'
            '<col class="c-verdict"></colgroup><thead><tr><th>Claim</th><th>Paper</th><th>This run</th>'
            f'<th>Verdict</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')


def _anchor(chapter: str, cid: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", f"{chapter} {cid}".lower()).strip("-")


def _fold(c: Mapping, ev: Mapping, to_decide=None) -> str:
    lines = [f"<p><b>Why:</b> {inline(why(ev) or '—')}.</p>" if why(ev) else "",
             f'<p><b>Criterion</b> (declared before the run): {inline(c.get("criterion", ""))}</p>']
    need = (to_decide or {}).get((c.get("chapter", ""), c["id"])) or c.get("to_decide")
    if need and c["verdict"] == INCONCLUSIVE:
        lines.append(f"<p><b>What would decide it:</b> {inline(need)}.</p>")
    if ev.get("parts"):
        items = "".join(f"<li>{badge(p.get('verdict', ''))} <b>{inline(name or 'the claim')}</b>: "
                        f"{inline(interval_words(p))}</li>" for name, p in ev["parts"].items())
        lines.append(f'<ul class="claim-parts">{items}</ul>')
    elif ev:
        lines.append(f"<p><b>Evidence:</b> {html.escape(interval_words(ev))}.</p>")
    lines.append(f'<p class="claim-id">id <code>{html.escape(c["id"])}</code></p>')
    return f'<details><summary>How it was decided</summary>{"".join(lines)}</details>'


class ClaimsTable:
    """What :meth:`invlib.results.Run.claims_table` returns: the claims as the book shows them (HTML,
    :func:`claims_html`), and as a pandas DataFrame (``.frame``) for code.

    Example
    -------
    >>> t = ClaimsTable([dict(id="t1", claim="It helps.", paper="+3", ours=1.0, verdict="reproduced",
    ...                       criterion="c", interval="+1 [+0.5, +1.5], 3 seeds; > 0.5", evidence={})])
    >>> t.frame["verdict"].tolist(), "It helps." in t._repr_html_()
    (['reproduced'], True)
    """

    def __init__(self, claims: list[Mapping]):
        self.claims = list(claims)

    @property
    def frame(self):
        import pandas as pd

        columns = ["claim", "paper", "this run", "interval", "criterion", "verdict"]
        rows = [{"claim": c["claim"], "paper": c["paper"], "this run": c["ours"], "interval": c.get("interval", "—"),
                 "criterion": c["criterion"], "verdict": c["verdict"]} for c in self.claims]
        return pd.DataFrame(rows, columns=columns, dtype=object)

    def __len__(self) -> int:
        return len(self.claims)

    def _repr_html_(self) -> str:
        return claims_html(self.claims)

    def __repr__(self) -> str:
        return "\n".join(f"{c['verdict']}: {c['claim']}" for c in self.claims) or "(no claims)"


# --- findings -----------------------------------------------------------------------------------------------------

def claim_sentence(c: Mapping) -> str:
    """One plain sentence (HTML) for a claim: its statement, the paper's value beside ours, and why the verdict.

    Example
    -------
    >>> c = dict(id="t1", claim="RRC helps.", paper="+4.4", ours=1.03, verdict="reproduced",
    ...          evidence=dict(estimate=1.03, lo=0.52, hi=1.55, n=3, unit="seed", level=0.95, direction="greater",
    ...                        boundary=0.5, verdict="reproduced"))
    >>> claim_sentence(c)
    'RRC helps. Paper: +4.4; this run: 1.03 (+1.03, 95 % interval +0.52 to +1.55, over 3 seeds).'
    """
    ev = c.get("evidence") or {}
    paper = value_text(c.get("paper_value", c.get("paper")))
    ours = value_text(c.get("ours"))
    words = interval_words(ev) if ev else ""
    numbers = f"Paper: {inline(paper)}; this run: {inline(ours)}"
    shown = _shows_interval(ours, ev)
    if words and words != ours and not ev.get("parts") and not shown:
        numbers += f" ({html.escape(words)})"
    elif c["verdict"] in (NOT_REPRODUCED, PARTLY) and why(ev):
        numbers += f": {inline(why(ev, span=not shown))}"
    statement = inline(c["claim"]).rstrip()
    return f"{statement}{'' if statement.endswith(('.', '?', '!')) else '.'} {numbers}."


def _shows_interval(text: str, ev: Mapping) -> bool:
    """Whether ``text`` (a claim's "this run" value) already states the evidence's estimate and interval, to two
    decimals or three significant figures, so that a sentence need not give them twice.

    Example
    -------
    >>> ev = dict(estimate=-1.3704, lo=-3.1912, hi=0.5934, n=900, unit="image")
    >>> _shows_interval("58.15 % vs 59.52 % (-1.37 points [-3.19, +0.59])", ev)
    True
    >>> _shows_interval("seed 0: +2.67 points [+0.37, +5.11]", dict(ev, estimate=2.14, lo=1.35, hi=2.94))
    False
    """
    def forms(x) -> set[str]:
        return {f"{x:+.2f}", f"{x:+.3g}", number(x, sign=True)} if _finite(x) else set()

    found = lambda x: any(f in text for f in forms(x))  # noqa: E731
    return all(found(ev.get(k)) for k in ("estimate", "lo", "hi"))  # a missing or NaN end has no form: False


def undecided_groups(claims: Mapping[str, Mapping], questions: Mapping[str, tuple[str, str]]) -> dict[str, list]:
    """The inconclusive claims of a run (``{id: claim}``, as :attr:`invlib.results.Run.claims`) that ``questions``
    names (``{id: (question, what more of could settle it)}``), grouped by what would settle them, in run order.

    Example
    -------
    >>> undecided_groups({"a": dict(verdict="inconclusive at this budget"), "b": dict(verdict="reproduced")},
    ...                  {"a": ("whether a", "seeds"), "b": ("whether b", "seeds")})
    {'seeds': ['whether a']}
    """
    groups: dict[str, list] = {}
    for cid, c in claims.items():
        if c["verdict"] == INCONCLUSIVE and cid in questions and not premise_not_met(c):
            question, more = questions[cid]
            groups.setdefault(more, []).append(question)
    return groups


def undecided_sentence(claims: list[Mapping], to_decide=None) -> str:
    """One sentence for the claims a run cannot decide: how many, and what would decide them (the plan's words).

    Example
    -------
    >>> undecided_sentence([dict(id="x", chapter="b1", verdict="inconclusive at this budget", evidence={})])
    'One claim is inconclusive at this budget.'
    """
    open_ = [c for c in claims if c["verdict"] == INCONCLUSIVE]
    if not open_:
        return ""
    unmet = [c for c in open_ if premise_not_met(c)]
    needs = {}
    for c in open_:
        if premise_not_met(c):
            continue
        text = (to_decide or {}).get((c.get("chapter", ""), c["id"])) or c.get("to_decide") or ""
        needs[c["id"]] = text
    reach = [t for t in needs.values() if t and "out of reach" not in t and "power at n" in t]
    far = [t for t in needs.values() if t and "out of reach" in t]
    k = len(open_)
    head = f"{'One claim is' if k == 1 else f'{k} claims are'} inconclusive at this budget"
    bits = []
    if reach:
        ns = sorted(int(re.search(r"n = ([\d,]+)", t).group(1).replace(",", "")) for t in reach)
        span = f"{ns[0]:,}" if ns[0] == ns[-1] else f"{ns[0]:,} to {ns[-1]:,}"
        bits.append(f"{len(reach)} would be decided in most reruns at {span} replicates (allowing for what this "
                    "run leaves uncertain about the effects and their spread)")
    if far:
        bits.append(f"{len(far)} need more than the plan considers at this profile")
    if unmet:
        bits.append(f"{len(unmet)} {'is' if len(unmet) == 1 else 'are'} not tested because the data do not meet "
                    f"{'its' if len(unmet) == 1 else 'their'} premise")
    rest = k - len(reach) - len(far) - len(unmet)
    if rest and bits:
        bits.append(f"for {rest} no number can be said from this run")
    return head + (": " + "; ".join(bits) if bits else "") + "."


def findings_html(claims: list[Mapping], to_decide=None, glossary: str = "") -> str:
    """A chapter's "What this chapter found" box: per kind of claim, each decided claim with its badge and one
    plain sentence, the undecided ones listed by their statements and one sentence on what would decide them.

    Args:
        claims: the chapter's recorded claims (:meth:`invlib.results.Run.claim`).
        to_decide: :func:`invlib.plan.to_decide` of the build.
        glossary: the href of "How to read a verdict" (nothing linked when empty).

    Example
    -------
    >>> box = findings_html([dict(id="t", claim="It helps.", paper="+3", ours=1.0, verdict="reproduced",
    ...                           evidence={})])
    >>> box.startswith('<div class="admonition findings">') and "It helps." in box
    True
    """
    title = '<p class="admonition-title">What this chapter found</p>'
    if not claims:
        return (f'<div class="admonition findings">{title}<p>This chapter tests no claim; what it measures is in its '
                "figures and tables below.</p></div>")
    parts = []
    kinds = [k for k in KIND_TITLES if any(c.get("kind", "paper") == k for c in claims)]
    for kind in kinds:
        mine = [c for c in claims if c.get("kind", "paper") == kind]
        decided = [c for c in mine if c["verdict"] in DECIDED]
        others = [c for c in mine if c["verdict"] not in DECIDED]
        head = f"<p><b>{KIND_TITLES[kind]}</b> ({_count_line(mine)})</p>" if len(kinds) > 1 or kind != "paper" \
            else f"<p>{_count_line(mine).capitalize()}.</p>"
        items = [f"<li>{badge(c['verdict'])} {claim_sentence(c)}</li>" for c in decided]
        items += [f"<li>{badge(c['verdict'])} {inline(c['claim'])}"
                  + (f" <i>({inline(why(c.get('evidence')))})</i>" if c["verdict"] == NOT_MEASURABLE else "")
                  + "</li>" for c in others]
        parts.append(head + f'<ul class="findings-list">{"".join(items)}</ul>')
        sentence = undecided_sentence(mine, to_decide)
        if sentence:
            parts.append(f"<p>{sentence}</p>")
    more = (f' <a href="{html.escape(glossary)}">How to read a verdict</a>.' if glossary else "")
    parts.append(f'<p class="findings-more">Each claim\'s interval, criterion and parts are in the table at the end '
                 f"of the chapter.{more}</p>")
    return f'<div class="admonition findings">{title}{"".join(parts)}</div>'


def _count_line(claims: list[Mapping]) -> str:
    n = len(claims)
    counts = {BADGE[v][1]: sum(c["verdict"] == v for c in claims) for v in VERDICTS}
    return f"{n} claim{'s' * (n != 1)}: " + ", ".join(f"{k} {w}" for w, k in counts.items() if k)


def counts(claims: Iterable[Mapping]) -> dict[str, int]:
    """``{verdict: claims}`` over every verdict of :data:`invlib.verdicts.VERDICTS` (zeros included)."""
    claims = list(claims)
    return {v: sum(c["verdict"] == v for c in claims) for v in VERDICTS}


# --- figures and tables in a notebook -------------------------------------------------------------------------------

def figure_html(fig, caption: str, alt: str | None = None, dpi: int = 110) -> str:
    """A matplotlib figure as ``<figure>`` with its PNG inline, its alt text and its caption (Markdown of one
    paragraph: code spans, emphasis, math).

    Example
    -------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(); _ = ax.plot([0, 1])
    >>> page = figure_html(fig, "A line from 0 to 1.")
    >>> page.startswith('<figure class="invlib-figure">') and "<figcaption>A line from 0 to 1.</figcaption>" in page
    True
    """
    if not isinstance(caption, str) or not caption.strip():
        raise ValueError("a figure needs a caption: what is plotted, what to look for, over how many replicates")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    data = base64.b64encode(buf.getvalue()).decode()
    alt = " ".join((alt or re.sub(r"[`*$]", "", caption)).split())
    return (f'<figure class="invlib-figure"><img src="data:image/png;base64,{data}" alt="{html.escape(alt)}">'
            f"<figcaption>{inline(caption)}</figcaption></figure>")


def show(caption: str, fig=None, alt: str | None = None) -> None:
    """Put a figure on the chapter's page with its caption (what is plotted, what to look for, over how many
    replicates) and alt text, and close it; in place of ``plt.show()``. Outside a notebook, ``plt.show()``.

    Args:
        caption: one paragraph of Markdown; numbers from the run are formatted into it by the chapter.
        fig: the figure (default: the current one).
        alt: the image's alt text (default: the caption without markup).

    Example
    -------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(); _ = ax.plot([0, 1])
    >>> show("A line.", fig)   # doctest: +SKIP
    """
    import matplotlib.pyplot as plt

    fig = fig if fig is not None else plt.gcf()
    if not _in_notebook():
        plt.show()
        return
    from IPython.display import HTML, display

    display(HTML(figure_html(fig, caption, alt)))
    plt.close(fig)


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return False
    ip = get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None


def frame_html(frame, caption: str = "", fold: int = LONG_TABLE) -> str:
    """A pandas DataFrame (or Series) as a readable table: every number by :func:`number`, missing values as "—",
    text wrapped (never cut), the index kept where it names the rows; over ``fold`` rows the table is folded
    under a line that says how many rows it has.

    Example
    -------
    >>> import pandas as pd
    >>> page = frame_html(pd.DataFrame({"p": [9.2e-18, 0.5], "name": ["a", None]}))
    >>> "&lt; 0.001" in page and "—" in page and "<details" not in page
    True
    >>> "<details" in frame_html(pd.DataFrame({"x": range(20)}))
    True
    """
    import pandas as pd

    if isinstance(frame, pd.Series):
        frame = frame.to_frame()
    shown = frame.copy()
    keep_index = not isinstance(shown.index, pd.RangeIndex)

    def cell(v):
        if v is None or isinstance(v, float) and math.isnan(v):
            return "—"
        if isinstance(v, (bool, int, float)) or hasattr(v, "item") and not isinstance(v, str):
            return number(v)
        return value_text(v) if isinstance(v, (list, tuple, dict)) else str(v)

    shown = shown.map(cell) if hasattr(shown, "map") else shown.applymap(cell)
    if keep_index:
        shown.index = [cell(i) if not isinstance(i, tuple) else " / ".join(cell(x) for x in i) for i in shown.index]
    shown.columns = [" / ".join(str(x) for x in c) if isinstance(c, tuple) else str(c) for c in shown.columns]
    table = shown.to_html(index=keep_index, escape=True, border=0, classes="invlib-table", na_rep="—")
    table = _SCI.sub(lambda m: f"{m.group(1)} × 10<sup>{'-' if m.group(2) == '-' else ''}{m.group(3)}</sup>", table)
    cap = f"<p class=\"table-caption\">{inline(caption)}</p>" if caption else ""
    if len(shown) > fold:
        return (f'{cap}<details class="long-table"><summary>The whole table: {len(shown):,} rows, '
                f"{len(shown.columns)} columns (click to show)</summary>{table}</details>")
    return cap + table


def install_display() -> None:
    """In a notebook, show every pandas DataFrame and Series through :func:`frame_html` (numbers for people, nothing
    cut, long tables folded). Called by :func:`invlib.results.open_chapter`; does nothing outside a kernel."""
    if not _in_notebook():
        return
    import pandas as pd
    from IPython import get_ipython

    formatter = get_ipython().display_formatter.formatters["text/html"]
    formatter.for_type(pd.DataFrame, frame_html)
    formatter.for_type(pd.Series, frame_html)
    pd.set_option("display.max_colwidth", None)


def table(frame, caption: str = "", fold: int = LONG_TABLE):
    """A DataFrame for the page, with a caption above it (an object a notebook cell displays as HTML).

    Example
    -------
    >>> import pandas as pd
    >>> "<p class=\\"table-caption\\">Two rows.</p>" in table(pd.DataFrame({"x": [1, 2]}), "Two rows.")._repr_html_()
    True
    """
    return _Html(frame_html(frame, caption, fold))


class _Html:
    def __init__(self, text: str):
        self.text = text

    def _repr_html_(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return re.sub(r"<[^>]+>", " ", self.text)[:200]


# --- a chapter's page: findings first, code one click away, how to reproduce it last -------------------------------

DRESSED = "invlib-dressed"  # metadata flag of the cells the runner adds (removed and written anew on every build)
_BOX = re.compile(r"\n*<!-- findings -->.*?<!-- /findings -->\n*", re.S)


def dress(nb, name: str, record: Mapping | None, to_decide=None, repository: str = "", downloads=()) -> None:
    """Make an executed chapter read as a page, in place (the book runner calls it on every chapter it keeps):
    its "What this chapter found" box under the title (:func:`findings_html`), every code cell's source folded
    (``hide-input``: the code is one click away), and a last section "Reproduce this chapter": the commands on
    each profile, this run's profile, seconds and machine, its results to download, its settings and its source.
    Running it again on a dressed notebook gives the same notebook.

    Args:
        nb: the executed notebook (``nbformat.NotebookNode``).
        name: the chapter, e.g. ``"b1_rrc_decomposition"``.
        record: its results (:meth:`invlib.results.Run.to_dict`), or None (no results: no box, no downloads).
        to_decide: :func:`invlib.plan.to_decide` of the build.
        repository: the repository's address (``_config.yml``), to link the sources; "" for none.
        downloads: ``(label, path relative to the chapter's page)`` of the files the page offers.

    Example
    -------
    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# T\\n\\nIntro."),
    ...                                      nbformat.v4.new_code_cell("x = 1")])
    >>> dress(nb, "b9_demo", dict(profile="smoke", claims=[], params={"profile": "smoke"}, seconds=1.0))
    >>> dress(nb, "b9_demo", dict(profile="smoke", claims=[], params={"profile": "smoke"}, seconds=1.0))
    >>> nb.cells[0].source.count("What this chapter found"), nb.cells[1].metadata.tags, len(nb.cells)
    (1, ['hide-input'], 3)
    """
    import nbformat

    nb.cells = [c for c in nb.cells if not c.metadata.get(DRESSED)]
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = _BOX.sub("\n\n", cell.source).strip("\n")
        elif cell.cell_type == "code":
            tags = cell.metadata.setdefault("tags", [])
            if not {"remove-cell", "remove-input", "hide-input"} & set(tags):
                tags.append("hide-input")
    if record is None:
        return
    claims = [dict(c, chapter=name) for c in record.get("claims", [])]
    glossary = f"../{GLOSSARY}.html"
    box = f"<!-- findings -->\n{findings_html(claims, to_decide, glossary)}\n<!-- /findings -->"
    title = next((c for c in nb.cells if c.cell_type == "markdown" and c.source.lstrip().startswith("# ")), None)
    if title is not None:
        head, _, rest = title.source.lstrip().partition("\n")
        title.source = f"{head}\n\n{box}\n\n{rest.strip()}".rstrip() + "\n"
    else:
        cell = nbformat.v4.new_markdown_cell(box, id="invlib-findings")
        cell.metadata[DRESSED] = True
        nb.cells.insert(0, cell)
    cell = nbformat.v4.new_markdown_cell(reproduce_markdown(name, record, repository, downloads, nb),
                                         id="invlib-reproduce")
    cell.metadata[DRESSED] = True
    nb.cells.append(cell)


def reproduce_markdown(name: str, record: Mapping, repository: str = "", downloads=(), nb=None) -> str:
    """The "Reproduce this chapter" section: the command on each profile, what this run was, its results to
    download, its settings (folded) and its source (the Jupytext file and the ``invlib`` modules it imports).

    Example
    -------
    >>> text = reproduce_markdown("b9_demo", dict(profile="cpu", params={"profile": "cpu", "seeds": 3}, seconds=61.2))
    >>> "python -m invlib book --profile smoke --only b9_demo" in text and "| `seeds` | 3 |" in text
    True
    >>> "-p seed=1" in text  # only a chapter with a seed parameter shows one
    False
    """
    env = record.get("env") or {}
    seconds = record.get("book_seconds", record.get("seconds"))
    lines = ["## Reproduce this chapter", "",
             f"This page was executed on the `{record.get('profile', '?')}` profile"
             + (f" in {number(float(seconds))} s" if isinstance(seconds, (int, float)) else "")
             + (f" on {record['finished'][:10]}" if record.get("finished") else "")
             + (f" (torch {env['torch']}, {env.get('device', 'cpu')}, {env.get('cpu_threads')} thread"
                f"{'s' * (env.get('cpu_threads') != 1)})" if env.get("torch") else "") + ". "
             "Every number on it comes from that run; rerun it on any profile with one command:", "",
             "```bash",
             "# the cpu profile, the book's default",
             f"make book ONLY={name}",
             "# a check in under a minute, and one GPU",
             f"python -m invlib book --profile smoke --only {name}",
             f"python -m invlib book --profile gpu --only {name}",
             *(["# any parameter of the chapter (the settings below)",
                f"python -m invlib book --profile cpu --only {name} -p seed=1"]
               if "seed" in (record.get("params") or {}) else []),
             "```", "",
             "or with papermill on the chapter's source:", "", "```bash",
             f"jupytext --to ipynb notebooks/{name}.py -o {name}.ipynb",
             f"papermill {name}.ipynb out.ipynb -p profile cpu", "```", ""]
    if downloads:
        links = ", ".join(f"{{download}}`{label} <{path}>`" for label, path in downloads)
        lines += [f"**Results of this run**: {links}.", ""]
    source = f"notebooks/{name}.py"
    modules = sorted(set(re.findall(r"from (invlib(?:\.[\w.]+)?) import (\w+)", "\n".join(
        c.source for c in (nb.cells if nb is not None else []) if c.cell_type == "code"))))
    names = sorted({f"{m}.{x}" if m != "invlib" else f"invlib.{x}" for m, x in modules})
    if repository:
        base = repository.rstrip("/") + "/blob/main/"
        lines.append(f"**Source**: [{source}]({base}{source})" + (", and the library code it calls: " + ", ".join(
            f"[`{m}`]({base}{m.replace('.', '/')}.py)" for m in names) if names else "") + ".")
    else:
        lines.append(f"**Source**: `{source}` in the book's repository" + (
            ", and the library code it calls: " + ", ".join(f"`{m}`" for m in names) if names else "")
            + "; the code of every cell above is one click away (*Show code cell source*).")
    params = {k: v for k, v in (record.get("params") or {}).items()}
    if params:
        rows = "\n".join(f"| `{k}` | {_md_cell(v)} |" for k, v in params.items())
        lines += ["", ":::{dropdown} The settings of this run", "", "| setting | value |", "|---|---|", rows, ":::"]
    return "\n".join(lines) + "\n"


def _md_cell(v) -> str:
    text = value_text(v) if not isinstance(v, str) else v
    return re.sub(r"([|*_`<>\[\]\\])", r"\\\1", text) or "—"


def write_downloads(name: str, record: Mapping, folder) -> list[tuple[str, str]]:
    """Write a chapter's results for download into ``folder``: its JSON, its claims (CSV, one row per claim:
    id, kind, claim, paper, this run, verdict, estimate, lo, hi, n, unit, criterion) and its metrics (CSV: metric,
    this run, paper, note). Returns ``(label, file name)`` pairs.

    Example
    -------
    >>> import tempfile, pathlib
    >>> out = write_downloads("b9_demo", dict(claims=[], metrics={"top1": 0.5}, paper={}, notes={}),
    ...                       pathlib.Path(tempfile.mkdtemp()))
    >>> [label for label, _ in out]
    ['JSON', 'claims (CSV)', 'metrics (CSV)']
    """
    import csv
    import json
    from pathlib import Path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(record, indent=2))
    with open(folder / f"{name}-claims.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "kind", "claim", "paper", "this run", "verdict", "estimate", "lo", "hi", "n", "unit",
                    "criterion"])
        for c in record.get("claims", []):
            ev = c.get("evidence") or {}
            w.writerow([c["id"], c.get("kind", "paper"), c["claim"], value_text(c.get("paper")),
                        value_text(c.get("ours")), c["verdict"], *(ev.get(k) for k in ("estimate", "lo", "hi", "n",
                                                                                     "unit")), c.get("criterion")])
    with open(folder / f"{name}-metrics.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["metric", "this run", "paper", "note"])
        for k, v in (record.get("metrics") or {}).items():
            w.writerow([k, json.dumps(v) if isinstance(v, (dict, list)) else v, (record.get("paper") or {}).get(k, ""),
                        (record.get("notes") or {}).get(k, "")])
    return [("JSON", f"{name}.json"), ("claims (CSV)", f"{name}-claims.csv"), ("metrics (CSV)", f"{name}-metrics.csv")]

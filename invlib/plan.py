"""The sample-size plan: how many replicates decide each claim, what they cost, and where a budget buys the most.

A finished build leaves, per chapter, its claims' evidence (each part's interval, its replicates ``n``, its
boundary: ``null + smallest``, declared in the paper's protocol) and what one replicate of each family cost
(:meth:`invlib.results.Run.replicates`: the chapter parameter that sets the replicates, e.g. ``seeds``, the
seconds of each replicate, the claims resting on it). From these, without running anything:

- **per part**: its spread, n now, and the n at which a rerun's interval clears the boundary with 80 % probability
  if the true effect is the one measured (:func:`invlib.verdicts.n_needed` with ``power``; the t quantile at that
  n); a part on one replicate has no spread yet, and says so;
- **per claim**: the n at which the claim is decided (every part must be decisive where all must hold; the easiest
  part on the paper's side where any may hold), and what it costs in each family;
- **per family**: the replicates the budget buys there. Every family starts at its claims' ``n_min`` (a claim
  about training rests on at least that many seeds); then, greedily, the step (a family raised to the n that
  decides one more group of its claims) that decides the most claims per second, while the budget lasts.

The declarations (boundaries, ``n_min``) come from the build's JSON, which stores them: the plan reads spreads and
seconds and moves no declaration.

Run: ``python -m invlib plan [--profile cpu] [--budget SECONDS] [--power 0.8] [--out FILE]``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .profiles import BOOK_LIMIT_S
from .verdicts import Interval, n_needed

POWER = 0.8  # a plan's n decides its claim in this share of reruns if the true effect is the one measured
N_MAX = 50  # replicates of one family the plan considers at most (beyond it a claim is out of reach at cpu)
DECIDED = ("reproduced", "not reproduced", "partly")


@dataclass(frozen=True)
class PartPlan:
    """One claim part's evidence and what would decide it.

    ``n80``: the replicates at which it is decided with probability :data:`POWER` (None: ``why``); ``side``:
    ``+1`` where the estimate lies on the paper's side of the boundary, ``-1`` on the other, 0 on it."""

    chapter: str
    claim: str
    part: str
    unit: str
    n: int
    n_min: int
    estimate: float | None
    lo: float | None
    hi: float | None
    boundary: float | None
    spread: float | None
    verdict: str
    side: int
    n80: int | None
    why: str = ""


@dataclass
class Family:
    """The replicates of one chapter's parameter (e.g. D2's ``seeds``): n run, seconds per replicate, its claims."""

    chapter: str
    parameter: str
    n: int
    seconds: float  # per replicate: the mean of those run
    claims: tuple[str, ...]
    note: str = ""
    planned: int = 0

    @property
    def key(self) -> str:
        return f"{self.chapter}:{self.parameter}"


@dataclass(frozen=True)
class ClaimPlan:
    """A claim's verdict now and the n that decides it (None: ``why``), with the families it rests on."""

    chapter: str
    claim: str
    verdict: str
    n: int
    n_min: int
    need: int | None
    why: str
    families: tuple[str, ...] = ()


@dataclass
class Plan:
    """The plan of one build: its parts, claims and families, the budget (seconds of replicates) and the claims it
    decides at the planned n (``decided``: (chapter, claim id) pairs, those decided now included)."""

    parts: list[PartPlan]
    claims: list[ClaimPlan]
    families: list[Family]
    budget: float
    power: float = POWER
    decided: set = field(default_factory=set)

    @property
    def seconds(self) -> float:
        """Seconds of replicates at the planned n, over every family."""
        return plan_seconds(self.families)


def read_build(results: str | Path) -> list[dict]:
    """The chapter JSONs of one build (``results/<profile>``), in name order; a clear error where there are none.

    Example
    -------
    >>> read_build("/nonexistent")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    FileNotFoundError: no chapter results in /nonexistent: ...
    """
    files = sorted(Path(results).glob("*.json"))
    runs = [json.loads(f.read_text()) for f in files]
    runs = [r for r in runs if isinstance(r, dict) and "claims" in r]
    if not runs:
        raise FileNotFoundError(f"no chapter results in {results}: run the book first (python -m invlib book)")
    return runs


def part_plans(runs: Iterable[Mapping], power: float = POWER) -> list[PartPlan]:
    """Every claim part of the runs (one row per leaf of ``evidence.parts``; a one-part claim is one row).

    Example
    -------
    >>> ev = dict(verdict="inconclusive at this budget", estimate=2.0, lo=-0.48, hi=4.48, n=3, n_min=3, level=0.95,
    ...           method="t", boundary=1.0, direction="greater", margin=0.0, unit="seed")
    >>> [p] = part_plans([dict(notebook="x1", claims=[dict(id="c", verdict=ev["verdict"], evidence=ev)])])
    >>> p.n80, round(p.spread, 2), p.side
    (10, 1.0, 1)
    """
    rows = []
    for run in runs:
        for c in run["claims"]:
            for name, ev in _leaves(c.get("evidence") or {}):
                rows.append(_part(run["notebook"], c["id"], name, ev, power))
    return rows


def _leaves(ev: Mapping, prefix: str = ""):
    parts = ev.get("parts")
    if not parts:
        yield prefix, ev
        return
    for name, sub in parts.items():
        if isinstance(sub, Mapping):
            yield from _leaves(sub, f"{prefix}{': ' if prefix else ''}{name}")


def _num(x) -> float | None:
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else None


def _part(chapter: str, claim: str, name: str, ev: Mapping, power: float) -> PartPlan:
    est, lo, hi, b = (_num(ev.get(k)) for k in ("estimate", "lo", "hi", "boundary"))
    n, n_min, direction = int(ev.get("n") or 0), int(ev.get("n_min") or 1), ev.get("direction", "greater")
    verdict, method, level = ev.get("verdict", ""), ev.get("method", ""), float(ev.get("level") or 0.95)
    spread, side, n80, why = None, 0, None, ""
    if est is not None and b is not None:
        sign = {"greater": 1, "less": -1}.get(direction, 0)
        side = int(math.copysign(1, (est - b) * sign)) if sign and est != b else 0
    if None in (est, lo, hi, b):
        why = ev.get("n_needed_why") or ("one replicate: no spread to plan from" if n < 2 else "no interval")
    else:
        iv = Interval(est, lo, hi, n, level, method)
        if method == "t" and n >= 2:
            from scipy import stats

            spread = float((hi - lo) / 2 * math.sqrt(n) / stats.t.ppf(0.5 + level / 2, n - 1))
        n80, why = n_needed(iv, direction, b, float(ev.get("margin") or 0.0), n_min, power=power)
        if verdict in DECIDED:
            n80, why = n, ""
    return PartPlan(chapter, claim, name, str(ev.get("unit", "")), n, n_min, est, lo, hi, b, spread, verdict, side,
                    n80, why)


def claim_need(parts: list[PartPlan], combine: str = "all") -> tuple[int | None, str]:
    """The replicates at which a claim is decided, from its parts' ``n80``: where every part must hold
    (:func:`invlib.verdicts.decide_parts`), every part must be decisive, so the most any part needs; where any may
    hold (:func:`invlib.verdicts.decide_any`), one part reproduced decides it, so the fewest of the parts on the
    paper's side, else every part must fail. ``(None, why)`` where a part that must be decided has no number.

    Example
    -------
    >>> mk = lambda n80, side: PartPlan("x", "c", "", "seed", 3, 3, 0, 0, 0, 0, None, "", side, n80)
    >>> claim_need([mk(5, 1), mk(9, -1)]), claim_need([mk(5, 1), mk(9, 1)], "any"), claim_need([mk(5, -1)], "any")
    ((9, ''), (5, ''), (5, ''))
    """
    toward = [p for p in parts if p.side > 0 and p.n80 is not None]
    if combine == "any" and toward:
        return min(p.n80 for p in toward), ""
    missing = [p for p in parts if p.n80 is None]
    if missing:
        return None, missing[0].why or "no number for a part"
    return max((p.n80 for p in parts), default=None), ""


def families(runs: Iterable[Mapping]) -> list[Family]:
    """The replicate families the runs recorded (:meth:`invlib.results.Run.replicates`), one per chapter and
    parameter."""
    out = []
    for run in runs:
        for param, rec in (run.get("replicates") or {}).items():
            secs = [float(s) for s in rec.get("seconds", [])]
            if secs:
                out.append(Family(run["notebook"], param, len(secs), sum(secs) / len(secs),
                                  tuple(rec.get("claims", ())), rec.get("note", "")))
    return out


def make_plan(runs: list[Mapping], budget: float, power: float = POWER, n_max: int = N_MAX) -> Plan:
    """The plan for a build's ``runs`` (:func:`read_build`) within ``budget`` seconds of replicates (the sum over
    families of planned n x seconds per replicate).

    Every family first gets the ``n_min`` of its claims (at least the n it ran); a budget that does not cover
    that is overspent, and :func:`markdown` says so. Then the greedy steps: for each family, the candidate n's are
    the needs of its undecided claims (up to ``n_max``); the step with the most newly decided claims per second
    that fits the budget is taken, until none fits.

    Example
    -------
    >>> ev = lambda est: dict(verdict="inconclusive at this budget", estimate=est, lo=est - 2.48, hi=est + 2.48,
    ...                       n=3, n_min=3, level=0.95, method="t", boundary=0.0, direction="greater", unit="seed")
    >>> run = lambda name, cost, ests: dict(notebook=name, claims=[dict(id=f"{name}/{i}", verdict="i",
    ...     evidence=ev(e)) for i, e in enumerate(ests)], replicates={"seeds": dict(seconds=[cost] * 3,
    ...     claims=[f"{name}/{i}" for i in range(len(ests))])})
    >>> p = make_plan([run("cheap", 10.0, [2.0, 1.5]), run("dear", 100.0, [2.0])], budget=400)
    >>> {f.chapter: f.planned for f in p.families}, sorted(p.decided), p.seconds
    ({'cheap': 6, 'dear': 3}, [('cheap', 'cheap/0'), ('cheap', 'cheap/1')], 360.0)
    """
    parts = part_plans(runs, power)
    by_claim: dict[tuple[str, str], list[PartPlan]] = {}
    for p in parts:
        by_claim.setdefault((p.chapter, p.claim), []).append(p)
    fams = families(runs)
    rests = {}  # claim -> family keys
    for f in fams:
        for cid in f.claims:
            rests.setdefault((f.chapter, cid), []).append(f.key)
    claims, decided = [], set()
    for run in runs:
        for c in run["claims"]:
            key = (run["notebook"], c["id"])
            combine = (c.get("declaration") or {}).get("combine", "all")
            need, why = claim_need(by_claim.get(key, []), combine)
            ps = by_claim.get(key, [])
            claims.append(ClaimPlan(key[0], c["id"], c["verdict"], min((p.n for p in ps), default=0),
                                    max((p.n_min for p in ps), default=1), need, why, tuple(rests.get(key, ()))))
            if c["verdict"] in DECIDED:
                decided.add(key)
    by_key = {f.key: f for f in fams}
    for f in fams:
        f.planned = max([f.n] + [c.n_min for c in claims if f.key in c.families])

    def decided_at(c: ClaimPlan) -> bool:
        return (c.verdict in DECIDED or (c.need is not None and bool(c.families)
                                         and all(by_key[k].planned >= c.need for k in c.families)))

    while True:
        now = {(c.chapter, c.claim) for c in claims if decided_at(c)}
        best = None
        for f in fams:
            for n in sorted({c.need for c in claims if f.key in c.families and c.need and f.planned < c.need <= n_max
                             and (c.chapter, c.claim) not in now}):
                extra = (n - f.planned) * f.seconds
                old, f.planned = f.planned, n
                gain = len({(c.chapter, c.claim) for c in claims if decided_at(c)} - now)
                f.planned = old
                if gain and plan_seconds(fams) + extra <= budget:
                    score = gain / max(extra, 1e-9)
                    if best is None or score > best[0]:
                        best = (score, f, n)
        if best is None:
            break
        best[1].planned = best[2]
    decided |= {(c.chapter, c.claim) for c in claims if decided_at(c)}
    return Plan(parts, claims, fams, float(budget), power, decided)


def plan_seconds(fams: Iterable[Family]) -> float:
    """Seconds of replicates at the families' planned n."""
    return sum(f.planned * f.seconds for f in fams)


def to_decide(runs: list[Mapping], power: float = POWER, cores: int = 2) -> dict[tuple[str, str], str]:
    """For each undecided claim of ``runs`` (:func:`read_build`) that rests on a recorded family of replicates
    (:meth:`invlib.results.Run.replicates`), in words: the n at which a rerun decides it with probability
    ``power`` if the true effect is the one measured, and what the replicates beyond those run cost (their
    families' seconds per replicate, on ``cores`` cores); or why no n can be said. Keyed by ``(chapter, claim id)``;
    the scoreboard prints it beside the verdict.

    Example
    -------
    >>> ev = dict(verdict="inconclusive at this budget", estimate=1.0, lo=-1.48, hi=3.48, n=3, n_min=3, level=0.95,
    ...           method="t", boundary=0.0, direction="greater", unit="seed")
    >>> run = dict(notebook="c", claims=[dict(id="c/0", verdict="inconclusive at this budget", evidence=ev)],
    ...            replicates={"seeds": dict(seconds=[60.0] * 3, claims=["c/0"])})
    >>> to_decide([run])[("c", "c/0")]
    '80 % power at n = 10 (7 more replicates of seeds: about 4 min on 2 cores)'
    """
    p = make_plan(runs, 0.0, power)
    by_key = {f.key: f for f in p.families}
    out = {}
    for c in p.claims:
        if c.verdict in DECIDED or c.verdict.startswith("not measurable") or not c.families:
            continue
        if c.need is None:
            out[c.chapter, c.claim] = c.why
            continue
        text = f"{power:.0%} power at n = {c.need:,}".replace("%", " %")
        more = {k: max(0, c.need - by_key[k].n) for k in c.families}
        if c.need > N_MAX:
            text += f" (out of reach: more than {N_MAX} replicates)"
        elif any(more.values()):
            seconds = sum(m * by_key[k].seconds for k, m in more.items())
            what = ", ".join(f"{m} more replicate{'s' * (m != 1)} of {k.split(':')[1]}" for k, m in more.items() if m)
            wall = seconds / cores
            text += f" ({what}: about {f'{wall / 60:,.0f} min' if wall >= 90 else f'{wall:.0f} s'} on {cores} cores)"
        out[c.chapter, c.claim] = text
    return out


REACH = (3, 5, 10, 20, 50, 200, 1000)


def reach(runs: list[Mapping], power: float = POWER, n_maxes: Iterable[int] = REACH) -> list[dict]:
    """What replicates alone can decide, whatever they cost: for each cap ``n_max`` on a family's replicates, the
    claims decided (now, or with probability ``power`` at the n the plan finds, every family at up to ``n_max``) and
    the seconds of replicates that takes. Claims whose replicates are images or models, not a family's seeds, count
    only as decided now. Rows ``n_max, decided, measurable, seconds``.

    Example
    -------
    >>> ev = lambda est: dict(verdict="inconclusive at this budget", estimate=est, lo=est - 2.48, hi=est + 2.48,
    ...                       n=3, n_min=3, level=0.95, method="t", boundary=0.0, direction="greater", unit="seed")
    >>> run = dict(notebook="c", claims=[dict(id=f"c/{i}", verdict="i", evidence=ev(e)) for i, e in
    ...            enumerate([2.0, 0.3])], replicates={"seeds": dict(seconds=[10.0] * 3, claims=["c/0", "c/1"])})
    >>> [(r["n_max"], r["decided"]) for r in reach([run], n_maxes=(3, 10, 1000))]
    [(3, 0), (10, 1), (1000, 2)]
    """
    rows = []
    for n_max in n_maxes:
        p = make_plan(runs, math.inf, power, n_max)
        measurable = sum(1 for c in p.claims if not c.verdict.startswith("not measurable"))
        rows.append(dict(n_max=n_max, decided=len(p.decided), measurable=measurable, seconds=p.seconds))
    return rows


def markdown(plan: Plan, title: str = "Sample-size plan", source: str = "", reach: list[dict] | None = None) -> str:
    """The plan as a Markdown page: the families (n run, seconds per replicate, n planned, seconds, claims decided
    there), every undecided or planned claim (n now, the n that decides it at the plan's power, its cost) and,
    given :func:`reach`'s rows, what replicates alone can decide at any cost.

    Example
    -------
    >>> print(markdown(Plan([], [], [], 60.0)).splitlines()[0])
    # Sample-size plan
    """
    fams = sorted(plan.families, key=lambda f: f.key)
    lines = [f"# {title}", ""]
    if source:
        lines += [source, ""]
    n_measurable = sum(1 for c in plan.claims if not c.verdict.startswith("not measurable"))
    n_now = sum(1 for c in plan.claims if c.verdict in DECIDED)
    lines += [f"Claims decided now: {n_now} of {n_measurable} measurable; at the planned replicates, if every effect "
              f"is the one measured: about {len(plan.decided)} (each planned claim decided with probability "
              f"{plan.power:.0%}). Budget {plan.budget:,.0f} s of replicates; planned {plan.seconds:,.0f} s"
              + (" (over: the floor of n_min alone costs more)" if plan.seconds > plan.budget else "") + ".", "",
              "## Families", "",
              "| chapter | parameter | n run | s per replicate | n planned | s planned | claims on it | decided at plan"
              " |",
              "|---|---|---:|---:|---:|---:|---:|---:|"]
    for f in fams:
        on = [c for c in plan.claims if f.key in c.families]
        won = sum((c.chapter, c.claim) in plan.decided for c in on)
        lines.append(f"| {f.chapter} | {f.parameter} | {f.n} | {f.seconds:,.1f} | {f.planned} | "
                     f"{f.planned * f.seconds:,.0f} | {len(on)} | {won} |")
    lines += ["", "## Claims", "",
              "| chapter | claim | verdict now | n now | n_min | n to decide (80 %) | families | cost at that n (s) |",
              "|---|---|---|---:|---:|---:|---|---:|"]
    by_key = {f.key: f for f in plan.families}
    for c in sorted(plan.claims, key=lambda c: (c.chapter, c.claim)):
        if c.verdict in DECIDED:
            continue
        need = str(c.need) if c.need is not None else (c.why or "—")
        cost = (f"{sum(max(c.need, by_key[k].n) * by_key[k].seconds for k in c.families):,.0f}"
                if c.need is not None and c.families else "—")
        lines.append(f"| {c.chapter} | {c.claim} | {c.verdict} | {c.n} | {c.n_min} | {need} | "
                     f"{', '.join(k.split(':')[1] for k in c.families) or '—'} | {cost} |")
    if reach:
        lines += ["", "## What replicates alone can decide, at any cost", "",
                  f"Every family at up to n_max replicates, no budget: the claims decided (now, or at {plan.power:.0%} "
                  "power at the n found), and the seconds of replicates that takes (each replicate on one thread, "
                  "two at once on 2 cores). Claims whose replicates are images or models count only as decided "
                  "now.", "",
                  "| n_max | decided | share of measurable | seconds of replicates | hours on 2 cores |",
                  "|---:|---:|---:|---:|---:|"]
        lines += [f"| {r['n_max']:,} | {r['decided']} | {r['decided'] / max(r['measurable'], 1):.0%} | "
                  f"{r['seconds']:,.0f} | {r['seconds'] / 2 / 3600:.1f} |" for r in reach]
    return "\n".join(lines) + "\n"




def default_budget(results: str | Path, runs: list[Mapping], cores: int = 2) -> float | None:
    """Seconds of replicates a build may spend: those it spent, plus ``cores`` x the wall seconds left below
    :data:`BOOK_LIMIT_S` by the last whole build (``<results>/../build-<profile>.json``); None without that record.

    Example
    -------
    >>> default_budget("/nonexistent/cpu", []) is None
    True
    """
    record = Path(results).parent / f"build-{Path(results).name}.json"
    if not record.exists():
        return None
    wall = float(json.loads(record.read_text()).get("wall") or 0)
    spent = sum(f.n * f.seconds for f in families(runs))
    return spent + cores * max(0.0, BOOK_LIMIT_S - wall)

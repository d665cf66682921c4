"""The sample-size plan: each claim's chance of being decided at more replicates, what they cost, and where a budget
buys the most.

A finished build leaves, per chapter, its claims' evidence (each part's interval, its replicates ``n``, its
boundary: ``null + smallest``, declared in the paper's protocol) and what one replicate of each family cost
(:meth:`invlib.results.Run.replicates`: the chapter parameter that sets the replicates, e.g. ``seeds``, the
seconds of each replicate, the claims resting on it, and where recorded what a replicate is and the most the design
has). From these, without running anything:

- **per part**: its chances of being reproduced and not reproduced once its replicates are extended to n
  (:func:`invlib.verdicts.chances`): averaged over what the replicates run leave uncertain about the effect and its
  spread, not at the measured effect taken as the true one (a 3-seed pilot's spread has 2 degrees of freedom);
- **per claim**: its chance of being decided at n. One part: reproduced or not reproduced. Every part must hold
  (:func:`invlib.verdicts.decide_parts`): every part decisive, or one part against the claim at the strict level
  ``1 - 0.05 / k`` (:func:`invlib.verdicts.strict_level`), the parts taken as independent:
  ``1 - prod(1 - s_i) + prod(d_i - s_i)`` (``d_i`` the part's chance of being decisive, ``s_i`` of being against
  at the strict level). Any part may hold (:func:`invlib.verdicts.decide_any`): one part reproduced, or every
  part not: ``1 - prod(1 - r_i) + prod(x_i)``. A part this profile cannot measure is left out, as
  ``decide_parts`` leaves it out. The n at which that chance reaches :data:`POWER` is the claim's need;
- **per family**: every kind of replicate. Besides the recorded families (seeds, runs, models), the claims on no
  family rest on evaluation items (images, pairs, draws) or on the design's classes or models: each chapter's such
  replicates are a family of their own, their seconds estimated as the chapter's seconds over its items (an upper
  bound: the chapter's fixed costs are spread over them too). A family has a cap where its design has a most: C's
  transformation types (:data:`invlib.transform_types.TYPES`), a data set's classes, a fixed design's models;
- **the budget**: every family starts at its claims' ``n_min`` (a claim about training rests on at least that many
  seeds); then, greedily, the step (a family raised to a larger n) that adds the most expected decided claims per
  second, while the budget lasts. A plan's count of decided claims is the sum of their chances.

The declarations (boundaries, ``n_min``) come from the build's JSON, which stores them: the plan reads spreads and
seconds and moves no declaration. At the n run a claim's chance is its verdict (1 or 0), except in a build from
before a part against a claim decided it early (no ``decided_by`` in its evidence): there its intervals are read
under that rule, and a claim it decides says so ("as run: ...").

Where the chances stand against reruns (``tests/test_plan.py``): reruns whose true effect is drawn from what the
pilot allows are decided as often as the plan says (t, Wilson, bootstrap, a conjunction by ``protocol.decide``);
for one true effect, pilots of it planned and rerun at the n planned are decided about as often as planned where
the effect is near its boundary (a claim that truly needs 20 seeds), and more often where it is far from it (the
average over what a 3-seed pilot leaves possible is cautious there); for a claim that truly needs 60 seeds, a few
points less (``benchmarks/measurements/plan.md``).

Run: ``python -m invlib plan [--profile cpu] [--budget SECONDS] [--power 0.8] [--out FILE]``.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .profiles import BOOK_LIMIT_IMG_S, BOOK_LIMIT_S
from .utils import check_choice
from .verdicts import (
    INCONCLUSIVE,
    N_NEEDED_MAX,
    NOT_REPRODUCED,
    Interval,
    chances,
    planning_why,
    premise_not_met,
    share_decidable,
)

POWER = 0.8  # a claim's need: the n at which it is decided with this chance
N_MAX = 50  # trained replicates (seeds, runs, models) of one family the plan considers at most (beyond: out of reach)
DECIDED = ("reproduced", "not reproduced", "partly")
EARLY = "a part is against the claim at the strict level, a rule this build's verdict predates"
DOWN_UNITS = ("seed", "run")  # a budget below what was run may plan fewer of these (make_plan's floor="n_min")
KEEP = POWER  # floor="keep": a claim decided now keeps at least this chance of staying decided at fewer replicates
FLOORS = ("run", "n_min", "keep")
TRAINED = ("seed", "run", "model")  # replicates that are trained; the others (images, pairs, draws) are evaluated
FIXED_BY_DESIGN = ("class", "class pair", "model")  # on no recorded family: as many as the design has, no more
# Families of chapter C whose replicates are transformation types: at most those of invlib.transform_types.TYPES
TYPE_FAMILIES = ("types", "wide_types", "cross_types", "ft_types")


@dataclass(frozen=True)
class PartPlan:
    """One claim part's evidence, as the plan reads it: its interval now and its declared test. ``why``: why its
    chances cannot be said ("" where they can)."""

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
    verdict: str
    method: str = "t"
    level: float = 0.95
    direction: str = "greater"
    margin: float = 0.0
    why: str = ""

    @property
    def measured(self) -> bool:
        return not self.verdict.startswith("not measurable")

    def chances(self, n: int, level: float | None = None) -> tuple[float, float]:
        """Its chances of being reproduced and not reproduced at ``n`` replicates (its interval at ``level``,
        default its own; below the n run, ``n`` fresh ones): :func:`invlib.verdicts.chances`, cached."""
        if self.why:
            raise ValueError(self.why)
        return _chances(self.estimate, self.lo, self.hi, self.n, self.level, self.method, self.direction,
                        self.boundary, self.margin, self.n_min, int(n), level)


@functools.lru_cache(maxsize=200_000)
def _chances(est, lo, hi, n0, level0, method, direction, boundary, margin, n_min, n, level):
    return chances(Interval(est, lo, hi, n0, level0, method), direction, boundary, margin, n, n_min, level)


@dataclass
class Family:
    """The replicates of one chapter's parameter (e.g. D2's ``seeds``), or of a chapter's evaluation items or
    design's units where no parameter was recorded (``recorded`` False: the seconds are an estimate, ``note`` says
    how): n run, seconds per replicate, its claims, what a replicate is, the most the design has (``cap``, None:
    no most known; ``cap_why``)."""

    chapter: str
    parameter: str
    n: int
    seconds: float  # per replicate: the mean of those run
    claims: tuple[str, ...]
    note: str = ""
    planned: int = 0
    unit: str = "seed"
    cap: int | None = None
    cap_why: str = ""
    recorded: bool = True
    splits: dict = field(default_factory=dict)  # effect -> verdicts.variance_split (results.Run.variance)
    shared: tuple[tuple[str, str], ...] = ()  # (chapter, claim) of other chapters that read these replicates
    same_as: str = ""  # "<chapter>:<parameter>": the family these replicates are, as recorded (Run.replicates)

    @property
    def key(self) -> str:
        return f"{self.chapter}:{self.parameter}"

    @property
    def limit(self) -> int:
        """The most replicates the plan considers: the cap, else :data:`N_MAX` for trained replicates (at least
        those run) and :data:`invlib.verdicts.N_NEEDED_MAX` for evaluated ones."""
        most = max(N_MAX, self.n) if self.unit in TRAINED else N_NEEDED_MAX
        return min(most, self.cap) if self.cap is not None else most


@dataclass
class ClaimPlan:
    """A claim's verdict now, its parts, the families it rests on and the n that decides it with the plan's power
    (``need``; None: ``why``). ``chance`` is filled in by :func:`make_plan`: its chance at the planned n."""

    chapter: str
    claim: str
    verdict: str
    n: int
    n_min: int
    need: int | None
    why: str
    families: tuple[str, ...] = ()
    combine: str = "all"
    parts: tuple[PartPlan, ...] = ()
    chance: float | None = None
    no_strict: frozenset = frozenset()  # parts (by position) whose interval the protocol cannot take stricter
    early_known: bool = True  # the build decides a claim early by a part against it (its evidence has decided_by)
    premise: bool = False  # a premise it declared as a gate failed: its replicates cannot decide it

    @property
    def key(self) -> tuple[str, str]:
        return self.chapter, self.claim

    @property
    def decided(self) -> bool:
        return self.verdict in DECIDED

    @property
    def measurable(self) -> bool:
        return not self.verdict.startswith("not measurable")


@dataclass
class Plan:
    """The plan of one build: its parts, claims and families, the budget (seconds of replicates), the power a
    claim's need is taken at, and each claim's chance of being decided at the planned n (``chances``, by (chapter,
    claim id); 1 for a claim decided now whose replicates stay as run)."""

    parts: list[PartPlan]
    claims: list[ClaimPlan]
    families: list[Family]
    budget: float
    power: float = POWER
    chances: dict = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        """Seconds of replicates at the planned n, over every family."""
        return plan_seconds(self.families)

    @property
    def expected(self) -> float:
        """The claims expected decided at the planned n: the sum of their chances."""
        return sum(self.chances.values())


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


def part_plans(runs: Iterable[Mapping]) -> list[PartPlan]:
    """Every claim part of the runs (one row per leaf of ``evidence.parts``; a one-part claim is one row).

    Example
    -------
    >>> ev = dict(verdict="inconclusive at this budget", estimate=2.0, lo=-0.48, hi=4.48, n=3, n_min=3, level=0.95,
    ...           method="t", boundary=1.0, direction="greater", margin=0.0, unit="seed")
    >>> [p] = part_plans([dict(notebook="x1", claims=[dict(id="c", verdict=ev["verdict"], evidence=ev)])])
    >>> p.why, [round(x, 2) for x in p.chances(10)]
    ('', [0.63, 0.0])
    """
    rows = []
    for run in runs:
        for c in run["claims"]:
            for name, ev in _leaves(c.get("evidence") or {}):
                rows.append(_part(run["notebook"], c["id"], name, ev))
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


def _part(chapter: str, claim: str, name: str, ev: Mapping) -> PartPlan:
    est, lo, hi, b = (_num(ev.get(k)) for k in ("estimate", "lo", "hi", "boundary"))
    n, n_min, direction = int(ev.get("n") or 0), int(ev.get("n_min") or 1), ev.get("direction", "greater")
    verdict, method = ev.get("verdict", ""), ev.get("method", "")
    level, margin = _num(ev.get("level")) or 0.95, _num(ev.get("margin")) or 0.0
    why = ""
    if verdict.startswith("not measurable"):
        why = "not measurable at this profile"
    elif None in (est, lo, hi, b):
        why = ("no replicates yet: no spread to plan from" if n == 0 else
               "one replicate: no spread to plan from" if n < 2 else "no interval")
    else:
        why = planning_why(Interval(est, lo, hi, n, level, method))
    return PartPlan(chapter, claim, name, str(ev.get("unit", "")), n, n_min, est, lo, hi, b, verdict, method, level,
                    direction, margin, why)


def claim_chance(parts: Iterable[PartPlan], combine: str = "all", ns: Mapping[int, int] | None = None,
                 no_strict: Iterable[int] = ()) -> float:
    """A claim's chance of being decided with its parts' replicates at ``ns`` (by position in ``parts``; default
    as run), the parts taken as independent. Every part must hold (``combine="all"``): every part decisive, or one
    against the claim at the strict level ``1 - (1 - level) / k`` for the ``k`` measured parts, so ``1 - prod(1 -
    s_i) + prod(d_i - s_i)``. Any may hold: one reproduced or every one not, ``1 - prod(1 - r_i) + prod(x_i)``.
    Parts not measurable are left out; parts in ``no_strict`` (by position) never decide against the claim early
    (an interval given at its own level, which :func:`invlib.protocol.decide` cannot take stricter). Raises
    ValueError with a part's ``why`` where its chances cannot be said.

    Example
    -------
    >>> ev = lambda est: dict(verdict="inconclusive at this budget", estimate=est, lo=est - 2.48, hi=est + 2.48,
    ...                       n=3, n_min=3, level=0.95, method="t", boundary=0.0, direction="greater", unit="seed")
    >>> a, b = part_plans([dict(notebook="x", claims=[dict(id="c", verdict="i", evidence=dict(parts=dict(
    ...     a=ev(2.0), b=ev(-2.0))))])])
    >>> [round(claim_chance([p], ns={0: 10}), 2) for p in (a, b)], round(claim_chance([a, b], ns={0: 10, 1: 10}), 2)
    ([0.87, 0.87], 0.86)
    """
    parts = list(parts)
    ns = ns or {}
    use = [(p, int(ns.get(i, p.n)), i not in set(no_strict)) for i, p in enumerate(parts) if p.measured]
    if not use:
        return 0.0
    for p, _, _ in use:
        if p.why:
            raise ValueError(p.why)
    each = [p.chances(n) for p, n, _ in use]
    if combine == "any":
        return min(1.0, 1 - math.prod(1 - r for r, _ in each) + math.prod(x for _, x in each))
    k = len(use)  # a part against the claim at 1 - (1 - its level) / k (protocol._against; its own level already
    strict = [x if k == 1 else p.chances(n, 1 - (1 - p.level) / k)[1] if early else 0.0  # holds its multiplicity)
              for (p, n, early), (_, x) in zip(use, each, strict=True)]
    decisive = [r + x for r, x in each]
    return min(1.0, max(0.0, 1 - math.prod(1 - s for s in strict)
                        + math.prod(max(0.0, d - s) for d, s in zip(decisive, strict, strict=True))))


def families(runs: Iterable[Mapping]) -> list[Family]:
    """The replicate families the runs recorded (:meth:`invlib.results.Run.replicates`), one per chapter and
    parameter, with their unit and cap where recorded (else: C's type families capped at
    :data:`invlib.transform_types.TYPES`), and a family per chapter and unit for the claims on none (:func:`_items`).
    A family recorded ``same_as`` another chapter's (B5 reads B1's seeds) is that family, counted once: its claims
    join the other's (:attr:`Family.shared`), whose seconds per replicate stand (the replicates are trained once),
    where the other chapter ran with the same n; else it stays a family of its own.

    Example
    -------
    >>> run = dict(notebook="c1_x", params={}, seconds=10.0, claims=[], replicates={"types": dict(
    ...     seconds=[2.0] * 4, claims=["c/x"])})
    >>> [(f.parameter, f.n, f.cap) for f in families([run])]
    [('types', 4, 9)]
    >>> reader = dict(notebook="c2_y", params={}, seconds=1.0, claims=[], replicates={"c1.types": dict(
    ...     seconds=[0.5] * 4, claims=["c/z"], same_as="c1_x:types")})
    >>> [(f.key, f.seconds, f.shared) for f in families([run, reader])]
    [('c1_x:types', 2.0, (('c2_y', 'c/z'),))]
    """
    out = []
    for run in runs:
        parts = {}
        for c in run["claims"]:
            for _, ev in _leaves(c.get("evidence") or {}):
                parts.setdefault(c["id"], []).append(ev)
        for param, rec in (run.get("replicates") or {}).items():
            secs = [float(s) for s in rec.get("seconds", [])]
            if not secs:
                continue
            claims = tuple(rec.get("claims", ()))
            units = [ev.get("unit") for cid in claims for ev in parts.get(cid, [])
                     if ev.get("unit") and int(ev.get("n") or 0) == len(secs)]
            unit = rec.get("unit") or (max(sorted(set(units)), key=units.count) if units else "seed")
            cap, cap_why = rec.get("cap"), "recorded by the chapter" if rec.get("cap") is not None else ""
            if cap is None and param in TYPE_FAMILIES and run["notebook"].startswith("c"):
                from .transform_types import TYPES

                cap, cap_why = len(TYPES), f"the paper's {len(TYPES)} transformation types (transform_types.TYPES)"
            out.append(Family(run["notebook"], param, len(secs), sum(secs) / len(secs), claims, rec.get("note", ""),
                              unit=unit, cap=cap, cap_why=cap_why,
                              splits=dict((run.get("variance") or {}).get(param) or {}),
                              same_as=rec.get("same_as", "")))
        out += _items(run, {cid for f in out if f.chapter == run["notebook"] for cid in f.claims})
    return _merge_shared(out)


def _merge_shared(fams: list[Family]) -> list[Family]:
    """:func:`families` with each family recorded ``same_as`` another present at the same n folded into it."""
    by_key = {f.key: f for f in fams}
    out = []
    for f in fams:
        target = by_key.get(f.same_as)
        if target is None or target is f or target.n != f.n:
            out.append(f)
            continue
        target.shared += tuple((f.chapter, cid) for cid in f.claims)
        target.note = "; ".join(x for x in (target.note, f"also read by {f.chapter} (its {f.parameter})") if x)
    return out


def _items(run: Mapping, on_family: set[str]) -> list[Family]:
    """The replicates of a chapter's claims on no recorded family, one family per unit and n (seeds and runs
    excepted: what they cost is unknown): evaluation items (images, pairs, draws, scenes), their seconds estimated
    as the chapter's seconds over its items (an upper bound); classes and models of a fixed design, capped at the n
    the design has. The parameter is the chapter's setting of items (``n_...``, ``...pairs...``) equal to n where
    exactly one is (e.g. A1's ``n_val``), else the unit's plural."""
    groups: dict[tuple[str, int], list[str]] = {}
    for c in run["claims"]:
        if c["id"] in on_family:
            continue
        for _, ev in _leaves(c.get("evidence") or {}):
            unit, n = ev.get("unit", ""), int(ev.get("n") or 0)
            if unit in ("", "deterministic", "seed", "run") or n < 2 or str(ev.get("verdict", "")).startswith(
                    "not measurable"):  # seeds and runs without a recorded family: their cost is not known
                continue
            ids = groups.setdefault((unit, n), [])
            if c["id"] not in ids:
                ids.append(c["id"])
    out = []
    params = {k: v for k, v in (run.get("params") or {}).items() if isinstance(v, int) and not isinstance(v, bool)}
    by_unit = {}
    for unit, n in groups:
        by_unit.setdefault(unit, []).append(n)
    for (unit, n), ids in groups.items():
        named = [k for k, v in params.items() if v == n and (k.startswith("n_") or "pairs" in k)]
        plural = {"class": "classes", "class pair": "class pairs"}.get(unit, unit + "s")
        name = named[0] if len(named) == 1 else plural if len(by_unit[unit]) == 1 else f"{plural} ({n})"
        if name in (run.get("replicates") or {}):
            name = f"{name} ({unit})"
        seconds = float(run.get("seconds") or 0.0) / n
        fixed = unit in FIXED_BY_DESIGN
        cap, cap_why = (n, f"the design's {n} {plural}") if fixed else (None, "")
        note = (f"not recorded as a family: {plural} of the chapter's design, the plan adds none" if fixed else
                f"not recorded as a family: {plural} evaluated; seconds estimated as the chapter's "
                f"{float(run.get('seconds') or 0):,.0f} s over its {n} {plural} (an upper bound)")
        out.append(Family(run["notebook"], name, n, seconds, tuple(ids), note, unit=unit, cap=cap, cap_why=cap_why,
                          recorded=False))
    return out


def _claim_plans(runs: list[Mapping], fams: list[Family], power: float) -> list[ClaimPlan]:
    """Every claim of the runs with its parts, families and need (:func:`claim_need`)."""
    by_claim: dict[tuple[str, str], list[PartPlan]] = {}
    for p in part_plans(runs):
        by_claim.setdefault((p.chapter, p.claim), []).append(p)
    rests: dict[tuple[str, str], list[str]] = {}
    for f in fams:
        for key in [(f.chapter, cid) for cid in f.claims] + list(f.shared):
            rests.setdefault(key, []).append(f.key)
    out = []
    for run in runs:
        for c in run["claims"]:
            key = (run["notebook"], c["id"])
            ps = by_claim.get(key, [])
            measured = [p for p in ps if p.measured] or ps
            cp = ClaimPlan(key[0], c["id"], c["verdict"], min((p.n for p in measured), default=0),
                           max((p.n_min for p in ps), default=1), None, "", tuple(rests.get(key, ())),
                           (c.get("declaration") or {}).get("combine", "all"), tuple(ps))
            cp.early_known = ("decided_by" in (c.get("evidence") or {"decided_by": ""}) or cp.combine == "any"
                              or sum(p.measured for p in ps) < 2)
            cp.no_strict = _no_strict(cp) if cp.early_known else frozenset()
            cp.premise = premise_not_met(c)
            cp.need, cp.why = claim_need(cp, {f.key: f for f in fams}, power)
            out.append(cp)
    return out


def _no_strict(c: ClaimPlan) -> frozenset:
    """The parts of an undecided claim that every part must hold which are against it at the strict level as run,
    yet did not decide it: the protocol could not take their interval stricter (one given at its own level), so
    at more replicates they will not either."""
    measured = [i for i, p in enumerate(c.parts) if p.measured]
    if c.combine == "any" or c.verdict != INCONCLUSIVE or len(measured) < 2:
        return frozenset()
    k, out = len(measured), set()
    for i in measured:
        p = c.parts[i]
        if p.verdict == NOT_REPRODUCED and not p.why and p.chances(p.n, 1 - (1 - p.level) / k)[1] > 0.5:
            out.add(i)
    return frozenset(out)


def _part_ns(c: ClaimPlan, by_key: Mapping[str, Family], planned: Mapping[str, int]) -> dict[int, int]:
    """Each part's replicates when the claim's families are at ``planned``: a part on a recorded family grows with
    it in proportion (a part on as many replicates as the family: the family's n); one on an item family, with the
    family of its unit and n."""
    ns = {}
    for i, p in enumerate(c.parts):
        fam = next((by_key[k] for k in c.families if by_key[k].recorded), None)
        if fam is None:
            fam = next((by_key[k] for k in c.families if by_key[k].unit == p.unit and by_key[k].n == p.n), None)
        if fam is None or fam.n <= 0:
            continue
        n = planned.get(fam.key, fam.n)
        ns[i] = p.n if n == fam.n else max(1, round(p.n * n / fam.n))
    return ns


def chance_at(c: ClaimPlan, by_key: Mapping[str, Family], planned: Mapping[str, int]) -> float | None:
    """A claim's chance of being decided with its families at ``planned`` n (default: as run); at the n run, its
    verdict now (1 or 0; in a build from before a part against a claim decided it early, whose evidence has no
    ``decided_by``, its intervals under that rule). None where a part's chances cannot be said.

    Example
    -------
    >>> ev = dict(verdict="inconclusive at this budget", estimate=1.0, lo=-1.48, hi=3.48, n=3, n_min=3, level=0.95,
    ...           method="t", boundary=0.0, direction="greater", unit="seed")
    >>> run = dict(notebook="c", claims=[dict(id="c/0", verdict=ev["verdict"], evidence=ev)],
    ...            replicates={"seeds": dict(seconds=[60.0] * 3, claims=["c/0"])})
    >>> p = make_plan([run], 0.0)
    >>> by_key = {f.key: f for f in p.families}
    >>> [round(chance_at(p.claims[0], by_key, {"c:seeds": n}), 2) for n in (3, 10, 30)]
    [0.0, 0.63, 0.8]
    """
    if not c.measurable:
        return None
    if c.premise:  # the gate is about the data or the budget, not the claim's replicates
        return 0.0
    if not c.families:
        return 1.0 if c.decided else 0.0
    if all(planned.get(k, by_key[k].n) == by_key[k].n for k in c.families):  # as run: its verdict
        if c.decided or c.early_known:
            return 1.0 if c.decided else 0.0
        # a build before a part against the claim decided it early: its intervals under the rule of now
    try:
        return claim_chance(c.parts, c.combine, _part_ns(c, by_key, planned), c.no_strict)
    except ValueError:
        return None


def claim_need(c: ClaimPlan, by_key: Mapping[str, Family], power: float = POWER) -> tuple[int | None, str]:
    """The replicates (of each family the claim rests on) at which the claim is decided with chance ``power``:
    ``(n, "")``; for a claim decided now, the n run; ``(None, why)`` where no part can be planned from, the claim
    rests on no family, or its families' design caps stop short (the chance at the cap said).

    Example
    -------
    >>> ev = dict(verdict="inconclusive at this budget", estimate=1.0, lo=-1.48, hi=3.48, n=3, n_min=3, level=0.95,
    ...           method="t", boundary=0.0, direction="greater", unit="seed")
    >>> run = dict(notebook="c", claims=[dict(id="c/0", verdict=ev["verdict"], evidence=ev)],
    ...            replicates={"seeds": dict(seconds=[60.0] * 3, claims=["c/0"], cap=12)})
    >>> make_plan([run], 0.0).claims[0].why
    'out of reach: at its cap of 12 seeds (recorded by the chapter), a 67 % chance'
    """
    if not c.measurable:
        return None, "not measurable at this profile"
    if c.decided:
        return c.n, ""
    if c.premise:
        return None, "premise not met: more replicates do not test it (the data or the budget would have to change)"
    missing = next((p.why for p in c.parts if p.measured and p.why), "")
    if missing or not c.families:
        return None, missing or "rests on no family of replicates"
    lead = _lead(c, by_key)
    top = lead.cap if lead.cap is not None else N_NEEDED_MAX
    capped = next((by_key[k] for k in c.families if by_key[k].cap is not None and by_key[k].cap <= by_key[k].n),
                  lead if lead.cap is not None else None)

    def chance(n: int) -> float:
        return chance_at(c, by_key, scaled(c, by_key, n)) or 0.0

    if chance(lead.n) >= power:  # a build from before the rule that decides a claim by a part against it
        return lead.n, ""
    if top <= lead.n:
        return None, f"out of reach: at its cap of {lead.cap} {_plural(lead.unit)} ({lead.cap_why}), as run"
    lo, hi = lead.n, lead.n + 1
    while chance(hi) < power:
        if hi >= top:
            if capped is not None:
                return None, (f"out of reach: at its cap of {capped.cap} {_plural(capped.unit)} ({capped.cap_why}), "
                              f"a {chance(top):.0%} chance".replace("%", " %"))
            return None, f"more than {N_NEEDED_MAX:,} replicates: not within reach"
        lo, hi = hi, min(top, hi * 2)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if chance(mid) >= power else (mid, hi)
    return hi, ""


def _lead(c: ClaimPlan, by_key: Mapping[str, Family]) -> Family:
    """The family a claim's need is counted in: of those below their cap, the one with the most replicates run."""
    fams = [by_key[k] for k in c.families]
    growing = [f for f in fams if f.cap is None or f.cap > f.n]
    return max(growing or fams, key=lambda f: f.n)


def scaled(c: ClaimPlan, by_key: Mapping[str, Family], n: int) -> dict[str, int]:
    """The n of each family a claim rests on when its lead family (:func:`_lead`) is at ``n``: the others in
    proportion to the n they ran, each at most its cap.

    Example
    -------
    >>> fams = [Family("b4", "pairs_per_class", 48, 1.0, ("c",), unit="image"), Family("b4", "classes", 10, 1.0,
    ...         ("c",), unit="class", cap=10)]
    >>> c = ClaimPlan("b4", "c", "i", 10, 3, None, "", tuple(f.key for f in fams))
    >>> scaled(c, {f.key: f for f in fams}, 96)
    {'b4:pairs_per_class': 96, 'b4:classes': 10}
    """
    lead = _lead(c, by_key)
    out = {}
    for k in c.families:
        f = by_key[k]
        m = n if f is lead else max(f.n, round(f.n * n / max(lead.n, 1)))
        out[k] = min(m, f.cap) if f.cap is not None else m
    return out


def _plural(unit: str) -> str:
    return {"class": "classes", "class pair": "class pairs"}.get(unit, unit + "s")


def make_plan(runs: list[Mapping], budget: float, power: float = POWER, n_max: int | None = None,
              floor: str = "run") -> Plan:
    """The plan for a build's ``runs`` (:func:`read_build`) within ``budget`` seconds of replicates (the sum over
    families of planned n x seconds per replicate).

    Every family first gets the ``n_min`` of its claims, at most its cap, and (``floor="run"``) at least the n it
    ran; with ``floor="n_min"`` a family of trained replicates without a design cap (:data:`DOWN_UNITS`: seeds,
    runs) may be planned below the n it ran, where its claims' chances are those of fresh replicates
    (:func:`invlib.verdicts.chances`) and the n run is one more step back to what is known; with ``floor="keep"``
    such a family goes down only as far as every claim decided now on it keeps a chance of at least :data:`KEEP` of
    staying decided (:func:`keep_n`); a design's units (C's
    transformation types, a data set's classes) and evaluation items keep the n run. A
    budget that does not cover the floor is overspent, and :func:`markdown` says so. Then the greedy steps: for
    each family, the candidate n's are its claims' needs, the n it ran and a geometric ladder up to its limit
    (:attr:`Family.limit`, or ``n_max`` for every family where given); the step that adds the most to the expected
    number of decided claims per second and fits the budget is taken, until none adds.

    Example
    -------
    >>> ev = lambda est: dict(verdict="inconclusive at this budget", estimate=est, lo=est - 2.48, hi=est + 2.48,
    ...                       n=3, n_min=3, level=0.95, method="t", boundary=0.0, direction="greater", unit="seed")
    >>> run = lambda name, cost, ests: dict(notebook=name, claims=[dict(id=f"{name}/{i}", verdict="i",
    ...     evidence=ev(e)) for i, e in enumerate(ests)], replicates={"seeds": dict(seconds=[cost] * 3,
    ...     claims=[f"{name}/{i}" for i in range(len(ests))])})
    >>> p = make_plan([run("cheap", 10.0, [2.0, 1.5]), run("dear", 100.0, [2.0])], budget=800)
    >>> {f.chapter: f.planned for f in p.families}, round(p.expected, 2), p.seconds <= 800
    ({'cheap': 30, 'dear': 5}, 2.61, True)
    """
    check_choice(floor, FLOORS, "floor")
    fams = families(runs)
    by_key = {f.key: f for f in fams}
    claims = _claim_plans(runs, fams, power)
    on: dict[str, list[ClaimPlan]] = {f.key: [c for c in claims if f.key in c.families] for f in fams}
    for f in fams:
        least = [c.n_min for c in on[f.key]]
        down = floor != "run" and least and f.unit in DOWN_UNITS and f.cap is None
        f.planned = min(f.n, max(least)) if down else max(least + [f.n])
        if down:
            f.planned = decidable_from(f, on[f.key], f.planned)
        if down and floor == "keep":
            f.planned = keep_n(f, on[f.key], by_key, f.planned)
        if f.cap is not None:
            f.planned = min(f.planned, max(f.n, f.cap))
    planned = {f.key: f.planned for f in fams}

    def gain_of(c: ClaimPlan) -> float:
        return chance_at(c, by_key, planned) or 0.0

    current = {c.key: gain_of(c) for c in claims}
    while True:
        best = None
        spent = plan_seconds(fams)
        for f in fams:
            limit = f.limit if n_max is None else min(n_max, f.cap) if f.cap is not None else n_max
            if f.unit not in TRAINED and n_max is None:
                limit = min(limit, max(f.n, 1) * 100)
            for n in _candidates(f, on[f.key], limit):
                extra = (n - f.planned) * f.seconds
                if spent + extra > budget:
                    continue
                old, planned[f.key] = planned[f.key], n
                gain = sum(gain_of(c) - current[c.key] for c in on[f.key])
                planned[f.key] = old
                if gain > 1e-3:
                    score = gain / max(extra, 1e-9)
                    if best is None or score > best[0]:
                        best = (score, f, n)
        if best is None:
            break
        best[1].planned = planned[best[1].key] = best[2]
        current.update({c.key: gain_of(c) for c in on[best[1].key]})
    out = {}
    for c in claims:
        c.chance = chance_at(c, by_key, planned)
        if c.measurable:
            out[c.key] = c.chance or 0.0
    return Plan([p for c in claims for p in c.parts], claims, fams, float(budget), power, out)


def decidable_from(f: Family, claims: Iterable[ClaimPlan], start: int) -> int:
    """The fewest replicates of family ``f``, from ``start`` up to the n it ran, at which each of ``claims``' parts
    that is a share over these replicates (a Wilson interval: "on most seeds") can be decided at all
    (:func:`invlib.verdicts.share_decidable`): a plan never takes a family down until a claim on it means nothing.
    Other parts can be decided at any n.

    Example
    -------
    >>> run = example_run([0.75], name="e")  # its one claim made a share over 8 seeds, "on most seeds"
    >>> run["replicates"]["seeds"]["seconds"] = [10.0] * 8
    >>> run["claims"][0]["evidence"].update(method="wilson", boundary=0.5, lo=0.41, hi=0.93, n=8)
    >>> p = make_plan([run], 0.0, floor="n_min")   # n_min 3, but three seeds of a share decide nothing
    >>> f = p.families[0]
    >>> f.n, decidable_from(f, p.claims, 3), f.planned
    (8, 4, 4)
    """
    n = start
    for c in claims:
        for p in c.parts:
            if p.method == "wilson" and p.unit == f.unit and p.boundary is not None and not p.why:
                while n < f.n and not share_decidable(n, p.direction, p.boundary, p.margin, p.level, p.n_min):
                    n += 1
    return n


def keep_n(f: Family, claims: Iterable[ClaimPlan], by_key: Mapping[str, Family], start: int = 1,
           keep: float = KEEP) -> int:
    """The fewest replicates of family ``f``, from ``start`` up to the n it ran, at which every claim decided now
    among ``claims`` keeps a chance of at least ``keep`` of being decided (fewer than run are fresh replicates,
    :func:`chance_at`; the claims' other families as run). The n run where none fewer does.

    Example
    -------
    >>> far, near = (example_run([e], name=c) for e, c in ((12.0, "far"), (2.0, "near")))  # 8 seeds, +- 1.0
    >>> for run in (far, near):
    ...     ev, run["claims"][0]["verdict"] = run["claims"][0]["evidence"], "reproduced"
    ...     ev.update(verdict="reproduced", n=8, lo=ev["estimate"] - 1.0, hi=ev["estimate"] + 1.0)
    ...     run["replicates"]["seeds"]["seconds"] = [10.0] * 8
    >>> p = make_plan([far, near], 0.0)
    >>> by_key = {f.key: f for f in p.families}
    >>> [keep_n(f, [c for c in p.claims if f.key in c.families], by_key, 3) for f in p.families]
    [3, 7]
    """
    decided = [c for c in claims if c.decided and c.measurable and c.families]
    for n in range(max(1, start), f.n):
        if all((chance_at(c, by_key, {f.key: n}) or 0.0) >= keep for c in decided):
            return n
    return f.n


def _candidates(f: Family, claims: list[ClaimPlan], limit: int) -> list[int]:
    """The n's a family may step to: its claims' needs, the n it ran and a ladder of steps of a quarter, above its
    planned n."""
    ladder, n = set(), f.planned
    while n < limit:
        n = min(limit, max(n + 1, round(n * 1.25)))
        ladder.add(n)
    ladder |= {c.need for c in claims if c.need and f.planned < c.need <= limit}
    ladder |= set(range(f.planned + 1, f.n + 1))  # below the n run, every step back to it (fresh replicates)
    return sorted(ladder)


def plan_seconds(fams: Iterable[Family]) -> float:
    """Seconds of replicates at the families' planned n."""
    return sum(f.planned * f.seconds for f in fams)


def to_decide(runs: list[Mapping], power: float = POWER, cores: int = 2) -> dict[tuple[str, str], str]:
    """For each undecided claim of ``runs`` (:func:`read_build`) that rests on a family of replicates (recorded
    by the chapter, or its evaluation items), in words: the n at which it is decided with chance ``power``
    (:func:`claim_need`), and what the replicates beyond those run cost (their families' seconds per replicate, on
    ``cores`` cores); or why no n can be said. Keyed by ``(chapter, claim id)``; the scoreboard prints it beside the
    verdict.

    Example
    -------
    >>> ev = dict(verdict="inconclusive at this budget", estimate=1.0, lo=-1.48, hi=3.48, n=3, n_min=3, level=0.95,
    ...           method="t", boundary=0.0, direction="greater", unit="seed")
    >>> run = dict(notebook="c", claims=[dict(id="c/0", verdict="inconclusive at this budget", evidence=ev)],
    ...            replicates={"seeds": dict(seconds=[60.0] * 3, claims=["c/0"])})
    >>> to_decide([run])[("c", "c/0")]
    '80 % power at n = 31 (28 more replicates of seeds: about 14 min on 2 cores)'
    """
    p = make_plan(runs, 0.0, power)
    by_key = {f.key: f for f in p.families}
    out = {}
    for c in p.claims:
        if c.decided or not c.measurable or not c.families:
            continue
        if c.need is None:
            out[c.chapter, c.claim] = c.why
            continue
        text = f"{power:.0%} power at n = {c.need:,}".replace("%", " %")
        at = scaled(c, by_key, c.need)
        more = {k: max(0, at[k] - by_key[k].n) for k in c.families}
        if not any(more.values()):
            text += f" (as run: {EARLY})"
        elif any(at[k] > by_key[k].limit for k in c.families):
            text += f" (out of reach: more than {N_MAX} replicates)"
        elif any(more.values()):
            seconds = sum(m * by_key[k].seconds for k, m in more.items())
            what = ", ".join(f"{m:,} more {_what(by_key[k], m)}" for k, m in more.items() if m)
            wall = seconds / cores
            text += f" ({what}: about {f'{wall / 60:,.0f} min' if wall >= 90 else f'{wall:.0f} s'} on {cores} cores)"
        out[c.chapter, c.claim] = text
    return out


def _what(f: Family, m: int) -> str:
    if f.recorded:
        return f"replicate{'s' * (m != 1)} of {f.parameter}"
    unit = f.unit if m == 1 else _plural(f.unit)
    return f"{unit} ({f.parameter})" if f.parameter not in (unit, _plural(f.unit)) else unit


def example_run(effects: Iterable[float], seconds: float = 10.0, name: str = "c") -> dict:
    """A made-up chapter's results for trying the plan: one claim per effect, each an undecided t-interval over 3
    seeds (half-width 2.48, boundary 0, "greater"), all on the family ``seeds`` at ``seconds`` a seed.

    Example
    -------
    >>> [c["evidence"]["lo"] for c in example_run([2.0])["claims"]]
    [-0.48]
    """
    ids = [f"{name}/{i}" for i, _ in enumerate(effects)]
    claims = [dict(id=cid, verdict=INCONCLUSIVE, evidence=dict(
        verdict=INCONCLUSIVE, estimate=e, lo=e - 2.48, hi=e + 2.48, n=3, n_min=3, level=0.95, method="t",
        boundary=0.0, direction="greater", unit="seed")) for cid, e in zip(ids, effects)]
    return dict(notebook=name, claims=claims, replicates={"seeds": dict(seconds=[seconds] * 3, claims=ids)})


REACH = (3, 5, 10, 20, 50, 200, 1000)


def reach(runs: list[Mapping], power: float = POWER, n_maxes: Iterable[int] = REACH) -> list[dict]:
    """What replicates alone can decide, whatever they cost: for each cap ``n_max`` on a family's trained
    replicates (seeds, runs, models; evaluation items up to ``n_max / 3`` times their n run, a family of 3 seeds'
    factor), the claims expected decided (the sum of their chances) with every family raised as far as adds to
    that, and the seconds of replicates that takes. Rows ``n_max, decided, measurable, seconds``.

    Example
    -------
    >>> run = example_run([2.0, 0.3])
    >>> [(r["n_max"], round(r["decided"], 2)) for r in reach([run], n_maxes=(3, 10, 1000))]
    [(3, 0.0), (10, 1.1), (1000, 1.91)]
    """
    rows = []
    for n_max in n_maxes:
        p = _reach_plan(runs, power, n_max)
        measurable = sum(1 for c in p.claims if c.measurable)
        rows.append(dict(n_max=n_max, decided=p.expected, measurable=measurable, seconds=p.seconds))
    return rows


def _reach_plan(runs: list[Mapping], power: float, n_max: int) -> Plan:
    """:func:`make_plan` without a budget, trained families up to ``n_max``, evaluated ones up to ``n_max / 3``
    times their n run."""
    fams = families(runs)
    by_key = {f.key: f for f in fams}
    claims = _claim_plans(runs, fams, power)
    planned = {}
    for f in fams:
        top = n_max if f.unit in TRAINED else max(f.n, round(f.n * n_max / 3))
        top = max(f.n, min(top, f.cap) if f.cap is not None else top)
        on = [c for c in claims if f.key in c.families]
        f.planned = planned[f.key] = max([f.n] + [min(c.n_min, top) for c in on])
        best = (sum(chance_at(c, by_key, planned) or 0.0 for c in on), f.planned)
        for n in _candidates(f, on, top):  # the n that decides most of its claims, the smallest of equals
            planned[f.key] = n
            got = sum(chance_at(c, by_key, planned) or 0.0 for c in on)
            if got > best[0] + 1e-3:
                best = (got, n)
        f.planned = planned[f.key] = best[1]
    out = {}
    for c in claims:
        c.chance = chance_at(c, by_key, planned)
        if c.measurable:
            out[c.key] = c.chance or 0.0
    return Plan([p for c in claims for p in c.parts], claims, fams, math.inf, power, out)


def markdown(plan: Plan, title: str = "Sample-size plan", source: str = "", reach: list[dict] | None = None,
             frontier_rows: list[dict] | None = None, img_s: float | None = None, setup: float | None = None) -> str:
    """The plan as a Markdown page: the families (what a replicate is, n run, cap, seconds per replicate, n
    planned, seconds, claims on it, claims expected decided there), every undecided claim (n now, the n that
    decides it with the plan's power, its cost, its chance at the plan) and, given :func:`reach`'s rows, what
    replicates alone can decide at any cost; ``setup``: the set-up seconds the frontier's minutes hold (None: not
    recorded, left out).

    Example
    -------
    >>> print(markdown(Plan([], [], [], 60.0)).splitlines()[0])
    # Sample-size plan
    """
    fams = sorted(plan.families, key=lambda f: f.key)
    lines = [f"# {title}", ""]
    if source:
        lines += [source, ""]
    n_measurable = sum(1 for c in plan.claims if c.measurable)
    n_now = sum(1 for c in plan.claims if c.decided)
    lines += [f"Claims decided now: {n_now} of {n_measurable} measurable; at the planned replicates, expected "
              f"{plan.expected:.1f} (the sum of each claim's chance of being decided, averaged over what this build "
              f"leaves uncertain about its effect and spread). Budget {plan.budget:,.0f} s of replicates; planned "
              f"{plan.seconds:,.0f} s" + (" (over: the floor of n_min alone costs more)" if plan.seconds > plan.budget
                                          else "") + "." + (
                  " Families planned below the n they ran: their claims' chances are those of fresh replicates, "
                  "a claim decided now among them may not be at the plan's n."
                  if any(f.planned < f.n for f in fams) else ""), "",
              "## Families", "",
              "| chapter | parameter | unit | n run | cap | s per replicate | n planned | s planned | claims on it | "
              "expected decided at plan |",
              "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for f in fams:
        on = [c for c in plan.claims if f.key in c.families]
        won = sum(plan.chances.get(c.key, 0.0) for c in on)
        secs = f"{f.seconds:,.1f}" + ("" if f.recorded else " (est.)")
        lines.append(f"| {f.chapter} | {f.parameter} | {f.unit} | {f.n} | {f.cap if f.cap is not None else '—'} | "
                     f"{secs} | {f.planned} | {f.planned * f.seconds:,.0f} | {len(on)} | {won:.1f} |")
    lines += ["", "Seconds marked (est.): a family the chapter did not record (its evaluation items, or its design's "
              "classes or models); the chapter's seconds over its n, an upper bound. A cap: the most the design has "
              "(C's transformation types, a data set's classes, a fixed design's models).", "",
              "## Claims", "",
              f"| chapter | claim | verdict now | n now | n_min | n to decide ({plan.power:.0%}) | families | "
              "cost at that n (s) | chance at plan |".replace("%", " %"),
              "|---|---|---|---:|---:|---:|---|---:|---:|"]
    by_key = {f.key: f for f in plan.families}
    for c in sorted(plan.claims, key=lambda c: (c.chapter, c.claim)):
        if c.decided:
            continue
        need = f"{c.need:,}" if c.need is not None else (c.why or "—")
        if c.need is not None and c.need <= c.n:
            need += f" (as run: {EARLY})"
        cost = (f"{sum(n * by_key[k].seconds for k, n in scaled(c, by_key, c.need).items()):,.0f}"
                if c.need is not None and c.families else "—")
        chance = f"{c.chance:.0%}".replace("%", " %") if c.chance is not None else "—"
        lines.append(f"| {c.chapter} | {c.claim} | {c.verdict} | {c.n} | {c.n_min} | {need} | "
                     f"{', '.join(_family_name(k, c.chapter) for k in c.families) or '—'} | {cost} | {chance} |")
    lines += _split_lines(fams)
    if reach:
        lines += ["", "## What replicates alone can decide, at any cost", "",
                  "Every family of trained replicates (seeds, runs, models) at up to n_max, every family of evaluated "
                  "items at up to n_max / 3 times its n run, each only as far as adds to its claims' chances, no "
                  "budget: the claims expected decided (the sum of their chances) and the seconds of replicates that "
                  "takes (each replicate on one thread, two at once on 2 cores).", "",
                  "| n_max | expected decided | share of measurable | seconds of replicates | hours on 2 cores |",
                  "|---:|---:|---:|---:|---:|"]
        lines += [f"| {r['n_max']:,} | {r['decided']:.1f} | {r['decided'] / max(r['measurable'], 1):.0%} | "
                  f"{r['seconds']:,.0f} | {r['seconds'] / 2 / 3600:.1f} |" for r in reach]
    lines += frontier_lines(frontier_rows or [], img_s, setup)
    return "\n".join(lines) + "\n"


def _family_name(key: str, chapter: str) -> str:
    """A family's name in a claim's row: its parameter, with its chapter where that is another chapter's.

    Example
    -------
    >>> _family_name("b1_rrc:seeds", "b1_rrc"), _family_name("b1_rrc:seeds", "b5_wordnet")
    ('seeds', 'b1_rrc: seeds')
    """
    owner, param = key.split(":", 1)
    return param if owner == chapter else f"{owner}: {param}"


def _split_lines(fams: list[Family]) -> list[str]:
    """The section of :func:`markdown` on where each family's spread comes from (the families that recorded a
    :meth:`invlib.results.Run.variance`); none without one."""
    rows = [(f, effect, s) for f in fams for effect, s in f.splits.items()]
    if not rows:
        return []
    lines = ["", "## Where the spread comes from", "",
             "Per family that recorded it, each paired effect's variance between replicates (points² for accuracies), "
             "split into evaluation (the finite test set each replicate is scored on: what a larger test set divides) "
             "and training (what differs between seeds: what only more seeds average). A share of evaluation above "
             "one half: a larger test set narrows the interval more cheaply than seeds. Items for half: the test "
             "items per replicate at which evaluation would be half of the training part.", "",
             "| chapter | parameter | effect | replicates | items each | between | evaluation | training | "
             "evaluation share | items for half |", "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]

    def num(v, spec=".2f"):
        return "—" if v is None else format(v, spec)

    for f, effect, s in rows:
        share = "—" if s.get("evaluation_share") is None else f"{s['evaluation_share']:.0%}".replace("%", " %")
        half = "—" if s.get("items_for_half") is None else f"{s['items_for_half']:,}"
        lines.append(f"| {f.chapter} | {f.parameter} | {effect} | {s.get('seeds')} | {s.get('items'):,} | "
                     f"{num(s.get('between'))} | {num(s.get('evaluation'))} | {num(s.get('training'))} | {share} | "
                     f"{half} |")
    return lines


def build_record(results: str | Path) -> dict | None:
    """The last whole build's record beside a results folder (``<results>/../build-<profile>.json``: its wall
    seconds, training phase, chapters), or None where there is none.

    Example
    -------
    >>> build_record("/nonexistent/cpu") is None
    True
    """
    record = Path(results).parent / f"build-{Path(results).name}.json"
    return json.loads(record.read_text()) if record.exists() else None


def limit_here(img_s: float | None = None) -> float:
    """The main job's limit in this machine's seconds: :data:`BOOK_LIMIT_S` at :data:`BOOK_LIMIT_IMG_S` of bare loop,
    times ``BOOK_LIMIT_IMG_S / img_s`` where the bare loop measured beside the build read ``img_s`` (a slower
    machine has proportionally more seconds); :data:`BOOK_LIMIT_S` without it.

    Example
    -------
    >>> limit_here(), round(limit_here(836.1))
    (2400, 2583)
    """
    if img_s is None:
        return BOOK_LIMIT_S
    if not img_s > 0:
        raise ValueError(f"img_s: the bare loop's images per second beside the build, > 0; got {img_s!r}")
    return BOOK_LIMIT_S * BOOK_LIMIT_IMG_S / img_s


def build_wall(record: Mapping, setup: float | None = None) -> tuple[float, float | None]:
    """A whole build's seconds as the main job's limit counts them, and the set-up among them: the record's wall
    (training phase, chapters, site) plus the set-up before the runner (``setup``, else the record's own, which
    ``make book`` records: :func:`invlib.book.setup_seconds`). Without either, the wall alone and None: a budget
    from it is generous by the set-up (about a minute).

    Example
    -------
    >>> build_wall({"wall": 2554.9, "setup": 50.5}), build_wall({"wall": 2554.9}), build_wall({"wall": 100.0}, 20.0)
    ((2605.4, 50.5), (2554.9, None), (120.0, 20.0))
    """
    setup = record.get("setup") if setup is None else setup
    if setup is not None and not setup >= 0:
        raise ValueError(f"setup: the seconds before the runner, >= 0; got {setup!r}")
    wall = float(record.get("wall") or 0)
    return (wall if setup is None else round(wall + float(setup), 1)), setup


def default_budget(results: str | Path, runs: list[Mapping], cores: int = 2, img_s: float | None = None,
                   setup: float | None = None) -> float | None:
    """Seconds of replicates a build may spend: those it spent (its families' n run x seconds per replicate, the
    estimated ones of its evaluation items too), plus ``cores`` x the wall seconds the last whole build
    (:func:`build_record`, with its set-up: :func:`build_wall`) left below the limit (:func:`limit_here`, at the
    bare loop ``img_s`` measured beside it), or minus ``cores`` x those it ran over: a build over the limit gets a
    budget below what it spent. None without a record.

    Example
    -------
    >>> default_budget("/nonexistent/cpu", []) is None
    True
    """
    record = build_record(results)
    if record is None:
        return None
    return _at_limit(spent_seconds(runs), build_wall(record, setup)[0], cores, img_s)


def spent_seconds(runs: list[Mapping]) -> float:
    """Seconds of replicates a build spent: over its families (:func:`families`), n run x seconds per replicate."""
    return sum(f.n * f.seconds for f in families(runs))


def _at_limit(spent: float, wall: float, cores: int, img_s: float | None) -> float:
    """The replicate seconds that bring a build of ``wall`` seconds, which spent ``spent``, to the limit."""
    return spent + cores * (limit_here(img_s) - wall)


def build_minutes(wall: float, spent: float, planned: float, cores: int = 2, img_s: float | None = None) -> float:
    """A build's wall minutes at the plan's replicates, at the limit's speed (:data:`BOOK_LIMIT_IMG_S`; this
    machine's when ``img_s`` is None): the measured ``wall`` plus the planned replicate seconds beyond those
    ``spent``, over ``cores`` (chapters run ``cores`` at once and keep them busy). An estimate: a family of zoo
    models that several chapters read counts in each.

    Example
    -------
    >>> build_minutes(3288.5, 7000.0, 6000.0), round(build_minutes(3288.5, 7000.0, 6000.0, img_s=836.1), 1)
    (46.475, 43.2)
    """
    here = wall + (planned - spent) / cores
    return here / 60 * (1.0 if img_s is None else img_s / BOOK_LIMIT_IMG_S)


FRONTIER_SHARES = (0.8, 0.85, 0.9, 0.95, 1.0, 1.1, 1.25)  # budgets as shares of what the build spent
KEPT = f"each family at the fewest seeds that keep its decided claims ({KEEP:.0%} chance each)"  # " %" on the page


# The frontier's row at the seconds of replicates the build spent: planned anew there (families free to move), so its
# expected count is the plan's, not the build's decided claims (fb4d00b's build: 73.4 expected, 69 decided)
SPENT = "the seconds this build spent, planned anew"


def frontier(runs: list[Mapping], wall: float, img_s: float | None = None, power: float = POWER, cores: int = 2,
             budgets: Iterable[float] | None = None) -> list[dict]:
    """What a budget buys, around what the build spent: for each budget (default: :data:`FRONTIER_SHARES` of the
    spent replicate seconds, the floor of every family at its claims' n_min, and the limit's budget of
    :func:`default_budget`), the plan at ``floor="n_min"`` (:func:`make_plan`): the seconds it plans, the claims
    expected decided, and the build's minutes at the limit's speed (:func:`build_minutes`); without ``budgets``, also
    the plan at ``floor="keep"`` and no budget beyond it (:data:`KEPT`: what keeping the build's decided claims
    costs). Rows sorted by seconds, ``budget, seconds, decided, measurable, minutes, what``.

    Example
    -------
    >>> run = example_run([2.0, 0.3])
    >>> [(round(r["seconds"]), round(r["decided"], 2)) for r in frontier([run], wall=100.0, budgets=(30, 100))]
    [(30, 0.0), (100, 1.1)]
    """
    spent = spent_seconds(runs)

    def row(p: Plan, budget: float, what: str) -> dict:
        return dict(budget=float(budget), seconds=p.seconds, decided=p.expected,
                    measurable=sum(1 for c in p.claims if c.measurable),
                    minutes=build_minutes(wall, spent, p.seconds, cores, img_s), what=what)

    rows: list[dict] = []
    named = {}
    if budgets is None:
        floor = make_plan(runs, 0.0, power, floor="n_min").seconds
        limit = _at_limit(spent, wall, cores, img_s)
        kept = make_plan(runs, 0.0, power, floor="keep")
        rows.append(row(kept, kept.seconds, KEPT))
        for b, what in ((floor, "every family at its claims' n_min"), (spent, SPENT),
                        (limit, f"the limit: {BOOK_LIMIT_S / 60:.0f} min at {BOOK_LIMIT_IMG_S} img/s")):
            named[b] = f"{named[b]}; {what}" if b in named else what
        budgets = sorted({*(spent * s for s in FRONTIER_SHARES), *named})
    rows += [row(make_plan(runs, float(b), power, floor="n_min"), b, named.get(b, "")) for b in budgets]
    return sorted(rows, key=lambda r: (r["seconds"], r["budget"]))


def frontier_lines(rows: list[dict], img_s: float | None = None, setup: float | None = None) -> list[str]:
    """The section of :func:`markdown` on :func:`frontier`'s rows; none without rows. ``setup``: the set-up
    seconds the rows' minutes hold (None: left out, as a record without them)."""
    if not rows:
        return []
    speed = (f"at {BOOK_LIMIT_IMG_S} img/s of bare loop (this build's {img_s:,.0f} scaled)" if img_s is not None
             else "at this machine's speed (no bare loop given: --img-s)")
    lines = ["", "## What a budget buys, and the build's minutes", "",
             "The plan at each budget with every family free to go down to its claims' n_min (fewer seeds than run "
             "are fresh ones: a claim decided now may not be at fewer), and the plan that keeps every decided claim "
             "(each family of seeds down only as far as each claim decided on it keeps an "
             f"{100 * KEEP:.0f} % chance of staying decided, nothing more bought), the claims expected decided, and "
             "the whole "
             f"build's minutes {speed}: the build's wall plus the planned replicate seconds beyond those it spent, "
             "over 2 cores (an estimate: a family of zoo models several chapters read counts in each; "
             + (f"with the set-up before the runner, {setup:,.0f} s, as the limit counts it)." if setup is not None
                else "the set-up, about a minute, is not recorded and not in them: the limit's row is that much "
                     "generous).")
             , "",
             "| budget (s) | planned (s) | expected decided | share of measurable | build (min) | which |",
             "|---:|---:|---:|---:|---:|---|"]
    lines += [f"| {r['budget']:,.0f} | {r['seconds']:,.0f} | {r['decided']:.1f} | "
              f"{r['decided'] / max(r['measurable'], 1):.0%} | {r['minutes']:.1f} | {r['what']} |".replace("%", " %")
              for r in rows]
    return lines

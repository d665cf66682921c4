"""Each paper's claims as a declared protocol: what is measured, against which smallest effect that matters and why,
decided by one function.

A paper declares its claims in ``invlib/papers/<paper>/protocol.py`` as a :class:`Protocol` of :class:`Claim`\\ s,
before any run and apart from the code that computes them. A claim has an id (unique in its chapter), the chapter
that tests it, its statement, the paper's value and where it stands in the paper, and one or more :class:`Part`\\ s.
A part declares the **quantity** measured (in words, with its unit), the **unit** of replication (a seed where the
claim is about what training does), the **direction** the paper states, the value of **no effect** (``null``), the
**smallest effect that matters** (``smallest``) with its **reason** (from the paper's wording or its own numbers, or
from practice; never from ours), ``n_min`` and the multiplicity it is tested under (one of ``of``).

The reports compute effects only: per replicate values, or an interval (or a function ``level -> Interval`` that
makes one at the level the declaration needs), keyed by part. :func:`decide` turns a declaration and its effects
into :class:`~invlib.verdicts.Evidence`:

- a directional part is **reproduced** when its interval lies wholly beyond ``null + smallest`` on the paper's side
  (``null - smallest`` for ``"less"``), **not reproduced** when it lies wholly on the other side of that boundary
  (an effect smaller than the claim means, none, or the reverse), inconclusive otherwise; so with replicates enough
  every true effect but one at the boundary itself is decided;
- an equivalence part (``direction="equivalent"``) is reproduced when its 90 % interval lies within ``null +-
  smallest`` (the margin), not reproduced when it lies wholly outside;
- a non-inferiority part (``"not below"``: "the accuracy is kept", "it does not fall by more than ..."; or
  ``"not above"``) is reproduced when its 95 % interval lies wholly above ``null - smallest`` (below ``null +
  smallest``), ``smallest`` being the largest change that does not matter; not reproduced when it lies wholly
  on the other side;
- a claim of several parts holds when every part does (``combine="all"``), or when at least one does
  (``combine="any"``, each part then tested at the Bonferroni level of its k).

The criterion a reader sees is written from the declaration (:meth:`Claim.criterion`), never by hand; the JSON of
a run keeps the declaration beside the evidence (:meth:`invlib.results.Run.claim`).

Example
-------
>>> gain = Part("RRC's top-1 minus none's, points", unit="seed", smallest=1.0,
...             reason="a point of top-1 is the least gain a practitioner acts on")
>>> c = Claim("t1/rrc_helps", "b1_demo", "RRC helps.", paper="+4.4 points", where="Table 1a", parts={"": gain})
>>> decide(c, [2.1, 2.9, 2.5]).verdict, decide(c, [0.1, -0.1, 0.0]).verdict
('reproduced', 'not reproduced')
>>> c.criterion()
"RRC's top-1 minus none's, points > 1 (no effect 0; smallest effect that matters 1: a point of top-1 is the least \
gain a practitioner acts on); 95 % interval over >= 3 seeds"
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping

from . import verdicts
from .verdicts import LEVEL, NOT_MEASURABLE, UNITS, Evidence, Interval

COMBINE = ("all", "any")
# Whose claim it is: a paper's; agreement of our implementation with the authors' code; the book's own hypothesis.
KINDS = ("paper", "authors", "hypothesis")
# The directions a part may state: the paper's side of the boundary. "not below" / "not above" are non-inferiority
# tests ("kept", "does not rise by more than"), decided as "greater" / "less" against null -/+ smallest.
DIRECTIONS = ("greater", "less", "equivalent", "not below", "not above")
DECIDED_AS = {"greater": "greater", "less": "less", "equivalent": "equivalent", "not below": "greater",
              "not above": "less"}


@dataclasses.dataclass(frozen=True)
class Part:
    """One declared test: ``quantity`` (what is measured, with its unit) per ``unit`` of replication, in the
    paper's ``direction`` (:data:`DIRECTIONS`), against ``null`` (no effect) moved by ``smallest`` (the smallest
    effect that matters; for ``"equivalent"`` the margin; for ``"not below"`` / ``"not above"`` the largest change
    that does not matter) for ``reason``; ``n_min`` replicates at least; tested as one of ``of``
    (an int, or the name of a family whose size the run knows, e.g. ``"classes"``: the effect then comes as an
    interval already made at the Bonferroni level). ``each`` names what the part is repeated over at run time
    (``"task"``: one decision per task, its effects a dict keyed by task).

    Example
    -------
    >>> Part("share of tasks", unit="seed", smallest=0.5, reason="'most' is more than half").boundary
    0.5
    >>> Part("IoU", unit="run", direction="less", null=1.0, smallest=0.5, reason="r").boundary
    0.5
    >>> Part("clean top-1 change, points", unit="seed", direction="not below", smallest=1.0, reason="r").boundary
    -1.0
    """

    quantity: str
    unit: str
    direction: str = "greater"
    smallest: float = 0.0
    reason: str = ""
    null: float = 0.0
    n_min: int = 3
    of: int | str = 1
    each: str = ""

    def __post_init__(self):
        from .utils import check_choice

        check_choice(self.direction, DIRECTIONS, "direction")
        check_choice(self.unit, UNITS, "unit")
        for name in ("quantity", "reason"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ValueError(f"a part declares its {name} in words (part {self.quantity!r})")
        if not (isinstance(self.smallest, int | float) and math.isfinite(self.smallest) and self.smallest >= 0):
            raise ValueError(f"smallest is the size of the smallest effect that matters, a finite number >= 0; "
                             f"got {self.smallest!r} (part {self.quantity!r}; the direction gives its side)")
        if self.direction in ("equivalent", "not below", "not above") and not self.smallest > 0:
            raise ValueError(f"an equivalence or non-inferiority part declares its margin as smallest > 0 (part "
                             f"{self.quantity!r})")
        if int(self.n_min) < 1:
            raise ValueError(f"n_min must be >= 1, got {self.n_min}")
        if not (isinstance(self.of, str) and self.of.strip() or isinstance(self.of, int) and self.of >= 1):
            raise ValueError(f"of is the multiplicity: an int >= 1, or the name of a family counted at run time; "
                             f"got {self.of!r}")

    @property
    def boundary(self) -> float:
        """What the interval must clear: ``null`` moved by ``smallest`` to the paper's side (the centre of the margin
        for an equivalence)."""
        sign = {"greater": 1, "less": -1, "equivalent": 0, "not below": -1, "not above": 1}[self.direction]
        return round(float(self.null + sign * self.smallest), 12)  # 1 - 0.9 is 0.1, not 0.09999999999999998

    def level(self, k: int | None = None) -> float:
        """The interval's level: :data:`~invlib.verdicts.LEVEL` of the direction, Bonferroni-adjusted for one of
        ``k`` (default: ``of`` when it is a number).

        Example
        -------
        >>> Part("x", unit="image", smallest=1, reason="r", of=5).level()
        0.99
        """
        k = k if k is not None else (self.of if isinstance(self.of, int) else 1)
        return 1 - (1 - LEVEL[DECIDED_AS[self.direction]]) / max(int(k), 1)

    def criterion(self, k: int | None = None) -> str:
        """The test in words, written from the declaration."""
        b, null, small = (_num(v) for v in (self.boundary, self.null, self.smallest))
        if self.direction == "equivalent":
            test = f"{self.quantity} within {null} ± {small} ({self.reason})"
        elif self.direction in ("not below", "not above"):
            op = ">" if self.direction == "not below" else "<"
            test = (f"{self.quantity} {op} {b} (no effect {null}; the largest change that does not matter {small}: "
                    f"{self.reason})")
        else:
            op = ">" if self.direction == "greater" else "<"
            test = f"{self.quantity} {op} {b} (no effect {null}; smallest effect that matters {small}: {self.reason})"
        units = verdicts._plural(self.unit)
        if self.unit == "deterministic":
            return f"{test}; deterministic"
        many = k if k is not None else self.of
        level = f"{self.level(k if isinstance(many, int) else None):.4g}".rstrip("0")
        level = f"{float(level) * 100:.4g} %"
        multiple = "" if many == 1 else f", one of {many} (Bonferroni)" if isinstance(many, int) else \
            f", one of the {many} (Bonferroni)"
        each = f", for each {self.each}" if self.each else ""
        return f"{test}; {level} interval over >= {self.n_min} {units}{multiple}{each}"

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["boundary"] = self.boundary
        return d


@dataclasses.dataclass(frozen=True)
class Claim:
    """One claim of a paper as the book tests it: ``id`` (unique in its ``chapter``), the ``statement``, the
    ``paper``'s value and ``where`` it stands in the paper, its ``parts`` by name (a one-part claim names its part
    ``""``) and how they ``combine`` (``"all"`` must hold, or ``"any"`` one of them). ``gate`` names parts that are
    preconditions (e.g. "every encoder reads above its untrained one"): unless every gate part is reproduced, the
    claim is inconclusive and its other parts are not tested; when they are, the other parts alone decide.
    ``kind`` says whose claim it is (:data:`KINDS`): a paper's (``"paper"``), "our code gives what the authors'
    code gives" (``"authors"``), or the book's own hypothesis, which no paper makes (``"hypothesis"``); the
    scoreboard counts each kind apart. It is not part of the declaration that :meth:`to_dict` stores.

    Example
    -------
    >>> p = Part("gain, points", unit="seed", smallest=1.0, reason="a point")
    >>> c = Claim("x/y", "b1_demo", "It helps.", "+3", "Fig. 1", {"rotate": p, "shear": p}, combine="any")
    >>> c.parts["rotate"].of, c.names
    (2, ('rotate', 'shear'))
    """

    id: str
    chapter: str
    statement: str
    paper: str
    where: str
    parts: Mapping[str, Part]
    combine: str = "all"
    gate: tuple[str, ...] = ()
    kind: str = "paper"

    def __post_init__(self):
        from .utils import check_choice

        check_choice(self.combine, COMBINE, "combine")
        check_choice(self.kind, KINDS, "kind")
        for name in ("id", "chapter", "statement", "paper", "where"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ValueError(f"claim {self.id!r}: {name} must be a non-empty string")
        if isinstance(self.parts, Part):
            object.__setattr__(self, "parts", {"": self.parts})
        if not self.parts or not all(isinstance(p, Part) for p in self.parts.values()):
            raise ValueError(f"claim {self.id!r}: parts is a dict of name -> Part, at least one")
        if "" in self.parts and len(self.parts) > 1:
            raise ValueError(f"claim {self.id!r}: only a one-part claim names its part ''")
        object.__setattr__(self, "gate", tuple(self.gate))
        if set(self.gate) - set(self.parts) or self.gate and len(self.gate) >= len(self.parts):
            raise ValueError(f"claim {self.id!r}: gate names some of its parts, not all ({', '.join(self.parts)}); "
                             f"got {self.gate}")
        parts = dict(self.parts)
        if self.combine == "any" and len(parts) > 1:  # one of k, each tested at the Bonferroni level of k
            parts = {n: p if p.of == len(parts) else dataclasses.replace(p, of=len(parts)) for n, p in parts.items()}
        object.__setattr__(self, "parts", parts)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.parts)

    def part(self, name: str) -> Claim:
        """Part ``name`` alone, as a one-part claim (its evidence on its own, e.g. for a chapter's prose).

        Example
        -------
        >>> p = Part("gain", unit="seed", smallest=1.0, reason="a point")
        >>> c = Claim("x", "b1_demo", "Both.", "+3", "Fig. 1", {"a": p, "b": p})
        >>> decide(c.part("a"), [2.0, 2.5, 3.0]).verdict
        'reproduced'
        """
        if name not in self.parts:
            raise KeyError(f"claim {self.id!r} has no part {name!r}; its parts: {', '.join(self.parts)}")
        return dataclasses.replace(self, parts={"": self.parts[name]}, combine="all", gate=())

    def criterion(self) -> str:
        """The claim's test in words, from its declaration (what the scoreboard's criterion column shows)."""
        if list(self.parts) == [""]:
            return self.parts[""].criterion()
        head = "every part must hold" if self.combine == "all" else f"at least one of {len(self.parts)} must hold"
        if len(self.parts) == 1:
            head = "for every one" if self.combine == "all" else "for at least one (Bonferroni over them)"
        gate = f"decided only where {' and '.join(self.gate)} holds; " if self.gate else ""
        return f"{gate}{head}: " + "; ".join(f"{name}: {p.criterion()}" for name, p in self.parts.items())

    def to_dict(self) -> dict:
        d = dict(id=self.id, chapter=self.chapter, statement=self.statement, paper=self.paper, where=self.where,
                 combine=self.combine, parts={n: p.to_dict() for n, p in self.parts.items()})
        if self.gate:
            d["gate"] = list(self.gate)
        return d


class Protocol:
    """A paper's declared claims (``paper`` is its key, ``"A"`` .. ``"E"`` or ``"S"``), looked up by id
    (``protocol["table1a/x"]``; an id that two chapters share needs :meth:`get` with the chapter).

    Example
    -------
    >>> p = Part("gain", unit="seed", smallest=1.0, reason="a point")
    >>> P = Protocol("B", [Claim("x/y", "b1_demo", "It helps.", "+3", "Fig. 1", p)])
    >>> P["x/y"].chapter, len(P), P.chapters()
    ('b1_demo', 1, ['b1_demo'])
    >>> P["x/z"]
    Traceback (most recent call last):
    KeyError: "paper B declares no claim 'x/z'; its claims: x/y"
    """

    def __init__(self, paper: str, claims: Iterable[Claim]):
        self.paper = paper
        self.claims = list(claims)
        seen = set()
        for c in self.claims:
            if not isinstance(c, Claim):
                raise TypeError(f"a protocol holds Claims, got {type(c).__name__}")
            if (c.chapter, c.id) in seen:
                raise ValueError(f"paper {paper} declares claim {c.id!r} of {c.chapter} twice")
            seen.add((c.chapter, c.id))

    def __len__(self) -> int:
        return len(self.claims)

    def __iter__(self):
        return iter(self.claims)

    def __getitem__(self, cid: str) -> Claim:
        found = [c for c in self.claims if c.id == cid]
        if len(found) != 1:
            if found:
                raise KeyError(f"paper {self.paper} declares {cid!r} in {len(found)} chapters "
                               f"({', '.join(c.chapter for c in found)}): use .get({cid!r}, chapter=...)")
            raise KeyError(f"paper {self.paper} declares no claim {cid!r}; its claims: "
                           f"{', '.join(sorted({c.id for c in self.claims}))}")
        return found[0]

    def get(self, cid: str, chapter: str) -> Claim:
        for c in self.claims:
            if c.id == cid and c.chapter == chapter:
                return c
        raise KeyError(f"paper {self.paper} declares no claim {cid!r} in {chapter}; its claims there: "
                       f"{', '.join(c.id for c in self.claims if c.chapter == chapter) or 'none'}")

    def chapters(self) -> list[str]:
        return list(dict.fromkeys(c.chapter for c in self.claims))

    def of_chapter(self, chapter: str) -> list[Claim]:
        return [c for c in self.claims if c.chapter == chapter]


def decide(claim: Claim, effects) -> Evidence:
    """The verdict of ``claim`` from this run's ``effects``, against its declaration: the one decision function of
    every claim of the book.

    Args:
        claim: the declaration (:class:`Claim`).
        effects: for a one-part claim its effect; else a dict part name -> effect, every declared part present.
            An effect is one number per replicate (list, array, Series, tensor), an
            :class:`~invlib.verdicts.Interval` made at the part's :meth:`Part.level` or wider, a function ``level
            -> Interval``, or :func:`~invlib.verdicts.not_measurable` where this profile cannot test it; a part
            declared with ``each`` takes a dict key -> effect. ``not_measurable(...)`` in place of ``effects``
            makes the whole claim not measurable.

    Returns:
        :class:`~invlib.verdicts.Evidence`: the part's for a one-part claim; else the parts combined
        (:func:`~invlib.verdicts.decide_parts` for ``"all"``, :func:`~invlib.verdicts.decide_any` for ``"any"``).

    Example
    -------
    >>> up = Part("rotate's gain, points", unit="seed", smallest=1.0, reason="a point")
    >>> c = Claim("x", "e1_demo", "Both help.", "+3", "Fig. 3", {"rotate": up, "shear": up})
    >>> decide(c, {"rotate": [2.0, 2.5, 3.0], "shear": [0.1, 0.2, -0.1]}).verdict
    'partly'
    >>> decide(c, {"rotate": [2.0, 2.5, 3.0]})
    Traceback (most recent call last):
    ValueError: claim 'x' of e1_demo: effects for parts ['rotate'], declared ['rotate', 'shear'] (missing: shear)
    """
    if not isinstance(claim, Claim):
        raise TypeError(f"decide takes a declared Claim (invlib.protocol.Claim), got {type(claim).__name__}")
    if isinstance(effects, Evidence):
        if effects.verdict != NOT_MEASURABLE:
            raise TypeError(f"claim {claim.id!r}: pass effects, not evidence; only not_measurable(...) stands for a "
                            "claim's effects")
        return effects
    if list(claim.parts) == [""] and not (isinstance(effects, Mapping) and list(effects) == [""]):
        effects = {"": effects}
    if not isinstance(effects, Mapping) or set(effects) != set(claim.parts):
        given = sorted(effects) if isinstance(effects, Mapping) else type(effects).__name__
        missing = sorted(set(claim.parts) - set(effects)) if isinstance(effects, Mapping) else []
        extra = sorted(set(effects) - set(claim.parts)) if isinstance(effects, Mapping) else []
        raise ValueError(f"claim {claim.id!r} of {claim.chapter}: effects for parts {given}, declared "
                         f"{sorted(claim.parts)}" + (f" (missing: {', '.join(missing)})" if missing else "")
                         + (f" (not declared: {', '.join(extra)})" if extra else ""))
    leaves: dict[str, Evidence] = {}
    sources: dict[str, tuple[Part, object]] = {}  # each leaf's declaration and effect, to decide it again strictly
    gates: list[str] = []
    for name, part in claim.parts.items():
        effect = effects[name]
        if part.each:
            if isinstance(effect, Evidence):
                leaves[name] = _decide_part(part, effect)
                continue
            if not isinstance(effect, Mapping) or not effect:
                raise ValueError(f"claim {claim.id!r}, part {name!r}: declared for each {part.each}, it takes a "
                                 f"non-empty dict {part.each} -> effect")
            k = len(effect) * len(claim.parts) if claim.combine == "any" else None  # any: Bonferroni over all
            for key, value in effect.items():
                leaf = f"{name}: {key}" if name else str(key)
                leaves[leaf], sources[leaf] = _decide_part(part, value, k), (part, value)
                gates += [leaf] if name in claim.gate else []
        else:
            leaves[name], sources[name] = _decide_part(part, effect), (part, effect)
            gates += [name] if name in claim.gate else []
    if list(leaves) == [""]:
        return leaves[""]
    reason = claim.criterion()
    if gates:  # preconditions: unless each holds, the claim's other parts are not tested
        closed = [n for n in gates if leaves[n].verdict != verdicts.REPRODUCED]
        if closed:
            held = verdicts.decide_parts(leaves, reason=reason)
            missing = all(leaves[n].verdict == NOT_MEASURABLE for n in closed)
            failed = [n for n in closed if leaves[n].verdict in (verdicts.NOT_REPRODUCED, verdicts.PARTLY)]
            shown = "; ".join(f"{n}: {leaves[n].text()}" for n in (failed or closed))
            why = (f"{verdicts.PREMISE_NOT_MET} ({shown}): the claim is not tested" if failed else
                   f"premise not yet shown ({shown}): the claim is not tested until it is")
            return dataclasses.replace(held, verdict=NOT_MEASURABLE if missing else verdicts.INCONCLUSIVE,
                                       n_needed=None, n_needed_why=why, reason=f"{reason} ({why})", decided_by="")
        rest = dataclasses.replace(claim, parts={n: p for n, p in claim.parts.items() if n not in claim.gate},
                                   gate=())
        combined = decide(rest, {n: effects[n] for n in rest.parts})
        return dataclasses.replace(combined, reason=reason, parts=tuple(leaves.items()))
    if claim.combine == "any":
        return verdicts.decide_any(leaves, reason=reason)
    against = _against(leaves, sources)
    return verdicts.decide_parts(leaves, reason=reason, against=against)


def _against(leaves: Mapping[str, Evidence], sources: Mapping[str, tuple[Part, object]]) -> list[str]:
    """The parts of an all-must-hold claim that are decisively against it at the strict level (each part decided
    again at ``1 - 0.05 / k`` for the claim's ``k`` measured parts, on top of its own multiplicity), while another
    part is still inconclusive; empty otherwise. An effect given as an interval made at a lower level cannot be
    widened, and does not count (a deterministic value is exact at every level)."""
    measured = [n for n, ev in leaves.items() if ev.verdict != NOT_MEASURABLE]
    if len(measured) < 2 or not any(leaves[n].verdict == verdicts.INCONCLUSIVE for n in measured):
        return []
    out = []
    for name in measured:
        if leaves[name].verdict != verdicts.NOT_REPRODUCED or name not in sources:
            continue
        part, effect = sources[name]
        own = part.of if isinstance(part.of, int) else 1
        try:
            strict = _decide_part(part, effect, own * len(measured))
        except ValueError:  # an interval made once at the part's own level: it says nothing stricter
            continue
        if strict.verdict == verdicts.NOT_REPRODUCED:
            out.append(name)
    return out


def _decide_part(part: Part, effect, k: int | None = None) -> Evidence:
    if isinstance(effect, Evidence):
        if effect.verdict != NOT_MEASURABLE:
            raise TypeError("a part's effect is values or an interval; only not_measurable(...) stands for one")
        return effect
    if isinstance(part.of, str) and not part.each and not isinstance(effect, Interval | Callable):
        raise ValueError(f"part {part.quantity!r} is one of the {part.of}: its effect comes as an interval made at "
                         "the Bonferroni level of their number (or a function level -> Interval)")
    margin = part.smallest if part.direction == "equivalent" else None
    return verdicts.decide(effect, direction=DECIDED_AS[part.direction], boundary=part.boundary, margin=margin,
                           reason=part.reason, unit=part.unit, n_min=part.n_min, null=part.null, level=part.level(k))


def _num(x: float) -> str:
    return f"{x:.4g}" if math.isfinite(x) else "n/a"


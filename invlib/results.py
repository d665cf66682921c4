"""Results of a notebook run: metrics beside the paper's values, written to ``results/<profile>/<notebook>.json``.

Every chapter opens with :func:`open_chapter` (``S, run = results.open_chapter(paper.settings, globals())``: its
settings from the parameters cell and one :class:`Run`; the book runner tells it the chapter's name through
``$INVLIB_CHAPTER``), logs its numbers with the paper's reference value where the paper has one, records each
paper claim it tests with :meth:`Run.claim` (the verdict is computed from this run's numbers by a stated
criterion), shows :meth:`Run.table` ("paper vs this run") and ends with :meth:`Run.close`.
:func:`scoreboard` gathers the claims of every saved run: the book's "Reproduction scoreboard" page. The JSON file holds
the metrics, the paper's values, the parameters, the environment (torch version, device) and the seconds
the run took, so runs on different machines and profiles can be compared without re-executing anything.
Every claim's verdict comes from one decision function, :func:`invlib.protocol.decide`: the claim's effects per
replicate against the smallest effect that matters, declared in its paper's protocol before the run
(``invlib/papers/<paper>/protocol.py``); the :class:`Evidence` (estimate, interval, n, unit, null, boundary) and
the declaration are stored with the claim. The intervals the reports make (:mod:`invlib.verdicts`) are re-exported
here.

The folder is ``$INVLIB_RESULTS`` if set (the book runner sets it), else ``results/`` in the repository.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import torch

from .profiles import Profile, get_profile
from .utils import REPO, atomic_save, check_choice
from .verdicts import (  # noqa: F401  (the decision function and its intervals, used through results.*)
    INCONCLUSIVE,
    LEVEL,
    NOT_MEASURABLE,
    NOT_REPRODUCED,
    PARTLY,
    REPRODUCED,
    VERDICTS,
    Evidence,
    Interval,
    bootstrap_interval,
    exact,
    mantel,
    not_measurable,
    paired,
    phrase,
    rate_difference_interval,
    rho_interval,
    share_interval,
    t_interval,
    t_intervals,
)

PAPERS = {"a": "A", "b": "B", "c": "C", "d": "D", "e": "E"}  # a chapter's first letter names its paper


def results_dir(profile: str) -> Path:
    """``results/<profile>`` (``$INVLIB_RESULTS/<profile>`` when set).

    Example
    -------
    >>> results_dir("smoke").name
    'smoke'
    """
    root = os.environ.get("INVLIB_RESULTS") or REPO / "results"
    return Path(root) / profile


def environment(device: str | torch.device | None = None) -> dict:
    """What a number depends on besides the code: versions, the device, the machine.

    Example
    -------
    >>> environment("cpu")["device"]
    'cpu'
    """
    device = torch.device(device or "cpu")
    cuda = device.type == "cuda" and torch.cuda.is_available()
    name = torch.cuda.get_device_name(device) if cuda else platform.processor() or "cpu"
    return dict(torch=torch.__version__, python=sys.version.split()[0], platform=platform.platform(),
                device=str(device), device_name=name, cpu_threads=torch.get_num_threads())


CHAPTER_ENV = "INVLIB_CHAPTER"  # the book runner puts the executed chapter's name here (invlib.book.execute)


class Run:
    """The record of one notebook run, saved as ``results/<profile>/<name>.json``.

    ``Run(S)``, ``S`` a chapter's settings (a dataclass instance with a ``profile`` field, e.g. what
    ``invlib.papers.b.rrc.settings`` returns): the profile is ``S.profile`` and the parameters stored with the
    results are ``dataclasses.asdict(S)``. ``Run(profile, params=...)``: a profile name or
    :class:`invlib.profiles.Profile`, and the parameters as a dict.

    The run's name (the JSON file's stem) is ``name`` if given, else ``$INVLIB_CHAPTER``, which the book runner
    (``python -m invlib book``) sets to the chapter it executes; a notebook run some other way (papermill,
    Jupyter, a script) passes ``name=``. The older form ``Run("demo", "smoke", params=...)`` (name, then
    profile) still works.

    Args:
        settings: the settings dataclass instance, or the profile (name or ``Profile``).
        name: the run's name, e.g. ``"00_data_and_transforms"``; default ``$INVLIB_CHAPTER``.
        params: the parameters stored with the results (only with a profile: settings bring their own).
        device: the device the run computed on (default: the profile's).

    Example
    -------
    >>> @dataclasses.dataclass(frozen=True)
    ... class Settings:
    ...     profile: str = "smoke"
    ...     seeds: int = 3
    >>> run = Run(Settings(), name="demo")
    >>> run.profile.name, run.params
    ('smoke', {'profile': 'smoke', 'seeds': 3})
    >>> run = Run("smoke", name="demo", params={"seed": 0})
    >>> run.log("top1", 0.71, paper=0.69, note="ResNet-18")
    >>> run.log("epochs", 1)
    >>> run.table()["this run"].tolist()
    [0.71]
    >>> run.save().name
    'demo.json'
    """

    def __init__(self, settings, profile: str | Profile | None = None, /, *, name: str | None = None,
                 params: dict | None = None, device=None):
        if profile is not None:  # the older form Run(name, profile)
            if not isinstance(settings, str) or settings in _profile_names() or name is not None:
                raise TypeError(f"Run({settings!r}, {profile!r}): give the settings or the profile first and "
                                f"the name as name=, e.g. Run({profile!r}, name={settings!r})")
            settings, name = profile, settings
        if isinstance(settings, str | Profile):
            if isinstance(settings, str) and settings not in _profile_names():
                raise ValueError(f"Run({settings!r}): {settings!r} is not a profile ({', '.join(_profile_names())})"
                                 f"; give the run's name as name=, e.g. Run('smoke', name={settings!r})")
            self.profile = get_profile(settings)
        elif dataclasses.is_dataclass(settings) and not isinstance(settings, type) and hasattr(settings, "profile"):
            if params is not None:
                raise TypeError("Run(S, params=...): the parameters of a run made from settings are the settings")
            self.profile, params = get_profile(settings.profile), dataclasses.asdict(settings)
        else:
            raise TypeError(f"Run needs a chapter's settings (a dataclass with a 'profile' field) or a profile, "
                            f"got {type(settings).__name__} {settings!r}")
        name = name if name is not None else os.environ.get(CHAPTER_ENV)
        if not name:
            raise ValueError(f"Run does not know the chapter's name: the book runner (python -m invlib book) "
                             f"sets ${CHAPTER_ENV}; executing a notebook outside it, pass name=, e.g. "
                             f"results.Run(S, name='b1_rrc_decomposition')")
        if not isinstance(name, str) or "/" in name or os.sep in name:
            raise ValueError(f"a run's name is a file stem, e.g. 'b1_rrc_decomposition'; got {name!r}")
        self.notebook = name
        self.params = dict(params or {})
        self.device = str(device or self.params.get("device") or self.profile.device)  # the settings' own first
        self.metrics: dict[str, object] = {}
        self.paper: dict[str, object] = {}
        self.notes: dict[str, str] = {}
        self.claims: dict[str, dict] = {}
        self.evidence: dict[str, Evidence] = {}  # each recorded claim's evidence, by id, for the prose
        self.replicate_costs: dict[str, dict] = {}  # parameter -> {n, seconds, claims, note, [unit, cap]}: replicates()
        self.variance_splits: dict[str, dict] = {}  # parameter -> effect -> verdicts.variance_split: variance()
        self._t0 = time.perf_counter()

    def use(self, settings) -> None:
        """Record ``settings`` as the run's parameters: a chapter's settings after it chose one of them itself
        (paper D1 chooses its entropy band by a sweep after it opened), so the JSON holds what the run used.

        Example
        -------
        >>> @dataclasses.dataclass(frozen=True)
        ... class Settings:
        ...     profile: str = "smoke"
        ...     band: tuple | None = None
        >>> run = Run(Settings(), name="demo")
        >>> run.use(Settings(band=(1.0, 1.5)))
        >>> run.params
        {'profile': 'smoke', 'band': (1.0, 1.5)}
        """
        if not dataclasses.is_dataclass(settings) or getattr(settings, "profile", None) != self.profile.name:
            raise ValueError(f"Run.use takes the chapter's settings with the run's profile {self.profile.name!r}; "
                             f"got {settings!r}")
        self.params = dataclasses.asdict(settings)

    def log(self, key: str, value, paper=None, note: str = "") -> None:
        """Record ``value`` (a number, string, list or dict of them) under ``key``, with the paper's value.

        Tensors and numpy scalars become plain Python numbers; logging a key again replaces it.
        """
        if not isinstance(key, str) or not key:
            raise ValueError(f"metric key must be a non-empty string, got {key!r}")
        self.metrics[key] = _plain(value)
        if paper is not None:
            self.paper[key] = _plain(paper)
        if note:
            self.notes[key] = note

    def replicates(self, parameter: str, seconds, claims, note: str = "", unit: str = "seed",
                   cap: int | None = None, same_as: str = "") -> None:
        """Record what one replicate of a family costs and which claims rest on the family: the chapter's
        parameter ``parameter`` (e.g. ``"seeds"``) sets how many replicates it runs, ``seconds`` holds each
        replicate's seconds (one per seed run here: its training, or the zoo checkpoint's ``seconds`` for a model the
        training phase trained), and ``claims`` names the declared claims whose verdicts rest on those replicates.
        ``python -m invlib plan`` reads it (:mod:`invlib.plan`) to say how many replicates decide each claim and what
        they cost. Recording the same parameter again adds seconds and claims to it.

        ``unit``: what one replicate is (:data:`invlib.verdicts.UNITS`; a family of evaluation items, e.g.
        ``"image"`` for a claim about one given model, records the seconds of each item or of equal shares of the
        evaluation). ``cap``: the most replicates the design has (e.g. C's 9 transformation types, a data set's
        classes), where there is such a most; the plan plans no more. Both are stored only where given (``unit``
        other than ``"seed"``). ``same_as``: ``"<chapter>:<parameter>"`` where these replicates are another
        chapter's (e.g. B5 reads B1's seeds, ``"b1_rrc_decomposition:seeds"``); the plan then counts them once, as
        that chapter's family, with these claims on it.

        Example
        -------
        >>> run = Run("smoke", name="demo")
        >>> run.replicates("seeds", [12.5, 11.5], ["table1/x"], note="one InstaAug model a seed")
        >>> run.replicate_costs["seeds"]["n"], run.replicate_costs["seeds"]["seconds"]
        (2, [12.5, 11.5])
        >>> run.replicates("types", [3.0] * 4, ["c/x"], unit="model", cap=9)
        >>> run.replicate_costs["types"]["unit"], run.replicate_costs["types"]["cap"]
        ('model', 9)
        >>> run.replicates("rrc.seeds", [1.0] * 3, ["appD1/x"], same_as="b1_rrc_decomposition:seeds")
        >>> run.replicate_costs["rrc.seeds"]["same_as"]
        'b1_rrc_decomposition:seeds'
        """
        from .verdicts import UNITS

        if not isinstance(parameter, str) or not parameter:
            raise ValueError(f"parameter must be a chapter parameter's name, got {parameter!r}")
        if unit not in UNITS:
            raise ValueError(f"unit: what one replicate is, one of {UNITS}; got {unit!r}")
        if same_as and (same_as.count(":") != 1 or not all(same_as.split(":"))):
            raise ValueError(f"same_as: '<chapter>:<parameter>' of the family these replicates are, got {same_as!r}")
        seconds = [round(float(x), 3) for x in seconds]
        if not seconds or min(seconds) < 0:
            raise ValueError(f"seconds: one non-negative number per replicate, got {seconds!r}")
        if isinstance(claims, str):
            claims = [claims]
        entry = self.replicate_costs.setdefault(parameter, dict(n=0, seconds=[], claims=[], note=note))
        entry["seconds"] += seconds
        entry["n"] = len(entry["seconds"])
        entry["claims"] += [c for c in claims if c not in entry["claims"]]
        if unit != "seed":
            entry["unit"] = unit
        if cap is not None:
            if int(cap) < entry["n"]:
                raise ValueError(f"cap: the most replicates the design has, at least the {entry['n']} recorded; "
                                 f"got {cap!r}")
            entry["cap"] = int(cap)
        if note and note not in entry["note"]:
            entry["note"] = f"{entry['note']}; {note}" if entry["note"] else note
        if same_as:
            entry["same_as"] = same_as

    def variance(self, parameter: str, effect: str, per_item) -> dict:
        """Record where the spread over seeds of a paired effect comes from (:func:`invlib.verdicts.variance_split`):
        ``per_item`` is ``(seeds, items)``, the effect of each test item under each of the seeds of the chapter's
        parameter ``parameter`` (e.g. ``"seeds"``), so that a seed's effect is its row's mean; ``effect`` names it.
        The JSON keeps it under ``variance``; ``python -m invlib plan`` shows each family's splits, which say
        whether a larger test set (evaluation) or more seeds (training) narrows the family's intervals. Returns the
        split.

        Example
        -------
        >>> run = Run("smoke", name="demo")
        >>> split = run.variance("seeds", "A - B", [[1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 1.0, 1.0]])
        >>> split["items"], run.variance_splits["seeds"]["A - B"]["evaluation_share"]
        (4, 1.0)
        """
        from .verdicts import variance_split

        if not isinstance(parameter, str) or not parameter:
            raise ValueError(f"parameter must be a chapter parameter's name, got {parameter!r}")
        split = variance_split(per_item)
        self.variance_splits.setdefault(parameter, {})[effect] = {
            k: (round(v, 6) if isinstance(v, float) else v) for k, v in split.items()}
        return split

    def claim(self, declared, ours, effects, paper=None) -> str:
        """Record one claim of the paper, tested by this run, and return its verdict; its
        :class:`~invlib.verdicts.Evidence` is kept in :attr:`evidence` under the claim's id.

        Args:
            declared: the claim's declaration in its paper's protocol (:class:`invlib.protocol.Claim`, e.g.
                ``PROTOCOL["table1a/translation_recovers_rrc"]``): statement, the paper's value, the parts with
                their smallest effects. The criterion shown is written from it, and it is stored with the claim.
            ours: this run's number (or text) for the table.
            effects: what this run measured, per part (:func:`invlib.protocol.decide` says the forms), or
                :func:`not_measurable` where the profile cannot test the claim.
            paper: the paper's value where it comes from a stored file rather than the declaration (the authors'
                code's runs, with their commit).

        Example
        -------
        >>> from invlib.protocol import Claim, Part
        >>> gain = Part("RRC's gain, points", unit="seed", smallest=0.5, reason="half a point of top-1")
        >>> rrc = Claim("t1", "demo", "RRC helps.", paper="+4.4", where="Table 1a", parts=gain)
        >>> run = Run("smoke", name="demo")
        >>> run.claim(rrc, ours=1.03, effects=[1.2, 0.8, 1.1])
        'reproduced'
        >>> run.claims["t1"]["evidence"]["n"], run.claims["t1"]["interval"]
        (3, '+1.03 [+0.516, +1.55], 3 seeds; > 0.5')
        >>> run.evidence["t1"].verdict  # the evidence itself, for the prose: decided once
        'reproduced'
        """
        from .protocol import Claim
        from .protocol import decide as decide_claim

        if not isinstance(declared, Claim):
            raise TypeError(f"Run.claim takes the claim's declaration from its paper's protocol (a "
                            f"invlib.protocol.Claim), got {type(declared).__name__} {declared!r}")
        evidence = decide_claim(declared, effects)
        cid = declared.id
        self.evidence[cid] = evidence
        self.claims[cid] = dict(id=cid, claim=declared.statement, paper=_plain(declared.paper if paper is None
                                                                              else paper),
                                ours=_plain(ours), criterion=declared.criterion(), verdict=evidence.verdict,
                                kind=declared.kind,
                                interval=evidence.text(), evidence=evidence.to_dict(),
                                declaration=declared.to_dict())
        return evidence.verdict

    def claims_table(self):
        """The recorded claims as the book shows them (:class:`invlib.pages.ClaimsTable`: the one claims table of
        :func:`invlib.pages.claims_html` in a notebook, ``.frame`` a pandas DataFrame ``claim | paper | this run |
        interval | criterion | verdict``)."""
        from .pages import ClaimsTable

        return ClaimsTable(list(self.claims.values()))

    def table(self, only_paper: bool = True):
        """A pandas DataFrame, one row per metric: ``metric | paper | this run | note``.

        Numbers keep their type (ints stay ints) and floats are rounded to 4 significant digits for reading;
        the JSON file keeps full precision. ``only_paper=True`` keeps the metrics that have a paper value
        (the "paper vs this run" table).
        """
        import pandas as pd

        keys = [k for k in self.metrics if k in self.paper or not only_paper]
        rows = [dict(metric=k, paper=_short(self.paper.get(k, "—")), **{"this run": _short(self.metrics[k])},
                     note=self.notes.get(k, "")) for k in keys]
        return pd.DataFrame(rows, columns=["metric", "paper", "this run", "note"], dtype=object).set_index("metric")

    def to_dict(self) -> dict:
        return dict(notebook=self.notebook, profile=self.profile.name, params=_plain(self.params),
                    metrics=self.metrics, paper=self.paper, notes=self.notes, claims=list(self.claims.values()),
                    replicates=self.replicate_costs, variance=self.variance_splits,
                    env=environment(self.device if self.device != "auto" else None),
                    seconds=round(time.perf_counter() - self._t0, 2),
                    finished=datetime.now(UTC).isoformat(timespec="seconds"))

    def close(self) -> None:
        """A chapter's last call: :meth:`save` the run and print where its JSON went (relative to the repository
        when it is inside it). Returns nothing, so a notebook's last cell shows only that line.

        Example
        -------
        >>> Run("smoke", name="demo").close()  # doctest: +ELLIPSIS
        results: ...demo.json
        """
        path = self.save()
        if os.environ.get(CHAPTER_ENV):  # the book runner links the results from the page itself
            return
        try:
            shown = path.relative_to(REPO)
        except ValueError:
            shown = path
        print(f"results: {shown}")

    def save(self) -> Path:
        """Write ``results/<profile>/<notebook>.json`` atomically and return its path."""
        path = results_dir(self.profile.name) / f"{self.notebook}.json"
        text = json.dumps(self.to_dict(), indent=2, allow_nan=False)
        atomic_save(text, path)
        return path


def open_chapter(settings, namespace: dict, *, name: str | None = None, **fixed) -> tuple:
    """A chapter's first call: its settings from the papermill parameters in ``namespace`` (the notebook's
    ``globals()``, read by :func:`invlib.profiles.cell`) and the :class:`Run` that records it (named by the book
    runner, or ``name``). ``settings`` is the paper's ``settings(profile, **overrides)`` function; ``fixed`` are
    arguments the chapter itself sets, e.g. paper E's ``experiment="sprites"``. Close the chapter with
    :meth:`Run.close`.

    Returns ``(S, run)``.

    Example
    -------
    >>> from invlib.papers.d import rotations
    >>> S, run = open_chapter(rotations.settings, {"profile": "smoke", "seeds": 2, "plt": None}, name="demo")
    >>> S.seeds, run.profile.name, run.params["seeds"]
    (2, 'smoke', 2)
    """
    from .pages import install_display
    from .profiles import cell

    S = settings(**fixed, **cell(namespace))
    install_display()
    return S, Run(S, name=name)


def load(notebook: str, profile: str = "cpu") -> dict:
    """Read back what :meth:`Run.save` wrote; a missing file says how to make it.

    Example
    -------
    >>> Run("smoke", name="demo2").save().exists() and load("demo2", "smoke")["profile"]
    'smoke'
    """
    path = results_dir(profile) / f"{notebook}.json"
    if not path.exists():
        raise FileNotFoundError(f"No results at {path}: run `python -m invlib book --profile {profile} "
                                f"--only {notebook}` (or execute the notebook with papermill) first.")
    return json.loads(path.read_text())


def scoreboard(profile: str | None = None) -> list[dict]:
    """Every claim of every saved run, for the "Reproduction scoreboard" page: one dict per claim with
    ``paper`` (A–E), ``chapter``, ``profile``, ``date`` (of the run), and the claim's ``id``, ``claim``,
    ``paper_value``, ``ours``, ``criterion``, ``verdict``, ``interval`` (the evidence in words) and ``evidence``
    (the dict :meth:`Evidence.to_dict` stored). ``profile=None`` reads every profile's folder.

    Example
    -------
    >>> from invlib.protocol import Claim, Part
    >>> level = Part("the share", unit="deterministic", smallest=0.9, reason="the paper's level", n_min=1)
    >>> run = Run("smoke", name="e9_demo")
    >>> _ = run.claim(Claim("x", "e9_demo", "A claim.", "1.0", "Fig. 1", level), ours=0.5, effects=exact(0.5))
    >>> _ = run.save()
    >>> [(r["paper"], r["chapter"], r["verdict"]) for r in scoreboard("smoke") if r["chapter"] == "e9_demo"]
    [('E', 'e9_demo', 'not reproduced')]
    """
    root = results_dir("x").parent
    folders = [root / check_choice(profile, _profile_names(), "profile")] if profile else sorted(root.glob("*"))
    rows = []
    for folder in folders:
        for file in sorted(folder.glob("*.json")):
            record = json.loads(file.read_text())
            for c in record.get("claims", []):
                rows.append(dict(paper=PAPERS.get(file.stem[:1], "—"), chapter=file.stem,
                                 profile=record.get("profile", folder.name),
                                 date=str(record.get("finished", ""))[:10], id=c["id"], claim=c["claim"],
                                 paper_value=c["paper"], ours=c["ours"], criterion=c["criterion"],
                                 verdict=c["verdict"], interval=c.get("interval", "—"),
                                 evidence=c.get("evidence"), kind=c.get("kind", "paper"),
                                 where=(c.get("declaration") or {}).get("where", "")))
    return rows


# What differs between two runs of one commit on one machine without the numbers differing: when and how long.
VOLATILE = ("seconds", "book_seconds", "finished", "replicates")  # replicates: seconds per replicate


def compare(a: str | os.PathLike, b: str | os.PathLike) -> list[dict]:
    """Two runs of the book side by side: for each chapter in both results folders (``<root>/<profile>/``, e.g.
    ``results/cpu`` of two clones), whether its JSON is identical apart from :data:`VOLATILE` (when and how long it
    ran), and each claim's verdict and estimate in both.

    Returns one dict per claim: ``chapter``, ``id``, ``verdict_a``, ``verdict_b``, ``estimate_a``, ``estimate_b``,
    ``moved`` (the verdicts differ), ``declaration_moved`` (the claim's declaration differs: its parts, smallest
    effects, reasons, statement), ``same_json`` (the chapter's whole record is the same); a chapter with no claims
    gives one row with ``id`` None.

    Example
    -------
    >>> import tempfile
    >>> from invlib.protocol import Claim, Part
    >>> root = Path(tempfile.mkdtemp())
    >>> for name, small in (("one", 0.5), ("two", 1.5)):
    ...     gain = Claim("g", "b9_demo", "A gain.", "1", "Table 1", Part("gain", "seed", smallest=small, reason="r"))
    ...     run = Run("smoke", name="b9_demo"); run.log("gain", 3.1)
    ...     _ = run.claim(gain, ours=1.03, effects=[1.0, 1.2, 0.9])
    ...     path = atomic_save(json.dumps(run.to_dict()), root / name / "b9_demo.json")
    >>> [(r["id"], r["verdict_a"], r["verdict_b"], r["declaration_moved"], r["same_json"])
    ...  for r in compare(root / "one", root / "two")]
    [('g', 'reproduced', 'not reproduced', True, False)]
    """
    a, b = Path(a), Path(b)
    for folder in (a, b):
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder} is not a results folder (results/<profile>/ of a build)")
    rows = []
    for name in sorted({f.stem for f in a.glob("*.json")} & {f.stem for f in b.glob("*.json")}):
        ra, rb = (json.loads((folder / f"{name}.json").read_text()) for folder in (a, b))
        same = {k: v for k, v in ra.items() if k not in VOLATILE} == {k: v for k, v in rb.items() if k not in VOLATILE}
        ca, cb = ({c["id"]: c for c in r.get("claims", [])} for r in (ra, rb))
        for cid in list(dict.fromkeys([*ca, *cb])) or [None]:
            x, y = ca.get(cid, {}), cb.get(cid, {})
            rows.append(dict(chapter=name, id=cid, verdict_a=x.get("verdict"), verdict_b=y.get("verdict"),
                             estimate_a=(x.get("evidence") or {}).get("estimate"),
                             estimate_b=(y.get("evidence") or {}).get("estimate"),
                             moved=x.get("verdict") != y.get("verdict"),
                             declaration_moved=x.get("declaration") != y.get("declaration"), same_json=same))
    return rows


# --- numbers a chapter shows beside its verdicts (the verdicts themselves come from decide) -------------------------

def mean_se(values) -> tuple[float, float]:
    """The mean of ``values`` and its standard error (the standard deviation with ``ddof=1`` over ``sqrt(n)``).

    Args:
        values: numbers (a list, numpy array or tensor; flattened). A NaN among them makes both NaN.

    Returns:
        ``(mean, se)`` as floats; ``se`` is NaN for fewer than 2 values (and ``mean`` too for none).

    Example
    -------
    >>> mean_se([1.0, 2.0, 3.0, 6.0])
    (3.0, 1.0801234497346435)
    >>> mean_se([0.5])
    (0.5, nan)
    """
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    x = np.asarray(values, dtype=float).ravel()
    mean = float(x.mean()) if x.size else math.nan
    se = float(x.std(ddof=1) / math.sqrt(x.size)) if x.size >= 2 else math.nan
    return mean, se


def text(value, spec: str = "") -> str:
    """A number the prose quotes, formatted with ``spec``, or ``"n/a"`` where it was not measured (None or NaN):
    for ``{glue:md}`` where a profile may leave a number out.

    Example
    -------
    >>> text(0.3183, ".2f"), text(float("nan"), ".2f"), text(None)
    ('0.32', 'n/a', 'n/a')
    """
    if value is None or isinstance(value, (float, np.floating)) and math.isnan(value):
        return "n/a"
    return format(value, spec)


def glue(numbers: dict, display: bool = False) -> None:
    """Glue every entry of ``numbers`` (what a reports function returns for the prose) into the executed
    notebook, so the chapter's Markdown quotes it as ``{glue:text}`name:.1f``` (numbers) or ``{glue:md}`name```
    (text; strings are glued as Markdown). Returns nothing, so a chapter's cell that ends with it shows nothing.

    Outside a notebook (no IPython kernel) nothing is glued; the names are still checked.

    Example
    -------
    >>> glue({"n_train": 3000, "verdict": "earlier"})
    >>> glue(["n_train"])
    Traceback (most recent call last):
    TypeError: glue takes a dict of name -> number or text, got list
    """
    if not isinstance(numbers, dict):
        raise TypeError(f"glue takes a dict of name -> number or text, got {type(numbers).__name__}")
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the book's extras
        return
    if get_ipython() is None or getattr(get_ipython(), "kernel", None) is None:
        return
    from IPython.display import Markdown
    from myst_nb import glue as _glue

    for name, value in numbers.items():
        _glue(name, Markdown(value) if isinstance(value, str) else _plain(value), display=display)


def _profile_names() -> list[str]:
    from .profiles import PROFILES

    return list(PROFILES)


def _short(value):
    return float(f"{value:.4g}") if isinstance(value, float) else value


def _plain(value):
    """JSON-ready copy: tensors and numpy values to Python numbers/lists; NaN to None."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().tolist()
    elif hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot store {type(value).__name__} in results JSON; log numbers, strings, lists or dicts")

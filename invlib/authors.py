"""The authors' code beside ours: their measured runs, kept in git, and the "same as the authors' code" verdict.

Where a paper's authors published code, that code decides what the method does. ``benchmarks/authors/`` runs it
on this machine at our chapters' settings and seeds and writes its numbers, with the commit and the date of the
run, into a JSON file beside the paper's package (``{"runs": [{"experiment": ..., "seed": ..., "commit": ...,
"date": ..., <what the run measured>}, ...]}``); the book cannot rerun their code, so this is the one measured
file kept in git. A chapter reads it with :func:`runs`, records whether our implementation behaves as theirs on
the same seeds with :func:`record_same_rate` (a two-sided Fisher exact test of equal success rates,
:func:`same_rate_p`), and shows the seeds with :func:`side_by_side`. Where their code computes numbers that ours
can compute on the same inputs (paper B), :func:`latest` reads their newest record and :func:`record_same_values`
records whether every number agrees within its tolerance.

Example
-------
>>> round(same_rate_p(5, 6, 6, 6), 3)
1.0
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

BASE_COLUMNS = ("seed", "commit", "date")


def runs(path: str | Path, experiment: str | None = None, columns=(), **match) -> pd.DataFrame:
    """The runs of the authors' code stored in ``path``, one row per run: those of ``experiment`` (all when None)
    whose fields equal ``match`` (e.g. ``n_train=2560, epochs=12``). The table always has ``seed``, ``commit``,
    ``date`` and ``columns``, even when no run matches (their code was not run at that setting); a missing file
    is an empty table too.

    Example
    -------
    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "runs.json"
    >>> _ = f.write_text(json.dumps({"runs": [{"experiment": "a", "seed": 0, "commit": "abc", "date": "2026-11-23",
    ...                                         "ok": True}]}))
    >>> runs(f, "a")["ok"].tolist(), len(runs(f, "a", seed=1)), list(runs(f, "b", columns=["ok"]).columns)
    ([True], 0, ['seed', 'commit', 'date', 'ok'])
    """
    path = Path(path)
    stored = json.loads(path.read_text())["runs"] if path.exists() else []
    rows = [r for r in stored if (experiment is None or r.get("experiment") == experiment)
            and all(r.get(k) == v for k, v in match.items())]
    names = list(dict.fromkeys([*BASE_COLUMNS, *columns, *(k for r in rows for k in r if k != "experiment")]))
    return pd.DataFrame(rows, columns=names)


def latest(path: str | Path, experiment: str, **match) -> dict | None:
    """The newest run of ``experiment`` stored in ``path`` whose fields equal ``match`` (by ``date``, then the
    later in the file), as a dict; None when there is none (or no file).

    Example
    -------
    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "runs.json"
    >>> _ = f.write_text(json.dumps({"runs": [{"experiment": "a", "date": "2026-11-24", "v": 1},
    ...                                         {"experiment": "a", "date": "2026-11-25", "v": 2}]}))
    >>> latest(f, "a")["v"], latest(f, "b"), latest(f, "a", v=1)["date"]
    (2, None, '2026-11-24')
    """
    path = Path(path)
    stored = json.loads(path.read_text())["runs"] if path.exists() else []
    rows = [(str(r.get("date", "")), k, r) for k, r in enumerate(stored) if r.get("experiment") == experiment
            and all(r.get(f) == v for f, v in match.items())]
    return max(rows, key=lambda t: t[:2])[2] if rows else None


# The declarations of the two "same as the authors' code" tests, for a paper's protocol.
SAME_VALUES = dict(quantity="keys whose number differs from their code's beyond its stated tolerance",
                   unit="deterministic", direction="less", null=1.0, smallest=0.5, n_min=1,
                   reason="each key's tolerance is stated with the key before the run: no key may differ beyond it "
                          "(a count below one half; one key differing is the no-effect value)")
# An equal success rate with the authors' code: the two rates may differ by at most this share of the runs.
SAME_RATE_MARGIN = 0.25
SAME_RATE = dict(quantity="our success rate minus theirs over seeds (Newcombe interval)", unit="seed",
                 direction="equivalent", null=0.0, smallest=SAME_RATE_MARGIN, n_min=3,
                 reason="a quarter of the runs: an implementation that succeeds in a quarter more (or fewer) of the "
                        "seeds than the authors' code is a difference a reader would act on")


def same_values_part():
    """The declared part of "our numbers equal those of the authors' code on the same inputs" (for a protocol).

    Example
    -------
    >>> same_values_part().boundary
    0.5
    """
    from .protocol import Part

    return Part(**SAME_VALUES)


def same_rate_part():
    """The declared part of "our implementation succeeds as often as the authors' code" (an equivalence within
    :data:`SAME_RATE_MARGIN`), for a protocol.

    Example
    -------
    >>> same_rate_part().smallest
    0.25
    """
    from .protocol import Part

    return Part(**SAME_RATE)


def record_same_values(run, declared, frame: pd.DataFrame, rec: dict | None) -> str:
    """Record the claim ``declared`` (its protocol's declaration, with :func:`same_values_part`) on ``run``: our
    numbers equal those of the authors' code on the same inputs.

    ``frame`` has one row per number: ``key``, ``ours``, ``theirs``, ``difference`` (absolute), ``tolerance``,
    ``same`` (e.g. :func:`invlib.papers.b.authors_code.compare`); ``rec`` is their stored run (its ``commit`` and
    ``date``), None when their code has not been run. The inputs are fixed, so the check is deterministic: the
    effect is the number of keys beyond their tolerance, reproduced when it is 0; not measurable when ``rec`` is
    None or ``frame`` is empty. The text names how many keys differ and the largest difference (missing first, then
    in units of its tolerance). Also logs ``<cid>/keys_differing`` and
    ``<cid>/largest_difference``. Returns the verdict.

    Example
    -------
    >>> from invlib.results import Run
    >>> from invlib.protocol import Claim
    >>> same = Claim("x/same", "demo", "Same numbers.", "their code", "their repository", same_values_part())
    >>> run = Run("smoke", name="demo")
    >>> frame = pd.DataFrame(dict(key=["a", "b"], ours=[1.0, 2.0], theirs=[1.0, 2.5], difference=[0.0, 0.5],
    ...                           tolerance=[0.1, 0.1], same=[True, False]))
    >>> record_same_values(run, same, frame, {"commit": "a4facc0", "date": "2026-11-25"})
    'not reproduced'
    >>> run.claims["x/same"]["ours"], run.claims["x/same"]["interval"]
    ('1 of 2 keys differ; largest |ours - theirs| 0.5 at b (tolerance 0.1)', '+1 (deterministic); < 0.5')
    """
    from .results import exact, not_measurable

    cid = declared.id
    if rec is None or len(frame) == 0:
        return run.claim(declared, ours="not compared", paper="their code not run on these inputs",
                         effects=not_measurable("the authors' code has no stored run on these inputs"))
    differ = frame[~frame["same"].astype(bool)]
    difference = frame["difference"].astype(float)
    ratio = (difference / frame["tolerance"].astype(float)).mask(difference == 0, 0.0)
    ratio = ratio.fillna(math.inf)  # a missing number (or a difference without a tolerance) counts first
    worst = frame.loc[ratio.idxmax()]
    ours = (f"{len(differ)} of {len(frame)} keys differ; largest |ours - theirs| {worst['difference']:.3g} at "
            f"{worst['key']} (tolerance {worst['tolerance']:.3g})")
    where = f"authors' code (commit {str(rec.get('commit', '?'))[:7]}, run here {rec.get('date', '?')})"
    run.log(f"{cid}/keys_differing", len(differ))
    run.log(f"{cid}/largest_difference", float(worst["difference"]))
    return run.claim(declared, ours=ours, paper=where, effects=exact(len(differ)))


def same_rate_p(k1: int, n1: int, k2: int, n2: int) -> float:
    """Two-sided Fisher exact test that two rates, ``k1`` of ``n1`` and ``k2`` of ``n2``, are the same
    (``scipy.stats.fisher_exact``); shown beside the verdict, which rests on the interval of the difference.

    Example
    -------
    >>> round(same_rate_p(1, 6, 2, 6), 3), round(same_rate_p(0, 6, 6, 6), 4)
    (1.0, 0.0022)
    """
    from scipy import stats

    for k, n in ((k1, n1), (k2, n2)):
        if not 0 <= k <= n:
            raise ValueError(f"a rate needs 0 <= successes <= trials, got {k} of {n}")
    return float(stats.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue)


def record_same_rate(run, declared, ours: tuple[int, int], theirs: tuple[int, int], commit: str,
                     date: str, ours_text: str = "", theirs_text: str = "") -> float:
    """Record the claim ``declared`` (its protocol's declaration, with :func:`same_rate_part`) on ``run``: our
    implementation succeeds as often as the authors' code on the same setting and seeds. ``ours`` and ``theirs``
    are ``(successes, trials)`` over seeds. An equivalence test: the 90 % Newcombe interval of ``ours - theirs``
    must lie within +-:data:`SAME_RATE_MARGIN` (reproduced); wholly outside it is not reproduced; otherwise
    inconclusive at this budget (six seeds a side cannot show two rates equal within a quarter). Not measurable when
    their code has no run here (``theirs[1] == 0``). Returns the Fisher p of equal rates (NaN when not measurable),
    also logged as ``<cid>/fisher_p``.

    Example
    -------
    >>> from invlib.results import Run
    >>> from invlib.protocol import Claim
    >>> same = Claim("x/same", "demo", "Selects rotate as theirs does.", "their code", "repository", same_rate_part())
    >>> run = Run("demo", "smoke")
    >>> p = record_same_rate(run, same, (0, 6), (6, 6), "2c2ee6b8", "2026-11-23")
    >>> run.claims["x/same"]["verdict"], round(p, 4)
    ('not reproduced', 0.0022)
    >>> _ = record_same_rate(run, same, (1, 6), (5, 6), "2c2ee6b8", "2026-11-23")
    >>> run.claims["x/same"]["verdict"]   # unlike Fisher's p >= 0.05, never "the same"
    'inconclusive at this budget'
    >>> _ = record_same_rate(run, same, (6, 6), (6, 6), "2c2ee6b8", "2026-11-23")
    >>> run.claims["x/same"]["verdict"]
    'inconclusive at this budget'
    """
    from .results import not_measurable, rate_difference_interval

    (k_o, n_o), (k_t, n_t) = ours, theirs
    measurable = n_t > 0
    p = same_rate_p(k_o, n_o, k_t, n_t) if measurable else float("nan")
    where = (f"authors' code (commit {commit[:7]}, run here {date}): {k_t} of {n_t} seeds{theirs_text}; Fisher p of "
             f"equal rates {p:.3f}" if measurable else "their code not run at this setting")
    effect = (lambda level: rate_difference_interval(k_o, n_o, k_t, n_t, level=level)) if measurable else \
        not_measurable("the authors' code has no run at this setting")
    run.claim(declared, ours=f"{k_o} of {n_o} seeds{ours_text}", paper=where, effects=effect)
    run.log(f"{declared.id}/fisher_p", p)
    return p


def side_by_side(theirs: pd.DataFrame, ours: pd.DataFrame, columns: dict[str, str], index: str = "seed"):
    """Their runs and ours, one row per ``index`` value: ``columns`` maps a column of both tables to its label;
    theirs come first ("authors: <label>"), ours second ("ours: <label>").

    Example
    -------
    >>> a = pd.DataFrame(dict(seed=[0, 1], selected=["rotate", "rotate"]))
    >>> b = pd.DataFrame(dict(seed=[0, 1], selected=["rotate", "shear_x"]))
    >>> side_by_side(a, b, {"selected": "selected"}).loc[1].tolist()
    ['rotate', 'shear_x']
    """
    a = theirs.set_index(index)[list(columns)].set_axis([f"authors: {v}" for v in columns.values()], axis=1)
    b = ours.set_index(index)[list(columns)].set_axis([f"ours: {v}" for v in columns.values()], axis=1)
    return a.join(b, how="outer")

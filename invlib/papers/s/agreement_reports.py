"""What chapter S1 shows: the models' measures side by side, how well the measures agree, where invariance comes
from, the claims' effects and the facts its prose quotes.

:func:`report` takes the chapter's :class:`invlib.results.Run`, its settings and the table of
:func:`invlib.papers.s.agreement.measure`; it logs the metrics, computes each claim's effects and records them with
:meth:`invlib.results.Run.claim` against the claim's declaration in :mod:`invlib.papers.s.protocol` (which decides
it), and returns the agreement table, the sources table and ``facts`` (``{glue name: Markdown}``).

Example
-------
>>> from invlib import results
>>> S = settings("smoke", transforms=("zoom",))
>>> t = demo_table()
>>> run = results.Run("smoke", name="demo")
>>> agree, src, facts = report(run, S, t)
>>> {cid: c["verdict"] for cid, c in run.claims.items()}  # doctest: +NORMALIZE_WHITESPACE
{'s1/augmentation_raises_invariance': 'reproduced', 's1/b_and_c_rank_alike': 'reproduced',
 's1/probe_finds_what_is_not_invariant': 'reproduced', 's1/accuracy_tracks_invariance': 'reproduced',
 's1/augmentation_moves_invariance_most': 'reproduced'}
>>> run.claims["s1/augmentation_moves_invariance_most"]["evidence"]["parts"]["zoom: vs architecture"]["n"]
3
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...plots import heatmap
from ...results import (
    INCONCLUSIVE,
    NOT_MEASURABLE,
    NOT_REPRODUCED,
    PARTLY,
    REPRODUCED,
    Interval,
    not_measurable,
    rho_interval,
    text,
)
from .agreement import (
    AUGMENTED,
    MEASURES,
    SOURCES,
    Settings,
    agreement,
    group_mean,
    settings,  # noqa: F401  (the examples use it)
    sources,
    wide,
)
from .protocol import FAMILY, N_MIN, PROTOCOL

SHORT = dict(accuracy="accuracy", a_probe="A probe", b_invariance="B invariance", b_alignment="B alignment",
             c_inv_acc="C inv. acc.", c_inv_l2="C inv. L2", c_eq_acc="C eq. acc.")  # also the parts' names


def trained(table: pd.DataFrame) -> list[str]:
    """The models that were trained (the untrained ones score at chance under every accuracy-based measure, so
    the rank correlations leave them out; they are measured by B's sweep only, for claim 5's training factor)."""
    return list(dict.fromkeys(table.loc[table["variant"] != "untrained", "model"]))


def measure_table(table: pd.DataFrame, transform: str) -> pd.DataFrame:
    """One transformation's measures with readable column names (:data:`invlib.papers.s.agreement.MEASURES`)."""
    w = wide(table, transform)
    return w.rename(columns={k: MEASURES[k][0] for k in w.columns})


def _oriented_ranks(w: pd.DataFrame) -> pd.DataFrame:
    """Each column's ranks scaled to [0, 1], 1 = the most invariant model (the largest value for equivariance)."""
    out = w.rank(pct=True)
    for col in w.columns:
        if MEASURES[col][1] < 0:
            out[col] = w[col].rank(ascending=False, pct=True)
    return out


def plot_measures(table: pd.DataFrame, S: Settings):
    """Per transformation, a model x measure heat map: colour = the model's rank under that measure (1 = the most
    invariant, or for the equivariance measures the most equivariant), numbers = the measure's value."""
    ts = [t for t in S.transforms if t in set(table["transform"])]
    fig, axes = plt.subplots(1, len(ts), figsize=(4.2 * len(ts), 0.32 * table["model"].nunique() + 2.6),
                             squeeze=False)
    for ax, t in zip(axes[0], ts):
        w = wide(table, t)
        r = _oriented_ranks(w)
        ax.imshow(r.values, cmap="viridis", aspect="auto", vmin=0, vmax=1)
        ax.set_xticks(range(w.shape[1]), [MEASURES[c][0] for c in w.columns], rotation=60, ha="right", fontsize=7)
        ax.set_yticks(range(w.shape[0]), w.index if ax is axes[0][0] else [""] * w.shape[0], fontsize=7)
        for i, j in np.ndindex(w.shape):
            v = w.values[i, j]
            if np.isfinite(v):
                ax.text(j, i, f"{v:.2f}" if abs(v) < 10 else f"{v:.0f}", ha="center", va="center", fontsize=5.5,
                        color="white" if r.values[i, j] < 0.6 else "black")
        ax.set_title(t, fontsize=10)
    fig.suptitle("Every measure on every model (colour: rank, 1 = most invariant)", fontsize=10)
    fig.tight_layout()
    return fig


def plot_agreement(agree: pd.DataFrame, S: Settings):
    """Per transformation, the matrix of oriented Spearman correlations between the measures (trained models)."""
    ts = [t for t in S.transforms if t in set(agree["transform"])]
    fig, axes = plt.subplots(1, len(ts), figsize=(4.4 * len(ts), 4.4), squeeze=False)
    for ax, t in zip(axes[0], ts):
        part = agree[agree["transform"] == t]
        names = list(dict.fromkeys([*part["a"], *part["b"]]))
        m = np.eye(len(names))
        for r in part.itertuples():
            i, j = names.index(r.a), names.index(r.b)
            m[i, j] = m[j, i] = r.rho
        heatmap(m, [SHORT[n] for n in names], title=t, cmap="RdBu", ax=ax)
        ax.images[0].set_clim(-1, 1)
    fig.suptitle("Do the measures agree? Spearman's rho across the trained models (positive: they call the same "
                 "models invariant)", fontsize=9)
    fig.tight_layout()
    return fig


def variants(table: pd.DataFrame) -> pd.Series:
    """Each model's variant: what it shares with its seed-mates (variant, recipe, architecture, data variation), the
    cluster the agreement intervals resample whole.

    Example
    -------
    >>> v = variants(demo_table())
    >>> v["none B1 ResNet 0"] == v["none B1 ResNet 1"], v["none B1 ResNet 0"] == v["none B7 ResNet 0"]
    (True, False)
    """
    first = table.drop_duplicates("model").set_index("model")
    return first["variant"] + " | " + first["recipe"] + " | " + first["arch"] + " | " + first["variation"].astype(str)


def rank_agreement(table: pd.DataFrame, transform: str, a: str, b: str, models_: list[str],
                   level: float = 0.95) -> Interval | None:
    """Oriented Spearman's rho between measures ``a`` and ``b`` across ``models_`` for one transformation, with a
    bootstrap interval over whole variants (:func:`variants`, :func:`invlib.results.rho_interval`) at ``level``;
    None when the transformation lacks one of the measures.

    Example
    -------
    >>> iv = rank_agreement(demo_table(), "zoom", "accuracy", "b_invariance", trained(demo_table()))
    >>> round(iv.estimate, 2), iv.n, iv.method  # 24 models, 10 variants
    (1.0, 10, 'cluster bootstrap')
    """
    w = wide(table, transform)
    if a not in w.columns or b not in w.columns:
        return None
    ok = w.loc[[m for m in w.index if m in models_], [a, b]].dropna()
    sign = (MEASURES[a][1] or 1) * (MEASURES[b][1] or 1)
    return rho_interval(ok[a].values, sign * ok[b].values, level=level, groups=variants(table)[ok.index].values)


def agreement_effects(table: pd.DataFrame, transforms, a: str, b: str, models_: list[str]):
    """The effects of "measures ``a`` and ``b`` rank the models alike": per transformation that has both, the
    oriented rho with its interval over variants at ``1 - FAMILY / k`` (Bonferroni over the ``k`` transformations),
    ``{transformation: Interval}``; not measurable where no transformation has both.

    Example
    -------
    >>> from invlib.protocol import decide
    >>> t, claim = demo_table(), PROTOCOL["s1/accuracy_tracks_invariance"]
    >>> ev = decide(claim, agreement_effects(t, ["zoom"], "accuracy", "b_invariance", trained(t)))
    >>> ev.verdict, [name for name, _ in ev.parts]  # every measure ranks the 10 variants alike
    ('reproduced', ['zoom'])
    >>> decide(claim, agreement_effects(demo_table(seeds=1).query("recipe == 'B1'"), ["zoom"], "accuracy",
    ...                                 "b_invariance", trained(t))).verdict  # 6 variants: too few to resample
    'inconclusive at this budget'
    >>> no_c = t[t["measure"] != "c_inv_acc"]  # as C has no zoom
    >>> decide(claim, agreement_effects(no_c, ["zoom"], "accuracy", "c_inv_acc", trained(t))).verdict
    'not measurable at this profile'
    """
    ts = [t for t in transforms if {a, b} <= set(table.loc[table["transform"] == t, "measure"])]
    if not ts:
        return not_measurable(f"no transformation measured has both {MEASURES[a][0]} and {MEASURES[b][0]}")
    return {t: rank_agreement(table, t, a, b, models_, 1 - FAMILY / len(ts)) for t in ts}


def _agree_claim(run, cid: str, table: pd.DataFrame, S: Settings, a: str, b: str) -> str:
    models_ = trained(table)
    effects = agreement_effects(table, S.transforms, a, b, models_)
    rho = lambda e: (f"rho {e.estimate:+.2f} [{e.lo:+.2f}, {e.hi:+.2f}]" if np.isfinite(e.lo) else
                     f"rho {e.estimate:+.2f}, no interval" if np.isfinite(e.estimate) else "no rho (a measure is "
                     "constant over the models)")
    ours = "—"
    if isinstance(effects, dict):
        ours = "; ".join(f"{t}: {rho(e)}" for t, e in effects.items())
        ours = f"{ours} ({len(models_)} models in {variants(table)[models_].nunique()} variants)"
    return run.claim(PROTOCOL[cid], ours=ours, effects=effects)


def per_seed(table: pd.DataFrame, transform: str, measure_: str, **where) -> pd.Series:
    """One measure of the models whose fields equal ``where``, indexed by seed (the mean where a seed has several).

    Example
    -------
    >>> per_seed(demo_table(), "zoom", "b_invariance", variant="scale", recipe="B1").round(2).tolist()
    [0.89, 0.9, 0.91]
    """
    keep = (table["transform"] == transform) & (table["measure"] == measure_)
    for k, v in where.items():
        keep &= table[k] == v
    return table[keep].groupby("seed")["value"].mean()


def raises_effects(table: pd.DataFrame, S: Settings):
    """The effects of "augmenting with a transformation raises the invariance to it under every measure": per
    invariance measure (named as in :data:`SHORT`) and transformation, the oriented gain of the augmented model over
    the one without augmentation, one value per seed (B1's recipe trains both from each seed), ``{measure:
    {transformation: values}}``; a measure no transformation has is not measurable.

    Example
    -------
    >>> from invlib.protocol import decide
    >>> ev = decide(PROTOCOL["s1/augmentation_raises_invariance"],
    ...             raises_effects(demo_table(), settings("smoke", transforms=("zoom",))))
    >>> ev.verdict, len(ev.parts)  # 3 seeds, gains far above their spread
    ('reproduced', 5)
    """
    parts = {}
    for m, (_, sign) in MEASURES.items():
        for t in S.transforms:
            aug = per_seed(table, t, m, variant=AUGMENTED[t], recipe="B1")
            none = per_seed(table, t, m, variant="none", recipe="B1")
            seeds = aug.index.intersection(none.index)
            if sign and len(seeds):
                parts.setdefault(SHORT[m], {})[t] = sign * (aug[seeds] - none[seeds]).values
    if not parts:
        return not_measurable("no transformation has models trained with and without its augmentation")
    claim = PROTOCOL["s1/augmentation_raises_invariance"]
    return {name: parts.get(name) or not_measurable(f"no transformation measured has {name}") for name in claim.parts}


def most_effects(table: pd.DataFrame, S: Settings, measure_: str = "b_invariance"):
    """The effects of "augmentation moves the invariance the most": per (transformation, other factor of
    :data:`invlib.papers.s.agreement.SOURCES`), ``|augmentation's change| - |the factor's change|`` in one measure,
    one value per seed number, ``{"<transformation>: vs <factor>": values}``.

    Example
    -------
    >>> from invlib.protocol import decide
    >>> ev = decide(PROTOCOL["s1/augmentation_moves_invariance_most"],
    ...             most_effects(demo_table(), settings("smoke", transforms=("zoom",))))  # 3 seeds of every model
    >>> [(name, e.n, e.verdict) for name, e in ev.parts]  # doctest: +NORMALIZE_WHITESPACE
    [('zoom: vs data', 3, 'reproduced'), ('zoom: vs architecture', 3, 'reproduced'),
     ('zoom: vs training', 3, 'reproduced')]
    >>> decide(PROTOCOL["s1/augmentation_moves_invariance_most"], most_effects(demo_table(b3_seeds=1), settings(
    ...     "smoke", transforms=("zoom",)))).parts[1][1].text()  # B3's one ResNet and one ViT: seed 0 alone
    '+0.48, 1 seed; > 0.05; needs >= 3 seeds'
    """
    parts = {}
    for t in S.transforms:
        changes = {}
        for factor, (_, before, after) in SOURCES.items():
            after = per_seed(table, t, measure_, **(after or dict(variant=AUGMENTED[t], recipe="B1")))
            before = per_seed(table, t, measure_, **before)
            changes[factor] = (after - before).dropna()
        aug = changes.pop("augmentation")
        for factor, change in changes.items():
            seeds = aug.index.intersection(change.index)
            if len(seeds):
                parts[f"{t}: vs {factor}"] = aug[seeds].abs().values - change[seeds].abs().values
    return parts or not_measurable("no transformation has augmentation and another factor measured")


def augmentation_gains(table: pd.DataFrame, S: Settings) -> pd.DataFrame:
    """Per transformation and invariance measure: the models trained with the transformation minus those trained
    without augmentation (B1's recipe, seeds averaged), oriented (positive = more invariant), and whether positive."""
    rows = []
    for t in S.transforms:
        for m, (_, sign) in MEASURES.items():
            if sign == 0:
                continue
            aug = group_mean(table, t, m, variant=AUGMENTED[t], recipe="B1")
            none = group_mean(table, t, m, variant="none", recipe="B1")
            if np.isfinite(aug) and np.isfinite(none):
                rows.append(dict(transform=t, measure=m, augmented=aug, none=none, gain=sign * (aug - none)))
    out = pd.DataFrame(rows, columns=["transform", "measure", "augmented", "none", "gain"])
    out["raised"] = out["gain"] > 0
    return out


SEED_CLAIMS = ("s1/augmentation_raises_invariance", "s1/augmentation_moves_invariance_most")  # per seed, paired


def report(run, S: Settings, table: pd.DataFrame, seconds: list[float] | None = None
           ) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Log the measures, record the chapter's claims and return ``(agreement, sources, facts)``: the agreement of
    every two measures per transformation over the trained models (:func:`invlib.papers.s.agreement.agreement`),
    what each factor changes in B's relative invariance (:func:`invlib.papers.s.agreement.sources`) and the
    numbers the prose quotes. ``seconds``: what each seed's models took to train
    (:func:`invlib.papers.s.agreement.seed_seconds`), recorded as the replicates of ``seeds`` with the claims that
    rest on them (:data:`SEED_CLAIMS`; the agreement claims rest on the variants, which seeds do not add)."""
    models_ = trained(table)
    for r in table.itertuples():
        run.log(f"{r.transform}/{r.measure}/{r.model}", float(r.value))
    agree = pd.concat([agreement(S, table, t, models_) for t in S.transforms], ignore_index=True)
    src = sources(table, "b_invariance", list(S.transforms))

    gains = augmentation_gains(table, S)
    by_t = gains.groupby("transform", sort=False)["raised"].agg(["sum", "count"])
    run.claim(PROTOCOL["s1/augmentation_raises_invariance"], effects=raises_effects(table, S),
              ours="; ".join(f"{t}: higher on average under {int(r['sum'])} of {int(r['count'])} measures"
                             for t, r in by_t.iterrows()) + f" ({S.seeds} seed(s) per variant)")
    _agree_claim(run, "s1/b_and_c_rank_alike", table, S, "b_invariance", "c_inv_acc")
    _agree_claim(run, "s1/probe_finds_what_is_not_invariant", table, S, "a_probe", "b_invariance")
    _agree_claim(run, "s1/accuracy_tracks_invariance", table, S, "accuracy", "b_invariance")
    largest = src["largest"] if len(src) else pd.Series(dtype=object)
    run.claim(PROTOCOL["s1/augmentation_moves_invariance_most"], effects=most_effects(table, S),
              ours="; ".join(f"{t}: {f} ({src.loc[t, f]:+.3f})" for t, f in largest.items()) or "—")
    if seconds:
        run.replicates("seeds", seconds, list(SEED_CLAIMS), note="a seed: its B1-recipe models (each variant; the "
                       "untrained one costs nothing), B7's at variation 0 and B3's ResNet and ViT (their zoo "
                       "checkpoints' training seconds)")

    counts = dict(s1_models=len(set(table["model"])), s1_trained=len(models_), s1_seeds=S.seeds, s1_n_probe=S.n_probe,
                  s1_n_pairs=S.n_pairs, s1_n_fit=S.n_fit, s1_n_eval=S.n_eval,
                  s1_variants=variants(table)[models_].nunique())
    facts = dict({k: f"{v:,}" for k, v in counts.items()},  # text: the prose quotes every fact as Markdown
                 s1_levels=", ".join(map(str, S.levels[1:])), s1_rotation=text(S.rotation, ".0f"),
                 s1_brightness=f"{S.brightness[0]:g}–{S.brightness[1]:g}",
                 s1_raised=f"{int(gains['raised'].sum())} of {len(gains)}", s1_augerino_reg=text(S.augerino_reg, "g"),
                 s1_not_raised="; ".join(f"{r.transform} under {MEASURES[r.measure][0]} ({r.gain:+.3g})"
                                         for r in gains[~gains["raised"]].itertuples()) or "none")
    for cid, c in run.claims.items():
        facts[f"s1_{cid.split('/')[1]}"] = c["verdict"]
        facts[f"s1_{cid.split('/')[1]}_ours"] = c["ours"]
    for t in src.index:
        facts[f"s1_largest_{t}"] = f"{src.loc[t, 'largest']} ({src.loc[t, src.loc[t, 'largest']]:+.3f})"
    facts["s1_advice"] = advice({cid: c["verdict"] for cid, c in run.claims.items()})
    facts["s1_seed_note"] = (f"with {S.seeds} seed(s) per variant they cannot be decided ({N_MIN} are needed, as in "
                             "the `gpu` profile, which also takes every grid level and about ten times the scenes)."
                             if S.seeds < N_MIN else f"{S.seeds} seeds per variant can decide them.")
    learned = []
    for t in (t for t in S.transforms if t in ("translation", "zoom")):
        a, n, r = (group_mean(table, t, "b_invariance", variant=v, recipe=rec) for v, rec in LEARNED_VS)
        if np.isfinite(a):
            learned.append(f"{t}: {a:.2f} (none {n:.2f}, RandomResizedCrop {r:.2f})")
    facts["s1_augerino"] = "; ".join(learned) or "n/a"
    return agree, src, facts


LEARNED_VS = (("augerino", "B6"), ("none", "B1"), ("standard", "B1"))  # the learned range beside the fixed ones


def sources_table(src: pd.DataFrame) -> pd.DataFrame:
    """The sources table with its factors named (:data:`invlib.papers.s.agreement.SOURCES`)."""
    return src.rename(columns={k: f"{k}: {v[0]}" for k, v in SOURCES.items()})


def demo_table(seed: int = 0, seeds: int = 3, b3_seeds: int | None = None) -> pd.DataFrame:
    """A made-up table in the shape of :func:`invlib.papers.s.agreement.measure` for ``zoom``: B1's six variants,
    B7's models and B3's ResNet and ViT with ``seeds`` seeds each (B3's: ``b3_seeds``, default ``seeds``), B6's
    Augerino and an untrained model (10 trained variants), every measure a monotone function of one invariance,
    which augmenting with scale raises the most (for the examples and tests).

    Example
    -------
    >>> t = demo_table()
    >>> sorted(t["measure"].unique())[:2], len(trained(t)), variants(t)[trained(t)].nunique()
    (['a_probe', 'accuracy'], 28, 10)
    """
    rng = np.random.default_rng(seed)
    levels = dict(none=0.3, standard=0.5, translation=0.4, scale=0.8, rotation=0.33, brightness=0.36)
    models_ = [(v, k, "B1", "ResNet", inv) for v, inv in levels.items() for k in range(seeds)]
    models_ += [("none", k, "B7", "ResNet", 0.25) for k in range(seeds)]
    models_ += [("none", k, "B3", arch, inv) for k in range(seeds if b3_seeds is None else b3_seeds)
                for arch, inv in (("ResNet", 0.35), ("ViT", 0.45))]
    models_ += [("augerino", 0, "B6", "ResNet", 0.6)]
    models_ += [("untrained", k, "B1", "ResNet", 0.5) for k in range(seeds)]
    rows = []
    for i, (variant, k, recipe, arch, inv) in enumerate(models_):
        inv += 0.01 * i
        name = f"{variant} {recipe} {arch} {k}"
        for m, v in dict(accuracy=40 + 50 * inv, a_probe=1 - 0.5 * inv, b_invariance=inv, b_alignment=rng.random(),
                         c_inv_acc=30 + 60 * inv, c_inv_l2=1 - inv, c_eq_acc=50 + 10 * rng.random()).items():
            rows.append(dict(model=name, variant=variant, seed=k, arch=arch, variation=0.0 if recipe == "B7" else 1.0,
                             recipe=recipe, transform="zoom", measure=m, value=float(v)))
    return pd.DataFrame(rows)


def advice(verdicts: dict) -> str:
    """What a reader should use for what, written from the claims' verdicts (``{claim id: verdict}``), so that the
    chapter's advice follows its numbers; a claim this run cannot decide (inconclusive at this budget, or not
    measurable) is advice withheld, not advice against.

    Example
    -------
    >>> advice({"s1/b_and_c_rank_alike": "reproduced", "s1/probe_finds_what_is_not_invariant": "not reproduced",
    ...         "s1/accuracy_tracks_invariance": "partly"}).split(": ")[0]
    'To see whether a model behaves the same under a transformation, measure its accuracy under it'
    >>> "cannot say" in advice({"s1/b_and_c_rank_alike": "inconclusive at this budget"})
    True
    """
    v = lambda cid: verdicts.get(f"s1/{cid}", NOT_MEASURABLE)
    undecided = (INCONCLUSIVE, NOT_MEASURABLE)
    out = ["To see whether a model behaves the same under a transformation, measure its accuracy under it: it is "
           "what a user meets, and it needs only labels."]
    both = ("report both, or the one whose question you ask (B: does the embedding move; C: does the rest of the "
            "network still classify it).")
    out.append({REPRODUCED: "To compare the invariance of embeddings, B's relative invariance (forward passes only, "
                            "no labels, no fitting) ranked the models as C's invariance accuracy did for every "
                            "transformation both have: the cheap measure can stand for the expensive one.",
                PARTLY: "B's relative invariance and C's invariance accuracy ranked the models alike for some "
                        "transformations and not for others: " + both,
                NOT_REPRODUCED: "B's relative invariance and C's invariance accuracy did not rank the models alike: "
                                + both}.get(v("b_and_c_rank_alike"), "Whether B's relative invariance can stand for "
                                            "C's invariance accuracy, this run cannot say: until it can, " + both))
    acc = v("accuracy_tracks_invariance")
    out.append({REPRODUCED: "Accuracy under a transformation ranked the models as B's invariance did for every "
                            "transformation.",
                PARTLY: "Accuracy under a transformation ranked the models as B's invariance did for some "
                        "transformations only: robustness and invariance of the embedding are related, not "
                        "interchangeable.",
                NOT_REPRODUCED: "Accuracy under a transformation did not rank the models as B's invariance did: "
                                "robustness is not a measure of the embedding's invariance."}.get(
        acc, "Whether accuracy under a transformation ranks the models as B's invariance does, this run cannot say: "
             "do not read robustness as the embedding's invariance until it is shown."))
    probe = v("probe_finds_what_is_not_invariant")
    if probe in (REPRODUCED, PARTLY):
        out.append("A's probe accuracy ran opposite to B's invariance " + ("for every transformation both have" if
                   probe == REPRODUCED else "for some transformations") + ": a layer a probe can read the "
                   "transformation from tends not to be invariant to it.")
    else:
        out.append(("A's probe accuracy did not run opposite to B's invariance" if probe not in undecided else
                    "Whether A's probe accuracy runs opposite to B's invariance, this run cannot say") +
                   ": whether a probe can still rank a transformation (is it decodable?) is another question than "
                   "whether the embedding moves, so do not read a probe's accuracy as a lack of invariance, or its "
                   "failure as invariance.")
    return " ".join(out)

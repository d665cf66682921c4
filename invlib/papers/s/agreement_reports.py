"""What chapter S1 shows: the models' measures side by side, how well the measures agree, where invariance comes
from, the claims (each stated before the run, with a criterion computed from it) and the facts its prose quotes.

:func:`report` takes the chapter's :class:`invlib.results.Run`, its settings and the table of
:func:`invlib.papers.s.agreement.measure`; it logs the metrics, records the claims and returns the agreement
table, the sources table and ``facts`` (``{glue name: Markdown}``).

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
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...plots import heatmap
from ...results import text
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

NOT_A_PAPER = "(no paper tests this)"
SHORT = dict(accuracy="accuracy", a_probe="A probe", b_invariance="B invariance", b_alignment="B alignment",
             c_inv_acc="C inv. acc.", c_inv_l2="C inv. L2", c_eq_acc="C eq. acc.")
STRONG = 0.5  # |rho| a claim of agreement asks for, with p below ALPHA
ALPHA = 0.05


def trained(table: pd.DataFrame) -> list[str]:
    """The models that were trained (the untrained ones score at chance under every accuracy-based measure, so
    the rank correlations leave them out)."""
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


def _pairs(agree: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    return agree[((agree["a"] == a) & (agree["b"] == b)) | ((agree["a"] == b) & (agree["b"] == a))]


def _agree_claim(run, cid: str, claim: str, agree: pd.DataFrame, a: str, b: str) -> str:
    rows = _pairs(agree, a, b).dropna(subset=["rho"])
    ok = [(r.transform, r.rho, r.p) for r in rows.itertuples()]
    strong = [rho > STRONG and p < ALPHA for _, rho, p in ok]
    ours = "; ".join(f"{t}: rho {rho:+.2f}, p {p:.3f} (n {int(n)})" for (t, rho, p), n in zip(ok, rows["n"])) or "—"
    return run.claim(cid, claim, paper=NOT_A_PAPER, ours=ours,
                     criterion=f"oriented Spearman's rho > {STRONG} with permutation p < {ALPHA} across the trained "
                               "models, for every transformation that both measures have (partly: for some)",
                     reproduced=bool(ok) and all(strong), partly=any(strong), measurable=bool(ok))


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


def report(run, S: Settings, table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Log the measures, record the chapter's claims and return ``(agreement, sources, facts)``: the agreement of
    every two measures per transformation over the trained models (:func:`invlib.papers.s.agreement.agreement`),
    what each factor changes in B's relative invariance (:func:`invlib.papers.s.agreement.sources`) and the
    numbers the prose quotes."""
    models_ = trained(table)
    for r in table.itertuples():
        run.log(f"{r.transform}/{r.measure}/{r.model}", float(r.value))
    agree = pd.concat([agreement(S, table, t, models_) for t in S.transforms], ignore_index=True)
    src = sources(table, "b_invariance", list(S.transforms))

    gains = augmentation_gains(table, S)
    share = gains["raised"].mean() if len(gains) else float("nan")
    by_t = gains.groupby("transform", sort=False)["raised"].agg(["sum", "count"])
    run.claim("s1/augmentation_raises_invariance",
              "Augmenting with a transformation raises the invariance to it under every measure.", paper=NOT_A_PAPER,
              ours="; ".join(f"{t}: {int(r['sum'])} of {int(r['count'])} measures" for t, r in by_t.iterrows()),
              criterion="the model trained with the transformation (mean over seeds) is more invariant to it than "
                        "the model trained without augmentation under every invariance measure (accuracy under it, "
                        "A's probe: lower, B's relative invariance, C's invariance accuracy, C's L2: lower); "
                        "partly: under at least two thirds of the (transformation, measure) pairs",
              reproduced=bool(len(gains)) and bool(gains["raised"].all()),
              partly=bool(len(gains)) and bool(share >= 2 / 3), measurable=bool(len(gains)))
    _agree_claim(run, "s1/b_and_c_rank_alike", "B's relative invariance and C's invariance accuracy rank the models "
                 "alike.", agree, "b_invariance", "c_inv_acc")
    _agree_claim(run, "s1/probe_finds_what_is_not_invariant", "A layer whose features a probe can rank by a "
                 "transformation (A) is a layer whose embedding is not invariant to it (B).", agree, "a_probe",
                 "b_invariance")
    _agree_claim(run, "s1/accuracy_tracks_invariance", "Accuracy under a transformation ranks the models as B's "
                 "relative invariance does: the robustness check a practitioner runs first agrees with the "
                 "invariance measure.", agree, "accuracy", "b_invariance")
    largest = src["largest"] if len(src) else pd.Series(dtype=object)
    run.claim("s1/augmentation_moves_invariance_most",
              "Of the data's variation, augmentation, architecture and training, augmenting with a transformation "
              "moves the invariance to it the most.", paper=NOT_A_PAPER,
              ours="; ".join(f"{t}: {f} ({src.loc[t, f]:+.3f})" for t, f in largest.items()) or "—",
              criterion="for every transformation, the factor with the largest change in B's relative invariance "
                        "(mean over levels and seeds) is augmentation (partly: for some)",
              reproduced=bool(len(largest)) and bool((largest == "augmentation").all()),
              partly=bool((largest == "augmentation").any()), measurable=bool(len(largest)))

    counts = dict(s1_models=len(set(table["model"])), s1_trained=len(models_), s1_seeds=S.seeds, s1_n_probe=S.n_probe,
                  s1_n_pairs=S.n_pairs, s1_n_fit=S.n_fit, s1_n_eval=S.n_eval)
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


def demo_table(seed: int = 0) -> pd.DataFrame:
    """A made-up table in the shape of :func:`invlib.papers.s.agreement.measure` for ``zoom``, in which
    augmentation makes the zoom models the most invariant under every measure (for the examples and tests).

    Example
    -------
    >>> sorted(demo_table()["measure"].unique())[:2]
    ['a_probe', 'accuracy']
    """
    rng = np.random.default_rng(seed)
    models_ = [("none", k, "B1", "ResNet", 0.3) for k in range(3)] + [("scale", k, "B1", "ResNet", 0.8)
                                                                      for k in range(3)]
    models_ += [("none", 0, "B7", "ResNet", 0.25), ("none", 0, "B3", "ResNet", 0.35), ("none", 0, "B3", "ViT", 0.4),
                ("untrained", 0, "B1", "ResNet", 0.5)]
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
    chapter's advice follows its numbers.

    Example
    -------
    >>> advice({"s1/b_and_c_rank_alike": "reproduced", "s1/probe_finds_what_is_not_invariant": "not reproduced",
    ...         "s1/accuracy_tracks_invariance": "partly"}).split(": ")[0]
    'To see whether a model behaves the same under a transformation, measure its accuracy under it'
    """
    ok = lambda cid: verdicts.get(f"s1/{cid}") == "reproduced"
    some = lambda cid: verdicts.get(f"s1/{cid}") in ("reproduced", "partly")
    out = ["To see whether a model behaves the same under a transformation, measure its accuracy under it: it is "
           "what a user meets, and it needs only labels."]
    if ok("b_and_c_rank_alike"):
        out.append("To compare the invariance of embeddings, B's relative invariance (forward passes only, no labels, "
                   "no fitting) ranked the models as C's invariance accuracy did for every transformation both have: "
                   "the cheap measure can stand for the expensive one.")
    else:
        out.append("B's relative invariance and C's invariance accuracy did not rank the models alike for every "
                   "transformation: report both, or the one whose question you ask (B: does the embedding move; C: "
                   "does the rest of the network still classify it).")
    if ok("accuracy_tracks_invariance"):
        out.append("Accuracy under a transformation ranked the models as B's invariance did for every transformation.")
    elif some("accuracy_tracks_invariance"):
        out.append("Accuracy under a transformation ranked the models as B's invariance did for some transformations "
                   "only: robustness and invariance of the embedding are related, not interchangeable.")
    else:
        out.append("Accuracy under a transformation did not rank the models as B's invariance did: robustness is not "
                   "a measure of the embedding's invariance.")
    if some("probe_finds_what_is_not_invariant"):
        out.append("A's probe accuracy ran opposite to B's invariance at least for some transformations: a layer a "
                   "probe can read the transformation from tends not to be invariant to it.")
    else:
        out.append("A's probe accuracy did not run opposite to B's invariance: whether a probe can still rank a "
                   "transformation (is it decodable?) is another question than whether the embedding moves, so do "
                   "not read a probe's accuracy as a lack of invariance, or its failure as invariance.")
    return " ".join(out)

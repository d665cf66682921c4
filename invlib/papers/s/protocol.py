"""Paper S's protocol (the synthesis, chapter S1): every claim its chapter tests, declared before any run (see
:mod:`invlib.protocol` for the shape: per part the quantity, the unit of replication, the direction, the value of no
effect, the smallest effect that matters with its reason, ``n_min`` and the multiplicity).

No paper states these claims: they are about how the papers' measures agree on one set of models, so a claim's
"paper value" says so. Each claim is one question a cpu build can answer, over every model variant the book trains
on the same scenes:

- the three claims that two measures rank the models alike rest on one number each: Spearman's rho between the two
  measures across the trained models, taken within each transformation that has both measures (a model is ranked
  among the models under the same transformation: the transformations differ in how far they move any model, so
  raw values pooled over them would rank the transformations, not the models) and averaged over those
  transformations; a transformation under which one of the two measures is the same for every model ranks nothing
  and is left out. Its interval is a percentile bootstrap that resamples whole variants (the seeds of one variant
  share everything but the seed, so they count once) with every transformation in each resample, so one interval
  covers them all: one decision a claim, no correction over transformations;
- the two claims about what augmentation does rest on per-seed differences, paired by seed, averaged over the
  transformations, from :data:`N_MIN` seeds; "every measure" and "each other factor" are intersection-union tests
  over their parts (no correction needed to say "reproduced").

Example
-------
>>> PROTOCOL["s1/b_and_c_rank_alike"].parts[""].boundary, len(PROTOCOL["s1/augmentation_raises_invariance"].parts)
(0.5, 5)
>>> PROTOCOL["s1/b_and_c_rank_alike"].parts[""].level(), list(PROTOCOL["s1/augmentation_moves_invariance_most"].parts)
(0.95, ['vs data', 'vs architecture', 'vs training'])
"""

from ...protocol import Claim, Part, Protocol

CHAPTER = "s1_measures_agree"
NOT_A_PAPER = "(no paper tests this)"
WHERE = "the book's synthesis (no paper states it)"
N_MIN = 3  # seeds before a claim about what training does can be decisive
# The interval resamples whole variants (a model's seeds together); with fewer than 8 variants a bootstrap has too
# few distinct resamples (C(2k - 1, k): 6435 at 8, 462 at 6) to place its tails.
CLUSTERS = 8
FACTORS = ("data", "architecture", "training")  # what augmentation is set against in claim 5 (agreement.SOURCES)
_STRONG = ("ranking alike: a Spearman's rho of 0.5 is, for normal scores, a Kendall's tau of about 1/3: two models "
           "drawn at random are put in the same order by both measures twice as often as in the opposite order; a "
           "weaker agreement would not let one measure stand for the other (0: unrelated rankings)")
_B_SCALE = ("a twentieth of the relative-invariance scale (0: the embedding moved as far as another image's, 1: "
            "unmoved), the change paper B's chapters still read as 'unchanged'")
_POINT = "one point of accuracy, the smallest accuracy gain a practitioner acts on"
_AVERAGED = "averaged over the transformations it measures, one value per seed (the two models paired by seed)"


def _agree(cid: str, statement: str, a: str, b: str) -> Claim:
    return Claim(cid, CHAPTER, statement, NOT_A_PAPER, WHERE, Part(
        f"Spearman's rho of {a} and {b} across the trained models, oriented (positive: both call the same models "
        "invariant), within each transformation that has both and averaged over them; a percentile bootstrap "
        "interval resampling whole variants (its n: the variants)", unit="model", smallest=0.5, reason=_STRONG,
        n_min=CLUSTERS), kind="hypothesis")


def _gain(measure: str, smallest: float, reason: str, lower: bool = False) -> Part:
    what = (f"the fall in {measure} from the model trained without augmentation to the one trained with a "
            "transformation (lower is more invariant)" if lower else
            f"{measure} of the model trained with a transformation minus that of the one trained without "
            "augmentation")
    return Part(f"{what}, {_AVERAGED}", unit="seed", smallest=smallest, reason=reason, n_min=N_MIN)


CLAIMS = [
    Claim("s1/augmentation_raises_invariance", CHAPTER,
          "Augmenting with a transformation raises the invariance to it under every measure (on average over the "
          "transformations each measure has).", NOT_A_PAPER, WHERE, {
              "accuracy": _gain("the accuracy under the transformation (%)", 1.0, _POINT),
              "A probe": _gain("A's ranking-probe accuracy (a fraction)", 0.01, f"{_POINT} (0.01 as a fraction)",
                               lower=True),
              "B invariance": _gain("B's relative invariance", 0.05, _B_SCALE),
              "C inv. acc.": _gain("C's invariance accuracy (%)", 1.0, _POINT),
              "C inv. L2": _gain("C's normalised L2 distance to the untransformed features", 0.05,
                                 "a twentieth of L_L2's scale (0: the features unmoved; 1: moved by as much as their "
                                 "own norm), as B's relative invariance is read", lower=True)}, kind="hypothesis"),
    _agree("s1/b_and_c_rank_alike", "B's relative invariance and C's invariance accuracy rank the models alike.",
           "B's relative invariance", "C's invariance accuracy"),
    _agree("s1/probe_finds_what_is_not_invariant", "A layer whose features a probe can rank by a transformation (A) "
           "is a layer whose embedding is not invariant to it (B).", "A's probe accuracy", "B's relative invariance"),
    _agree("s1/accuracy_tracks_invariance", "Accuracy under a transformation ranks the models as B's relative "
           "invariance does: the robustness check a practitioner runs first agrees with the invariance measure.",
           "the accuracy under the transformation", "B's relative invariance"),
    Claim("s1/augmentation_moves_invariance_most", CHAPTER,
          "Of the data's variation, augmentation, architecture and training, augmenting with a transformation moves "
          "the invariance to it the most (on average over the transformations).", NOT_A_PAPER, WHERE,
          {f"vs {factor}": Part(
              f"the absolute change augmentation makes in B's relative invariance minus the absolute change the "
              f"{factor} factor makes, averaged over the transformations, one value per seed number (the models "
              "paired by seed number)", unit="seed", n_min=N_MIN, smallest=0.05,
              reason=f"'the most': ahead of each other factor by more than {_B_SCALE}; a smaller lead is a tie")
           for factor in FACTORS}, kind="hypothesis"),
]

PROTOCOL = Protocol("S", CLAIMS)

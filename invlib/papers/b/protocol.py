"""Paper B's protocol (Bouchacourt et al., Grounding inductive biases in natural images): every claim chapters
B1-B7 test, declared before any run (see :mod:`invlib.protocol` for the shape: per part the quantity, the unit of
replication, the direction, the value of no effect, the smallest effect that matters with its reason, ``n_min`` and
the multiplicity).
"""

import dataclasses

from ...authors import same_values_part
from ...protocol import Claim, Part, Protocol

# ------------------------------------------------------------------------- RandomResizedCrop: B1, B2, B5 (App. D.1), B6
# The premise of the crop claims (chapters B1 and B7), declared as their gate: points of training over test top-1 of
# the model without augmentation, per seed, above which a crop has room for the gain the paper reports.
OVERFIT_GAP = 4.4
OVERFIT_REASON = (
    "augmentation improves 'performance and generalization' (Sec. 2.1): it narrows the gap between training and test "
    "accuracy of the model without it, and cannot raise test top-1 by more than that gap leaves; the paper's crops "
    "gain 4.4 points over no augmentation ('67.9 % vs. 63.5 %', Sec. 2.1), so a model that overfits by less leaves "
    "no room for the gain the claims test")
POINT = "one point of top-1: the smallest accuracy gain a practitioner acts on"


def top1(quantity: str, reason: str, smallest: float = 1.0, **kw) -> Part:
    """A difference of top-1 between two training recipes (or evaluations), in points, paired by seed: the book's
    one point where the paper states an order."""
    return Part(quantity, unit="seed", smallest=smallest, reason=reason, **kw)


PREMISE = "premise: no augmentation overfits"  # the gate's name in every claim that carries it
REGIME = Part("no augmentation's training minus test top-1, points, per seed", unit="seed", smallest=OVERFIT_GAP,
              reason=OVERFIT_REASON)
RRC_GAIN = top1("RRC's top-1 minus no augmentation's, points, paired by seed", (
    f"'RandomResizedCrop performs best' (Sec. 2.1; Table 1a lost its numbers in extraction) states an order; {POINT}"))
BELOW_RRC = {m: top1(f"RRC's top-1 minus {name}'s, points, paired by seed", reason=(
    f"'neither is sufficient to fully recapture the performance of RRC' (Sec. 2.1) states an order; {POINT}"))
    for m, name in (("RSCC", "RandomSizeCenterCrop"), ("FSRC", "FixedSizeRandomCrop"))}
SUBSTANTIAL = ("'a substantial improvement compared to no augmentation (67.9 % vs. 63.5 %)' (Sec. 2.1): half of the "
               "paper's 4.4 points")
FALL = ("Fig. A7 shows the falls without a size (its numbers are not in the text); one point of top-1: the smallest "
        "accuracy change a practitioner acts on")
CHANCE_IOU = ("IoU beyond chance, (IoU - c) / (1 - c), c the IoU two lists of the same sizes would have if each "
              "were drawn at random from the samples its model without augmentation gets wrong: 0 for lists no more "
              "alike than chance, 1 for identical lists")
LESS_THAN_PATTERN = ("a pattern would show as the lists of one method overlapping more than the lists of two methods; "
                     "a tenth of the 0-1 range of IoU beyond chance (no more alike than chance to identical) is the "
                     "least such excess worth calling a pattern")
SHAPE_DROP = ("'just varying the shape of the distribution results in a drop in performance' (Sec. 2.2) states a "
              f"drop without a size (Table 1b lost its numbers in extraction); {POINT}")
G_SIGN = "App. G's numbers were lost in extraction: the text states a direction, not a size"
B1, B2, B5, B6 = "b1_rrc_decomposition", "b2_scale_distribution", "b5_wordnet", "b6_augerino_real_data"

RRC_CLAIMS = [
    # -------------------------------------------------------------------------------- B1: Sec. 2.1, App. B, D.1, F
    Claim("table1a/translation_recovers_rrc", B1,
          "Translation alone, T.(30%), recovers most of RRC's gain over no augmentation.",
          "T.(30%) almost matches T.(30%) + RandomSizeCenterCrop, which nearly matches RRC", "Sec. 2.1, Table 1a",
          {PREMISE: REGIME, "RRC helps": RRC_GAIN,
           "T.(30%) recovers more than half": top1(
               "T.(30%)'s gain over no augmentation minus half of RRC's, points, paired by seed", reason=(
                   "'augmenting with translation recaptures most of the improvement' (Sec. 6) is more than half of "
                   f"RRC's gain (0 here; Table 1a lost its numbers in extraction), by at least {POINT}"))},
          gate=(PREMISE,)),
    Claim("table1a/scale_alone_less", B1,
          "Scale alone (RandomSizeCenterCrop) helps less than RRC and than translation with scale.",
          "RandomSizeCenterCrop ~67.9 % < T.(30%) + RandomSizeCenterCrop < RRC", "Sec. 2.1, Table 1a",
          {PREMISE: REGIME,
           "RSCC below T + RSCC": top1("T.(30%) + RandomSizeCenterCrop's top-1 minus RandomSizeCenterCrop's, "
                                       "points, paired by seed", reason=(
                                           f"'this method improves Top-1 accuracy over RandomSizeCenterCrop' (Sec. "
                                           f"2.1) states an order; {POINT}")),
           "RSCC below RRC": BELOW_RRC["RSCC"]}, gate=(PREMISE,)),
    Claim("table1a/neither_part_matches_rrc", B1,
          "Neither RandomSizeCenterCrop nor FixedSizeRandomCrop alone reaches RRC; both beat no augmentation.",
          "67.9 % (both) vs 63.5 % without augmentation; RRC best", "Sec. 2.1, Table 1a",
          {PREMISE: REGIME,
           "RSCC beats none": top1("RandomSizeCenterCrop's top-1 minus no augmentation's, points, paired by seed",
                                   SUBSTANTIAL, 2.2),
           "FSRC beats none": top1("FixedSizeRandomCrop's top-1 minus no augmentation's, points, paired by seed",
                                   SUBSTANTIAL, 2.2),
           "RSCC below RRC": BELOW_RRC["RSCC"], "FSRC below RRC": BELOW_RRC["FSRC"]}, gate=(PREMISE,)),
    Claim("appB/no_pattern_in_helped_samples", B1,
          "The samples that translation-type augmentations fix are not consistent, within or across methods.",
          "IoUs within and across methods show no pattern", "Sec. 2.1, App. B",
          {"every IoU beyond chance below 0.2": Part(
              "the largest IoU beyond chance of two seeds' helped lists (samples none gets wrong and the method "
              "right), over the pairs of methods (a method with itself included); " + CHANCE_IOU, unit="run",
              direction="less", null=1.0, smallest=0.8, reason=(
                  "'we do not see a pattern of consistency' (App. B; its IoUs were lost in extraction): IoU beyond "
                  "chance is a chance-corrected agreement, and below 0.2 it is at most 'slight' on the scale Landis "
                  "and Koch (1977) give for chance-corrected agreement; from 'fair' agreement on, the helped samples "
                  "would overlap beyond chance enough to be a pattern")),
           "within no higher than across": Part(
               "within-method minus across-method mean IoU beyond chance of two seeds' helped lists", unit="run",
               direction="less", null=1.0, smallest=0.9, reason=LESS_THAN_PATTERN)}),
    Claim("tableA2/classes_consistently_hurt", B1,
          "Some classes are consistently hurt by RRC compared with no augmentation.",
          "17 of 1000 classes hurt in >= 72 % of 25 comparisons, losing up to 22 points",
          "Sec. 4.2, App. D.1, Table A2",
          {"RRC helps overall": RRC_GAIN,
           "a class hurt (Bonferroni over classes)": top1(
               "the most-hurt class's top-1 under RRC minus without augmentation, points, paired by seed (per class "
               "a t-interval at 1 - 0.05 / K; the lower of the classes' ends)", direction="less", of="classes",
               reason="Table A2 lists the classes hurt in most comparisons whatever their loss (3.9 to 22 points); "
                      f"{POINT}")}),
    Claim("figA7/rrc_partly_invariant_to_zoom", B1,
          "Zooming validation crops lowers accuracy, less for the RRC model than without augmentation, yet the RRC "
          "model already drops at the smallest zooms (partial invariance).",
          "Fig. A7: both fall; RRC more robust; RRC falls from the smallest values", "App. F, Fig. A7",
          {"RRC falls": top1("RRC's top-1 on the central crop minus on crops zoomed up to the largest zoom, points, "
                             "per seed (each the mean over its test draws)", FALL),
           "none falls": top1("no augmentation's top-1 on the central crop minus on crops zoomed up to the largest "
                              "zoom, points, per seed", FALL),
           "RRC falls less": top1("no augmentation's fall to the largest zoom minus RRC's, points, paired by seed",
                                  FALL),
           "RRC falls at the smallest zoom": top1("RRC's top-1 on the central crop minus at the smallest zoom above 1, "
                                                  "points, per seed", FALL)}),
    # -------------------------------------------------------------------------------- B2: Sec. 2.2, App. C
    Claim("tableA1/variance_of_inverse_scale", B2,
          "Var(1/s) per Beta shape is as Table A1 gives it (to two decimals).",
          "0.1: 0.823, 0.5: 3.193, 1: 4.962, 2: 6.809, 3: 7.626, 10: 7.317", "App. C, Table A1",
          Part("the largest |ours - paper| of Var(1/s) over Table A1's shapes (ours exact, by quadrature)",
               unit="deterministic", direction="equivalent", smallest=0.01, n_min=1, reason=(
                   "Table A1 is itself a Monte-Carlo estimate, off the exact values by up to 0.0065; one unit of the "
                   "second decimal, 0.01, covers its error, and a different distribution of s would move Var(1/s) "
                   "by more"))),
    Claim("sec2.2/smaller_shape_less_discrepancy", B2,
          "Smaller Beta shapes reduce the train/test discrepancy of apparent object sizes.",
          "the smaller the shape, the smaller the expected zoom", "Sec. 2.2, App. C",
          Part("the smallest rise of the train/test size ratio from one Beta shape to the next", unit="deterministic",
               n_min=1, reason="an order: each larger shape must give a larger ratio, by any amount (the ratios are "
                               "computed, not trained)")),
    Claim("table1b/uniform_best", B2, "Changing the shape of the scale distribution, same range, costs accuracy.",
          "shape 1 (uniform, RRC) gives the best top-1", "Sec. 2.2, Table 1b",
          top1("shape 1's top-1 minus the other shape's, points, paired by seed", SHAPE_DROP, each="other shape")),
    Claim("table1b/too_small_shape_hurts", B2,
          "Too small a shape (0.1: little scale variance) also costs accuracy: a trade-off between variance and "
          "train/test consistency.", "shape 0.1 below 0.5 and 1", "Sec. 2.2, Table 1b, App. C",
          top1("the next shape's (and shape 1's) top-1 minus the smallest shape's, points, paired by seed", (
              "'very small values of [the shape] (e.g., 0.1) also decrease performance' (Sec. 2.2) states a drop "
              f"without a size; {POINT}"), each="larger shape")),
    # -------------------------------------------------------------------------------- B5: App. D.1
    Claim("appD1/hurt_classes_unrelated", B5,
          "The classes RRC consistently hurts show no WordNet pattern: they are no closer to each other than to "
          "other classes.", "17 hurt classes; similarities among / with helped / with the rest not in the text; "
                            "'no pattern'", "App. D.1",
          {"RRC helps overall": RRC_GAIN,
           "hurt classes no closer to each other": Part(
               "per class hurt in most comparisons (Table A2's rule), its Wu-Palmer similarity to the other hurt "
               "classes minus to the others", unit="class", direction="less", null=1.0, smallest=0.9, reason=(
                   "related in full, the hurt classes would be one synset (similarity 1) apart from the rest (0); a "
                   "tenth of Wu-Palmer's range (0 to 1) is the least closeness that would make a WordNet pattern"))}),
    # -------------------------------------------------------------------------------- B6: App. G
    Claim("figA8/bounds_depend_on_reg", B6,
          "The translation bounds Augerino learns depend strongly on the regulariser weight.",
          "bounds differ across weights 0.01-1.0; saturate at the cap (30 %) where the regulariser stops",
          "App. G.2, Fig. A8",
          Part("per seed, the mean learned translation bound (x and y) at the largest regulariser weight minus at "
               "the smallest, as a share of the cap (30 % of the size)", unit="seed", smallest=0.25, reason=(
                   "'strongly': the weights move the bound over at least a quarter of the range the regulariser "
                   "acts on (0 to its cap, 30 % of the size)"))),
    Claim("tableA3/augerino_translation_beats_none", B6,
          "Augerino learning translation improves over no augmentation.",
          "best at an intermediate weight, above FixedSizeCenterCrop's 63.5 %", "App. G.2, Table A3",
          top1("Augerino's top-1 (translation, at the weight of the best mean) minus no augmentation's of the same "
               "seed, points (the weight is picked on the same images, as in the paper, which favours it)",
               f"{G_SIGN}; {POINT}")),
    Claim("tableA4/off_at_evaluation_slightly_higher", B6,
          "Switching Augerino (translation) off at evaluation gives slightly higher top-1.",
          "Table A4 slightly above Table A3", "App. G.2, Table A4",
          Part("per seed, top-1 with Augerino off at evaluation minus on, the mean over the regulariser weights, "
               "points", unit="seed", direction="equivalent", null=1.0, smallest=1.0, reason=(
                   "'slightly higher': above 0 and under 2 points of top-1, half the 4.4 points that separate the "
                   "crop methods from no augmentation in Table 1a (67.9 against 63.5 %)"))),
    Claim("figA9/x_translation_only", B6,
          "Allowed translation then zoom, Augerino (at its best weight) keeps x-translation and drops y-translation "
          "and zoom.", "tx near its cap; ty and zoom near 0", "App. G.3, Fig. A9",
          {"x-translation kept": Part(
              "per seed at the weight of the best mean, the learned x-translation bound as a share of its cap",
              unit="seed", smallest=0.5, reason="the widths start at their caps (the authors' code) and 0 is dropped "
                                                "entirely: 'kept' is more than half of where it started"),
           "y-translation dropped": Part(
               "per seed at the weight of the best mean, the learned y-translation bound as a share of its cap",
               unit="seed", direction="less", null=1.0, smallest=0.75, reason=(
                   "the widths start at their caps (1 here: nothing dropped); 'dropped' is below a quarter of where "
                   "it started")),
           "zoom dropped": Part(
               "per seed at the weight of the best mean, the learned log-zoom bound as a share of its cap's log",
               unit="seed", direction="less", null=1.0, smallest=0.75, reason=(
                   "the widths start at their caps (1 here: nothing dropped); 'dropped' is below a quarter of where "
                   "it started"))}),
    Claim("tableA5/scale_worse_than_translation", B6,
          "Learning translation and zoom together does worse than learning translation alone.",
          "Table A5 below Table A3; small gain over no augmentation", "App. G.3, Tables A3 and A5",
          top1("Augerino's top-1 with translation then zoom minus translation alone, each at its best weight, "
               "points, paired by seed", f"'the performance is smaller than when using translation only' (App. "
               f"G.3); {G_SIGN}; {POINT}", direction="less")),
]

# ------------------------------------------------------------------ grounding: B3, B4, B5, B7 and the authors' code
# Chapters B3 and B7 measure what training (or a random initialisation, or the data's variation) does: a seed is the
# replicate and three are needed. Chapter B4's and B5's searches embed images with one trained model: their claims
# are about that model, its evaluation items its same-class image pairs or its classes (three at least), and a
# maximum or minimum over many entries or classes is decided on simultaneous intervals (Bonferroni), made by the
# reports at the level of the family the part names (``of``).
CH3, CH4, CH5, CH7 = ("b3_invariance_vs_magnitude", "b4_factors_of_variation", "b5_wordnet",
                      "b7_variation_in_the_data")
SEED_MIN = 3  # seeds before a claim about what training does can be decisive (chapter B7 trains this many)
INVARIANCE_STEP = 0.05  # of relative invariance: the largest change still read as "no change"
INVARIANCE_WHY = ("a twentieth of the relative invariance's scale (0: the transformation moves the embedding as far "
                  "as swapping the image for another; 1: it leaves it unmoved), the largest change the book still "
                  "reads as 'no change' (the paper's values are not in its text): a rise or a fall must exceed it")
UNCHANGED_WHY = ("a twentieth of the relative-invariance scale from an embedding moved as far as another image's (0) "
                 "to an unmoved one (1), fixed before the run as the largest change still read as 'no change' (the "
                 "paper gives no number)")
SLIGHT_RISE = 0.10  # of relative invariance: the most a rise the paper calls slight may be
SIMILARITY_STEP = 1.0  # percent of a pair's cosine similarity: "effectively no change"
SIMILARITY_WHY = ("1 % of a pair's cosine similarity, the largest change the book reads as 'effectively no change' "
                  "(the paper's words for its best transformation across classes, Sec. 4.2; its number is lost from "
                  "its text)")
FIG3C_RATIO = 1.5  # "substantially more likely": at least half as often again per grid (Fig. 3C)
MOST_CLASSES = ("'most classes': more than half of them, the least that reads as most (the paper's share is lost "
                "from its text)")


def _invariance(quantity: str, direction: str = "greater", each: str = "architecture", **kw) -> Part:
    """A difference of level-mean (1-9) median relative invariance per seed (chapters B3, B7)."""
    kw.setdefault("smallest", INVARIANCE_STEP)
    kw.setdefault("reason", INVARIANCE_WHY)
    return Part(f"level-mean (1-9) median relative invariance {quantity}", unit="seed", direction=direction,
                n_min=SEED_MIN, each=each, **kw)


def _unchanged(after: str) -> Part:
    return _invariance(f"to zoom_in, {after} minus untrained, paired by seed", direction="equivalent",
                       reason=UNCHANGED_WHY)


def _no_entry_raises(entries: str) -> Part:
    return Part(f"the largest over {entries} of an entry's smallest class-mean percent change of same-class pair "
                "similarity (this model; simultaneous t-intervals over each class's pairs)", unit="image",
                direction="not above", smallest=SIMILARITY_STEP, of=f"{entries} or classes, whichever are more",
                reason=f"an entry raises a class only beyond {SIMILARITY_WHY}; 'no entry raises every class' (Fig. "
                       "3A, A4) is every entry's worst class below that")


def _most_classes(what: str) -> Part:
    return Part(f"share of classes {what} (Wilson interval)", unit="class", smallest=0.5, reason=MOST_CLASSES)


def _same_as_authors(experiment: str, chapter: str) -> Claim:
    """'Our implementation gives the authors' code's numbers on the same inputs' (:func:`invlib.authors.
    same_values_part`), each key within the tolerance :data:`AUTHORS_TOLERANCE` states for its experiment."""
    tol = AUTHORS_TOLERANCE[experiment]
    limit = (", ".join(f"{k} {v:.3g}" for k, v in tol["abs"].items()) if isinstance(tol["abs"], dict)
             else f"{tol['abs']:.3g}") + (f" + {tol['se']:g} standard errors" if tol["se"] else "")
    part = dataclasses.replace(same_values_part(), quantity=f"keys whose |ours - theirs| exceeds {limit} "
                                                            f"({tol['reason']})")
    return Claim(f"authors/{experiment}_same", chapter, f"Paper B's {experiment.replace('_', ' ')}: our "
                 "implementation gives the numbers of the authors' code on the same inputs.",
                 "the authors' code's numbers on the same inputs (benchmarks/authors/grounding_runs.py)",
                 "github.com/facebookresearch/grounding-inductive-biases", part, kind="authors")


# Tolerance of a key of an experiment of invlib.papers.b.authors_code: abs (one number, or one per key prefix) +
# se x sqrt(se_ours^2 + se_theirs^2), the standard errors of the two numbers where they are estimates (crops; their
# alignment, averaged over their random pairings).
AUTHORS_TOLERANCE: dict[str, dict] = {
    "sweep_transforms": dict(abs=1e-4, se=0, reason=(
        "both sides are float32 torch operations on the same images (their torchvision calls, our transforms); "
        "bilinear sampling of the same grid agrees to about 1e-6, so a larger gap is a different operation")),
    "relative_invariance": dict(abs=1e-4, se=4, reason=(
        "the same embeddings and the same pairing on both sides, so the invariance quantiles agree to float32 "
        "rounding (their 1e-8 in the denominator, our clamp); their alignment takes one random pairing, here "
        "averaged over 2,000 seeded pairings with our baseline, and is compared within 4 standard errors of "
        "that average (10 levels: a false alarm of about 0.06 % over them, Bonferroni)")),
    "aa_ops": dict(abs=1 / 255, se=0, reason=(
        "their operations return uint8 images (PIL rounds or truncates each pixel, and its bicubic kernel is not "
        "torch's), ours stay float: one grey level, 1/255, is what 8-bit output alone moves a mean |T(x) - x|")),
    "boosts": dict(abs={"mean": 0.1, "weighted": 0.1, "share": 2 / 32}, se=0, reason=(
        "ours (the authors' style) and theirs transform the second images to within 8-bit rounding, PIL's "
        "bicubic kernel and nearest-neighbour ties (aa_ops), which moves a pair's percent change by less than "
        "0.1 percentage point here (the record's pair-by-pair direct difference): 0.1 point for the mean change "
        "and the weighted boost; a pair that close to 0 may change side, so the share boosted may differ by two "
        "of a class's 32 pairs. Top-5 lists must be equal up to near-ties (entries within 0.1 point of the "
        "5th-best)")),
    "wordnet": dict(abs={"wup": 1e-9, "lch": 1e-9, "path": 1e-9, "iou_top5": 1e-9, "iou_top25": 1e-9,
                         "spearman": 12 / (14 * (14 ** 2 - 1)) + 1e-9}, se=0, reason=(
        "the same NLTK WordNet 3.0 on both sides, and our ranking functions run on the class means their code "
        "stored for the boosts experiment: every number must be equal, and one that differs has a different "
        "definition; except that two entries of exactly equal means (color/0 and rescale/0, both 0) have no "
        "order, and pandas' unstable sort and our stable one may put their types either way round: one swap of "
        "two neighbouring types among 14 moves Spearman's rho by 12 / (14 (14^2 - 1)) = 0.0044")),
    "crops": dict(abs=1e-9, se=4, reason=(
        "independent random draws on each side (their torch global generator, ours seeded): 4 standard errors "
        "of the difference of two estimates from 100,000 boxes each (1e-9 for float rounding); over the 56 keys, "
        "two samplers that are the same exceed it with a probability of about 0.4 % (6.3e-5 a key, Bonferroni), "
        "so a key beyond it is a systematic difference, e.g. their whole-pixel boxes")),
}

GROUNDING_CLAIMS = [
    # -------------------------------------------------------------------------------- B3: Sec. 3, App. D
    Claim("fig2/train_raises_translation_appearance", CH3,
          "Training (here without augmentation) raises invariance to translation and to appearance changes "
          "(Fig. 2a-b, A3).", "raised (Fig. 2, A3)", "Sec. 3.2, Fig. 2a-b, A3",
          {"translate": _invariance("to translate, trained without augmentation minus untrained, paired by seed"),
           "appearance": _invariance("averaged over the sweep's appearance grids (brightness and contrast up and "
                                     "down, posterize, solarize), trained without augmentation minus untrained, "
                                     "paired by seed")}),
    Claim("fig2/train_lowers_rotation_shear", CH3, "Training lowers invariance to rotation and shear (Fig. 2d, A3).",
          "lowered", "Sec. 3.2, Fig. 2d, A3",
          {g: _invariance(f"to {g}, trained without augmentation minus untrained, paired by seed", "less")
           for g in ("rotate", "shear")}),
    Claim("fig2/zoom_in_unchanged", CH3,
          "Training (here without augmentation) leaves the mean invariance to zooming in unchanged (Fig. 2).",
          "no change in the mean, less spread", "Sec. 3.2, Fig. 2",
          _unchanged("trained without augmentation")),
    # the same two claims for the model trained with standard augmentation, the one the paper's Fig. 2 and its
    # authors' code call "trained" (torchvision's ResNet-18, timm's ViT)
    Claim("fig2/standard_raises_translation", CH3,
          "Training (with standard augmentation, the paper's trained models) raises invariance to translation "
          "(Fig. 2a-b).", "raised", "Sec. 3.2, Fig. 2a-b",
          _invariance("to translate, trained with standard augmentation minus untrained, paired by seed")),
    Claim("fig2/standard_zoom_in_unchanged", CH3,
          "Training (with standard augmentation) leaves the mean invariance to zooming in unchanged (Fig. 2).",
          "no change in the mean, less spread", "Sec. 3.2, Fig. 2",
          _unchanged("trained with standard augmentation")),
    Claim("fig2/augmentation_slight_translation", CH3,
          "Standard augmentation raises translation invariance, but only slightly (Fig. 2a-b).",
          "slightly", "Sec. 3.2, Fig. 2a-b",
          {"raises": _invariance("to translate, standard augmentation minus none, paired by seed"),
           "only slightly": _invariance(
               "to translate, standard augmentation minus none, paired by seed", "equivalent", smallest=SLIGHT_RISE,
               reason="a tenth of the relative-invariance scale, twice the 'unchanged' margin: the most a rise the "
                      "paper calls slight may be (its values are not in the text)")}),
    Claim("fig2/untrained_vit_translation", CH3,
          "An untrained ViT is more translation-invariant than an untrained ResNet (Fig. 2a-b).",
          "ViT higher", "Sec. 3.2, Fig. 2a-b",
          _invariance("to translate, untrained ViT minus untrained ResNet (the replicate is the random "
                      "initialisation; paired by seed, the same probe images)", each="")),
    Claim("figA10/untrained_resnet_equivariant", CH3,
          "An untrained ResNet responds to translation in an aligned way (equivariance) without being invariant to "
          "it; a ViT does not (App. D, Fig. A10).", "aligned for ResNet, not for ViT",
          "Sec. 3.2, App. D, Fig. A10",
          {"ResNet aligned": Part(
              "the untrained ResNet's level-mean (1-9) equivariance alignment to translate, per seed (the random "
              "initialisation)", unit="seed", smallest=0.05, n_min=SEED_MIN, reason=(
                  "0 is the alignment of shuffled responses (chance) and responses all along one direction reach "
                  "about 1; a twentieth of that scale, as for the relative invariance (Fig. A10's values are not in "
                  "the text)")),
           "ResNet more aligned than ViT": Part(
               "level-mean (1-9) equivariance alignment to translate, untrained ResNet minus untrained ViT, paired "
               "by seed", unit="seed", smallest=0.05, n_min=SEED_MIN, reason=(
                   "a twentieth of the alignment's scale from chance (0) to responses all along one direction "
                   "(about 1), as for the relative invariance (Fig. A10's values are not in the text)")),
           "ResNet not invariant": _invariance(
               "of the untrained ResNet to translate, per seed (the random initialisation)", "less", each="",
               null=1.0, smallest=0.5, reason=(
                   "an unmoved embedding (1) is invariance in full; below 0.5 translation moves the embedding more "
                   "than half as far as swapping the image for another one, which is not invariance"))}),
    _same_as_authors("sweep_transforms", CH3),
    _same_as_authors("relative_invariance", CH3),
    # -------------------------------------------------------------------------------- B4: Sec. 4.1-4.4, App. E
    Claim("fig3a/no_single_transform", CH4,
          "For this model, no single transformation raises same-class pair similarity across all classes; the best "
          "one across classes (posterize in the paper) gives no significant change (Fig. 3A).",
          "0 transformations; best: posterize (its change: not in the text)", "Sec. 4.1-4.2, Fig. 3A, App. E",
          {"no entry raises every class": _no_entry_raises("entries"),
           "best across classes within ± 1 %": Part(
               "the best entry's mean over classes of its percent similarity change (each entry's t-interval over "
               "the class means; the largest estimate and ends)", unit="class", direction="equivalent",
               smallest=SIMILARITY_STEP, of="entries", reason=SIMILARITY_WHY)}),
    Claim("fig3b/top_per_class", CH4,
          "For this model, the best transformation chosen per class raises similarity for every class (Fig. 3B).",
          "every class (mean ± SEM: not in the text)", "Sec. 4.2, Fig. 3B",
          Part("the smallest over classes of a class's best entry's mean percent similarity change (simultaneous "
               "t-intervals over each class's pairs)", unit="image", smallest=SIMILARITY_STEP,
               of="entries or classes, whichever are more",
               reason=f"every class's best entry must raise it by more than {SIMILARITY_WHY}: the paper sets the "
                      "per-class top's increase against the global top's 'effectively no change'")),
    Claim("e/top10_positive", CH4,
          "For this model, on average 6.5 of a class's top 10 transformations raise similarity (App. E).", "6.5",
          "App. E", Part("per class, how many of its top 10 entries have a mean change > 0", unit="class",
                         direction="equivalent", null=6.5, smallest=1.5, reason=(
                             "the paper's 6.5 of 10 ± 1.5: from 5 to 8 of a class's top 10 raise similarity, more "
                             "than half but not nearly all, as the paper reads its number"))),
    Claim("figA4/no_subpolicy", CH4,
          "For this model, no two-operation sub-policy raises similarity across all classes (Fig. A4).", "0",
          "Sec. 4.1, Fig. A4", _no_entry_raises("sub-policies")),
    Claim("fig3a/augmentation_dampens", CH4,
          "With standard augmentation, transformations lower similarity less and vary less, also for "
          "transformations not used in training (Fig. 3A, A5).",
          "smaller decrease, lower variance", "Sec. 4.1, Fig. 3A, A5",
          {name: Part(f"{what}, percent similarity change, one model with standard augmentation against one "
                      "without of the same seed", unit="seed", smallest=SIMILARITY_STEP, n_min=SEED_MIN,
                      reason=f"{SIMILARITY_WHY}: a smaller difference between the two models is none")
           for name, what in (("higher mean change", "standard minus none of the mean change"),
                              ("lower spread", "none minus standard of the spread (std over classes and entries)"),
                              ("lower spread without translations and rescales",
                               "none minus standard of the spread without translations and rescales"))}),
    Claim("sec4.3/appearance_prevails", CH4,
          "For this model, appearance transformations account for more of the within-class variation than "
          "geometric ones (section 4.3).",
          "more appearance than geometric among top transforms (shares not in the text)", "Sec. 4.3",
          Part("per class, the appearance share of its top-5 entries minus the pool's appearance share", unit="class",
               smallest=0.05, reason=(
                   "the pool's own share is chance (a top 5 drawn at random from the pool holds it on average; the "
                   "paper checked its pool is split about evenly for the same reason); a twentieth, the book's "
                   "smallest share that matters (the paper's shares are lost from its text)"))),
    Claim("sec4.3/identity_best_geometric", CH4,
          "For this model, among geometric transformations the identity is the best choice for most classes "
          "(section 4.3).", "share of classes not in the text", "Sec. 4.3",
          _most_classes("where every geometric entry lowers the mean change")),
    Claim("sec4.3/appearance_with_augmentation", CH4,
          "For the model trained with standard augmentation too, most classes' top transformation alters "
          "appearance (section 4.3).", "more than a share of classes not in the text", "Sec. 4.3",
          _most_classes("whose top-1 entry (standard-augmentation model) alters appearance")),
    Claim("fig3c/invariance_grew_top5", CH4,
          "For this model, transformations whose invariance grew in training are more often in a class's top 5 "
          "(Fig. 3C).", "substantially more likely (shares not in the text)", "Sec. 4.4, Fig. 3C",
          Part(f"per class, its share of the top-5 slots per grid whose invariance grew minus {FIG3C_RATIO:g} x its "
               "share per other grid (as the authors' script: top 5 by share of pairs boosted among entries of "
               "levels 3-7; a grid grew where its median invariance, standard augmentation minus untrained, over "
               "levels 3-7, is > 0)", unit="class", reason=(
                   "the smallest effect is inside the quantity: 'substantially more likely' is at least half as "
                   "often again per grid (the paper's shares are lost from its text), so the grown grids' share "
                   f"minus {FIG3C_RATIO:g} x the others' must be > 0; no effect (equal shares) puts it below 0"))),
    Claim("e1/scale_varies_more", CH4,
          "Foreground boxes vary more in scale than in position, which stays centred (App. E.1).",
          "scale varies over a range, centres centred (numbers not in the text)", "App. E.1",
          {"generated boxes": Part(
              "std of the box side (sqrt of its area fraction) minus the larger std of its centre (fractions of the "
              "frame), of the boxes the scenes generator drew: a check of the data the chapter runs on, not a "
              "finding", unit="deterministic", n_min=1, reason=(
                  "both spreads are fractions of the frame's side, so the larger one is the factor that varies "
                  "more")),
           "measured boxes": Part(
               "std of the box side (sqrt of its area fraction) minus the larger std of its centre (fractions of "
               "the frame), of boxes measured on the images (bootstrap over the images)", unit="image",
               smallest=0.05, reason=(
                   "a tenth of the largest spread a fraction of the frame can have (a std of 0.5): a smaller excess "
                   "of the side's spread over the centre's is not 'more variation in scale' (the paper's numbers "
                   "are lost from its text)"))}),
    _same_as_authors("aa_ops", CH4),
    _same_as_authors("boosts", CH4),
    # -------------------------------------------------------------------------------- B5: Sec. 4.5, App. E.2-E.3
    Claim("fig4/wordnet_similar_classes", CH5,
          "Classes close in WordNet have more similar rankings of transformations (Fig. 4), for this run's model "
          "without augmentation.", "similar classes consistently more similar (correlation not in the text)",
          "Sec. 4.5, Fig. 4, App. E.3",
          Part("Spearman's ρ between the classes' Wu-Palmer similarity and the rank correlation of their "
               "transformation rankings, over the class pairs (bootstrap over classes, whole classes resampled)",
               unit="class", smallest=0.3, reason=(
                   "a moderate correlation on the usual reading of |ρ| (0.1 weak, 0.3 moderate, 0.5 strong): the "
                   "paper states a relation ('consistently more similar') without a level, and a weaker one would "
                   "not be called one"))),
    Claim("e2/rotation_top_weighted_boost", CH5,
          "Rotation is the transformation of all top-10 (class, transformation) pairs by weighted boost for the "
          "standard-augmentation ResNet-18 (this run's model); the classes are textiles (velvet, handkerchief, "
          "envelope, wool) (App. E.2).", "10 of 10", "Sec. 4.5, App. E.2",
          Part("weighted boost (percent) of the 10th best rotation (class, entry) combination minus that of the best "
               "combination of any other operation, each a mean over the class's same-class image pairs "
               "(simultaneous t-intervals)", unit="image", smallest=SIMILARITY_STEP, of="(class, entry) combinations",
               reason=f"the paper's 'all ten': the 10th rotation above the best other operation by more than "
                      f"{SIMILARITY_WHY}, within which two boosts are tied")),
    _same_as_authors("wordnet", CH5),
    # -------------------------------------------------------------------------------- B7: the thesis, controlled
    *[Claim(f"thesis/{grid}_grows_with_variation", CH7,
            f"Invariance to {grid.replace('_', ' ')} grows with the data's variation in {what} (the paper's thesis, "
            "tested with no augmentation).", "predicted (no such experiment in the paper)",
            "the paper's title and Sec. 6 (no such experiment in the paper)",
            _invariance(f"to {grid} of the model without augmentation, at the step's higher level minus its lower "
                        "(the same seed at both)", each="step"), kind="hypothesis")
      for grid, what in (("translate", "position"), ("zoom_in", "scale"))],
    Claim("thesis/crop_gain_grows_with_variation", CH7,
          "RandomResizedCrop's gain over the central crop grows with the data's variation in position and scale.",
          "predicted (no such experiment in the paper)",
          "the paper's title and Sec. 6 (no such experiment in the paper)",
          {"gain rises": Part(
              "RRC's test top-1 minus the no-augmentation model's of the same seed and level, points: at the step's "
              "higher level minus its lower (the same seed at both)", unit="seed", smallest=1.0, n_min=SEED_MIN,
              each="step", reason=f"the thesis predicts a rise without a size; {POINT}"),
           PREMISE: Part(
               "the no-augmentation model's training minus test top-1 at the highest level, points, per seed",
               unit="seed", smallest=OVERFIT_GAP, n_min=SEED_MIN, reason=f"chapter B1's premise: {OVERFIT_REASON}")},
          gate=(PREMISE,), kind="hypothesis"),
    # -------------------------------------------------------------------------- B1: crops against the authors' code
    _same_as_authors("crops", "b1_rrc_decomposition"),
]

PROTOCOL = Protocol("B", [*RRC_CLAIMS, *GROUNDING_CLAIMS])

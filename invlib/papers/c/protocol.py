"""Paper C's protocol (Tensmeyer & Martinez, Improving invariance and equivariance properties of CNNs): every claim its
chapters test, declared before any run (see :mod:`invlib.protocol` for the shape: per part the quantity, the unit of
replication, the direction, the value of no effect, the smallest effect that matters with its reason, ``n_min`` and
the multiplicity).

What a replicate is (:mod:`invlib.papers.c.equivariance_reports` computes the effects):

- ``"model"`` over **types**: what augmentation, a wider range or fine-tuning does to the transformation types in
  general rests on one trained network per type, paired with the baselines on that type's grid (or with itself
  before fine-tuning); one value per type.
- ``"seed"``: the baselines are seeds of the network trained without augmentation.
- ``"model"`` over **networks** (chapter C2): the ordered same-type pairs of networks (a Wilson interval), or one
  contrast per network of a group of types.
- ``"image"``: the asymmetry of the distances, a property of this family's networks and their fitted maps, over
  the evaluation images of each pair (one of the pairs, Bonferroni).

Two parts are one-sided margins (non-inferiority: the paper says an effect stays *below* a size, "slightly",
"does not improve"): their boundary lies on the far side of zero from the paper's side, so they declare the margin
as ``null`` with ``smallest`` 0 (the margin itself is the smallest effect that matters, as the reason says).

Example
-------
>>> PROTOCOL["sec6.3/clean_accuracy_kept"].parts[""].boundary, PROTOCOL["sec6.2/transform_groups"].names
(-1.0, ('rigid', 'pixelwise'))
"""

from ...protocol import Claim, Part, Protocol

N_MIN = 3  # types, seeds, networks or images before a claim can be decisive

ACCURACY = ("one point of top-1: the smallest accuracy gain a practitioner acts on (the paper states an order, "
            "not a size)")
GAP = ("2 points of accuracy, twice the book's one point for an order: the paper's text gives the gaps no number "
       "(Figs. 1 and 7), and its augmented networks' equivariance and invariance lines overlap inside the training "
       "range")
RECOVERED = ("the share of the accuracy a transformation costs the baseline that the map recovers, (equivariance - "
             "invariance) / (untransformed - invariance), each the baseline's mean over the type's grid (0: the map "
             "recovers nothing; 1: all of it)")
STRUCTURED = ("'The large difference between the baseline invariance (black line) and equivariance (red line) indicate "
              "that Z is structured wrt most transforms' (Sec. 6.1), with no number in the text: a difference is "
              "large against what the map could recover, the accuracy the transformation costs the baseline (whose "
              "'performance deteriorates rapidly even for mild transformations'); the map recovering more than half "
              "of it is a large difference, less than half is not")
PAPER_GAIN = ("half the paper's own gain: fine-tuning with Eq. 7 raises equivariance on Table 2's 18 fine-tuning "
              "transforms by +0.26 points on average (RVL-CDIP; Sec. 6.3 says ~0.5 with the untransformed images; "
              "ILSVRC, Table 4, mostly lower); the book's one point of top-1 would exceed the paper's whole effect")
TRANSFER = ("'slightly weaker' (Fig. 10), and higher for mirror, rotation and shear (App. B.2): on the unseen data "
            "set the 1 - L_L2 invariance changes by less than a tenth of its 0-1 scale, either way")


def _types(quantity: str, smallest: float, reason: str, direction: str = "greater", null: float = 0.0) -> Part:
    """A part over the transformation types: one trained network per type (unit ``"model"``), paired."""
    return Part(quantity, unit="model", direction=direction, null=null, smallest=smallest, reason=reason,
                n_min=N_MIN)


C1 = [
    Claim("sec6.1/augmentation_raises_invariance", "c1_invariance_equivariance",
          "Training with a transformation makes the network more invariant to it than the baseline, also for "
          "magnitudes beyond the training range.", paper="all 9 types (Fig. 1, 7)",
          where="Sec. 6.1, Figs. 1 and 7; abstract", parts={
              "over the grid": _types("the widest augmented network's mean invariance accuracy minus the baselines' "
                                      "(their mean) over the type's grid, points, per type", 1.0, ACCURACY),
              "beyond the range": _types("the same over the grid values beyond the augmented network's training "
                                         "range, points, per type", 1.0, ACCURACY)}),
    Claim("sec6.1/baseline_equivariance_gap", "c1_invariance_equivariance",
          "Without augmentation, a learned linear map recovers much of the accuracy lost to a transformation "
          "(equivariance well above invariance) for most types, colour being the exception.",
          paper="large gap between the baseline's red and black lines for most types; not for colour",
          where="Sec. 6.1, Figs. 1 and 7", parts={
              "most types": Part(f"the median over the non-colour types ('most types') of {RECOVERED}, per baseline "
                                 "seed", unit="seed", smallest=0.5, reason=STRUCTURED, n_min=N_MIN),
              "colour the exception": Part(f"for colour jitter, {RECOVERED}, per baseline seed", unit="seed",
                                           direction="less", null=1.0, smallest=0.5, n_min=N_MIN, reason=(
                                               "'(Color is one exception)' (Sec. 6.1): for colour the difference is "
                                               "not large, the map recovering less than half of what colour jitter "
                                               "costs the baseline, the boundary of the other part (1: all of it)"))}),
    Claim("sec6.1/augmentation_collapses_structure", "c1_invariance_equivariance",
          "Inside the training range the map adds little for an augmented network: its equivariance-invariance "
          "gap is small, smaller than the baseline's at the same transforms.",
          paper="'the equivariance mapping does not improve performance for transforms observed during training'",
          where="Sec. 6.1", parts={
              "small": _types("the widest augmented network's mean (equivariance - invariance) accuracy over the grid "
                              "values inside its training range, points, per type (no effect: the map adds "
                              "nothing, 0)", 2.0, "the largest gain that is still 'does not improve': " + GAP,
                              direction="not above"),
              "below the baseline": _types("the same minus the baselines' (their mean) at the same values, points, "
                                           "per type", 1.0, "one point of top-1: the smallest accuracy difference a "
                                           "practitioner acts on (the paper states an order: the map adds less "
                                           "than for the baseline)", direction="less")}),
    Claim("fig2/wider_range_more_robust", "c1_invariance_equivariance",
          "Networks trained on wider ranges are robust over wider ranges of the transformation.",
          paper="Fig. 2: rotation, shear, crop, ... ranges from ±5 to ±20", where="Sec. 6.1, Fig. 2; App. B.1",
          parts=_types("the wider network's mean invariance accuracy minus the narrower one's over the grid values "
                       "beyond the narrower range, points, per type with two training ranges", 1.0, ACCURACY)),
]

C2 = [
    Claim("sec6.2/same_type_nearest", "c2_representation_distance",
          "Networks trained with the same transformation type are among each other's nearest neighbours.",
          paper="~80 % of same-type pairs within 5 neighbours of 36 (RVL-CDIP), within 10 (ILSVRC)",
          where="Sec. 6.2, Fig. 3a", parts=Part(
              "the share of the ordered same-type pairs of networks (a network and a partner, as the paper counts "
              "them) with the partner among the network's k nearest neighbours by the Eq. 4 distance, k = 5 of 36 "
              "scaled to the family (Wilson interval over the pairs)", unit="model", null=0.25, smallest=0.25,
              reason="no effect is chance, k / (M - 1): 5/36 in the paper, at most a quarter in every family of the "
                     "book (a family where it is more is not measured); a 'strong bias' (the paper's ~80 %) is at "
                     "least half of the same-type pairs within k, and at least twice chance", n_min=N_MIN)),
    Claim("sec6.2/transform_groups", "c2_representation_distance",
          "Rotation, shear and perspective give mutually similar representations; so do baseline, colour jitter "
          "and Gaussian noise.", paper="Figs. 3b-c, both data sets", where="Sec. 6.2, Figs. 3b-c", parts={
              name: Part(f"per network of the {name} group's types, its mean Eq. 4 distance to the networks of the "
                         "group's other types minus to those of the other types, in units of the family's median "
                         "Eq. 4 distance", unit="model", direction="less", smallest=0.05, reason=(
                             "Figs. 3b-c show the groups as darker squares with no number; the only size the paper "
                             "gives a difference of Eq. 4 distances is in App. B.3, which calls one-way distances "
                             "that differ by about 5 % of a typical distance (ILSVRC; 10 % on RVL-CDIP) a "
                             "significant difference: a group's members are mutually similar when they are nearer "
                             "each other than the rest by at least that, 5 % of a typical distance, measured in this "
                             "family's own typical distance (its median; the paper's 0.50 and 1.00 are its networks')"),
                         n_min=N_MIN)
              for name in ("rigid", "pixelwise")}),
    Claim("appB.3/asymmetric_distances", "c2_representation_distance",
          "For some pairs of this family's networks the two one-way distances differ markedly.",
          paper="up to ~10 % (RVL-CDIP) and ~5 % (ILSVRC) of a typical distance (0.5 and 1.0)",
          where="App. B.3, Fig. 12", parts=Part(
              "per pair of networks, the mean over the evaluation images of the difference of its two one-way "
              "errors, in units of the median Eq. 4 distance; the pair with the highest lower bound (else the "
              "highest upper bound): some pair must clear the boundary, every pair must fall below it to refute "
              "(these networks and their fitted maps)", unit="image", smallest=0.05, of="pairs",
              reason="the smaller of the paper's two figures (App. B.3): one-way distances differing by about 5 % of "
                     "a typical Eq. 4 distance (ILSVRC; 10 % on RVL-CDIP)", n_min=N_MIN)),
    Claim("appB.2/invariance_transfers", "c2_representation_distance",
          "Invariance and equivariance carry over to a data set the networks were not trained on, a little "
          "weaker.", paper="Fig. 10 (ANDOC): slightly weaker; higher for mirror, rotation, shear",
          where="App. B.2, Fig. 10", parts={
              "above the baseline": _types("on the unseen data set, the augmented network's 1 - L_L2 invariance "
                                           "minus the baselines' (their mean), per type", 0.1,
                                           "a tenth of the 0-1 scale of 1 - L_L2, the size the other part calls a "
                                           "slight change: an advantage a slight change could erase does not show "
                                           "the invariance 'not lost' (App. B.2)"),
              "close to its own data": Part("the augmented network's 1 - L_L2 invariance on the unseen data set "
                                            "minus on its own, per type", unit="model", direction="equivalent",
                                            smallest=0.1, reason=TRANSFER, n_min=N_MIN)}),
]

C3 = [
    Claim("sec6.3/finetuning_raises_equivariance", "c3_equivariance_finetuning",
          "Fine-tuning with Eq. 7 raises equivariance on the fine-tuning transforms.",
          paper="most of 9 types on RVL-CDIP (Table 2); 3 of 9 on ILSVRC (Table 4)",
          where="Sec. 6.3, Table 2; App. B.4, Table 4", parts=_types(
              "the change of equivariance accuracy (after - before fine-tuning) averaged over the type's "
              "fine-tuning transforms, points, per type", 0.13, PAPER_GAIN)),
    Claim("sec6.3/clean_accuracy_kept", "c3_equivariance_finetuning",
          "Fine-tuning improves or only slightly lowers accuracy on untransformed images.",
          paper="+0.5 points on RVL-CDIP; mixed, within about 1 point, on ILSVRC",
          where="abstract; Sec. 6.3, Tables 2 and 4", parts=_types(
              "the change of accuracy on untransformed images (after - before fine-tuning), points, per type (an "
              "improvement of any size also holds)", 1.0,
              "the largest drop that is still slight: 'improving or slightly decreasing' clean accuracy (abstract); "
              "the largest drop the paper reports is 0.9 points (Table 4, blur), so a drop of more than 1 point is "
              "not slight", direction="not below")),
    Claim("sec6.3/gain_from_the_loss", "c3_equivariance_finetuning",
          "The equivariance gained comes from Eq. 7's terms, not from the extra updates alone.",
          paper="implied: the paper credits Eq. 7 (it reports no run of the same updates without its terms)",
          where="Sec. 6.3 (implied)", parts=_types(
              "equivariance accuracy over the type's fine-tuning transforms, Eq. 7 minus the control (lambda3 = 0, "
              "the same updates), points, per type", 0.13,
              "Eq. 7's terms must account for at least half of the gain the paper credits to them: " + PAPER_GAIN)),
]

CLAIMS = [*C1, *C2, *C3]

PROTOCOL = Protocol("C", CLAIMS)

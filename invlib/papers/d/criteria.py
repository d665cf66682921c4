"""Paper D's boundaries, declared once before any run: the same statement of the paper is judged with the same
smallest effect that matters in every chapter that tests it (D2, D4 and D5 used to judge "the crops depend on the
input" with 0.05 and 0.1 nats, "the crop size follows the object" with rho 0.2 and 0.3, "the entropy stays in its
band" with 70 % and 80 %). Each entry is ``(boundary, reason)``; a chapter passes both to
:func:`invlib.results.decide`. The data control's effect, the difference of differences :data:`GAIN_SHRINKS` judges,
is computed once, by :func:`gain_shrink`.

Example
-------
>>> boundary, reason = INPUT_DEPENDENT_KL
>>> boundary
0.05
"""

# "The crop distribution depends on the input": mean KL(p(tau|x) || mean_x p(tau|x)) in nats. An input-free module
# has 0; 0.05 nats is the smallest difference between two images' crop distributions that a sample of a few dozen
# crops per image can show, so a module below it behaves as an input-free one for training.
INPUT_DEPENDENT_KL = (0.05, "0.05 nats: below it two images' crop distributions are not told apart by the few "
                            "dozen crops per image training draws; an input-free module has 0")

# "The expected crop size grows with the object's size": Spearman rho over test scenes. 0.2 is a weak but real
# monotone relation (a quarter of the way from none to the relation the paper's Fig. 8 shows).
SIZE_FOLLOWS_OBJECT_RHO = (0.2, "rho 0.2: a weak but real monotone relation between object and crop size; 0 is "
                                "an input-free module")

# "The dynamic lambda keeps the entropy inside its band": the share of the band checks in the last 30 % of training
# that fall inside the band. Half of them inside is what a controller that only oscillates around an edge gives.
ENTROPY_IN_BAND_SHARE = (0.5, "half the checks: a controller that only oscillates around one edge of the band "
                              "keeps about half of them inside")

# "The crops concentrate on the object, more than a reference's": the share of crop mass centred in the object's box,
# above the reference module's (the input-free one, or an untrained one).
ON_OBJECT = (0.05, "5 points of probability: one crop in twenty more centred on the object than the reference's; a "
                   "smaller shift does not show in Fig. 6's densities of crop centres")

# "The gain of per-input augmentation over input-free augmentation shrinks when the data has no per-instance
# variation" (the data control of D2-D5; the paper's mechanism, not one of its numbers): per seed, InstaAug minus its
# input-free version on the varied data, minus the same on data without the variation, in points. The mechanism
# predicts the direction and no size, so the boundary is 0; the interval over seeds carries the test noise of both.
GAIN_SHRINKS = (0.0, "the mechanism predicts a direction (the per-input gain shrinks without per-instance "
                     "variation) and no size: a shrink of any size, paired by seed")


def gain_shrink(per_input, input_free, per_input_still, input_free_still, scale: float = 100.0):
    """The data control's difference of differences (D2-D5): per unit (a training seed, or a test image) the gain of
    the per-input module over its input-free version on the chapter's data, ``gain = (per_input - input_free) *
    scale``, the same on the data without per-instance variation, ``gain_still``, and how much it shrinks there,
    ``gain - gain_still`` (what :data:`GAIN_SHRINKS` judges). The four are accuracies of the same units (numpy
    arrays, or pandas Series aligned by their index, e.g. by seed: a unit missing from one gives NaN); ``scale``
    100 turns fractions into points.

    Returns ``(gain, gain_still, shrink)``, each of the inputs' shape.

    Example
    -------
    >>> import numpy as np
    >>> gain, still, shrink = gain_shrink(np.array([0.6, 0.7]), np.array([0.5, 0.6]), np.array([0.5, 0.5]),
    ...                                   np.array([0.5, 0.45]))
    >>> gain.round(6).tolist(), still.round(6).tolist(), shrink.round(6).tolist()
    ([10.0, 10.0], [0.0, 5.0], [10.0, 5.0])
    """
    gain = (per_input - input_free) * scale
    gain_still = (per_input_still - input_free_still) * scale
    return gain, gain_still, gain - gain_still

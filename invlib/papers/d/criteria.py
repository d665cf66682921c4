"""Paper D's data control, computed once: the difference of differences every chapter with a data control (D2-D5)
judges. The boundaries paper D's chapters share (the input dependence, the crop size following the object, the
entropy in its band, the crops on the object, the gain that shrinks) are declared with the claims, as the shared
parts at the top of :mod:`invlib.papers.d.protocol` (``input_dependent``, ``size_follows_object``,
``entropy_in_band``, ``on_object``, ``gain_shrinks``); :func:`gain_shrink` computes the effect ``gain_shrinks``
judges.
"""


def gain_shrink(per_input, input_free, per_input_still, input_free_still, scale: float = 100.0):
    """The data control's difference of differences (D2-D5): per unit (a training seed, or a test image) the gain of
    the per-input module over its input-free version on the chapter's data, ``gain = (per_input - input_free) *
    scale``, the same on the data without per-instance variation, ``gain_still``, and how much it shrinks there,
    ``gain - gain_still`` (what :func:`invlib.papers.d.protocol.gain_shrinks` judges). The four are accuracies of
    the same units (numpy arrays, or pandas Series aligned by their index, e.g. by seed: a unit missing from one
    gives NaN); ``scale`` 100 turns fractions into points.

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

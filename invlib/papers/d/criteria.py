"""Paper D's data control, computed once: the difference of differences every chapter with a data control (D2-D5)
judges. The boundaries paper D's chapters share (the input dependence, the crop size following the object, the
entropy in its band, the crops on the object, the gain that shrinks) are declared with the claims, as the shared
parts at the top of :mod:`invlib.papers.d.protocol` (``input_dependent``, ``size_follows_object``,
``entropy_in_band``, ``on_object``, ``gain_shrinks``); :func:`gain_shrink` computes the effect ``gain_shrinks``
judges. :func:`train_seconds` and :func:`record_replicates`: what one replicate (a seed) of a chapter's training
costs, recorded for the sample-size plan (:meth:`invlib.results.Run.replicates`).
"""

from ... import results


def control_not_run(claims: int = 1) -> str:
    """The sentence a chapter of paper D says where its data control did not run (``control_seeds`` 0 or empty):
    its ``claims`` claims are about training, which one seed cannot decide.

    Example
    -------
    >>> control_not_run(2)[:60]
    'This profile does not run it: its claims are about training,'
    """
    it, them = ("the claim is", "it") if claims == 1 else ("its claims are", "them")
    return (f"This profile does not run it: {it} about training, one seed decides nothing about {them} and three "
            "would cost more than the chapter's budget.")

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


def train_seconds(history) -> float:
    """The seconds one model's training took: the sum of its epochs' ``seconds`` in the history
    :func:`invlib.train.fit` returns (each epoch timed with ``time.perf_counter`` inside ``fit``). ``fit(cache=True)``
    keeps the history with the trained weights, so a warm run reads the seconds of the cold run that trained it.

    Example
    -------
    >>> train_seconds([dict(epoch=0, seconds=1.25), dict(epoch=1, seconds=1.5)])
    2.75
    """
    return float(sum(r.get("seconds", 0.0) for r in history))


def record_replicates(run, parameter: str, seconds, claims, note: str = "") -> list[str]:
    """:meth:`invlib.results.Run.replicates` for the family that ``parameter`` sets: ``seconds`` (one per replicate
    run here) and the claims among ``claims`` that ``run`` recorded with a verdict the replicates can move (a claim
    not measurable at this profile rests on no replicate of it). Nothing is recorded without seconds or such a
    claim. Returns the claims recorded.

    Example
    -------
    >>> from invlib.protocol import Claim, Part
    >>> run = results.Run("smoke", name="demo")
    >>> c = Claim("c", "demo", "It helps.", "+3", "Fig. 1", Part("a gain", unit="seed", smallest=1.0, reason="r"))
    >>> _ = run.claim(c, ours=1.0, effects=[1.5])
    >>> record_replicates(run, "seeds", [3.0], ["c", "never recorded"], note="one model a seed")
    ['c']
    >>> run.replicate_costs["seeds"]["seconds"], record_replicates(run, "control_seeds", [], ["c"])
    ([3.0], [])
    """
    on = [c for c in claims if c in run.claims and run.claims[c]["verdict"] != results.NOT_MEASURABLE]
    if len(seconds) and on:
        run.replicates(parameter, [float(s) for s in seconds], on, note=note)
        return on
    return []

# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # S1. Do the measures of invariance agree, and where does invariance come from?
#
# Each part of this book measures invariance its own way. Paper A ({cite}`yan2021encode`) asks whether a linear
# probe on a layer can tell which of two views was transformed more; paper B ({cite}`bouchacourt2021grounding`)
# compares how far a transformation moves an image's embedding with how far other images lie (relative invariance)
# and whether the moves share a direction (equivariance alignment); paper C ({cite}`tensmeyer2016invariance`)
# passes the transformed image's features through the rest of the network, as they are (invariance) or after a
# learned map `M_g` (equivariance), and measures their normalised distance to the untransformed features. A reader
# who wants to measure their own network's invariance needs to know whether these measures agree when they look
# at the **same** models, and which to trust for what. No paper asks. This chapter does, on one set of models,
# with every measure called through its paper's own functions (`invlib.papers.s.agreement`).
#
# **The claims, stated before the run** (none of them is a paper's; each verdict is computed from this run, by the
# test stated in its criterion):
#
# 1. Augmenting with a transformation raises the invariance to it under every measure.
# 2. B's relative invariance and C's invariance accuracy rank the models alike (Spearman's rho above 0.5 for every
#    transformation both have).
# 3. A layer whose features a probe can rank by a transformation (A) is one whose embedding is not invariant to
#    it (B): the probe's accuracy and B's invariance rank the models in opposite orders.
# 4. Accuracy under a transformation, the robustness a practitioner checks first, ranks the models as B's
#    relative invariance does.
# 5. Of the data's variation, augmentation, the architecture and training itself, augmentation moves the
#    invariance to its transformation the most.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
seeds = None  # seeds per training variant and of B7's models at variation 0
transforms = None  # e.g. ["translation", "zoom", "rotation", "brightness"]
levels = None  # paper B's grid levels, 0 first (0-9 in paper B)
n_probe = None  # scenes of B's sweep and of the accuracy under each transformation
n_pairs = None  # scenes whose views train A's probe (as many again test it)
n_fit = None  # scenes C's maps are fitted on
n_eval = None  # scenes C's measures are scored on
variation = None  # with chapter B7's models trained at variation 0
architectures = None  # with chapter B3's ResNet and ViT (trained without augmentation)
augerino = None  # with chapter B6's Augerino model (a learned translation and zoom)
augerino_reg = None  # which of B6's regulariser weights
seed = None

# %%
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import display

from invlib import results
from invlib.papers.s import agreement
from invlib.papers.s import agreement_reports as R

S, run = results.open_chapter(agreement.settings, globals())
members = agreement.models(S)
nets = agreement.train(S, members)
agreement.models_table(members)

# %% [markdown]
# ## The models
#
# One architecture, paper B's small ResNet-18 on `scenes` (Fashion-MNIST objects that vary in position and scale
# on textured backgrounds, a dimmer distractor of another class in half of them), seen as the central 56 px of a
# 64 px scene: chapter B1's recipe and models, trained without augmentation (its fixed central crop), with
# RandomResizedCrop (`standard`), with one transformation each (translation: B1's fixed-size random crop; scale:
# B1's random-size central crop; rotation within ±{glue:md}`s1_rotation`° and brightness factors
# {glue:md}`s1_brightness`, which this chapter trains), {glue:md}`s1_seeds` seed(s) each, and untrained. Chapter
# B7's models trained without augmentation on scenes whose objects do not move or change size (variation 0, as many
# seeds), chapter B3's ResNet and ViT (trained on more scenes, without augmentation; as many seeds, B3's own models
# of those seeds) and chapter B6's Augerino model (B1's recipe with a learned translation and zoom) complete the
# set. Nothing is trained twice: a book build trains every zoo model before the chapters run, and B6 has run its
# Augerino model.

# %% [markdown]
# ## Every measure on every model
#
# For each transformation, each measure that has it, on the embedding the classifier reads (`pre_logits`):
# accuracy under the transformation (paper B's grid, mean over levels {glue:md}`s1_levels` on
# {glue:md}`s1_n_probe` test scenes); A's probe accuracy (trained on the view pairs of {glue:md}`s1_n_pairs`
# training scenes, tested on as many test scenes: 0.5 is chance, 1 means the embedding encodes the transformation);
# B's relative invariance and equivariance alignment (same scenes and levels as the accuracy); C's invariance
# accuracy, invariance L2 and equivariance accuracy (maps fitted on {glue:md}`s1_n_fit` scenes, scored on
# {glue:md}`s1_n_eval`). A does not rank translations or rotations; C has no zoom. C's invariance accuracy on the
# embedding is the accuracy at C's own fixed transforms. The untrained models get the accuracy and B's measures only:
# no claim reads their A or C measures. In the heat map a colour is the model's rank under the measure, bright for
# the most invariant.

# %%
table = agreement.measure(S, nets)
R.plot_measures(table, S)
plt.show()
for t in S.transforms:
    print(t)
    display(R.measure_table(table, t).round(3))

# %% [markdown]
# ### The learned augmentation
#
# Chapter B6's Augerino model (B1's recipe, a learned translation then zoom-in, regulariser weight
# {glue:md}`s1_augerino_reg`) is measured above without its warps, as `augerino 0`: the network it trained. Its
# learned range, and its accuracy (%) with and without the warps on B6's evaluation scenes. B's relative invariance
# of that network: {glue:md}`s1_augerino`.

# %%
pd.Series(agreement.learned_range(S), dtype=float).round(3)

# %% [markdown]
# ## Do the measures agree?
#
# Spearman's rho between every two measures across the {glue:md}`s1_trained` trained models (the untrained ones
# score at chance under every accuracy), with a two-sided permutation p-value. Each rho is oriented so that a
# positive value means the two measures call the same models invariant (A's probe accuracy and C's L2 are
# reversed; the equivariance measures are taken as they are). The p-values are per pair of measures, with no
# correction for the many pairs, and they count the seeds of one variant as independent models: read them as a
# description. The claims below rest instead on intervals that resample whole variants
# ({glue:md}`s1_variants` of them, a model's seeds together) and widen with the number of transformations a claim
# covers (Bonferroni).

# %%
agree, src, facts = R.report(run, S, table, agreement.seed_seconds(nets))
R.plot_agreement(agree, S)
plt.show()
agree.round(3)

# %% [markdown]
# ## Where does invariance come from?
#
# What each factor changes in B's relative invariance to each transformation (mean over levels and seeds): the
# data (no augmentation, scenes at variation 1 against variation 0), augmentation (the transformation's own
# augmentation against none), the architecture (ViT against ResNet, both trained without augmentation on B3's
# scenes) and training itself (trained without augmentation against untrained). `largest` names the factor that
# moved it most.

# %%
R.sources_table(src).round(3)

# %% [markdown]
# ## The claims

# %%
results.glue(facts)
run.claims_table()

# %% [markdown]
# ## What this run shows
#
# - **Augmentation and invariance** ({glue:md}`s1_augmentation_raises_invariance`): on average over the seeds, the
#   model trained with a transformation is more invariant to it than the model trained without augmentation in
#   {glue:md}`s1_raised` (transformation, measure) pairs. Where it is not: {glue:md}`s1_not_raised`.
# - **B against C** ({glue:md}`s1_b_and_c_rank_alike`): {glue:md}`s1_b_and_c_rank_alike_ours`.
# - **A against B** ({glue:md}`s1_probe_finds_what_is_not_invariant`):
#   {glue:md}`s1_probe_finds_what_is_not_invariant_ours`.
# - **Accuracy against B** ({glue:md}`s1_accuracy_tracks_invariance`):
#   {glue:md}`s1_accuracy_tracks_invariance_ours`.
# - **Where invariance comes from** ({glue:md}`s1_augmentation_moves_invariance_most`): the factor that moved B's
#   relative invariance most, per transformation: {glue:md}`s1_augmentation_moves_invariance_most_ours`.
#
# **What to use for what, from this run.** {glue:md}`s1_advice` With {glue:md}`s1_trained` trained models in
# {glue:md}`s1_variants` variants, a correlation's interval must clear 0.5 for every transformation to pass. Claims
# 1 and 5 are about what training does and rest on seeds: {glue:md}`s1_seed_note` Claim 5's architecture part
# pairs B3's ResNet and ViT of each seed with the augmented and plain models of the same seed number.

# %%
run.close()

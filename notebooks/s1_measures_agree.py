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
# test stated in its criterion; the chapter ends with what this run answers). Each is one question, asked over
# every transformation at once:
#
# 1. Augmenting with a transformation raises the invariance to it under every measure (on average over the
#    transformations each measure has).
# 2. B's relative invariance and C's invariance accuracy rank the models alike (Spearman's rho above 0.5, taken
#    within each transformation both have and averaged over them).
# 3. A layer whose features a probe can rank by a transformation (A) is one whose embedding is not invariant to
#    it (B): the probe's accuracy and B's invariance rank the models in opposite orders.
# 4. Accuracy under a transformation, the robustness a practitioner checks first, ranks the models as B's
#    relative invariance does.
# 5. Of the data's variation, augmentation, the architecture and training itself, augmentation moves the
#    invariance to its transformation the most (on average over the transformations).

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
seeds = None  # seeds per model variant (B6's Augerino runs: as many as B6 makes, up to this)
transforms = None  # e.g. ["translation", "zoom", "rotation", "brightness"]
levels = None  # paper B's grid levels, 0 first (0-9 in paper B)
n_probe = None  # scenes of B's sweep and of the accuracy under each transformation
n_pairs = None  # scenes whose views train A's probe (as many again test it)
n_fit = None  # scenes C's maps are fitted on
n_eval = None  # scenes C's measures are scored on
variation = None  # with chapter B7's models trained at variation 0
architectures = None  # with chapter B3's ResNet and ViT (without augmentation and with B3's standard one)
augerino = None  # with chapter B6's Augerino runs (a learned shift, or shift and zoom)
augerino_reg = None  # the weight of the shift-and-zoom run whose learned range is shown
crop_seeds = None  # seeds of chapter D2's crop family measured (InstaAug, its ablations, random crop...; 0: none)
resamples = None  # of the bootstrap intervals over variants
seed = None

# %%
from IPython.display import display

from invlib import pages, results
from invlib.papers.s import agreement
from invlib.papers.s import agreement_reports as R

S, run = results.open_chapter(agreement.settings, globals())
members = agreement.models(S)
nets = agreement.train(S, members)
table = agreement.measure(S, nets)
agree, src, facts = R.report(run, S, table, agreement.seed_seconds(nets))
results.glue(facts)
seeds = f"{S.seeds} seed{'s' * (S.seeds != 1)}"
pages.table(agreement.models_table(members), f"The {facts['s1_models']} models: each variant with its seeds, the "
            "chapter whose recipe trained it, and what it was trained with.", fold=0)

# %% [markdown]
# ## The models
#
# Every model variant the book trains on `scenes` (Fashion-MNIST objects that vary in position and scale on
# textured backgrounds, a dimmer distractor of another class in half of them), {glue:md}`s1_seeds_text` each,
# seen as the central crop of the scene. Paper B's small ResNet-18 in chapter B1's recipe: trained without
# augmentation (its fixed central crop), with RandomResizedCrop (`standard`), with B1's other crops (translation:
# a fixed-size random crop; scale: a random-size central crop; a shift of the central crop, alone and before a
# random-size crop, with and without its aspect ratio), with chapter B2's RandomResizedCrop that draws the crop's
# area from other Beta shapes, with rotation within ±{glue:md}`s1_rotation`° or brightness factors
# {glue:md}`s1_brightness` (the only models this chapter trains), and untrained. Chapter B6's
# {glue:md}`s1_augerino_runs` Augerino runs (B1's recipe with a learned shift, or shift then zoom, at each
# regulariser weight B6 tries), chapter B7's models trained without augmentation and with RandomResizedCrop on
# scenes whose objects do not move or change size (variation 0), and chapter B3's ResNet and ViT (trained on more
# scenes, without augmentation and with B3's standard augmentation) and chapter D2's {glue:md}`s1_crop_models`
# models of paper D's crop family (InstaAug, its ablations, Augerino's crops, a random crop and none, trained on
# whole scenes; measured, as B6's, by the networks they trained, without their learned crops) complete the set:
# {glue:md}`s1_variants` trained variants. Nothing is trained twice: a book build trains every zoo model before
# the chapters run, and B6 and D2 have made their runs.
#
# ## The measures
#
# For each transformation, each measure that has it, on the embedding the classifier reads (`pre_logits`):
# accuracy under the transformation (paper B's grid, mean over levels {glue:md}`s1_levels` on
# {glue:md}`s1_n_probe` test scenes); A's probe accuracy (trained on the view pairs of {glue:md}`s1_n_pairs`
# training scenes, tested on as many test scenes: 0.5 is chance, 1 means the embedding encodes the transformation,
# so the lower, the more invariant); B's relative invariance and equivariance alignment (same scenes and levels as
# the accuracy); C's invariance accuracy, invariance L2 (the lower, the more invariant) and equivariance accuracy
# (maps fitted on {glue:md}`s1_n_fit` scenes, scored on {glue:md}`s1_n_eval`). A does not rank translations or
# rotations; C has no zoom. C's invariance accuracy on the embedding is the accuracy at C's own fixed transforms.
# The untrained models get the accuracy and B's measures only: no claim reads their A or C measures. D2's models
# too: they add variants to the one question these measures answer alone (does the accuracy under a transformation
# track B's invariance?), at a quarter of a full measurement's cost. Every figure below answers one question, and
# draws every measure the same way round: towards more invariance.
#
# ## 1. Does augmenting with a transformation raise the invariance to it?

# %%
pages.show(f"Question 1, per invariance measure (panel) and transformation (row): how much more invariant the model "
           f"trained with the transformation is than the one trained without augmentation (B1's recipe, the same "
           f"seed), each seed a small dot ({seeds}), their mean a diamond; right is more invariant (for A's probe and "
           "C's L2 distance, a fall). The last row is what the claim tests: each seed's gain averaged over the "
           "transformations. Grey line: no change; dashed: the smallest gain the claim counts.",
           R.plot_gains(table, S))

# %% [markdown]
# ## 2–4. Do two measures rank the models alike?
#
# Spearman's rho between two measures across the {glue:md}`s1_trained` trained models (the untrained ones score at
# chance under every accuracy), oriented so that a positive value means the two measures call the same models
# invariant. Each model is ranked among the models under the same transformation (the transformations differ in how
# far they move any model, so raw values pooled over them would rank the transformations), and the claim's number is
# the rho averaged over the transformations that have both measures. Its 95 % interval resamples whole variants
# (those that have both measures: {glue:md}`s1_variants` for the accuracy and B's invariance,
# {glue:md}`s1_variants_full` where A's probe or C's maps are one of the two; a model's seeds together,
# {glue:md}`s1_resamples` resamples), every transformation in each resample, so one interval answers the question;
# the claim asks for rho above 0.5.

# %%
for k, (cid, (x, y)) in enumerate(R.PAIRS.items(), start=2):
    n_models, n_variants = R.pair_counts(table, x, y)
    pages.show(f"Question {k}: do {R.WORDS[x]} (x) and {R.WORDS[y]} (y) rank the models alike? Each of the "
               f"{n_models} trained models measured by both ({n_variants} variants) is a point, "
               "coloured by what it was trained with and marked by the chapter whose recipe trained it, one panel per "
               "transformation; right and up are more invariant (a reversed axis says so). Each panel's title gives "
               "its oriented Spearman's rho, the figure's title their average with its 95 % interval over variants "
               "(the claim).", R.plot_pair(table, S, cid, run.claims))

# %% [markdown]
# ## Do all the measures agree?
#
# The same correlation for every two measures: per transformation, and averaged over them with its 95 % interval
# over variants. The intervals are per pair of measures, with no correction for the many pairs: outside the three
# claimed pairs, read them as a description.

# %%
pages.show(f"Every two measures (a row; in bold the three pairs of questions 2 to 4): Spearman's rho across the "
           f"{facts['s1_trained']} trained models for each transformation (a colour) and their average with its 95 % "
           f"interval over the {facts['s1_variants']} variants (black), oriented so that positive means both call the "
           "same models invariant (A's probe accuracy and C's L2 reversed, the equivariance measures as they are). "
           "Dashed: 0.5, the claims' boundary.", R.plot_agreement(agree, S))
pages.table(R.agreement_table(agree), "The numbers of the figure: oriented Spearman's rho per pair of measures and "
            "transformation, and their average with its 95 % interval over variants.", fold=0)

# %% [markdown]
# ## 5. Where does invariance come from?
#
# What each factor changes in B's relative invariance to each transformation (mean over levels and seeds): the
# data (no augmentation, scenes at variation 1 against variation 0), augmentation (the transformation's own
# augmentation against none), the architecture (ViT against ResNet, both trained without augmentation on B3's
# scenes) and training itself (trained without augmentation against untrained). The claim compares the sizes of
# these changes, seed by seed, averaged over the transformations.

# %%
pages.show(f"Question 5. Left: the change each factor (a row) makes in B's relative invariance to each transformation "
           f"(a colour), mean over {seeds}; right of the grey line the factor makes the model more invariant. Right: "
           "what the claim tests, how far the size of augmentation's change is ahead of each other factor's, "
           "averaged over the transformations, each seed a dot and their mean a diamond; dashed: the smallest lead "
           "that matters.", R.plot_sources(src, R.most_effects(table, S)))
pages.table(R.sources_table(src), "The numbers of the figure, and the factor that moved each the most.", fold=0)

# %% [markdown]
# ### The learned augmentation
#
# Chapter B6's Augerino runs are measured above without their warps: the networks they trained. The one with a
# learned shift then zoom-in at regulariser weight {glue:md}`s1_augerino_reg` (seed 0): its learned range, and its
# accuracy with and without the warps on B6's evaluation scenes, are below. B's relative invariance of that
# network, mean over its seeds: {glue:md}`s1_augerino`.

# %%
learned = R.learned_table(agreement.learned_range(S))
if len(learned):
    display(pages.table(learned, "What chapter B6's Augerino model learned, and its accuracy with and without it."))

# %% [markdown]
# ## The numbers behind the figures
#
# Every measure for each transformation, a row per group of models (their seeds averaged; each model's own values
# are in the chapter's JSON). Click a table to open it.

# %%
for t in S.transforms:
    display(pages.table(R.model_means(table, t), f"{t}: every measure, mean over {seeds} per group of models.",
                        fold=0))

# %% [markdown]
# ## The claims

# %%
run.claims_table()

# %% [markdown]
# ## What the synthesis answers
#
# None of these questions is a paper's: they ask what the papers' measures say together. This run decides
# {glue:md}`s1_decided`.
#
# 1. **Does augmenting with a transformation raise the invariance to it, under every measure?**
#    {glue:md}`s1_answer_augmentation_raises_invariance`. Transformation by transformation, on average over the
#    seeds, the model trained with a transformation was the more invariant one in {glue:md}`s1_raised`
#    (transformation, measure) pairs; the exceptions: {glue:md}`s1_not_raised`.
# 2. **Do B's relative invariance and C's invariance accuracy rank the models alike?**
#    {glue:md}`s1_answer_b_and_c_rank_alike`. Spearman's rho: {glue:md}`s1_rhos_b_and_c_rank_alike`.
# 3. **Is a layer a probe can rank by a transformation one whose embedding is not invariant to it?**
#    {glue:md}`s1_answer_probe_finds_what_is_not_invariant`. Spearman's rho of A's probe accuracy (reversed) and B's
#    relative invariance: {glue:md}`s1_rhos_probe_finds_what_is_not_invariant`.
# 4. **Does accuracy under a transformation rank the models as B's relative invariance does?**
#    {glue:md}`s1_answer_accuracy_tracks_invariance`. Spearman's rho: {glue:md}`s1_rhos_accuracy_tracks_invariance`.
# 5. **Does augmentation move the invariance to its transformation more than the data, the architecture or training
#    do?** {glue:md}`s1_answer_augmentation_moves_invariance_most`. The factor that moved B's relative invariance
#    most, transformation by transformation: {glue:md}`s1_largest`.
#
# Questions 1 and 5 are about what training does: they compare models trained from the same seed, so they need
# several seeds per variant (question 5's architecture part pairs B3's ResNet and ViT of a seed with B1's models of
# the same seed number). Questions 2 to 4 rank models: they need many variants that differ in invariance, each
# variant's seeds counting once, which is why this chapter measures every variant the book's other chapters have
# trained.

# %%
run.close()

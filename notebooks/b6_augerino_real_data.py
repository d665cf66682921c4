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
# # B6. Augerino on real data
#
# App. G of {cite}`bouchacourt2021grounding`. Hand-tuned crops work (chapter B1); can a method that *learns* its
# augmentation find them? Augerino {cite}`benton2020augerino` (chapter E1, `invlib.learned.augerino`) learns
# the widths of uniform distributions over affine coefficients by gradient descent, with a regulariser
# `-λ‖θ‖` that pushes the widths out. The paper runs it on ImageNet on top of the central crop, with three
# changes that `invlib.learned.augerino` offers as options:
#
# - **per-coordinate shut-off**: each coordinate's regulariser stops once its width reaches a cap
#   ({glue:text}`translate_cap:.0f` % translation; RRC's largest zoom, `1/√0.08` = {glue:text}`zoom_cap:.2f`x),
#   and restarts if it falls back;
# - **translation, then zoom**: x and y translation and the zoom are separate warps applied in that order;
# - **zoom in only**: the scale coefficient is drawn on one side, so objects only get larger, as in RRC.
#
# The augmentation's learning rate is a tenth of the network's; one copy per image in training,
# {glue:text}`copies` at evaluation. The widths start at their caps, as in the authors' code. Each model is
# evaluated with Augerino (Tables A3, A5) and without it (Tables A4, A6).

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
dataset = None  # scenes, fashion_mnist_color, cifar10 or imagenet (the paper's); "folder" with root
root = None
arch = None
regs = None  # regulariser weights (the paper: 0.01, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0)
scale_regs = None  # the weights of translation then scale (None: regs)
augerino_seeds = None
n_train = None
epochs = None
seed = 0

# %%
from invlib import pages, results
from invlib.papers.b import rrc as B
from invlib.papers.b import rrc_reports as R

S, run = results.open_chapter(B.settings, globals())

# %% [markdown]
# ## Training
#
# One Augerino model per (group, regulariser weight, seed), on the same training images, recipe and epochs as
# chapter B1's models: translation at the weights `regs`, translation then scale at `scale_regs` (the paper runs
# both groups at all seven weights; this run's weights are in its settings at the end of the page). The baselines
# are B1's models without augmentation, with T.(30%), and with T.(30%) + RandomSizeCenterCrop without
# aspect-ratio change (loaded from the zoo, their predictions read from B1's cache); the one without augmentation
# at every Augerino seed too, which Table A3 pairs by seed. Every model is evaluated on
# the same first `n_augmented` evaluation images.

# %%
ds = B.augmented_eval_images(S)
runs = B.train_augerino(S, ds)
base = B.evaluate(B.train_b6_baselines(S), S).head(len(ds))
pages.table(R.table_1a_page(R.table_1a(base)), f"The baselines, chapter B1's models, on the same {len(ds):,} "
            f"evaluation images: top-1 on the central crop, the mean over B1's {S.seeds} seeds (without augmentation "
            f"over {len(base.preds[B.NONE])}: Table A3 pairs it with every Augerino seed).")

# %% [markdown]
# ## Tables A3-A6: accuracy and learned bounds per regulariser weight
#
# Top-1 with Augerino at evaluation ({glue:text}`copies` copies of each image) and with the network alone; the
# learned bounds as the largest translation in % of the image side and the largest zoom factor.

# %%
tables = R.augerino_tables(runs)
pages.table(R.augerino_page(tables), f"Tables A3-A6: per group and regulariser weight, the mean over "
            f"{S.augerino_seeds} seed{'s' * (S.augerino_seeds > 1)} of top-1 with Augerino on and off at "
            "evaluation, and of the learned bounds.")

# %% [markdown]
# ## Learned bounds (Fig. A8, A9)

# %%
R.plot_bounds(tables, S)
pages.show(f"The bounds Augerino learns against the regulariser weight (log axis), one panel per group, mean over "
           f"{S.augerino_seeds} seed{'s' * (S.augerino_seeds > 1)}: the largest x- and y-translation (left axis, % "
           f"of the side) and, for translation then scale, the largest zoom (right axis). Dashed: the translation "
           f"cap ({S.translate_cap:.0%}); dotted: the zoom cap ({S.zoom_cap:.2f}x). The widths start at their caps; "
           "above its cap a coordinate's regulariser is off, so only the classification loss moves it.")

# %% [markdown]
# ## Paper vs this run

# %%
evidence = R.report_b6(run, S, runs, base)
results.glue(dict(R.b6_numbers(S, runs, base, evidence), copies=S.copies))
run.claims_table()

# %% [markdown]
# ## What the results say
#
# The paper finds that on ImageNet the regulariser weight decides the bounds (unlike on the synthetic data of
# the Augerino paper), that learned translation helps a little, and that adding zoom helps less than
# translation alone, with Augerino keeping only x-translation. In this run, translation alone ends at
# {glue:text}`bound_lo:.1f` % of the side on average over x and y at weight {glue:text}`reg_lo:g` and at
# {glue:text}`bound_hi:.1f` % at weight {glue:text}`reg_hi:g`; its best weight, {glue:text}`best:g`, reaches
# {glue:text}`best_on:.1f` % top-1 with Augerino at evaluation, against {glue:text}`none_top1:.1f` % for the
# models without augmentation of the same seeds. Translation then scale, at its best weight
# ({glue:text}`best_ts:g`), keeps {glue:text}`ts_tx:.1f` % x-translation, {glue:text}`ts_ty:.1f` % y-translation
# and a zoom of {glue:text}`ts_zoom:.2f`x.
#
# At the `cpu` profile the images are `scenes`, whose objects sit at varied positions and sizes, as ImageNet's
# do: a learned translation can then show the model an object where test scenes also have it, which it could not
# on the centred garments of `-p dataset=fashion_mnist_color` (there the classification loss pulls every width in
# and the regulariser alone decides where it ends). Nothing in scenes prefers horizontal to vertical shifts (the
# objects are placed the same way on both axes, and a horizontal flip is not a translation), so the paper's
# x-only translation has no reason to appear here. A few epochs at a tenth of the network's learning rate also
# limit how far a width can travel from its starting cap.
#
# Each claim is about what training does, so it is tested per seed: Augerino's run of seed k against chapter B1's
# model without augmentation of seed k (the same starting weights and training images), and across the weights of
# one seed. {glue:md}`open_sentence`

# %%
run.close()

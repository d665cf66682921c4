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
# # B2. The shape of RandomResizedCrop's scale distribution
#
# Section 2.2 and App. C of {cite}`bouchacourt2021grounding`. RandomResizedCrop draws the crop's area fraction
# `s` uniformly in `[0.08, 1]`. Does only that range matter, or also how `s` is spread over it? The paper keeps
# the range and draws `s = 0.08 + 0.92 X` with `X ~ Beta(1, shape)` (the authors' code): shape 1 is the uniform,
# small shapes put `s` near 1 (little zoom), large shapes near 0.08 (strong zoom). An object in a crop of area
# fraction `s` appears `1/√s` times larger than in the whole image, so the shape trades the *variance* of the zoom
# `1/s` (Table A1), which is what teaches scale invariance, against the *mismatch* between training crops and the
# central evaluation crop (Touvron et al.'s train/test discrepancy of apparent object sizes).

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
dataset = None  # scenes, fashion_mnist_color, cifar10 or imagenet (the paper's); "folder" with root
root = None
arch = None
size = None  # the side the models see (224 in the paper)
beta_shapes = None  # e.g. [0.1, 0.5, 1.0, 2.0, 3.0, 10.0] (the paper's)
beta_seeds = None  # seeds per shape
n_train = None
epochs = None
executor = None  # None, "local" or "slurm"
seed = 0

# %%
from invlib import pages, results
from invlib.papers.b import rrc as B
from invlib.papers.b import rrc_reports as R

S, run = results.open_chapter(B.settings, globals())

# %% [markdown]
# ## The shapes (Fig. A1) and the variance of the zoom (Table A1)
#
# Var(1/s) is exact here (by quadrature, `invlib.papers.b.rrc.beta_moments`), for the paper's six shapes
# whichever shapes this profile trains, beside the paper's own Monte-Carlo estimate. The size ratio is how much
# larger objects appear, on average, in training crops than in the central evaluation crop: `(224/256) E[1/√s]`.

# %%
R.plot_beta_shapes(S)
pages.show("The density of the crop's area fraction s under each Beta shape of Table A1 (histograms of 200,000 "
           "draws), all on RRC's range [0.08, 1]. Shape 1 is RandomResizedCrop's uniform; smaller shapes pile s "
           "up near 1 (little zoom), larger ones near 0.08 (strong zoom).")
beta = B.beta_table(S)
pages.table(R.table_a1_page(beta), f"Table A1: the variance of the zoom 1/s per shape, exact and the paper's "
            f"estimate, the mean area fraction and the train/test size ratio; this profile trains shapes "
            f"{', '.join(f'{a:g}' for a in S.beta_shapes)}.")

# %% [markdown]
# ## Table 1b: top-1 per shape
#
# One RRC model per trained shape and seed (the settings' `beta_shapes`, `beta_seeds`), trained as the models of
# chapter B1 (shape 1 *is* B1's RRC family, loaded from the zoo), evaluated on the central crop.

# %%
trained = B.train_beta(S)
ev = B.evaluate(trained, S)
t1b = R.table_1b(ev).join(beta[["var_inv_s", "size_ratio"]])
R.plot_table_1b(t1b)
pages.show(f"Top-1 on the central crop against the Beta shape (log axis): mean and standard error over "
           f"{S.beta_seeds} seeds, {S.dataset} at {S.size} px. Grey squares: Var(1/s) of each shape (right axis). "
           "The paper finds an inverted U on ImageNet, with shape 1 on top.")
pages.table(t1b.rename(columns={"top1": "top-1 (%)", "sem": "SEM", "var_inv_s": "Var(1/s)",
                                "size_ratio": "train/test size ratio"}), "Table 1b: top-1 per trained shape.")

# %% [markdown]
# ## Paper vs this run

# %%
evidence = R.report_b2(run, beta, ev, S.seeds)  # shape 1 at B1's seeds is B1's RRC model
results.glue(R.b2_numbers(beta, evidence))
run.claims_table()

# %% [markdown]
# ## What the results say
#
# Table A1 is arithmetic and does not depend on the profile: {glue:md}`a1_sentence`. The paper's values are
# Monte-Carlo estimates, and the farthest from the exact one is shape {glue:text}`a1_shape:g`'s,
# {glue:text}`a1_paper:.3f` against {glue:text}`a1_exact:.3f`. Of the train/test size ratio,
# {glue:md}`ratio_sentence`.
#
# Table 1b's claims are about ImageNet after 150 epochs: there, shape 1 wins and both ends lose. At the `cpu`
# profile the models see `scenes`, whose objects vary in size as ImageNet's do, so a strong zoom can show an
# object at a size the test scenes also have; the train/test mismatch that large shapes create still competes
# with that. Each ordering is tested per seed, paired by seed, with an interval over seeds.
# {glue:md}`t1b_sentence` {glue:md}`open_sentence` `-p dataset=fashion_mnist_color` reruns the shapes on centred
# garments.

# %%
run.close()

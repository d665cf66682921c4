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
# # E3. Does AugNet make a small trunk as invariant as a large one?
#
# Section 4.3 of {cite}`rommel2022augnet`. The paper claims that data augmentation makes a model only as invariant
# as its capacity allows, while AugNet builds the invariance in whatever the trunk. The test uses the sinusoids of
# chapter E2, whose true symmetry is a frequency shift of up to ±{glue:text}`e3_true:g` Hz, and small MLP trunks of
# several widths and depths. Three models are trained per trunk: the trunk alone, the trunk with the oracle
# augmentation (random shifts of ±{glue:text}`e3_true:g` Hz), and AugNet around the trunk. Invariance is the paper's
# Eq. 4 (`invlib.metrics.invariance`) on the pre-softmax outputs under a random shift of ±{glue:text}`e3_true:g` Hz:
# 1 minus the cosine distance between the outputs for `x` and `T(x)`, divided by the distance to another signal's
# output. The median over the {glue:text}`e3_n_test:d` test signals is reported, with the quartiles.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
widths = None  # hidden units per layer of the MLP trunks (the paper does not give its grid)
depths = None  # hidden layers of the MLP trunks
epochs = None  # training epochs (the paper: 50)
reg = None  # AugNet regulariser strength (the paper: 0.8)
seeds = None  # training seeds of every trunk, each its own initialisation and draws (the paper shows one run)
seed = 0  # data seed

# %%
from invlib import pages, results
from invlib.papers.e import experiments as E
from invlib.papers.e import experiments_reports as R

S, run = results.open_chapter(E.settings, globals(), experiment="capacity")
train, test = E.sinusoid_data(S)
results.glue(R.capacity_numbers(S))

# %% [markdown]
# ## Training the grid
#
# The grid crosses widths of {glue:md}`e3_widths` hidden units per layer with depths (hidden layers) of
# {glue:md}`e3_depths`: {glue:text}`e3_trunks:d` trunks, each trained from {glue:md}`e3_seeds_n` for
# {glue:text}`e3_epochs:d` epochs on {glue:text}`e3_n_train:d` signals. Training uses Adam at a learning rate of
# {glue:text}`e3_lr:g` with a weight decay of {glue:text}`e3_wd:g` on every parameter (as the authors' optimiser),
# in batches of {glue:text}`e3_batch:d`. AugNet has one layer with `λ` = {glue:text}`e3_reg:g` and a starting
# magnitude of {glue:text}`e3_mu0:g`, and averages {glue:text}`e3_copies:d` copies at evaluation, as in the paper.
# The layer offers frequency shift alone, as in the authors' capacity runs (the paper's text does not say): the
# question here is whether a learned augmentation makes any trunk invariant, not which operation a layer selects
# (chapter E2). The oracle augmentation is `invlib.papers.e.experiments.true_shift`; the three models of a trunk
# start from the same weights.

# %%
with R.quietly():
    res = E.train_capacity_grid(S, train, test)

# %% [markdown]
# ## Invariance and accuracy against trunk size (Figure 6)

# %%
seeds = f"{len(S.seeds)} seed" + "s" * (len(S.seeds) > 1)
R.plot_capacity(res)
pages.show(f"Left: the median invariance (Eq. 4, with its quartiles over the {S.n_test} test signals) to a random "
           f"shift of up to ±{E.TRUE_HZ:g} Hz, against the trunk's number of parameters; right: the test accuracy. "
           f"One colour per model; each point is a trunk, the mean over {seeds}. 1 means the shift "
           "leaves the output unmoved, 0 that it moves it as far as another signal does. Look for AugNet near 1 "
           "for every trunk, and the oracle-augmented trunk rising with size, as in the paper.")

# %% [markdown]
# ## Paper vs this run

# %%
table, authors, facts = R.report_capacity(run, S, res)
results.glue(facts)
shown = table[["median", "acc"]].rename(columns={"median": "invariance", "acc": "test accuracy",
                                                  "baseline": "trunk alone"})
shown.index = [f"depth {d}, width {w}, {p:,} parameters" for d, w, p in shown.index]
pages.table(shown, f"Each trunk: the median invariance and the test accuracy of each model, the mean over {seeds}.")

# %% [markdown]
# ### The authors' code on the same trunks
#
# Their `experiments/sinusoids/train_augnet.py` (MLP trunk, frequency shift alone, {glue:text}`e3_paper_copies:d`
# copies, a starting magnitude of {glue:text}`e3_paper_mu0:g`, `λ` = {glue:text}`e3_paper_reg:g`) was run on this
# machine for trunks where our AugNet's range collapsed. Does their range collapse too? {glue:md}`e3_authors`.

# %%
pages.table(authors, "The authors' code and ours on the same trunks, one row per trunk, with the seeds run there: "
            "the learned shift range and the median invariance of each seed.") if len(authors) else None

# %%
run.claims_table()

# %% [markdown]
# ## What this run shows
#
# - AugNet's median invariance spans {glue:md}`e3_aug` across the trunks (the means over the seeds). The paper's
#   claim, as declared, asks each trunk's median to clear {glue:text}`e3_boundary:g` on its seeds. The shift ranges
#   AugNet learned span {glue:md}`e3_shift` (the true range is {glue:text}`e3_true:g` Hz).
# - The oracle-augmented trunk scores {glue:md}`e3_orc`; the paper's claim that it grows with capacity asks the
#   largest trunk to beat the smallest by at least {glue:text}`e3_grow_smallest:g` on each seed.
# - Each claim is about what training does, so it is read over the seeds of each trunk: {glue:md}`e3_seeds_n` here,
#   where a verdict needs at least {glue:text}`e3_n_min:d`. AugNet's score is that of the averaged model
#   ({glue:text}`e3_copies:d` copies), so it depends on the learned range more than on the trunk.
# - On {glue:md}`e3_zero` runs (trunks × seeds) the learned range fell below {glue:text}`e3_collapsed:g` Hz: the
#   magnitude reached 0 in the first epochs, where the regulariser `‖w ⊙ μ‖₂` gives it no pull back. Those AugNets
#   then train without augmentation, as the trunk alone does.
#
# The paper's text does not give its grid; the authors' script uses 1 or 2 units per layer, with 1 to 3 layers.

# %%
run.close()

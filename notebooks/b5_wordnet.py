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
# # B5. Do related classes vary in related ways?
#
# Section 4.5 and App. E.2-E.3 of {cite}`bouchacourt2021grounding`. Chapter B4 ranked, per class, the
# transformations that make same-class pairs more similar. Here each class's ranking is reduced to a ranking
# of the 14 operation types (an operation type's rank is the first place one of its entries takes), and two
# classes are compared by the Spearman correlation of their rankings and by the overlap (IoU) of their top-5
# and top-25 entries. The paper relates that to the classes' similarity in WordNet (Wu-Palmer,
# Leacock-Chodorow and path similarity, `invlib.wordnet`): do classes close in WordNet vary in similar ways?

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
dataset = None  # a dataset with WordNet synsets per class (scenes, fashion_mnist_color, cifar10, imagenet)
root = None
models = None  # {arch: {variant: spec}}
n_search = None
pairs_per_class = None
seed = 0

# %%
import pandas as pd

from invlib import pages, results
from invlib.papers.b import authors_code as AC
from invlib.papers.b import grounding as G
from invlib.papers.b import grounding_reports as GR
from invlib.papers.b import rrc
from invlib.papers.b import rrc_reports as RR

S, run = results.open_chapter(G.settings, globals())
x, labels, classes, synsets, boxes = G.search_images(S)
searches = G.run_searches(S, x, labels, classes)  # chapter B4's search, from the cache when B4 has run
pages.table(pd.DataFrame({"class": classes, "WordNet synset": synsets if synsets else "—"}),
            f"The {len(classes)} classes of `{S.dataset}` and the WordNet synset each is compared by.")

# %% [markdown]
# ## WordNet similarity against transformation similarity (Fig. 4, App. E.3)
#
# One point per class pair; in red, the mean ranking correlation within quartile bins of WordNet similarity,
# ± its standard error. The title gives Spearman's ρ over the pairs and its Mantel p-value: the pairs of a few
# classes are not independent (each class is in every one of its pairs), so the classes are permuted, rows and
# columns of one matrix together, not the pairs. The claim is decided by a bootstrap over classes (whole classes
# resampled), and it is a claim about this run's one model without augmentation, whose search ranks the
# transformations. The classes of a folder of your own have no synsets (a folder whose class folders are WordNet
# ids can be read as `-p dataset=imagenet`): the WordNet checks are then not measurable, and only the rotation
# part below is tested.

# %%
reports = G.wordnet_correlations(searches, synsets, seed=S.seed)
pairs = len(next(iter(reports.values()))["pairs"]) if reports else 0
results.glue(dict(b5_classes=len(classes), b5_pairs=pairs))
if reports:
    pages.show(f"Each of the {pairs} pairs of classes: the Spearman correlation of the two classes' rankings of "
               "operation types (the search of the model without augmentation) against their WordNet similarity, "
               "one panel per WordNet measure; red: the mean in each quartile of WordNet similarity ± its standard "
               "error. Above each panel, Spearman's ρ over the pairs and its Mantel p-value.",
               GR.plot_wordnet(reports))

# %%
pages.table(GR.wordnet_table(reports), f"Per WordNet measure, over the {pairs} class pairs: Spearman's ρ of WordNet "
            "similarity with the ranking correlation and its Mantel p-value, and ρ with the overlap (IoU) of the two "
            "classes' top 5 and top 25 entries.")

# %%
pages.table(GR.closest_pairs(reports), "The 10 class pairs closest in WordNet (Wu-Palmer): their ranking "
            "correlation, the overlap (IoU) of their top 5 and top 25 entries, and their quartile bin.")

# %% [markdown]
# The WordNet similarities and the ranking correlations against the authors' own functions
# (`wordnet_analysis/wordnet_correlation.py`, run by `benchmarks/authors/grounding_runs.py` on this book's classes
# and one fixed search; their numbers are in `invlib/papers/b/authors_grounding.json`):

# %%
AC.report(run, "wordnet")

# %% [markdown]
# ## Rotation and textiles (section 4.5, App. E.2)
#
# In the paper, rotation tops the ranking of textile-like ImageNet classes (velvet, wool, handkerchief,
# envelope), and rotations fill the top 10 (class, transformation) combinations by *weighted boost* for the
# standard-augmentation ResNet-18. The weighted boost is computed as the authors' code does: the mean percent gain
# over the pairs an entry brings closer, times their share, i.e. the sum of the gains over all pairs divided by
# their number. It never goes below zero, so an entry that helps a few pairs a lot and hurts the rest can still
# rank high. Which of this run's classes behave like that?

# %%
rot = {v: G.rotation_classes(searches, v) for v in searches}
variant = "standard" if "standard" in rot else "none"
pages.table(pd.DataFrame(rot[variant]["top10"], columns=["class", "entry", "weighted boost"]),
            f"The 10 (class, entry) combinations with the largest weighted boost, for the ResNet trained with"
            f"{' standard' if variant == 'standard' else 'out'} augmentation: the sum of the percent gains over a "
            "class's pairs divided by their number.")

# %% [markdown]
# ## Are the classes that RandomResizedCrop hurts related? (App. D.1)
#
# Chapter B1 lists the classes that RRC consistently hurts against no augmentation. The paper finds no pattern
# in their labels and confirms it with WordNet: their similarity to each other is no higher than to the classes
# RRC helps or to the rest. Here the same check, on B1's models (loaded from the zoo).

# %%
hurt, d1 = rrc.hurt_relatedness(S)
pages.table(pd.DataFrame({"among the hurt classes": d1["among"], "among them, self-pairs included":
                          d1["among_with_self"], "hurt with helped classes": d1["with_helped"],
                          "hurt with the other classes": d1["with_rest"]}, index=["Wu-Palmer similarity"]),
            "The mean WordNet similarity (Wu-Palmer) of the classes RRC hurts in chapter B1: to each other, and to "
            "the classes it helps and to the rest.")

# %%
evidence = GR.report_wordnet(run, reports, searches)
evidence["appD1/hurt_classes_unrelated"] = RR.report_hurt_wordnet(run, d1)
run.log("rotation_top_classes", {v: r["by_boost"] for v, r in rot.items()})
results.glue(RR.b5_sentences(evidence))
run.claims_table()

# %% [markdown]
# ## Reading the results
#
# With the {glue:text}`b5_classes` Fashion-MNIST classes of `scenes` there are only {glue:text}`b5_pairs` class
# pairs, and their WordNet similarities take few distinct values (all are garments, footwear or a bag), so this test
# has far less power than the paper's 10,000 pairs of ImageNet classes. {glue:md}`fig4_sentence`
# {glue:md}`e2_sentence` App. D.1 compares the few classes RRC hurts, and needs RRC to help overall over at least
# three seeds of chapter B1 and three hurt classes. {glue:md}`d1_sentence`
# On `gpu` and `paper`, pass an ImageNet folder (`-p root=...`); its class folders are WordNet ids, which
# `invlib.data` maps to synsets.

# %%
run.close()

"""invlib.wordnet: WordNet 3.0 built offline from the Debian packages, checked against NLTK's own values."""

import gzip
import math
from pathlib import Path

import numpy as np
import pytest

from invlib import data, wordnet

HAVE_DEBIAN = all((wordnet.DEBIAN_DIR / f).is_file() for f in wordnet._REQUIRED)


@pytest.fixture(scope="module")
def wn():
    try:
        return wordnet.ensure()
    except FileNotFoundError as e:
        pytest.skip(str(e))


def _fresh_nltk_wordnet():
    from nltk.corpus.reader import CorpusReader, WordNetCorpusReader
    from nltk.corpus.util import LazyCorpusLoader

    omw = LazyCorpusLoader("omw-1.4", CorpusReader, r".*/wn-data-.*\.tab", encoding="utf8")
    return LazyCorpusLoader("wordnet", WordNetCorpusReader, omw)


@pytest.mark.slow  # loads WordNet (about 5 s, once for the module): make test runs it
def test_ensure_returns_loaded_nltk_reader_and_caches(wn, monkeypatch):
    import nltk.corpus
    from nltk.corpus.reader import WordNetCorpusReader

    assert isinstance(wn, WordNetCorpusReader) and wn is nltk.corpus.wordnet
    assert wn.get_version() == "3.0" and len(wn._lexnames) == 45

    def locate_again():
        raise AssertionError("ensure() looked for WordNet again instead of returning the reader it has")

    monkeypatch.setattr(wordnet, "_locate", locate_again)
    assert wordnet.ensure() is wn


@pytest.mark.skipif(not HAVE_DEBIAN, reason="Debian wordnet-base / wordnet-sense-index not installed")
def test_built_dir_holds_real_copies_and_lexnames(tmp_path):
    root = wordnet.build_from_debian(tmp_path)
    assert root == tmp_path / "corpora" / "wordnet"
    for f in wordnet._REQUIRED + ("cntlist.rev",):
        p = root / f
        assert p.is_file() and not p.is_symlink()
        assert p.stat().st_size == (wordnet.DEBIAN_DIR / f).stat().st_size
        assert p.stat().st_mode & 0o022 == 0  # NLTK refuses files others may write
    lines = (root / "lexnames").read_text().splitlines()
    assert len(lines) == 45 and lines[0] == "00\tadj.all\t3" and lines[44] == "44\tadj.ppl\t3"
    assert lines[3] == "03\tnoun.Tops\t1" and lines[29] == "29\tverb.body\t2" and lines[2] == "02\tadv.all\t4"
    man = Path("/usr/share/man/man5/lexnames.5WN.gz")
    if man.is_file():  # the man page's table: number, name, description
        table = [ln.split("\t") for ln in gzip.open(man, "rt").read().splitlines() if ln[:2].isdigit()]
        assert [(n, name.strip()) for n, name, *_ in table] == [tuple(ln.split("\t")[:2]) for ln in lines]
    # idempotent, atomic (no temporary folders left), and a broken folder gets rebuilt
    assert wordnet.build_from_debian(tmp_path) == root
    assert [p.name for p in root.parent.iterdir()] == ["wordnet"]
    (root / "data.noun").write_text("")
    assert wordnet.build_from_debian(tmp_path) == root and (root / "data.noun").stat().st_size > 10**7
    with open(root / "data.verb", "r+b") as f:  # truncated
        f.truncate(1000)
    assert wordnet.build_from_debian(tmp_path) == root
    assert (root / "data.verb").read_bytes() == (wordnet.DEBIAN_DIR / "data.verb").read_bytes()
    assert [p.name for p in root.parent.iterdir()] == ["wordnet"]
    assert wordnet.build_from_debian(tmp_path / "x", source=tmp_path / "nothing") is None


@pytest.mark.slow  # loads WordNet (about 5 s, once for the module): make test runs it
def test_session_build_is_in_the_cache(wn):
    root = Path(wn.root.path)
    if root.parent.parent != wordnet.cache_dir("nltk_data"):
        pytest.skip(f"NLTK's own wordnet corpus is installed at {root}")
    assert all(not (root / f).is_symlink() for f in wordnet._REQUIRED)
    assert len((root / "lexnames").read_text().splitlines()) == 45


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_DEBIAN, reason="Debian wordnet-base / wordnet-sense-index not installed")
def test_ensure_is_not_fooled_by_a_broken_corpus(tmp_path, monkeypatch, wn):
    import nltk
    import nltk.corpus

    broken = tmp_path / "nltk_data" / "corpora" / "wordnet"
    broken.mkdir(parents=True)
    (broken / "lexnames").write_text("garbage\n")
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "nltk_data")])
    monkeypatch.setattr(nltk.corpus, "wordnet", _fresh_nltk_wordnet())
    monkeypatch.setattr(wordnet, "_READER", None)
    monkeypatch.setenv("INVLIB_CACHE", str(tmp_path / "cache"))
    fixed = wordnet.ensure()
    assert Path(fixed.root.path) == tmp_path / "cache" / "nltk_data" / "corpora" / "wordnet"
    assert fixed.synset("dog.n.01").wup_similarity(fixed.synset("cat.n.01")) == pytest.approx(6 / 7)
    assert nltk.data.path[0] == str(tmp_path / "cache" / "nltk_data")


@pytest.mark.slow  # loads WordNet (about 5 s, once for the module): make test runs it
def test_ensure_error_names_three_ways(tmp_path, monkeypatch, wn):
    import nltk
    import nltk.corpus

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "empty")])
    monkeypatch.setattr(nltk.corpus, "wordnet", _fresh_nltk_wordnet())
    monkeypatch.setattr(wordnet, "_READER", None)
    monkeypatch.setattr(wordnet, "DEBIAN_DIR", tmp_path / "no-debian")
    monkeypatch.setenv("INVLIB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("NLTK_DATA", raising=False)
    with pytest.raises(FileNotFoundError) as e:
        wordnet.ensure()
    msg = str(e.value)
    assert "apt-get install wordnet-base wordnet-sense-index" in msg
    assert "NLTK_DATA" in msg and "nltk_data" in msg and "nltk.download('wordnet')" in msg


@pytest.mark.slow  # loads WordNet (about 5 s, once for the module): make test runs it
def test_synset_lookup_and_clear_errors(wn):
    assert wordnet.synset("dog.n.01").name() == "dog.n.01"
    assert wordnet.synset("tee_shirt.n.01").name() == "jersey.n.03"  # any lemma resolves to the synset
    with pytest.raises(ValueError, match="Unknown WordNet synset 'dgo.n.01'.*dog.n.01"):
        wordnet.synset("dgo.n.01")
    with pytest.raises(ValueError, match="only has 7 senses.*Synsets of 'dog': dog.n.01, frump.n.01"):
        wordnet.synset("dog.n.99")
    with pytest.raises(ValueError, match="Unknown WordNet synset 'dog'"):
        wordnet.synset("dog")


@pytest.mark.slow  # loads WordNet (about 5 s, once for the module): make test runs it
def test_wu_palmer_matches_nltk(wn):
    m = wordnet.similarity_matrix(["dog.n.01", "cat.n.01"])
    nltk_value = wn.synset("dog.n.01").wup_similarity(wn.synset("cat.n.01"))
    assert m[0, 1] == nltk_value == pytest.approx(0.857, abs=1e-3)  # 2 * 12 / (2 * 12 + 2 + 2) = 6/7
    path = wordnet.similarity_matrix(["dog.n.01", "cat.n.01"], "path")
    assert path[0, 1] == pytest.approx(0.2)  # dog - canine - carnivore - feline - cat: 4 edges
    lch = wordnet.similarity_matrix(["dog.n.01", "cat.n.01"], "lch")
    assert lch[0, 1] == pytest.approx(-math.log(5 / 38)) and lch[0, 0] == pytest.approx(math.log(38))


@pytest.mark.parametrize("metric", wordnet.METRICS)
@pytest.mark.slow  # loads WordNet (about 5 s, once for the module): make test runs it
def test_matrices_symmetric_with_right_diagonal(wn, metric):
    m = wordnet.similarity_matrix(data.FASHION_MNIST_SYNSETS, metric)
    assert m.shape == (10, 10) and m.dtype == np.float64 and np.allclose(m, m.T)
    diag = {"wup": 1.0, "path": 1.0, "lch": math.log(38)}[metric]  # lch: -log(1 / (2 * 19)), nouns' depth 19
    assert np.allclose(np.diag(m), diag)
    assert (m[~np.eye(10, dtype=bool)] < diag).all() and (m > 0).all()
    i = {n: k for k, n in enumerate(data.FASHION_MNIST_CLASSES)}
    sandal = m[i["Sandal"]]
    assert sandal[i["Sneaker"]] > sandal[i["Dress"]] and sandal[i["Sneaker"]] > sandal[i["Bag"]]
    shirt = m[i["Shirt"]]
    assert shirt[i["T-shirt/top"]] == max(shirt[j] for j in range(10) if j != i["Shirt"])
    with pytest.raises(ValueError, match="Valid similarity metrics: lch, path, wup"):
        wordnet.similarity_matrix(["dog.n.01"], "resnik")


@pytest.mark.slow  # loads WordNet (about 5 s, once for the module): make test runs it
def test_class_synsets_exist_and_fit(wn):
    expect = {  # class -> a lemma of the chosen synset, a word of its definition
        "T-shirt/top": ("T-shirt", "shirt"),
        "Trouser": ("trouser", "leg"),
        "Pullover": ("jumper", "knitted"),
        "Dress": ("frock", "skirt"),
        "Coat": ("coat", "outer garment"),
        "Sandal": ("sandal", "straps"),
        "Shirt": ("shirt", "upper half"),
        "Sneaker": ("sneaker", "rubber sole"),
        "Bag": ("handbag", "carrying money"),
        "Ankle boot": ("boot", "foot and lower leg"),
    }
    for cls, name in zip(data.FASHION_MNIST_CLASSES, data.FASHION_MNIST_SYNSETS):
        s = wordnet.synset(name)
        assert s.name() == name and s.pos() == "n"  # canonical names, nouns
        lemma, word = expect[cls]
        assert lemma in s.lemma_names() and word in s.definition(), (cls, name, s.definition())
    for cls, name in zip(data.CIFAR10_CLASSES, data.CIFAR10_SYNSETS):
        s = wordnet.synset(name)
        assert s.name() == name and cls in s.lemma_names(), (cls, name, s.lemma_names())
    assert "clothing.n.01" in {
        h.name() for s in data.FASHION_MNIST_SYNSETS[:5] for h in wordnet.synset(s).closure(lambda x: x.hypernyms())
    }


@pytest.mark.slow
def test_seeded_noun_depth_is_what_nltk_computes(wn):
    """ensure() hands NLTK WordNet 3.0's noun depth (19) so that lch needs no 10 s scan; check it is right."""
    assert wn._max_depth[("n", False)] == wordnet.NOUN_MAX_DEPTH_30
    assert max(s.max_depth() for s in wn.all_synsets("n")) == wordnet.NOUN_MAX_DEPTH_30

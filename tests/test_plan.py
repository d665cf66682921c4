"""The sample-size plan (invlib.plan, ``python -m invlib plan``) on made-up builds."""

import json

import numpy as np
import pytest

from invlib import plan
from invlib.__main__ import main
from invlib.verdicts import n_needed, t_interval


def _evidence(values, boundary=0.0, direction="greater", n_min=3, unit="seed"):
    iv = t_interval(values)
    return dict(verdict="inconclusive at this budget", estimate=iv.estimate, lo=iv.lo, hi=iv.hi, n=iv.n, n_min=n_min,
                level=0.95, method="t", boundary=boundary, direction=direction, margin=0.0, unit=unit)


def _run(name, seconds, effects, n=3, one_seed=()):
    """A made-up chapter: one claim per effect size (sd 1, ``n`` seeds), all resting on ``seeds`` at ``seconds``."""
    rng = np.random.default_rng(0)
    claims = []
    for i, d in enumerate(effects):
        z = rng.standard_normal(n)
        values = d + (z - z.mean()) / z.std(ddof=1)  # mean d, sd exactly 1
        ev = _evidence(values[:1] if i in one_seed else values)
        if i in one_seed:
            ev.update(lo=None, hi=None, n=1)
        claims.append(dict(id=f"{name}/c{i}", verdict=ev["verdict"], evidence=ev))
    return dict(notebook=name, claims=claims,
                replicates={"seeds": dict(n=n, seconds=[seconds] * n, claims=[c["id"] for c in claims])})


def test_seeds_go_where_they_decide_most_claims_per_second():
    # "cheap" has three claims that 6-7 seeds decide at 10 s a seed; "dear" one claim at 100 s a seed
    runs = [_run("cheap", 10.0, [1.5, 1.4, 1.6]), _run("dear", 100.0, [1.5])]
    p = plan.make_plan(runs, budget=3 * 10 + 3 * 100 + 60)
    planned = {f.chapter: f.planned for f in p.families}
    assert planned["dear"] == 3 and planned["cheap"] > 3
    assert {c for _, c in p.decided} == {"cheap/c0", "cheap/c1", "cheap/c2"}
    assert p.seconds <= p.budget
    # with a budget that also pays for dear's seeds, they go there too
    rich = plan.make_plan(runs, budget=5000)
    assert {f.chapter: f.planned for f in rich.families}["dear"] > 3 and len(rich.decided) == 4
    assert rich.seconds <= rich.budget


@pytest.mark.parametrize("budget", [0.0, 400.0, 1000.0, 2500.0])
def test_the_budget_holds_beyond_the_floor_of_n_min(budget):
    runs = [_run("a", 10.0, [0.8, 1.2, 2.0]), _run("b", 40.0, [1.0, 3.0]), _run("c", 5.0, [0.5])]
    p = plan.make_plan(runs, budget=budget)
    floor = sum(3 * f.seconds for f in p.families)
    assert p.seconds <= max(budget, floor) + 1e-9
    assert all(f.planned >= 3 for f in p.families)  # every claim about training at n_min at least
    more = plan.make_plan(runs, budget=budget + 500)
    assert len(more.decided) >= len(p.decided)  # a larger budget never decides fewer claims


def test_the_plans_n_decides_in_about_80_percent_of_reruns():
    # the claim's n at 80 % power, then 2,000 simulated reruns at that n: about 80 % of their intervals clear
    values = np.array([0.4, 1.6, 1.0])  # mean 1, sd 0.6
    n, _ = n_needed(t_interval(values), "greater", 0.5, power=0.8)
    rng = np.random.default_rng(1)
    cleared = np.mean([t_interval(rng.normal(1.0, 0.6, n)).lo > 0.5 for _ in range(2000)])
    assert 0.75 <= cleared <= 0.87, (n, cleared)


def test_every_part_of_an_all_claim_must_be_decisive_and_one_seed_has_no_number():
    runs = [_run("x", 10.0, [2.0, 1.0], one_seed=(1,))]
    p = plan.make_plan(runs, budget=1000)
    need = {c.claim: c for c in p.claims}
    assert need["x/c1"].need is None and "one replicate" in need["x/c1"].why
    against = plan.PartPlan("x", "c", "a", "seed", 3, 3, -1.0, -3.0, 1.0, 0.0, 1.0, "", -1, 12)
    toward = plan.PartPlan("x", "c", "b", "seed", 3, 3, 1.0, -1.0, 3.0, 0.0, 1.0, "", 1, 40)
    assert plan.claim_need([against, toward]) == (40, "")  # decide_parts: inconclusive while a part is
    assert plan.claim_need([against, toward], "any") == (40, "")  # the part on the paper's side decides "any"
    assert plan.claim_need([against], "any") == (12, "")  # every part must fail


def test_the_command_writes_the_table(tmp_path, capsys):
    folder = tmp_path / "cpu"
    folder.mkdir()
    for r in (_run("cheap", 10.0, [1.5]), _run("dear", 100.0, [1.5])):
        (folder / f"{r['notebook']}.json").write_text(json.dumps(r))
    out = tmp_path / "plan.md"
    assert main(["plan", "--results", str(folder), "--budget", "500", "--out", str(out)]) == 0
    text = out.read_text()
    assert "| cheap | seeds | 3 | 10.0 |" in text and "| dear | seeds | 3 | 100.0 | 3 |" in text
    # without a whole build's record and without --budget: a clear error
    assert main(["plan", "--results", str(folder)]) == 2
    assert "--budget" in capsys.readouterr().err
    (tmp_path / "build-cpu.json").write_text(json.dumps(dict(wall=2300.0)))
    assert plan.default_budget(folder, plan.read_build(folder)) == pytest.approx(3 * 10 + 3 * 100 + 2 * 100)


def test_reach_counts_what_replicates_alone_decide_at_each_cap():
    # effects 2.0, 1.0 and 0.3 sd above the boundary: about 5, 10 and 90 seeds decide them at 80 % power
    runs = [_run("c", 10.0, [2.0, 1.0, 0.3])]
    rows = plan.reach(runs, n_maxes=(3, 20, 200))
    decided = [r["decided"] for r in rows]
    assert decided == sorted(decided) and decided[0] == 0 and decided[1] == 2 and decided[2] == 3
    assert rows[2]["seconds"] > rows[1]["seconds"] > 0 and all(r["measurable"] == 3 for r in rows)
    text = plan.markdown(plan.make_plan(runs, 100.0), reach=rows)
    assert "## What replicates alone can decide" in text and "| 200 | 3 | 100% |" in text


def test_to_decide_says_the_n_and_the_minutes_of_each_undecided_claim_on_a_family():
    runs = [_run("c", 60.0, [1.0, 0.001])]
    runs[0]["claims"].append(dict(id="c/done", verdict="reproduced", evidence=_evidence([3.0, 3.1, 3.2])))
    runs[0]["claims"].append(dict(id="c/images", verdict="inconclusive at this budget", evidence=_evidence(
        [1.0, 0.0, 2.0], unit="image")))  # rests on no family: nothing to buy
    text = plan.to_decide(runs)
    assert set(text) == {("c", "c/c0"), ("c", "c/c1")}
    n = plan.claim_need([p for p in plan.part_plans(runs) if p.claim == "c/c0"])[0]
    assert text["c", "c/c0"] == (f"80 % power at n = {n} ({n - 3} more replicates of seeds: about "
                                 f"{(n - 3) * 60 / 2 / 60:,.0f} min on 2 cores)")
    assert text["c", "c/c1"].endswith("(out of reach: more than 50 replicates)")  # an effect on its boundary

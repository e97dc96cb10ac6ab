"""Prints the reference implementation's confidence sequences of the cases
on stdin, for the cross-check test of autoeval-sequential.

Input: JSON, a list of cases {"x": [...], "alpha": a, "N": n or null,
"trunc": c, "aim": e or null}. Output: JSON, per case {"lower": [...],
"upper": [...]} at every t, from `confseq.betting.betting_cs` with the
running intersection and θ = 1/2: its own predictable-mixture bets when
"aim" is null (`hedged_cs`'s defaults), else every candidate bet
e/(s² + e²), s² the regularised variance of the draws before
(`lambda_predmix_eb`'s, with its prior of 1/4 and one fake observation).
"""

import json
import sys

import numpy as np
from confseq.betting import betting_cs
from confseq.predmix import lambda_predmix_eb


def regularised_variance_before(x):
    """The regularised variance after t - 1 draws, at every t (predmix's)."""
    t = np.arange(1, len(x) + 1)
    mean = np.minimum((0.5 + np.cumsum(x)) / (t + 1), 1)
    variance = (0.25 + np.cumsum(np.power(x - mean, 2))) / (t + 1)
    return np.append(0.25, variance[:-1])


def sequence(case):
    x = np.asarray(case["x"], dtype=float)
    alpha, n, trunc, aim = case["alpha"], case["N"], case["trunc"], case["aim"]
    if aim is None:
        up = lambda x, m: lambda_predmix_eb(x, alpha=alpha / 2)
        down = up
    else:
        up = lambda x, m: aim / (regularised_variance_before(x) + aim * aim)
        down = up
    lower, upper = betting_cs(
        x,
        lambdas_fns_positive=up,
        lambdas_fns_negative=down,
        alpha=alpha,
        N=n,
        breaks=1000,
        running_intersection=True,
        theta=0.5,
        trunc_scale=trunc,
    )
    return {"lower": list(map(float, lower)), "upper": list(map(float, upper))}


json.dump([sequence(case) for case in json.load(sys.stdin)], sys.stdout)

"""What the demo's verdict asks of the sampler: the largest r̂ over many quantities.

``convergence_report`` passes when every training decision value has r̂ ≤ 1.01 and bulk ESS ≥
400 (the demo: 400 values). Even chains that sample their target exactly give each quantity an r̂
that scatters above 1 by an amount that shrinks with its ESS, and the largest of hundreds of them
is what the verdict reads. This script runs that verdict (``bayesmv.check_convergence``, the
check behind ``convergence_report``: ArviZ's rank-normalised split r̂) on chains that are
stationary by construction: each quantity an independent AR(1) process started in its stationary
law, with the autocorrelation that gives it a chosen ESS. It prints, per ESS, the median and
5–95 % range of the largest r̂ over ``--quantities`` quantities and the share of replicates
whose verdict fails.

Run: ``python benchmarks/rhat_multiplicity.py [--quick] [--ess 900 2000] [--chains 4 --draws 2000
--quantities 400 --reps 10]`` (``--quick``: 2 replicates).
"""

from __future__ import annotations

import argparse

import arviz as az
import numpy as np
from scipy.signal import lfilter

from bayesmv import check_convergence


def stationary_ar1(rng, rho, shape):
    """AR(1) paths with coefficient ``rho`` along the last axis, started in the stationary law."""
    noise = rng.normal(size=shape)
    noise[..., 0] /= np.sqrt(1.0 - rho**2)
    return lfilter([1.0], [1.0, -rho], noise, axis=-1)


def verdict(rng, ess, chains, draws, quantities):
    """``check_convergence``'s diagnostics of ``quantities`` independent AR(1) quantities whose
    ESS over all ``chains × draws`` draws is ``ess`` (ESS = n (1 − ρ)/(1 + ρ)): the largest r̂
    and whether the verdict passes."""
    ratio = ess / (chains * draws)
    rho = (1.0 - ratio) / (1.0 + ratio)
    paths = stationary_ar1(rng, rho, (chains, quantities, draws)).transpose(0, 2, 1)
    (f,) = check_convergence(az.from_dict({"posterior": {"f": paths}})).variables
    return f.r_hat, f.passed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ess", type=float, nargs="+", default=[900.0, 2000.0])
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--quantities", type=int, default=400)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="2 replicates")
    args = parser.parse_args()
    if args.quick:
        args.reps = 2
    rng = np.random.default_rng(args.seed)
    print(f"{args.chains} chains x {args.draws} draws, {args.quantities} quantities, {args.reps} replicates")
    print(f"{'ESS':>7}  {'median':>7}  {'5 %':>7}  {'95 %':>7}  share failing")
    medians = []
    for ess in args.ess:
        runs = [verdict(rng, ess, args.chains, args.draws, args.quantities) for _ in range(args.reps)]
        largest = np.array([r_hat for r_hat, _ in runs])
        failing = np.mean([not passed for _, passed in runs])
        low, mid, high = np.quantile(largest, [0.05, 0.5, 0.95])
        medians.append(f"ESS {ess:.0f}: {mid:.4f}")
        print(f"{ess:7.0f}  {mid:7.4f}  {low:7.4f}  {high:7.4f}  {failing:.2f}", flush=True)
    print(
        f"SUMMARY rhat_multiplicity: median largest r-hat of {args.quantities} stationary quantities, "
        + ", ".join(medians)
    )


if __name__ == "__main__":
    main()

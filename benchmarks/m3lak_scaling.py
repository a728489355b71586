"""Seconds per M3LAK sweep vs N on synthetic data shaped like the paper's NUS-WIDE runs.

Five views of 64, 144, 73, 128 and 225 features, m = 20 latent dimensions, M = 100 random
frequencies (201 features with the bias), K_i = 1, DP spectral prior, augmented hinge: the
paper's setting (Du et al. 2018, Table 3: 200 iterations at N = 10,000 took 5,541 s).

The sweep (one full pass of Algorithm 1: per-row HMC for H, HMC for Ω, DP slice sampler,
λ, β, U, [W V], r, τ) is jit-compiled once per N; compile time is reported separately and the
timed sweeps exclude it. Also reports t(2N)/t(N) (≈ 2 for linear scaling), the projected 200
iterations at N = 10,000 against the paper, and the peak RSS of one sweep at N = 100,000.

    python benchmarks/m3lak_scaling.py            # N = 1k, 2k, 5k, 10k, 20k and 100k (memory)
    python benchmarks/m3lak_scaling.py --quick    # smoke: N = 500, 1000, small M
"""

from __future__ import annotations

import argparse
import resource
import time

import jax
import numpy as np

import bayesmv  # noqa: F401  (x64)
from bayesmv.inference import initial_latent, m3lak_sweep, prepare_data
from bayesmv.inference._threads import single_threaded_blas
from bayesmv.models import M3LAKConfig

VIEW_DIMS = (64, 144, 73, 128, 225)
PAPER_SECONDS_200_AT_10K = 5541.0


def make_data(n, m=20, seed=0, dims=VIEW_DIMS):
    rng = np.random.default_rng(seed)
    H = rng.normal(size=(n, m))
    Xs = [H @ rng.normal(size=(m, d)) / np.sqrt(m) + 0.5 * rng.normal(size=(n, d)) for d in dims]
    y = np.where(np.sin(H[:, 0] * 1.5) + 0.5 * H[:, 1] ** 2 - 0.5 > 0, 1.0, -1.0)
    return Xs, y


def time_sweeps(n, cfg, n_sweeps, dims=VIEW_DIMS):
    Xs, y = make_data(n, cfg.n_latent, dims=dims)
    data = prepare_data(Xs, y)
    latent = jax.jit(initial_latent, static_argnums=2)(jax.random.PRNGKey(0), data, cfg)
    jax.block_until_ready(latent)
    sweep = jax.jit(m3lak_sweep, static_argnums=3)
    t0 = time.perf_counter()
    compiled = sweep.lower(jax.random.PRNGKey(1), latent, data, cfg, 0.3, 0.01).compile()
    t_compile = time.perf_counter() - t0
    latent, info = compiled(jax.random.PRNGKey(1), latent, data, 0.3, 0.01)  # warm run
    jax.block_until_ready(latent)
    times = []
    for i in range(n_sweeps):
        t0 = time.perf_counter()
        latent, info = compiled(jax.random.PRNGKey(2 + i), latent, data, 0.3, 0.01)
        jax.block_until_ready(latent)
        times.append(time.perf_counter() - t0)
    assert int(info[3]) == 0, "non-finite state in the benchmark sweep"
    return float(np.median(times)), t_compile


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="seconds-long smoke run")
    ap.add_argument("--sweeps", type=int, default=None, help="timed sweeps per N (median)")
    args = ap.parse_args(argv)
    if args.quick:
        cfg = M3LAKConfig.paper(n_latent=5, n_frequencies=20, augmented=True)
        sizes, dims, n_sweeps, big = (500, 1000), (8, 12), args.sweeps or 2, None
    else:
        cfg = M3LAKConfig.paper(augmented=True)  # the paper's conditionals (the costlier form)
        sizes, dims, n_sweeps, big = (1000, 2000, 5000, 10000, 20000), VIEW_DIMS, args.sweeps or 5, 100_000
    print(
        f"M3LAK sweep scaling: views {dims}, m={cfg.n_latent}, M={cfg.n_frequencies}, "
        f"HMC leapfrog steps H={cfg.hmc_steps_h}, Ω={cfg.hmc_steps_omega}; "
        f"{jax.device_count()} device(s) {jax.devices()[0].platform}"
    )
    print(f"{'N':>8} {'s/sweep':>10} {'t(N)/t(N/2)':>12} {'compile s':>10} {'peak RSS MB':>12}")
    rows = {}
    prev = None
    for n in sizes:
        with single_threaded_blas():  # as run_m3lak does
            t, tc = time_sweeps(n, cfg, n_sweeps, dims)
        rows[n] = t
        ratio = f"{t / rows[prev]:.2f}" if prev is not None and n == 2 * prev else "-"
        print(f"{n:>8} {t:>10.4f} {ratio:>12} {tc:>10.1f} {peak_rss_mb():>12.0f}", flush=True)
        prev = n
    if big is not None:
        with single_threaded_blas():
            t, tc = time_sweeps(big, cfg, 1, dims)
        print(f"{big:>8} {t:>10.4f} {'-':>12} {tc:>10.1f} {peak_rss_mb():>12.0f}", flush=True)
    doubling = [rows[2 * n] / rows[n] for n in rows if 2 * n in rows]
    ref_n = 10000 if 10000 in rows else max(rows)
    proj = 200 * rows[ref_n] * (10000 / ref_n)
    speedup = PAPER_SECONDS_200_AT_10K / proj
    print(
        f"projected 200 iterations at N=10,000: {proj:.1f} s (paper Table 3: {PAPER_SECONDS_200_AT_10K:.0f} s)"
        f" -> {speedup:.0f}x faster; target <= 60 s: {'met' if proj <= 60 else 'NOT met'}"
    )
    print(
        f"SUMMARY m3lak_scaling: 200 sweeps @N=10k ~{proj:.0f}s ({speedup:.0f}x paper's 5541s), "
        f"t(2N)/t(N) mean {np.mean(doubling):.2f}, peak RSS {peak_rss_mb():.0f} MB"
        + (" (incl. N=100k)" if big else " (quick mode)")
    )


if __name__ == "__main__":
    main()

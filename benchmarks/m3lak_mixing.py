"""M3LAK mixing benchmark: where the sampler loses its time, and what each lever buys.

Task (default): even vs odd digits, views fou + kar of the bundled mfeat data, 300 training
points (split 0). Every number is about identifiable quantities: the bulk ESS (ArviZ) of the
300 training decision values ``βᵀφ̃(h_n)`` (min / median) and of ``τ``, and the worst r̂.

Part 1 — diagnosis by freezing blocks (``M3LAKConfig.fixed_blocks``). Two chains are warmed up
with every block moving; from those states each variant holds some blocks at their current
values and runs ``--draws`` sweeps. A block whose freezing does not raise the decision values'
ESS is not what holds the chain back. Prints ms per sweep, ESS per 1000 draws and min-ESS/s.

Part 2 — the user's path: ``M3LAKClassifier(num_chains=4, ...).fit`` end to end, compile
included, for the paper's sampler (hinge; the baseline every ratio refers to) and each lever.
Prints the fit time, r̂ and bulk ESS of the decision values and τ, divergences, min-ESS per
second of fit time, that rate's ratio to the baseline in the same run, and the test accuracy and
Brier score on the held-out rest of mfeat (what a lever costs in predictions).

Part 3 — the peer a user would write: NumPyro NUTS on ``m3lak_model`` (Gaussian spectrum,
marginal hinge; and the logistic likelihood), one chain, same data, same ESS summaries.

Part 4 — where a sweep's time goes: ms per sweep of the estimator's default sweep and of variants
with one part of it switched off or held fixed, from one state after a warm-up. A
``chain_method="processes"`` worker runs its chains on one CPU with XLA:CPU on one thread; to
measure what it sees, run this part the same way:
``XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" taskset -c 0
python benchmarks/m3lak_mixing.py --parts 4`` (it prints how many CPUs it may use).

Run: ``python benchmarks/m3lak_mixing.py [--quick] [--task low_high --views fac zer]
[--parts 2 --levers 7 --fit-samples 2000]``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import arviz as az
import jax
import jax.numpy as jnp
import numpy as np

import bayesmv  # noqa: F401  (float64)
from bayesmv import M3LAKClassifier, M3LAKPriors, M3LAKSampler
from bayesmv.datasets import load_mfeat, standardize_views, train_test_split_views
from bayesmv.inference._threads import single_threaded_blas
from bayesmv.inference.m3lak_sampler import M3LAKKernel, prepare_data
from bayesmv.m3lak.settings import model_config
from bayesmv.models import M3LAKConfig

TASKS = {"even_odd": lambda d: d % 2, "low_high": lambda d: (d >= 5).astype(int)}
FULL = dict(n_train=300, warm=300, draws=1000, fit_warmup=300, fit_samples=500, nuts=150, sweeps=100)
QUICK = dict(n_train=60, warm=20, draws=40, fit_warmup=20, fit_samples=20, nuts=10, sweeps=5)

FREEZE = {  # Part 1 variants: blocks held fixed after a shared warm-up
    "all blocks move": (),
    "LVM fixed (U, W, V, r, τ)": ("lvm",),
    "LVM and H fixed": ("lvm", "H"),
    "only λ, β move": ("lvm", "H", "omega", "dp"),
}
SWEEP_PARTS = {  # Part 4 variants of the estimator's default sweep: one part switched off or fixed
    "default sweep": {},
    "one kernel pass": dict(kernel_passes=1),
    "one H / LVM pass": dict(h_lvm_passes=1),
    "15 joint leapfrog steps": dict(hmc_steps_joint=15),
    "no split-merge": dict(dp_split_merge=0),
    "no spectral-scale move": dict(spectral_scale_moves=False),
    "(β, Ω) fixed": dict(fixed_blocks=("omega",)),
    "DP spectrum fixed": dict(fixed_blocks=("dp",)),
    "(β, Ω) and DP fixed": dict(fixed_blocks=("omega", "dp")),
    "H fixed": dict(fixed_blocks=("H",)),
    "LVM fixed": dict(fixed_blocks=("lvm",)),
}
# Part 2 levers are set on top of the paper's model and sampler (not the estimator's defaults,
# which are one of the levers); the first row is the baseline.
# The estimator's priors (``priors=None``) have ν0 = 2m; the paper's ν0 = m is set per lever (see
# ``_lever_params``).
# The paper's Algorithm 1 (``M3LAKSampler.paper()``) updates H and the latent variable model once per
# sweep, and Ω and the DP spectrum once, with no tempered warm-up nor move of the spectrum's scale; here at
# the step-size target of the recorded runs, the estimator's 0.9 (``M3LAKSampler.paper()``: 0.8).
PAPER_SAMPLER = M3LAKSampler.paper(target_accept=0.9)
PAPER = dict(likelihood="hinge", n_latent=20, n_frequencies=100, sampler=PAPER_SAMPLER)
LEVERS = {
    "hinge (paper sampler)": dict(likelihood="hinge"),
    "hinge, M = 25": dict(likelihood="hinge", n_frequencies=25),
    "hinge, gaussian spectrum": dict(likelihood="hinge", spectral_prior="gaussian"),
    "logistic, joint (β, Ω)": dict(likelihood="logistic"),
    "logistic, joint (β, Ω), M = 25": dict(likelihood="logistic", n_frequencies=25),
    "logistic + collapsed U, r, τ": dict(
        likelihood="logistic", sampler=PAPER_SAMPLER.replace(precision_update="collapsed")
    ),
    "logistic + collapsed U, r, τ, M = 25": dict(
        likelihood="logistic", sampler=PAPER_SAMPLER.replace(precision_update="collapsed"), n_frequencies=25
    ),
    "logistic + collapsed, m = 5, M = 25": dict(
        likelihood="logistic",
        sampler=PAPER_SAMPLER.replace(precision_update="collapsed"),
        n_latent=5,
        n_frequencies=25,
    ),
    "estimator defaults": {
        k: v for k, v in M3LAKClassifier().get_params(deep=False).items() if k in (*PAPER, "priors")
    },
}


def _lever_params(params):
    """A lever's estimator parameters on top of ``PAPER``, with the paper's priors (ν0 = m) unless
    the lever sets ``priors``."""
    out = {**PAPER, **params}
    if "priors" not in params:
        out["priors"] = M3LAKPriors.paper(out["n_latent"])
    return out


def load_task(task, views, n_train, seed=0):
    """Training views (raw, and standardised as the estimator does), 0/1 labels, and the held-out
    rest of mfeat ``(Xte, yte)``."""
    Xs, digits = load_mfeat(list(views))
    y = TASKS[task](digits)
    Xtr, Xte, ytr, yte = train_test_split_views(Xs, y, test_size=len(y) - n_train, random_state=seed)
    return Xtr, standardize_views(Xtr), ytr, (Xte, yte)


def ess_stats(draws):
    """``(min, median)`` bulk ESS and worst r̂ over the last axis of ``draws`` (chain, draw, k)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = az.convert_to_dataset({"x": np.asarray(draws)})
        ess = np.asarray(az.ess(ds, method="bulk")["x"]).ravel()
        rhat = np.asarray(az.rhat(ds)["x"]).ravel()
    return float(np.min(ess)), float(np.median(ess)), float(np.max(rhat))


# ---------------------------------------------------------------------------------------------
# Part 1: freezing blocks from a shared warmed-up state
# ---------------------------------------------------------------------------------------------
def _chain_runner(config, n_sweeps):
    """``run(state, data) -> (state, decision draws, τ draws)``: ``n_sweeps`` kernel steps."""
    kernel = M3LAKKernel(config)

    @jax.jit
    def run(state, data):
        def body(s, _):
            s = kernel.sample(s, (data,), {})
            return s, (s.outputs["decision"], s.outputs["tau"])

        return jax.lax.scan(body, state, None, length=n_sweeps)

    return kernel, run


def _warmed_states(config, n_warm, data, keys):
    """One kernel state per key, each after ``n_warm`` sweeps of ``config`` (warm-up adaptation on)."""
    kernel, warm = _chain_runner(config, n_warm)
    return [warm(kernel.init(k, n_warm, None, (data,), {}), data)[0] for k in keys]


def part1(cfg, Xs, y, config, seed=0):
    data = prepare_data(Xs, np.where(y > 0, 1.0, -1.0))
    states = _warmed_states(config, cfg["warm"], data, jax.random.split(jax.random.PRNGKey(seed), 2))
    print(f"\nPart 1: blocks fixed after a {cfg['warm']}-sweep warm-up, 2 chains x {cfg['draws']} draws")
    print(f"  {'variant':<28}{'ms/sweep':>9}{'ESS/1000 min':>14}{'median':>8}{'r̂ max':>8}{'min-ESS/s':>11}")
    rows = {}
    for name, fixed in FREEZE.items():
        _, run = _chain_runner(M3LAKConfig.from_settings(config, fixed_blocks=fixed), cfg["draws"])
        jax.block_until_ready(run(states[0], data))  # compile
        t0 = time.perf_counter()
        dec = [np.asarray(run(s, data)[1][0]) for s in states]
        sec = time.perf_counter() - t0
        lo, med, rh = ess_stats(np.stack(dec))
        per = 1000.0 / (2 * cfg["draws"])
        rows[name] = dict(ms=1e3 * sec / (2 * cfg["draws"]), lo=lo, med=med, rhat=rh, rate=lo / sec)
        r = rows[name]
        print(f"  {name:<28}{r['ms']:>9.1f}{lo * per:>14.1f}{med * per:>8.0f}{rh:>8.3f}{r['rate']:>11.2f}")
    return rows


# ---------------------------------------------------------------------------------------------
# Part 2: the estimator, end to end
# ---------------------------------------------------------------------------------------------
def part2(cfg, Xs, y, levers, test, chains=4, seed=0, chain_method="processes"):
    print(
        f"\nPart 2: M3LAKClassifier, {chains} chains x ({cfg['fit_warmup']} + {cfg['fit_samples']}), "
        f"chain_method={chain_method!r}, fit time includes compilation; accuracy and Brier on the "
        f"{len(test[1])} held-out points"
    )
    print(
        f"  {'lever':<36}{'fit s':>7}{'dec ESS min':>12}{'median':>8}{'r̂':>7}"
        f"{'τ ESS':>7}{'τ r̂':>7}{'div':>5}{'ESS/s':>8}{'× base':>8}{'acc':>8}{'Brier':>8}"
    )
    rows, base = {}, None
    for name, params in levers.items():
        est = M3LAKClassifier(
            num_warmup=cfg["fit_warmup"],
            num_samples=cfg["fit_samples"],
            num_chains=chains,
            chain_method=chain_method,
            progress_bar=False,
            random_state=seed,
            **_lever_params(params),
        )
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(Xs, y)
        sec = time.perf_counter() - t0
        post = est.inference_data_.posterior
        lo, med, rh = ess_stats(post["decision"].values)
        t_lo, _, t_rh = ess_stats(post["tau"].values)
        rate = lo / sec
        base = rate if base is None else base
        div = int(est.inference_data_.sample_stats["diverging"].values.sum())
        p_odd = est.predict_proba(test[0])[:, 1]
        acc = float(np.mean((p_odd > 0.5) == (test[1] == 1)))
        brier = float(np.mean((p_odd - (test[1] == 1)) ** 2))
        rows[name] = dict(
            fit_s=sec, lo=lo, med=med, rhat=rh, tau_ess=t_lo, tau_rhat=t_rh, rate=rate, acc=acc, brier=brier
        )
        print(
            f"  {name:<36}{sec:>7.1f}{lo:>12.0f}{med:>8.0f}{rh:>7.3f}{t_lo:>7.0f}{t_rh:>7.3f}{div:>5d}"
            f"{rate:>8.2f}{rate / base:>8.1f}{acc:>8.4f}{brier:>8.4f}"
        )
    return rows


# ---------------------------------------------------------------------------------------------
# Part 3: the peer, NumPyro NUTS on the NumPyro model
# ---------------------------------------------------------------------------------------------
def part3(cfg, Xs, y, seed=0):
    from numpyro.infer import MCMC, NUTS

    from bayesmv.models import m3lak_model

    yy = np.where(y > 0, 1.0, -1.0)
    n = cfg["nuts"]
    print(
        f"\nPart 3: NumPyro NUTS on m3lak_model (Gaussian spectrum, max tree depth 8), 1 chain x ({n} + {n})"
    )
    print(f"  {'model':<34}{'s':>7}{'dec ESS min':>12}{'median':>8}{'depth-8 hits':>14}")
    rows = {}
    for name, lik in (("hinge (marginal)", "hinge"), ("logistic", "logistic")):
        config = M3LAKConfig.paper(spectral_prior="gaussian", likelihood=lik).validate()
        mcmc = MCMC(NUTS(m3lak_model, max_tree_depth=8), num_warmup=n, num_samples=n, progress_bar=False)
        t0 = time.perf_counter()
        with single_threaded_blas():
            mcmc.run(
                jax.random.PRNGKey(seed),
                [jnp.asarray(X) for X in Xs],
                jnp.asarray(yy),
                config,
                augmented=False,
                extra_fields=("num_steps",),
            )
        sec = time.perf_counter() - t0
        dec = np.asarray(mcmc.get_samples()["decision"])[None]
        lo, med, _ = ess_stats(dec)
        hits = int(np.sum(np.asarray(mcmc.get_extra_fields()["num_steps"]) >= 255))
        rows[name] = dict(sec=sec, lo=lo, med=med, hits=hits)
        print(f"  {name:<34}{sec:>7.1f}{lo:>12.1f}{med:>8.1f}{hits:>9d} / {n}")
    return rows


# ---------------------------------------------------------------------------------------------
# Part 4: where a sweep's time goes
# ---------------------------------------------------------------------------------------------
def part4(cfg, Xs, y, seed=0):
    """ms per sweep (the fastest of 3 runs of ``cfg["sweeps"]`` sweeps, after a compile) of the
    estimator's default sweep and of each :data:`SWEEP_PARTS` variant, from one state after
    ``cfg["warm"]`` default sweeps; with each variant's saving against the default."""
    data = prepare_data(Xs, np.where(y > 0, 1.0, -1.0))
    base = model_config(M3LAKClassifier().get_params())
    (state,) = _warmed_states(base, cfg["warm"], data, [jax.random.PRNGKey(seed)])
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"\nPart 4: the estimator's default sweep, {cfg['sweeps']} sweeps from one state, {cpus} CPU(s)")
    print(f"  {'variant':<26}{'ms/sweep':>9}{'saves ms':>10}")
    rows = {}
    for name, change in SWEEP_PARTS.items():
        _, run = _chain_runner(M3LAKConfig.from_settings(base, **change), cfg["sweeps"])
        jax.block_until_ready(run(state, data))  # compile
        seconds = []
        for _ in range(3):
            t0 = time.perf_counter()
            jax.block_until_ready(run(state, data))
            seconds.append(time.perf_counter() - t0)
        rows[name] = 1e3 * min(seconds) / cfg["sweeps"]
        print(f"  {name:<26}{rows[name]:>9.2f}{rows['default sweep'] - rows[name]:>10.2f}")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="seconds-long smoke run")
    ap.add_argument("--task", default="even_odd", choices=sorted(TASKS))
    ap.add_argument("--views", nargs="+", default=["fou", "kar"])
    ap.add_argument("--parts", default="1,2,3", help="comma-separated parts to run")
    ap.add_argument("--levers", default=None, help="comma-separated indices of LEVERS rows (default all)")
    ap.add_argument("--fit-warmup", type=int, default=None, help="Part 2 warm-up sweeps per chain")
    ap.add_argument("--fit-samples", type=int, default=None, help="Part 2 kept draws per chain")
    ap.add_argument(
        "--chain-method",
        default="processes",
        help="Part 2 chain_method, for every configuration (the estimator's default; sequential: the same draws)",
    )
    args = ap.parse_args(argv)
    cfg = dict(QUICK if args.quick else FULL)
    for key in ("fit_warmup", "fit_samples"):
        if getattr(args, key) is not None:
            cfg[key] = getattr(args, key)
    parts = {int(p) for p in args.parts.split(",")}
    Xs, Zs, y, test = load_task(args.task, args.views, cfg["n_train"])
    print(f"task {args.task}, views {'+'.join(args.views)}, {cfg['n_train']} training points")
    config = M3LAKConfig.paper(n_latent=5, n_frequencies=10) if args.quick else M3LAKConfig.paper()
    summary = []
    if 1 in parts:
        rows = part1(cfg, Zs, y, config.validate())
        best = max(rows, key=lambda k: rows[k]["rate"])
        summary.append(f"freeze: fastest min-ESS/s with '{best}'")
    if 2 in parts:
        levers = LEVERS
        if args.levers:
            names = list(LEVERS)
            levers = {
                names[0]: LEVERS[names[0]],
                **{names[int(i)]: LEVERS[names[int(i)]] for i in args.levers.split(",")},
            }
        if args.quick:  # small sizes; a lever that then repeats an earlier row is dropped
            quick = {}
            for k, v in levers.items():
                params = {"n_latent": 5, "n_frequencies": 10, **v}
                if params not in quick.values():
                    quick[k] = params
            levers = quick
        rows = part2(cfg, Xs, y, levers, test, chain_method=args.chain_method)
        base = next(iter(rows.values()))["rate"]
        best = max(rows, key=lambda k: rows[k]["rate"])
        summary.append(f"best lever '{best}' {rows[best]['rate'] / base:.1f}x baseline min-ESS/s")
    if 3 in parts:
        rows = part3(cfg, Zs, y)
        summary.append("NUTS peer min ESS " + ", ".join(f"{k} {v['lo']:.0f}" for k, v in rows.items()))
    if 4 in parts:
        rows = part4(cfg, Zs, y)
        kernel_ms = rows["default sweep"] - rows["(β, Ω) and DP fixed"]
        summary.append(
            f"default sweep {rows['default sweep']:.2f} ms, (β, Ω) and the DP spectrum {kernel_ms:.2f} ms of it"
        )
    print("\nSUMMARY m3lak_mixing: " + "; ".join(summary))


if __name__ == "__main__":
    main()

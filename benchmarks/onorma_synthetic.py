"""ONORMA / MONORMA / OVKRidge on the synthetic multi-task data of §5 (paper ``004_…``).

Reproduces Figure 1 (left: online MSE against stream length beside the batch MSE) and the
synthetic column of Table 1 (running times; paper, d = 10: batch 162 s, ONORMA 12 s, MONORMA 50 s).

Setup (§5): Evgeniou et al. (2005) data, n = 500 / d = 4 and n = 5000 / d = 10, 50/50 split
Z1/Z2; η = 1, η_t = 1/√t, λ = 0.01; ONORMA with μ⟨x,x'⟩1 + (1-μ)⟨x,x'⟩²I, μ = 0.2; MONORMA with
⟨x,x'⟩1 and ⟨x,x'⟩²I; batch = OVK ridge with λ by 5-fold CV on Z1, tested on Z2.
The online learners stream the whole data set (each point predicted before it is learned, so
the online MSE is out-of-sample); we also report their test MSE on Z2 after streaming Z1 only.

Deviation (documented): inputs are divided by sqrt(mean ||x||²) over Z1. With the raw
x ∈ [0, 1]^20, ||K(x, x)|| ≈ 48 and η_t = 1/√t makes η_t ||K|| > 2 for the first ~500 steps: the
raw stream diverges (online MSE ~1e151, measured). After scaling, <x, x> ≈ 1.

Run:  python benchmarks/onorma_synthetic.py [--quick] [--blas-threads 1]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import bayesmv  # noqa: F401  (float64)
from bayesmv import MONORMA, ONORMA, OVKRidge
from bayesmv.datasets import make_multitask
from bayesmv.kernels import SeparableKernel, nonseparable_kernel

PAPER = {"Batch": 162.0, "ONORMA": 12.0, "MONORMA": 50.0}
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "output")


def kernels(d):
    ones = SeparableKernel("linear", np.ones((d, d)))
    quad = SeparableKernel("polynomial", np.eye(d), (("degree", 2), ("gamma", 1.0), ("coef0", 0.0)))
    return nonseparable_kernel(0.2, d), ones, quad


def timed_fit(make, X, Y, repeats):
    """First fit (compile + run), then the best of ``repeats`` compiled runs."""
    t = time.perf_counter()
    est = make().fit(X, Y)
    first = time.perf_counter() - t
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        est = make().fit(X, Y)
        runs.append(time.perf_counter() - t)
    best = min(runs) if runs else first
    return est, best, max(first - best, 0.0)


def mse(P, Y):
    return float(np.mean(np.sum((P - Y) ** 2, axis=1)))


def stream(n, d, seed):
    """The §5 data in stream order, inputs scaled to ⟨x, x⟩ ≈ 1 over Z1 (the first half)."""
    X, Y = make_multitask(n, d, random_state=seed)
    perm = np.random.default_rng(seed + 1).permutation(n)
    X, Y = X[perm], Y[perm]
    return X / np.sqrt(np.mean(np.sum(X[: n // 2] ** 2, axis=1))), Y


def run(n, d, seed, repeats, lam_grid, cv):
    X, Y = stream(n, d, seed)
    h = n // 2
    Xtr, Ytr, Xte, Yte = X[:h], Y[:h], X[h:], Y[h:]
    K_ns, K_ones, K_quad = kernels(d)
    common = dict(lam=0.01, eta0=1.0, schedule="invsqrt")
    res = {"n": n, "d": d}
    last = min(1000, n // 5)
    res["last"] = last

    on, res["t_onorma"], res["c_onorma"] = timed_fit(lambda: ONORMA(K_ns, **common), X, Y, repeats)
    mo, res["t_monorma"], res["c_monorma"] = timed_fit(
        lambda: MONORMA([K_ones, K_quad], r=1.0, **common), X, Y, repeats
    )
    singles = {
        name: ONORMA(K, **common).fit(X, Y) for name, K in (("<x,x'>1", K_ones), ("<x,x'>^2 I", K_quad))
    }
    res["curves"] = {"ONORMA (mu=0.2)": on.cumulative_error_, "MONORMA": mo.cumulative_error_}
    res["curves_single"] = {f"ONORMA {k}": v.cumulative_error_ for k, v in singles.items()}
    res["on_last"] = float(on.errors_[-last:].mean())
    res["mo_last"] = float(mo.errors_[-last:].mean())
    res["single_last"] = {k: float(v.errors_[-last:].mean()) for k, v in singles.items()}
    res["on_cum"], res["mo_cum"] = float(on.cumulative_error_[-1]), float(mo.cumulative_error_[-1])
    res["single_cum"] = {k: float(v.cumulative_error_[-1]) for k, v in singles.items()}
    res["mo_delta"] = mo.delta_
    # test MSE on Z2 after streaming Z1 only (same protocol as the batch model)
    res["on_test"] = mse(ONORMA(K_ns, **common).fit(Xtr, Ytr).predict(Xte), Yte)
    res["mo_test"] = mse(MONORMA([K_ones, K_quad], **common).fit(Xtr, Ytr).predict(Xte), Yte)

    t = time.perf_counter()
    cvm = OVKRidge(K_ns, lam=lam_grid, cv=cv, random_state=seed).fit(Xtr, Ytr)
    res["t_cv"] = time.perf_counter() - t
    res["lam_cv"] = cvm.lam_
    t = time.perf_counter()
    batch = OVKRidge(K_ns, lam=cvm.lam_).fit(Xtr, Ytr)
    res["t_batch"] = time.perf_counter() - t
    res["batch_solver"] = batch.solver_
    res["batch_mse"] = mse(batch.predict(Xte), Yte)
    res["batch_mse_same_lam"] = mse(OVKRidge(K_ns, lam=0.01).fit(Xtr, Ytr).predict(Xte), Yte)
    return res


def scale_study(n, d, seed, scales):
    """ONORMA (λ = 0.01) and batch OVK ridge (λ = 0.01 and λ = 1e-6) at several input scales
    ⟨x, x⟩ ≈ s: how far the λ = 0.01 optimum itself lies from the (almost unregularised) batch fit."""
    X, Y = stream(n, d, seed)
    h = n // 2
    K = nonseparable_kernel(0.2, d)
    rows = []
    for s in scales:
        Xs = X * np.sqrt(s)
        on = ONORMA(K, lam=0.01, eta0=1.0, schedule="invsqrt").fit(Xs, Y)
        rows.append(
            (
                s,
                float(on.errors_[-min(1000, n // 5) :].mean()),
                mse(OVKRidge(K, lam=0.01).fit(Xs[:h], Y[:h]).predict(Xs[h:]), Y[h:]),
                mse(OVKRidge(K, lam=1e-6).fit(Xs[:h], Y[:h]).predict(Xs[h:]), Y[h:]),
            )
        )
    return rows


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(6 * len(results), 4.2), squeeze=False)
    for ax, r in zip(axes[0], results):
        t = np.arange(1, r["n"] + 1)
        for (name, c), col in zip(r["curves"].items(), ("tab:blue", "tab:red")):
            ax.plot(t, c, color=col, label=name)
        for (name, c), col in zip(r["curves_single"].items(), ("tab:orange", "tab:purple")):
            ax.plot(t, c, color=col, ls=":", label=name)
        ax.axhline(r["batch_mse"], color="tab:green", label=f"batch OVK ridge (CV λ={r['lam_cv']:.0e}), test")
        ax.axhline(
            r["batch_mse_same_lam"], color="tab:green", ls="--", label="batch OVK ridge (λ=0.01), test"
        )
        ax.set_yscale("log")
        ax.set_ylim(0.01, 20)
        ax.set_xlabel("stream length t")
        ax.set_ylabel("online MSE  (1/t) Σ ||f_{i-1}(x_i) - y_i||²")
        ax.set_title(f"synthetic multi-task, n={r['n']}, d={r['d']}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="seconds-long smoke run (n=300, d=4)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--input-scales",
        default=None,
        help="comma-separated input scales s (<x, x> ~ s) for the regularisation-bias study, e.g. 0.5,1,2,3",
    )
    ap.add_argument(
        "--blas-threads",
        type=int,
        default=None,
        help="limit BLAS/LAPACK threads (threadpoolctl); 1 avoids thread thrashing on a busy machine",
    )
    args = ap.parse_args()
    if args.blas_threads:
        from threadpoolctl import threadpool_limits

        threadpool_limits(args.blas_threads)
        print(f"BLAS/LAPACK threads limited to {args.blas_threads}")
    if args.quick:
        configs, repeats, grid, cv = [(300, 4)], 1, (1e-5, 1e-3), 3
    else:
        configs, repeats, grid, cv = [(500, 4), (5000, 10)], 3, (1e-7, 1e-6, 1e-5, 1e-4, 1e-2), 5
    results = [run(n, d, args.seed, repeats, grid, cv) for n, d in configs]

    print(
        "\nONORMA / MONORMA / OVKRidge on the §5 synthetic data (η=1, η_t=1/√t, λ=0.01; MSE = mean ||f(x)-y||²)"
    )
    for r in results:
        print(
            f"\n n={r['n']}, d={r['d']}  (stream = all {r['n']} samples; batch trained on Z1, tested on Z2)"
        )
        print(f"  {'method':<26}{'online MSE':>12}{'last-' + str(r['last']):>12}{'test MSE Z2':>13}")
        print(f"  {'ONORMA nonsep mu=0.2':<26}{r['on_cum']:>12.4f}{r['on_last']:>12.4f}{r['on_test']:>13.4f}")
        print(f"  {'MONORMA {1, I}':<26}{r['mo_cum']:>12.4f}{r['mo_last']:>12.4f}{r['mo_test']:>13.4f}")
        for k in r["single_last"]:
            print(f"  {'ONORMA ' + k:<26}{r['single_cum'][k]:>12.4g}{r['single_last'][k]:>12.4g}{'':>13}")
        print(
            f"  {'batch OVKRidge CV λ=' + format(r['lam_cv'], '.0e'):<26}{'':>12}{'':>12}{r['batch_mse']:>13.4f}"
        )
        print(f"  {'batch OVKRidge λ=0.01':<26}{'':>12}{'':>12}{r['batch_mse_same_lam']:>13.4f}")
        print(f"  MONORMA final kernel weights δ = {np.round(r['mo_delta'], 4)}")

    big = results[-1]
    print(
        f"\n Table 1 (synthetic, n={big['n']}, d={big['d']}): running time in seconds (compiled; compile separate)"
    )
    print(f"  {'method':<10}{'paper':>8}{'ours':>10}{'compile':>9}{'speed-up':>10}")
    rows = [
        ("Batch", big["t_batch"], 0.0),
        ("ONORMA", big["t_onorma"], big["c_onorma"]),
        ("MONORMA", big["t_monorma"], big["c_monorma"]),
    ]
    for name, t, c in rows:
        print(f"  {name:<10}{PAPER[name]:>8.0f}{t:>10.3f}{c:>9.2f}{PAPER[name] / t:>9.0f}x")
    print(
        f"  (batch = one fit at the CV λ, solver {big['batch_solver']}; the {len(grid)}-value x {cv}-fold CV took "
        f"{big['t_cv']:.1f} s)"
    )

    best_single = min(big["single_last"].values())
    checks = [
        ("ONORMA pass <= 1.2 s", big["t_onorma"] <= 1.2, f"{big['t_onorma']:.3f} s"),
        ("MONORMA pass <= 5 s", big["t_monorma"] <= 5.0, f"{big['t_monorma']:.3f} s"),
        ("OVKRidge fit <= 16 s", big["t_batch"] <= 16.0, f"{big['t_batch']:.2f} s"),
        (
            f"ONORMA last-{big['last']} <= 1.5x batch (CV λ)",
            big["on_last"] <= 1.5 * big["batch_mse"],
            f"ratio {big['on_last'] / big['batch_mse']:.2f}",
        ),
        (
            f"ONORMA last-{big['last']} <= 1.5x batch (λ=0.01)",
            big["on_last"] <= 1.5 * big["batch_mse_same_lam"],
            f"ratio {big['on_last'] / big['batch_mse_same_lam']:.2f}",
        ),
        (
            "MONORMA <= best single-kernel ONORMA",
            big["mo_last"] <= best_single,
            f"{big['mo_last']:.4f} vs {best_single:.4f}",
        ),
    ]
    print("\n Targets:")
    for name, ok, val in checks:
        print(f"  [{'PASS' if ok else 'FAIL'}] {name}: {val}")

    floor = big["batch_mse_same_lam"] / big["batch_mse"]
    print(
        f"\n The exact batch optimum at ONORMA's λ = 0.01 is itself {floor:.1f}x the CV batch MSE (noise-free "
        "targets; CV picks a tiny λ): no learner of the λ = 0.01 objective can come within 1.5x of it."
    )
    if args.input_scales:
        print(f"\n Regularisation bias against input scale (n={big['n']}, d={big['d']}; <x, x> ~ s):")
        print(
            f"  {'s':>5}{'ONORMA last-' + str(big['last']):>18}{'batch λ=0.01':>14}"
            f"{'batch λ=1e-6':>14}{'ONORMA / batch 1e-6':>21}"
        )
        for sc, on_last, b01, b6 in scale_study(
            big["n"], big["d"], args.seed, [float(v) for v in args.input_scales.split(",")]
        ):
            print(f"  {sc:>5g}{on_last:>18.4g}{b01:>14.4f}{b6:>14.4f}{on_last / b6:>21.3g}")

    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "onorma_synthetic.png")
    plot(results, path)
    print(f"\n saved {path}")
    print(
        f"SUMMARY onorma_synthetic: n={big['n']} d={big['d']}: ONORMA {big['t_onorma']:.2f}s "
        f"({PAPER['ONORMA'] / big['t_onorma']:.0f}x paper), MONORMA {big['t_monorma']:.2f}s, "
        f"batch {big['t_batch']:.1f}s; "
        f"online MSE last-{big['last']} {big['on_last']:.3f} vs batch {big['batch_mse']:.3f} (CV λ) / "
        f"{big['batch_mse_same_lam']:.3f} (λ=0.01)"
    )


if __name__ == "__main__":
    main()

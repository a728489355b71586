"""Endurance benchmark.

Part A — one long M3LAK chain (10,000 iterations: 1,000 warm-up + 9,000 kept) on a small
``make_latent_views`` problem (n = 40, two views of 4 features, m = 3, M = 20, DP spectrum).
Checks that every stored draw is finite, that the post-warm-up acceptance rates of the two HMC
blocks (per-row H, joint Ω) sit inside the band ``target_accept ± 0.15`` (dual averaging aims at
``target_accept = 0.8``), and reports divergences, step sizes, r̂/ESS of the identifiable
quantities and the wall/CPU time.

Part B — 100 repeated ``fit`` + ``predict`` of every estimator on a small problem (M3LAK with a
short chain, MVML, MVL, MKC, ONORMA, MONORMA, OVKRidge) in one process; resident memory
(``VmRSS`` from ``/proc/self/status``) after the first and after the last repetition
(``gc.collect()`` first). Growth under 10 MiB passes.

Run: ``python benchmarks/endurance.py [--quick]`` (quick: 400 iterations, 10 repetitions).
Timings on a shared machine are indicative only.
"""

from __future__ import annotations

import argparse
import gc
import resource
import time
import warnings

import numpy as np

import bayesmv
from bayesmv.datasets import make_latent_views

ACCEPT_BAND = 0.15
RSS_GROWTH_LIMIT_MIB = 10.0


def vm_rss_mib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError("VmRSS not found in /proc/self/status")


def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def long_chain(n_iter, seed=0):
    Xs, y = make_latent_views(n_samples=40, n_views=2, n_latent=2, n_features=4, noise=0.3, random_state=seed)
    warmup = n_iter // 10
    est = bayesmv.M3LAKClassifier(
        n_latent=3,
        n_frequencies=20,
        num_warmup=warmup,
        num_samples=n_iter - warmup,
        num_chains=1,
        progress_bar=False,
        random_state=seed,
        sampler=bayesmv.M3LAKSampler(target_accept=0.8),
    )
    t0, c0 = time.perf_counter(), cpu_s()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        est.fit(Xs, y)
    wall, cpu = time.perf_counter() - t0, cpu_s() - c0
    idata = est.inference_data_
    stats = idata.sample_stats
    post = idata.posterior
    finite = all(np.isfinite(np.asarray(post[v].values, dtype=float)).all() for v in post.data_vars)
    finite &= all(
        np.isfinite(np.asarray(v, dtype=float)).all() for d in est.posterior_draws_ for v in d.values()
    )
    acc_H = float(np.mean(stats["accept_prob_H"].values))
    acc_O = float(np.mean(stats["accept_prob_omega"].values))
    target = est.sampler.target_accept
    rep = bayesmv.check_convergence(idata, rhat_max=1.01, ess_min=400, var_names=["decision", "tau"])
    ess = {v.name: v.ess_bulk for v in rep.variables}
    sampler_warnings = [
        str(w.message).splitlines()[0] for w in rec if "SamplerWarning" in w.category.__name__
    ]
    # training accuracy from the last 1,000 draws (keeps it quick; a 9,000-draw predictive in one
    # compiled chunk hung inside XLA:CPU before bayesmv.m3lak capped chunks at 1,024 draws)
    est.posterior_draws_ = [{k: v[-1000:] for k, v in d.items()} for d in est.posterior_draws_]
    acc = est.score(Xs, y)
    return {
        "iterations": n_iter,
        "warmup": warmup,
        "finite": bool(finite),
        "accept_H": acc_H,
        "accept_omega": acc_O,
        "target": target,
        "accept_ok": bool(abs(acc_H - target) <= ACCEPT_BAND and abs(acc_O - target) <= ACCEPT_BAND),
        "divergences": int(np.asarray(stats["diverging"].values).sum()),
        "step_H": float(np.asarray(stats["step_size_H"].values)[0, -1]),
        "step_omega": float(np.asarray(stats["step_size_omega"].values)[0, -1]),
        "ess_decision": ess.get("decision"),
        "ess_tau": ess.get("tau"),
        "train_accuracy": float(acc),
        "wall_s": wall,
        "cpu_s": cpu,
        "warnings": sampler_warnings,
    }


def repeated_fits(reps):
    Xs, y = make_latent_views(n_samples=30, n_views=2, n_latent=2, n_features=4, noise=0.3, random_state=1)
    X = np.concatenate(Xs, axis=1)
    yr = Xs[0][:, 0] + 0.1 * Xs[1][:, 1]
    Ks = [np.array(bayesmv.kernels.rbf_kernel(v, v)) for v in Xs]
    Ks[1][:5, :] = np.nan
    Ks[1][:, :5] = np.nan
    linear = bayesmv.kernels.SeparableKernel("linear", np.eye(1))
    rbf = bayesmv.kernels.SeparableKernel("rbf", np.eye(1))
    makers = {
        "M3LAKClassifier": (
            lambda: bayesmv.M3LAKClassifier(
                n_latent=2,
                n_frequencies=10,
                num_warmup=20,
                num_samples=20,
                num_chains=1,
                progress_bar=False,
                random_state=0,
            ),
            lambda e: e.fit(Xs, y).predict_proba(Xs),
        ),
        "MVMLClassifier": (lambda: bayesmv.MVMLClassifier(max_iter=3), lambda e: e.fit(Xs, y).predict(Xs)),
        "MVLClassifier": (lambda: bayesmv.MVLClassifier(), lambda e: e.fit(Xs, y).predict(Xs)),
        "MKC": (lambda: bayesmv.MKC(method="embd_ht", max_iter=20), lambda e: e.fit_transform(Ks)[1]),
        "ONORMA": (lambda: bayesmv.ONORMA(eta0=0.5), lambda e: e.fit(X, yr).predict(X)),
        "MONORMA": (lambda: bayesmv.MONORMA([linear, rbf], eta0=0.5), lambda e: e.fit(X, yr).predict(X)),
        "OVKRidge": (lambda: bayesmv.OVKRidge(linear), lambda e: e.fit(X, yr).predict(X)),
    }
    rows = []
    for name, (make, run) in makers.items():
        rss = []
        t0 = time.perf_counter()
        for i in range(reps):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pred = run(make())
            assert np.all(np.isfinite(np.asarray(pred, dtype=float))), name
            if i == 0 or i == reps - 1 or (i + 1) % max(1, reps // 4) == 0:
                gc.collect()
                rss.append((i + 1, vm_rss_mib()))
        first, last = rss[0][1], rss[-1][1]
        rows.append(
            {
                "name": name,
                "reps": reps,
                "rss_first": first,
                "rss_last": last,
                "growth": last - first,
                "ok": last - first < RSS_GROWTH_LIMIT_MIB,
                "trace": rss,
                "ms_per_rep": 1000 * (time.perf_counter() - t0) / reps,
            }
        )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke mode: 400 iterations, 10 repetitions")
    parser.add_argument("--part", choices=("A", "B", "all"), default="all", help="run only part A or B")
    args = parser.parse_args(argv)
    n_iter, reps = (400, 10) if args.quick else (10_000, 100)
    if args.part == "B":
        return _report_b(repeated_fits(reps), reps, None)

    print(f"Part A: M3LAK chain of {n_iter} iterations (n=40, 2 views x 4 features, m=3, M=20, DP spectrum)")
    a = long_chain(n_iter)
    print(f"{'block':<10} {'mean accept':>12} {'target':>8} {'band':>14} {'final step':>11}")
    band = f"[{a['target'] - ACCEPT_BAND:.2f}, {a['target'] + ACCEPT_BAND:.2f}]"
    print(f"{'H (rows)':<10} {a['accept_H']:>12.3f} {a['target']:>8.2f} {band:>14} {a['step_H']:>11.3g}")
    print(f"{'Omega':<10} {a['accept_omega']:>12.3f} {a['target']:>8.2f} {band:>14} {a['step_omega']:>11.3g}")
    print(
        f"all draws finite: {a['finite']}; divergent transitions: {a['divergences']} / {n_iter - a['warmup']}; "
        f"bulk ESS decision {a['ess_decision']:.0f}, tau {a['ess_tau']:.0f}; train accuracy {a['train_accuracy']:.3f}"
    )
    print(f"time: {a['wall_s']:.1f} s wall, {a['cpu_s']:.1f} s CPU (incl. compile)")
    for w in a["warnings"]:
        print(f"  warning: {w}")

    if args.part == "A":
        print(
            f"\nSUMMARY endurance: {'PASS' if a['finite'] and a['accept_ok'] else 'FAIL'} — {n_iter}-iteration "
            f"M3LAK chain finite={a['finite']}, accept H {a['accept_H']:.2f} / Omega {a['accept_omega']:.2f} "
            f"(target {a['target']:.2f}±{ACCEPT_BAND}), {a['divergences']} divergences"
        )
        return 0 if a["finite"] and a["accept_ok"] else 1
    return _report_b(repeated_fits(reps), reps, a)


def _report_b(b, reps, a):
    n_iter = a["iterations"] if a else None
    print(f"\nPart B: {reps} x fit + predict, resident memory (VmRSS, MiB)")
    print(f"{'estimator':<16} {'first':>8} {'last':>8} {'growth':>8} {'ms/rep':>8}  ok   trace (rep: MiB)")
    for r in b:
        trace = ", ".join(f"{i}: {m:.0f}" for i, m in r["trace"])
        print(
            f"{r['name']:<16} {r['rss_first']:>8.1f} {r['rss_last']:>8.1f} {r['growth']:>+8.1f} "
            f"{r['ms_per_rep']:>8.1f}  {'yes' if r['ok'] else 'NO '}  {trace}"
        )

    growth = max(r["growth"] for r in b)
    if a is None:
        ok = all(r["ok"] for r in b)
        print(
            f"\nSUMMARY endurance: {'PASS' if ok else 'FAIL'} — {reps}x fit/predict max RSS growth {growth:+.1f} MiB"
        )
        return 0 if ok else 1
    ok = a["finite"] and a["accept_ok"] and all(r["ok"] for r in b)
    print(
        f"\nSUMMARY endurance: {'PASS' if ok else 'FAIL'} — {n_iter}-iteration M3LAK chain finite={a['finite']}, "
        f"accept H {a['accept_H']:.2f} / Omega {a['accept_omega']:.2f} (target {a['target']:.2f}±{ACCEPT_BAND}), "
        f"{a['divergences']} divergences; {reps}x fit/predict max RSS growth {growth:+.1f} MiB"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

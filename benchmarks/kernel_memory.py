"""Peak memory of the kernel methods beyond the n x n regime.

MVML with block-Nyström (``nystrom=p`` landmarks: only ``n x p`` kernel columns and one thin SVD
of an ``n x Vp`` factor) and MVL-LS with ``solver="cg"`` (conjugate gradients on kernel–vector products in row blocks,
``bayesmv.kernels.kernel_matvec``) are fitted on n = 10k, 25k, 50k samples of a two-view
problem. Each fit runs in its own subprocess; its peak resident memory is ``VmHWM`` from
``/proc/self/status``. The table compares it with the size of ONE dense n x n float64 Gram
matrix (what the dense paths would have to hold, per view).

    python benchmarks/kernel_memory.py [--quick] [--sizes 10000 25000 50000]

``--quick``: n = 2000 and 4000 only (seconds). Timings are wall-clock and depend on the load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

METHODS = ("mvml_nystrom", "mvl_ls_cg")


def _vm_hwm_bytes() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("VmHWM not found in /proc/self/status (Linux only)")


def _data(n, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    h = rng.normal(size=(n, 2))
    y = (np.sum(h**2, axis=1) > 1.386).astype(int)  # the median of chi2(2)
    Xs = [h @ rng.normal(size=(2, d)) + 0.3 * rng.normal(size=(n, d)) for d in (10, 15)]
    return Xs, y


def worker(method, n, landmarks, cg_iter):
    import numpy as np

    import bayesmv  # noqa: F401  (x64)

    Xs, y = _data(n)
    base = _vm_hwm_bytes()
    t0 = time.perf_counter()
    if method == "mvml_nystrom":
        from bayesmv.mvml import MVMLClassifier

        est = MVMLClassifier(nystrom=int(landmarks), lmbda=0.1, eta=1.0, max_iter=3, random_state=0)
        est.fit(Xs, y)
        info = {"form": est.solver_form_, "landmarks": int(est.n_landmarks_)}
    elif method == "mvl_ls_cg":
        from bayesmv.mvl import MVLClassifier

        est = MVLClassifier(
            solver="cg",
            gamma_A=1e-3,
            gamma_B=1e-6,
            gamma_W=1e-6,
            graph="kernel",
            cg_tol=1e-4,
            cg_max_iter=int(cg_iter),
        )
        est.fit(Xs, y)
        info = {
            "cg_iterations": int(est.n_iter_),
            "cg_residual": float(np.asarray(est.fit_trace_.traces["residual"])[-1]),
        }
    else:
        raise ValueError(method)
    fit_s = time.perf_counter() - t0
    m = min(n, 2000)
    acc = float(np.mean(est.predict([X[:m] for X in Xs]) == y[:m]))
    print(
        json.dumps(
            {
                "method": method,
                "n": n,
                "peak_bytes": _vm_hwm_bytes(),
                "base_bytes": base,
                "fit_s": fit_s,
                "train_acc_first_2000": acc,
                **info,
            }
        )
    )


def run(method, n, landmarks, cg_iter, timeout):
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        method,
        str(n),
        "--landmarks",
        str(landmarks),
        "--cg-iter",
        str(cg_iter),
    ]
    t0 = time.perf_counter()
    try:
        out = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "XLA_PYTHON_CLIENT_PREALLOCATE": "false"},
        )
    except subprocess.TimeoutExpired:
        return {"method": method, "n": n, "error": f"timeout after {timeout} s"}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        return {"method": method, "n": n, "error": (out.stderr.strip().splitlines() or ["?"])[-1][:200]}
    res = json.loads(lines[-1])
    res["wall_s"] = time.perf_counter() - t0
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sizes", type=int, nargs="*")
    ap.add_argument("--landmarks", type=int, default=200)
    ap.add_argument("--cg-iter", type=int, default=30, help="CG iteration cap (memory does not depend on it)")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--worker", nargs=2, metavar=("METHOD", "N"))
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker[0], int(args.worker[1]), args.landmarks, args.cg_iter)
        return 0
    sizes = args.sizes or ([2000, 4000] if args.quick else [10000, 25000, 50000])
    cg_iter = 5 if args.quick else args.cg_iter
    print(
        f"{'method':<14} {'n':>7} {'peak MiB':>9} {'base MiB':>9} {'n x n MiB':>10} {'peak/nxn':>9} "
        f"{'fit s':>8}  notes"
    )
    worst = {}
    for n in sizes:
        for method in METHODS:
            r = run(method, n, args.landmarks, cg_iter, args.timeout)
            dense = 8 * n * n / 2**20
            if "error" in r:
                print(
                    f"{method:<14} {n:>7} {'-':>9} {'-':>9} {dense:>10.0f} {'-':>9} {'-':>8}  ERROR {r['error']}"
                )
                continue
            peak, base = r["peak_bytes"] / 2**20, r["base_bytes"] / 2**20
            notes = ", ".join(
                f"{k}={v:.2g}" if isinstance(v, float) else f"{k}={v}"
                for k, v in r.items()
                if k in ("form", "landmarks", "cg_iterations", "cg_residual", "train_acc_first_2000")
            )
            print(
                f"{method:<14} {n:>7} {peak:>9.0f} {base:>9.0f} {dense:>10.0f} {peak / dense:>9.3f} "
                f"{r['fit_s']:>8.1f}  {notes}",
                flush=True,
            )
            worst[(method, n)] = peak
    if worst:
        nmax = max(n for _, n in worst)
        parts = [f"{m} {worst[(m, nmax)]:.0f} MiB" for m in METHODS if (m, nmax) in worst]
        print(
            f"SUMMARY kernel_memory: peak RSS at n={nmax}: "
            + ", ".join(parts)
            + f" (one dense n x n Gram would be {8 * nmax * nmax / 2**20:.0f} MiB)"
        )
    else:
        print("SUMMARY kernel_memory: no run finished")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""M3LAK data-sharded sweep: per-sweep time and per-device memory.

Data shaped like the paper's NUS-WIDE runs: 5 views of 64, 144, 73, 128, 225 features,
m = 20 latent dimensions, M = 100 random frequencies (201 features with the bias), K_i = 1.
For each N the sweep (one ``M3LAKKernel.sample`` step: H per-row HMC, Ω HMC, DP, λ, β, U,
[W V], r, τ) is compiled and timed

* on ONE device (the unsharded run), and
* with the sample axis of X, H, U, λ and the masks sharded over D forced CPU devices
  (``XLA_FLAGS=--xla_force_host_platform_device_count=D``; the script sets it),

each in its own subprocess. Per-device memory is reported two ways: the compiled program's
``memory_analysis()`` (arguments + temporaries of the per-device SPMD program) and the live
buffers of the sampler state + data on each device (``bayesmv.distributed.per_device_bytes``).
Forced CPU devices share the host's cores, so on one machine sharding cuts memory per device,
not time; on D real accelerators (or D hosts) the per-device work is also divided by D.

    python benchmarks/m3lak_sharded.py [--quick] [--sizes 100000 400000] [--devices 4]

``--quick``: N = 1000, m = 5, M = 20, the sharded run only (its time is the compilation).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

VIEW_DIMS = (64, 144, 73, 128, 225)


def _vm_hwm_bytes():
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return -1


def _data(n, dims, m, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    h = rng.normal(size=(n, m))
    Xs = [h @ (rng.normal(size=(m, d)) / np.sqrt(m)) + 0.5 * rng.normal(size=(n, d)) for d in dims]
    y = np.where(np.sum(h[:, :2] ** 2, axis=1) > 1.386, 1.0, -1.0)
    return Xs, y


def worker(n, devices, sweeps, m, M, dims, spectral_prior):
    import jax
    import numpy as np

    import bayesmv  # noqa: F401  (x64)
    from bayesmv import distributed as bd
    from bayesmv.inference.m3lak_sampler import M3LAKKernel, prepare_data, shard_m3lak_data
    from bayesmv.inference.m3lak_sampler.state import _prepare_arrays
    from bayesmv.models.m3lak import M3LAKConfig

    config = M3LAKConfig.paper(n_latent=m, n_frequencies=M, spectral_prior=spectral_prior)
    Xs, y = _data(n, dims, m)
    if devices > 1:
        mesh = bd.data_mesh(jax.devices()[:devices])
        bd.check_partitionable_rng()
        data, n_valid = shard_m3lak_data(_prepare_arrays(Xs, y), mesh)
        kernel = M3LAKKernel(config, mesh=mesh, n_valid=n_valid)
    else:
        data = prepare_data(Xs, y)
        kernel = M3LAKKernel(config)
    del Xs
    state = kernel.init(jax.random.PRNGKey(0), 0, None, (data,), {})
    step = jax.jit(lambda s, d: kernel.sample(s, (d,), {}), donate_argnums=0)
    t0 = time.perf_counter()
    compiled = step.lower(state, data).compile()
    compile_s = time.perf_counter() - t0
    mem = compiled.memory_analysis()
    arg = int(getattr(mem, "argument_size_in_bytes", -1)) if mem is not None else -1
    tmp = int(getattr(mem, "temp_size_in_bytes", -1)) if mem is not None else -1
    state = compiled(state, data)  # first call (allocations)
    jax.block_until_ready(state)
    times = []
    for _ in range(sweeps):
        t0 = time.perf_counter()
        state = compiled(state, data)
        jax.block_until_ready(state)
        times.append(time.perf_counter() - t0)
    live = bd.per_device_bytes((state, data))
    H_spec = str(getattr(state.latent.H.sharding, "spec", "single device"))
    print(
        json.dumps(
            {
                "n": n,
                "devices": devices,
                "sweep_s": float(np.median(times)),
                "compile_s": compile_s,
                "arg_bytes": arg,
                "temp_bytes": tmp,
                "live_max_bytes": max(live.values()),
                "live_total_bytes": sum(live.values()),
                "rss_peak_bytes": _vm_hwm_bytes(),
                "H_sharding": H_spec,
                "accept_H": float(state.accept_prob_H),
                "finite": int(state.nonfinite) == 0,
            }
        )
    )


def run(n, devices, sweeps, args):
    env = dict(os.environ)
    flags = env.get("XLA_FLAGS", "")
    env["XLA_FLAGS"] = (flags + f" --xla_force_host_platform_device_count={max(devices, 1)}").strip()
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        str(n),
        str(devices),
        "--sweeps",
        str(sweeps),
        "--m",
        str(args.m),
        "--M",
        str(args.M),
        "--spectral-prior",
        args.spectral_prior,
    ]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"n": n, "devices": devices, "error": f"timeout after {args.timeout} s"}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        tail = [ln for ln in out.stderr.strip().splitlines() if "Gloo" not in ln]
        return {"n": n, "devices": devices, "error": (tail or ["?"])[-1][:300]}
    return json.loads(lines[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sizes", type=int, nargs="*")
    ap.add_argument("--devices", type=int, default=4)
    ap.add_argument("--sweeps", type=int, default=3)
    ap.add_argument("--m", type=int, default=None, help="latent dimension (default 20; --quick: 5)")
    ap.add_argument("--M", type=int, default=None, help="random frequencies (default 100; --quick: 20)")
    ap.add_argument(
        "--spectral-prior",
        default="dp",
        choices=("gaussian", "dp"),
        help="'dp' (the default prior) or 'gaussian' (a fixed RBF spectrum, no DP block)",
    )
    ap.add_argument("--no-baseline", action="store_true", help="skip the one-device runs")
    ap.add_argument("--timeout", type=float, default=3000)
    ap.add_argument("--worker", nargs=2, type=int, metavar=("N", "DEVICES"))
    args = ap.parse_args(argv)
    if args.worker:
        worker(
            args.worker[0],
            args.worker[1],
            args.sweeps,
            args.m or 20,
            args.M or 100,
            VIEW_DIMS,
            args.spectral_prior,
        )
        return 0
    sizes = args.sizes or ([1000] if args.quick else [100_000, 400_000])
    sweeps = 2 if args.quick else args.sweeps
    args.m = args.m or (5 if args.quick else 20)
    args.M = args.M or (20 if args.quick else 100)
    args.no_baseline = args.no_baseline or args.quick  # --quick: one compile (the sharded run) only
    D = args.devices
    print(
        f"M3LAK sweep, 5 views {VIEW_DIMS}, m={args.m}, M={args.M}, spectral prior {args.spectral_prior!r}; "
        f"{D} forced CPU devices vs 1 device"
    )
    print(
        f"{'N':>8} {'dev':>4} {'sweep s':>8} {'compile s':>9} {'args MiB/dev':>12} {'temp MiB/dev':>12} "
        f"{'live MiB/dev':>12} {'RSS MiB':>8}  H sharding"
    )
    rows = {}
    for n in sizes:
        for dev in ([1] if not args.no_baseline else []) + [D]:
            r = run(n, dev, sweeps, args)
            if "error" in r:
                print(f"{n:>8} {dev:>4}  ERROR {r['error']}", flush=True)
                continue
            rows[(n, dev)] = r
            mib = lambda b: b / 2**20  # noqa: E731
            print(
                f"{n:>8} {dev:>4} {r['sweep_s']:>8.2f} {r['compile_s']:>9.1f} {mib(r['arg_bytes']):>12.1f} "
                f"{mib(r['temp_bytes']):>12.1f} {mib(r['live_max_bytes']):>12.1f} {mib(r['rss_peak_bytes']):>8.0f}"
                f"  {r['H_sharding']}{'' if r['finite'] else '  NON-FINITE'}",
                flush=True,
            )
    parts = []
    for n in sizes:
        if (n, D) in rows:
            r = rows[(n, D)]
            per_dev = (r["arg_bytes"] + r["temp_bytes"]) / 2**20
            txt = f"N={n}: {r['sweep_s']:.2f} s/sweep, {per_dev:.0f} MiB/device"
            if (n, 1) in rows:
                b = rows[(n, 1)]
                txt += f" ({per_dev / ((b['arg_bytes'] + b['temp_bytes']) / 2**20):.2f}x of 1 device)"
            parts.append(txt)
    print(f"SUMMARY m3lak_sharded: {D} CPU devices; " + ("; ".join(parts) if parts else "no run finished"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

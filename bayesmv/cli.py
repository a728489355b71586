"""The ``bayesmv`` command line: ``info``, ``demo`` and ``bench``."""

from __future__ import annotations

import argparse
import sys


def _info(args) -> int:
    import importlib.metadata as md

    import jax

    import bayesmv

    print(f"bayesmv  {bayesmv.__version__}")
    for pkg in ("jax", "jaxlib", "numpyro", "arviz", "numpy", "scipy", "scikit-learn"):
        try:
            print(f"{pkg:<8} {md.version(pkg)}")
        except md.PackageNotFoundError:
            print(f"{pkg:<8} not installed")
    print(f"x64      {jax.config.jax_enable_x64}")
    print("devices  " + ", ".join(f"{d.platform}:{d.id}" for d in jax.devices()))
    return 0


def _demo(args) -> int:
    from .demo import run_demo

    return run_demo(output_dir=args.output, quick=args.quick, random_state=args.seed)


def _find_benchmarks(folder):
    from pathlib import Path

    candidates = (
        [Path(folder)]
        if folder
        else [Path.cwd() / "benchmarks", Path(__file__).resolve().parents[1] / "benchmarks"]
    )
    for c in candidates:
        if c.is_dir() and any(c.glob("*.py")):
            return c
    raise SystemExit(
        "bayesmv bench: no benchmarks/ folder found; run it from a source checkout or pass --dir PATH"
    )


def run_benchmarks(folder=None, quick=True, timeout=1800):
    """Run every ``benchmarks/*.py`` (``--quick`` by default) and collect their ``SUMMARY`` lines.

    Returns a list of ``(script, status, seconds, headline)``.
    """
    import subprocess
    import time

    rows = []
    for script in sorted(_find_benchmarks(folder).glob("*.py")):
        if script.name.startswith("_"):
            continue
        cmd = [sys.executable, str(script)] + (["--quick"] if quick else [])
        start = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            status = "ok" if proc.returncode == 0 else f"exit {proc.returncode}"
            out = proc.stdout
        except subprocess.TimeoutExpired as exc:
            status, out = "timeout", exc.stdout or ""
            out = out.decode() if isinstance(out, bytes) else out
        seconds = time.perf_counter() - start
        lines = [ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("SUMMARY")]
        rows.append((script.name, status, seconds, "; ".join(lines) or "(no SUMMARY line)"))
    return rows


def _bench(args) -> int:
    rows = run_benchmarks(args.dir, quick=not args.full)
    width = max(len(r[0]) for r in rows)
    print(f"{'benchmark':<{width}}  {'status':<8} {'seconds':>8}  headline")
    for name, status, secs, headline in rows:
        print(f"{name:<{width}}  {status:<8} {secs:>8.1f}  {headline}")
    return 0 if all(r[1] == "ok" for r in rows) else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bayesmv", description="Bayesian multi-view kernel learning (M3LAK, MVML, MKC, ONORMA, MVL)."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p_info = sub.add_parser("info", help="package, JAX, NumPyro and ArviZ versions and JAX devices")
    p_info.set_defaults(func=_info)
    p_demo = sub.add_parser("demo", help="fit M3LAK on a bundled mfeat task; print accuracy and convergence")
    p_demo.add_argument("--output", default="bayesmv_demo_output", help="folder for the PNG plots")
    p_demo.add_argument("--quick", action="store_true", help="shorter chains (smoke test)")
    p_demo.add_argument("--seed", type=int, default=0)
    p_demo.set_defaults(func=_demo)
    p_bench = sub.add_parser(
        "bench", help="run every benchmarks/*.py in quick mode and print one summary table"
    )
    p_bench.add_argument("--dir", default=None, help="benchmarks folder (default: ./benchmarks)")
    p_bench.add_argument("--full", action="store_true", help="full runs instead of --quick (long)")
    p_bench.set_defaults(func=_bench)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())

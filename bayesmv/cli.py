"""The ``bayesmv`` command line: ``info`` and ``demo``."""

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

    return run_demo(output_dir=args.output, quick=args.quick, seed=args.seed)


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

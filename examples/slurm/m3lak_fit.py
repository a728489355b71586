"""Fit M3LAK with every process of a SLURM job: copy this script and its ``.sbatch`` file.

Each task of the job (one per host, or one per GPU) runs this same script on the same data:

    sbatch examples/slurm/m3lak.sbatch
    srun --nodes=2 --ntasks-per-node=1 python examples/slurm/m3lak_fit.py --data views.npz

``distributed.initialize()`` reads the coordinator (the job's first node), the number of
processes and this process's rank from SLURM's environment; without SLURM (or another cluster
JAX detects) it does nothing and the script runs as one process. The ``--num-chains`` chains are
spread over the processes (4 chains on 2 processes: 2 each), and every process gets all of
them. With ``--shard-data`` each chain's sweep is split along the samples over every device of
every process instead, and the chains run one after another. Process 0 prints the result as one
JSON line and saves the fitted estimator (``--output``).

``--data``: an ``.npz`` file with the views ``X0``, ``X1``, ... (rows are samples; a row of NaN
is a missing view) and the labels ``y``; the first ``--n-train`` rows train, the rest test.
Default: the bundled mfeat digits, views fou + kar, even against odd, shuffled with seed 0.
``--quick``: tiny sizes (2 views of 40 training points, 3 + 3 sweeps) and the Gaussian spectrum,
whose sampler compiles in about half the time of the default's, to try the launch.
"""

import argparse
import json

import numpy as np

from bayesmv import distributed


def load(path, quick):
    """The views and labels: an ``.npz`` file, or mfeat fou + kar, even/odd, shuffled."""
    if path is not None:
        with np.load(path) as f:
            views = sorted((k for k in f.files if k.startswith("X")), key=lambda k: int(k[1:]))
            return [f[k] for k in views], f["y"]
    from bayesmv.datasets import load_mfeat

    Xs, digits = load_mfeat(["fou", "kar"])
    order = np.random.default_rng(0).permutation(len(digits))
    return [np.asarray(X)[order] for X in Xs], (np.asarray(digits)[order] % 2).astype(int)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="an .npz with X0, X1, ... and y")
    parser.add_argument("--n-train", type=int, default=400)
    parser.add_argument("--num-chains", type=int, default=4)
    parser.add_argument("--shard-data", action="store_true")
    parser.add_argument("--output", default=None, help="where process 0 saves the estimator")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)

    info = distributed.initialize()  # first, before any other JAX call

    from bayesmv import M3LAKClassifier, M3LAKSampler

    Xs, y = load(args.data, args.quick)
    n_train = 40 if args.quick else args.n_train
    size = (
        dict(n_latent=2, n_frequencies=3, num_warmup=3, num_samples=3, spectral_prior="gaussian")
        if args.quick
        else {}
    )
    clf = M3LAKClassifier(
        num_chains=args.num_chains,
        sampler=M3LAKSampler(shard_data=args.shard_data),
        progress_bar=info.process_index == 0,
        random_state=0,
        **size,
    ).fit([X[:n_train] for X in Xs], y[:n_train])
    proba = clf.predict_proba([X[n_train:] for X in Xs])[:, 1]
    if info.process_index == 0:
        if args.output is not None:
            clf.save(args.output)
        report = clf.convergence_report()
        print(
            json.dumps(
                {
                    "processes": info.process_count,
                    "chains": int(clf.inference_data_.posterior.sizes["chain"]),
                    "accuracy": float(np.mean((proba > 0.5) == y[n_train:])),
                    "converged": report.passed,
                    "proba": proba[:10].tolist(),
                }
            )
        )


if __name__ == "__main__":
    main()

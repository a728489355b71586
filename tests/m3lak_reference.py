"""The tiny M3LAK task and run whose draws ``tests/data/m3lak_reference_draws*.npz`` hold, and
which of those files holds this CPU's (shared by ``test_m3lak_settings`` and
``tests/data/make_m3lak_reference_draws.py``, which runs it with an earlier release)."""

import hashlib
from pathlib import Path

from bayesmv.datasets import make_latent_views

DATA = Path(__file__).parent / "data"
#: the tiny run of the reference files: 40 training points of two 5-feature views, 2 chains
RUN = dict(num_warmup=15, num_samples=10, num_chains=2, chain_method="sequential", random_state=5)


def reference_task():
    """Training views, labels and test views: 40 + 10 points of two 5-feature views."""
    Xs, y = make_latent_views(n_samples=50, n_features=5, random_state=3)
    return [X[:40] for X in Xs], y[:40], [X[40:] for X in Xs]


def cpu_name():
    """``vendor-family-model-<hash of the SIMD flags>`` from ``/proc/cpuinfo`` (what XLA's code
    generation reads: the CPU model and its instruction sets), or None where there is none."""
    try:
        first = Path("/proc/cpuinfo").read_text().split("\n\n")[0]
    except OSError:
        return None
    lines = [line.split(":", 1) for line in first.splitlines() if ":" in line]
    info = {key.strip(): value.strip() for key, value in lines}
    simd = sorted(
        f for f in info.get("flags", "").split() if f.startswith(("avx", "fma", "sse", "f16c", "amx"))
    )
    digest = hashlib.sha256(" ".join(simd).encode()).hexdigest()[:8]
    return f"{info.get('vendor_id')}-{info.get('cpu family')}-{info.get('model')}-{digest}"


def own_reference_file():
    """Where this CPU's reference draws are (or are to be written)."""
    return DATA / f"m3lak_reference_draws_{cpu_name()}.npz"


def reference_file():
    """This CPU's reference draws where they were made, else those of the first machines."""
    own = own_reference_file()
    return own if own.exists() else DATA / "m3lak_reference_draws.npz"

"""Progress of M3LAK's chains: one bar per chain (``tqdm``), counting the sweeps done, warm-up then
sampling, advanced after each call of the compiled draw program.

Chains in this process report to their bar directly. Chains in worker processes
(``chain_method="processes"``) write their count to a file of their own, which a thread of this
process reads to move the bars: no extra process, and nothing that changes a draw.
"""

from __future__ import annotations

import os
import tempfile
import threading
from contextlib import contextmanager

__all__ = ["ChainProgress", "FileReport"]

#: Seconds between two reads of the workers' counts.
POLL_SECONDS = 0.5


class FileReport:
    """A worker's reporter: ``report(done)`` writes the chain's sweeps done to ``path`` (replaced
    atomically, so that the reader never sees half a number).

    Parameters
    ----------
    path : str
        The file the count is written to (one of the paths that
        :meth:`ChainProgress.from_workers` yields).
    """

    def __init__(self, path):
        self.path = path

    def __call__(self, done):
        partial = f"{self.path}.partial"
        with open(partial, "w") as fh:
            fh.write(str(int(done)))
        os.replace(partial, self.path)


class ChainProgress:
    """One progress bar per chain, ``num_warmup + num_samples`` sweeps each (``num_samples`` when
    the chains continue without warm-up); nothing is shown when ``enabled`` is false.

    Use as a context manager; :meth:`report` gives the reporter of one chain in this process,
    :meth:`from_workers` the files that worker processes write to.

    Parameters
    ----------
    num_chains : int
        The number of chains, one bar each.
    num_warmup : int
        Warm-up sweeps per chain (0 when the chains continue without warm-up).
    num_samples : int
        Sampling sweeps per chain.
    enabled : bool, default=True
        Whether the bars are shown.
    """

    def __init__(self, num_chains, num_warmup, num_samples, enabled=True):
        self.num_warmup = int(num_warmup)
        self.total = self.num_warmup + int(num_samples)
        self.enabled = bool(enabled)
        self.num_chains = int(num_chains)
        self._bars = []
        self._lock = threading.Lock()

    def __enter__(self):
        if self.enabled:
            from tqdm.auto import tqdm

            self._bars = [
                tqdm(total=self.total, desc=self._label(c, 0), position=c, unit="sweep", dynamic_ncols=True)
                for c in range(self.num_chains)
            ]
        return self

    def __exit__(self, *exc):
        for bar in self._bars:
            bar.close()
        self._bars = []
        return False

    def _label(self, chain, done):
        phase = "warm-up" if done < self.num_warmup else "sampling"
        return f"chain {chain} ({phase})"

    def update(self, chain, done):
        """Show ``done`` sweeps of ``chain`` (a count from its start).

        Parameters
        ----------
        chain : int
            The chain's index.
        done : int
            The sweeps the chain has done, warm-up included.
        """
        if not self._bars:
            return
        with self._lock:
            bar = self._bars[chain]
            if done != bar.n:
                bar.set_description(self._label(chain, done), refresh=False)
                bar.update(done - bar.n)

    def report(self, chain):
        """The reporter of ``chain`` in this process (None when nothing is shown).

        Parameters
        ----------
        chain : int
            The chain's index.

        Returns
        -------
        report : callable or None
            ``report(done)`` shows ``done`` sweeps of ``chain`` (:meth:`update`); None when
            nothing is shown.
        """
        return (lambda done: self.update(chain, done)) if self._bars else None

    @contextmanager
    def from_workers(self):
        """Yields one file path per chain (None when nothing is shown) for the :class:`FileReport`
        in worker processes, and moves the bars from them until the block ends."""
        if not self._bars:
            yield [None] * self.num_chains
            return
        with tempfile.TemporaryDirectory(prefix="bayesmv-progress-") as folder:
            paths = [os.path.join(folder, f"chain_{c}") for c in range(self.num_chains)]
            stop = threading.Event()

            def poll():
                while True:
                    stopping = stop.wait(POLL_SECONDS)
                    for chain, path in enumerate(paths):
                        try:
                            with open(path) as fh:
                                self.update(chain, int(fh.read()))
                        except (FileNotFoundError, ValueError):
                            continue
                    if stopping:
                        return

            reader = threading.Thread(target=poll, name="bayesmv-progress", daemon=True)
            reader.start()
            try:
                yield paths
            finally:
                stop.set()
                reader.join()

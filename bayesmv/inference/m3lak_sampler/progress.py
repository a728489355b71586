"""Progress of M3LAK's chains: one bar per chain (``tqdm``), counting the sweeps done, warm-up then
sampling.

The chains only record their counts: a chain in this process stores its sweeps done after each
call of the compiled draw program, a chain in a worker process (``chain_method="processes"``)
writes them to a file of its own. One display thread of this process owns the bars: it
creates them, moves them from the counts and the files, and closes them. The thread that fits
never calls ``tqdm``, so a Ctrl-C there cannot leave ``tqdm``'s write lock held, and a fit never
waits on the display for more than :data:`CLOSE_SECONDS`. Nothing here changes a draw.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading

__all__ = ["ChainProgress", "FileReport"]

#: Seconds between two moves of the bars.
REFRESH_SECONDS = 0.25

#: Seconds that the end of a :class:`ChainProgress` block waits for the bars to close.
CLOSE_SECONDS = 5.0


class FileReport:
    """A worker's reporter: ``report(done)`` writes the chain's sweeps done to ``path`` (replaced
    atomically, so that the reader never sees half a number).

    Parameters
    ----------
    path : str
        The file the count is written to (one of the paths that
        :meth:`ChainProgress.worker_files` returns).
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

    Use as a context manager: the bars are shown by a display thread from the start of the
    block and closed at its end (which waits at most :data:`CLOSE_SECONDS` for them).
    :meth:`report` gives the reporter of one chain in this process, :meth:`worker_files` the
    files that worker processes write to.

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

    Attributes
    ----------
    done : list of int
        The sweeps each chain has reported, warm-up included.
    """

    def __init__(self, num_chains, num_warmup, num_samples, enabled=True):
        self.num_warmup = int(num_warmup)
        self.total = self.num_warmup + int(num_samples)
        self.enabled = bool(enabled)
        self.num_chains = int(num_chains)
        self.done = [0] * self.num_chains
        self._folder = None

    def __enter__(self):
        if self.enabled:  # a block's own events: the object may be entered again
            self._stop, self._closed = threading.Event(), threading.Event()
            threading.Thread(
                target=self._display, args=(self._stop, self._closed), name="bayesmv-progress", daemon=True
            ).start()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self._stop.set()
            try:
                self._closed.wait(CLOSE_SECONDS)
            finally:
                if self._folder is not None:
                    shutil.rmtree(self._folder, ignore_errors=True)
                    self._folder = None
        return False

    def _label(self, chain, done):
        phase = "warm-up" if done < self.num_warmup else "sampling"
        return f"chain {chain} ({phase})"

    def _display(self, stop, closed):
        """The display thread: the bars, moved every :data:`REFRESH_SECONDS` until ``stop`` is
        set, then once more and closed; then ``closed`` is set. The events are the block's own, so
        a thread still closing an earlier block's bars never reads a later block's."""
        from tqdm.auto import tqdm

        bars = []
        try:
            for chain in range(self.num_chains):
                bars.append(
                    tqdm(
                        total=self.total,
                        desc=self._label(chain, 0),
                        position=chain,
                        unit="sweep",
                        dynamic_ncols=True,
                    )
                )
            while True:
                ending = stop.wait(REFRESH_SECONDS)
                self._read_worker_files()
                for chain, bar in enumerate(bars):
                    done = self.done[chain]
                    if done != bar.n:
                        bar.set_description(self._label(chain, done), refresh=False)
                        bar.update(done - bar.n)
                if ending:
                    return
        finally:
            try:
                for bar in bars:
                    bar.close()
            finally:
                closed.set()

    def _paths(self):
        return [os.path.join(self._folder, f"chain_{chain}") for chain in range(self.num_chains)]

    def _read_worker_files(self):
        if self._folder is None:
            return
        for chain, path in enumerate(self._paths()):
            try:
                with open(path) as fh:
                    self.update(chain, int(fh.read()))
            except (FileNotFoundError, ValueError):
                continue

    def update(self, chain, done):
        """Record ``done`` sweeps of ``chain`` (a count from its start); the bar shows it at its
        next move.

        Parameters
        ----------
        chain : int
            The chain's index.
        done : int
            The sweeps the chain has done, warm-up included.
        """
        self.done[chain] = int(done)

    def report(self, chain):
        """The reporter of ``chain`` in this process (None when nothing is shown).

        Parameters
        ----------
        chain : int
            The chain's index.

        Returns
        -------
        report : callable or None
            ``report(done)`` records ``done`` sweeps of ``chain`` (:meth:`update`); None when
            nothing is shown.
        """
        return (lambda done: self.update(chain, done)) if self.enabled else None

    def worker_files(self):
        """One file path per chain for the :class:`FileReport` of worker processes, read by the
        display thread until the block ends (and then removed).

        Returns
        -------
        paths : list of str or None
            One path per chain; None for each when nothing is shown.
        """
        if not self.enabled:
            return [None] * self.num_chains
        if self._folder is None:
            self._folder = tempfile.mkdtemp(prefix="bayesmv-progress-")
        return self._paths()

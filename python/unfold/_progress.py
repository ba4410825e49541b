"""What a fit reports while it runs: ``verbose=2``'s line per iteration, a tqdm progress
bar, and the user's ``callback(iteration, objective)``, all fed by the Rust observer that
drives the command line's bars (the fit hands its iterations over every tenth of a
second; nothing is polled from Python)."""

import sys


class FitStopped(RuntimeError):
    """The fit's ``callback`` returned False, and the method cannot keep an iterate from
    before its convergence (MVU's interior-point and barrier methods): the fit stopped and
    the estimator is left as it was before ``fit``. Every other iterative method ends with
    its current iterate instead (``stopped_by_ == "caller"``)."""


def _in_notebook():
    """True under a Jupyter kernel (where a progress bar is shown by default)."""
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()
    except AttributeError:
        return False
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def _bar(label, progress):
    """A tqdm bar for ``progress`` (True, False, or None: in notebooks only), or None."""
    if progress is None:
        progress = _in_notebook()
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if progress is True:
            import warnings

            warnings.warn(
                "progress=True needs tqdm (pip install tqdm); fitting without a bar",
                UserWarning,
                stacklevel=4,
            )
        return None
    return tqdm(desc=f"unfold {label}", unit=" it")


class Listener:
    """Hears each iteration ``(restart, iteration, kind, value)`` of a fit: prints it with
    ``verbose >= 2``, moves the bar, and calls ``callback(iteration, value)``. When the
    callback returns False it returns False, and the fit ends at the next iteration it
    reaches, keeping that iterate."""

    def __init__(self, label, verbose=0, progress=None, callback=None):
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be callable (iteration, objective), got {callback!r}")
        self.label = label
        self.verbose = int(verbose or 0)
        self.callback = callback
        self.bar = _bar(label, progress)

    def wanted(self):
        """Whether the fit needs to hand its iterations over at all."""
        return self.verbose >= 2 or self.callback is not None or self.bar is not None

    def __call__(self, restart, iteration, kind, value):
        if self.verbose >= 2:
            print(
                f"unfold {self.label}: restart {restart}, iteration {iteration}: {kind} {value:.6g}",
                file=sys.stderr,
                flush=True,
            )
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix_str(f"{kind} {value:.6g}", refresh=False)
        if self.callback is not None and self.callback(iteration, value) is False:
            return False
        return None

    def close(self):
        if self.bar is not None:
            self.bar.close()

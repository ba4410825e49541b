"""unfold: probabilistic spectral dimensionality reduction over a Rust core.

Every method of unfold is a scikit-learn estimator here (``unfold.MEU``, ``unfold.LLLVM``,
``unfold.DDRTree``, ...; ``unfold.ESTIMATORS`` lists them), generated from the Rust method
registry. ``unfold.select`` compares graphs, dimensions and restarts by evidence (on Dask
with ``client=``), ``unfold.tl`` writes results into AnnData objects and ``unfold.pl`` draws them, ``unfold.metrics``
compares a trajectory (a tree over the cells) with a reference, and
``unfold.load_model`` reads a model file written by the command line or ``to_bytes``.
"""

from . import _native, metrics, pl, tl
from ._estimators import (
    Evidence,
    NotProjectableError,
    Projection,
    UnfoldEstimator,
    make_estimators,
)
from ._progress import FitStopped
from ._select import plot_selection, select

__version__ = _native.__version__

ESTIMATORS = make_estimators()
globals().update(ESTIMATORS)


def methods():
    """The registry's description of every method (name, family, parameters, ...)."""
    return _native.methods()


def set_max_memory(size):
    """The most memory a fit may use, like the command line's ``--max-memory``: a size
    such as ``"4G"`` or ``"512M"``, or ``None`` for the default (``UNFOLD_MAX_MEMORY``, else
    the machine's available memory). Methods whose memory grows faster than n raise
    ``MemoryError`` before allocating more."""
    _native.set_max_memory(size)


def load_model(data):
    """A fitted model (``unfold._native.NativeModel``) from a model file's path or bytes."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return _native.NativeModel.from_bytes(bytes(data))
    with open(data, "rb") as f:
        return _native.NativeModel.from_bytes(f.read())


__all__ = [
    "ESTIMATORS",
    "Evidence",
    "FitStopped",
    "NotProjectableError",
    "Projection",
    "UnfoldEstimator",
    "load_model",
    "methods",
    "metrics",
    "plot_selection",
    "select",
    "set_max_memory",
    "tl",
    *ESTIMATORS,
]

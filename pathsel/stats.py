"""Statistics used across pathsel, in one place, from SciPy.

* :func:`t975`: the two-sided 95 % quantile of Student's t (confidence
  intervals over replications and seeds);
* :func:`ci95`: a sample's mean and the half-width of its 95 % interval;
* :func:`norm_ppf`, :func:`norm_cdf`, :func:`norm_pdf`: the standard normal
  (truncated normal and lognormal delays).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

# scipy.special is imported where it is used (about 0.3-0.5 s): a plain simulation never reaches it, and
# scipy.stats costs ~1 s to import, so only the special functions are used

__all__ = ["t975", "ci95", "norm_ppf", "norm_cdf", "norm_pdf"]


def t975(dof: int) -> float:
    """Two-sided 95 % quantile of Student's t with ``dof`` >= 1 degrees of freedom."""
    if dof < 1:
        raise ValueError(f"t975 needs at least one degree of freedom, got {dof}")
    from scipy import special

    return float(special.stdtrit(dof, 0.975))  # the inverse of Student's t CDF (scipy.stats.t.ppf)


def ci95(values: Iterable[float]) -> tuple[float, float]:
    """(mean, half-width of the 95 % confidence interval); the half-width is NaN for fewer than two values."""
    v = np.asarray(list(values), dtype=np.float64)
    n = len(v)
    if n == 0:
        return math.nan, math.nan
    mean = float(v.mean())
    if n < 2:
        return mean, math.nan
    return mean, t975(n - 1) * float(v.std(ddof=1)) / math.sqrt(n)


def norm_ppf(p: np.ndarray | float) -> np.ndarray:
    """Standard normal quantile of each p in [0, 1] (p = 0 gives -inf, p = 1 gives +inf)."""
    from scipy import special

    q: np.ndarray = special.ndtri(np.asarray(p, dtype=np.float64))
    return q


def norm_cdf(z: float) -> float:
    from scipy import special

    return float(special.ndtr(z))


def norm_pdf(z: float) -> float:
    return math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)

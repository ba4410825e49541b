//! Moré & Thuente (1994) line search for the strong Wolfe conditions
//!
//! `phi(a) <= phi(0) + c1 a phi'(0)` and `|phi'(a)| <= c2 |phi'(0)|`,
//!
//! by safeguarded cubic/quadratic interpolation on an interval of uncertainty
//! `[stx, sty]` that is guaranteed to contain such a step once bracketed. While no step with
//! `psi(a) <= 0` and `phi'(a) >= 0` is known (stage 1), the auxiliary function
//! `psi(a) = phi(a) - phi(0) - c1 a phi'(0)` is used in place of `phi`.

/// Sufficient-decrease constant (SciPy/L-BFGS-B value).
pub(crate) const C1: f64 = 1e-3;
/// Curvature constant.
pub(crate) const C2: f64 = 0.9;
/// Relative width of the interval of uncertainty below which the search stops.
const XTOL: f64 = 0.1;
/// Extrapolation factors of the trial step before a bracket is found.
const EXTRAP_LOW: f64 = 1.1;
const EXTRAP_HIGH: f64 = 4.0;
/// Maximum number of function evaluations per line search.
pub(crate) const MAX_EVALS: usize = 20;

/// How a line search ended. In every case the last evaluated step is the one returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SearchEnd {
    /// Strong Wolfe conditions hold.
    Converged,
    /// Stopped early (step at its upper limit, interval too small, rounding, or too many
    /// evaluations); the caller decides whether the step is acceptable.
    Stopped,
    /// The objective's evaluation budget ran out.
    Budget,
}

/// Result of [`search`]: the last evaluated step and its value.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SearchResult {
    pub(crate) step: f64,
    pub(crate) f: f64,
    pub(crate) end: SearchEnd,
}

/// One endpoint of the interval of uncertainty: step, value and derivative.
#[derive(Debug, Clone, Copy)]
struct Point {
    t: f64,
    f: f64,
    d: f64,
}

/// Minimiser of the cubic interpolating values and derivatives at `a` and `b`
/// (Moré & Thuente, section 4), computed in the overflow-safe scaled form. Returns `None`
/// when the cubic has no local minimiser (negative discriminant).
fn cubic(a: Point, b: Point) -> Option<f64> {
    let theta = 3.0 * (a.f - b.f) / (b.t - a.t) + a.d + b.d;
    let s = theta.abs().max(a.d.abs()).max(b.d.abs());
    let disc = (theta / s).powi(2) - (a.d / s) * (b.d / s);
    if disc <= 0.0 {
        return None;
    }
    let mut gamma = s * disc.sqrt();
    if b.t < a.t {
        gamma = -gamma;
    }
    let p = (gamma - a.d) + theta;
    let q = ((gamma - a.d) + gamma) + b.d;
    let t = a.t + p / q * (b.t - a.t);
    t.is_finite().then_some(t)
}

/// [`cubic`], falling back to the bisection point when the cubic degenerates.
fn cubic_min(a: Point, b: Point) -> f64 {
    cubic(a, b).unwrap_or(0.5 * (a.t + b.t))
}

/// Minimiser of the quadratic interpolating `f(a), f'(a), f(b)`.
fn quadratic_min_values(a: Point, b: Point) -> f64 {
    a.t + a.d / ((a.f - b.f) / (b.t - a.t) + a.d) / 2.0 * (b.t - a.t)
}

/// Minimiser (secant) of the quadratic interpolating `f'(a), f'(b)`.
fn secant(a: Point, b: Point) -> f64 {
    b.t + b.d / (b.d - a.d) * (a.t - b.t)
}

/// Interval state of the Moré–Thuente search.
struct Interval {
    x: Point,
    y: Point,
    bracketed: bool,
}

impl Interval {
    /// Chooses the next trial step from the new point `p` and updates the interval
    /// (Moré & Thuente, cases 1–4 and the updating rules), within `[lo, hi]`.
    fn step(&mut self, p: Point, lo: f64, hi: f64) -> f64 {
        let x = self.x;
        let sgnd = p.d * x.d.signum();
        let next = if p.f > x.f {
            // Case 1: higher value; the minimiser is bracketed.
            let c = cubic_min(x, p);
            let q = quadratic_min_values(x, p);
            self.bracketed = true;
            if (c - x.t).abs() < (q - x.t).abs() {
                c
            } else {
                c + (q - c) / 2.0
            }
        } else if sgnd < 0.0 {
            // Case 2: derivatives of opposite sign; bracketed.
            let c = cubic_min(p, x);
            let q = secant(x, p);
            self.bracketed = true;
            if (c - p.t).abs() > (q - p.t).abs() {
                c
            } else {
                q
            }
        } else if p.d.abs() < x.d.abs() {
            // Case 3: derivative decreases in magnitude.
            // Use the cubic minimiser only if it lies beyond p (away from x).
            let c = match cubic(p, x) {
                Some(c) if (c - p.t) * (x.t - p.t) < 0.0 => c,
                _ if p.t > x.t => hi,
                _ => lo,
            };
            let q = secant(x, p);
            if self.bracketed {
                let pick = if (c - p.t).abs() < (q - p.t).abs() {
                    c
                } else {
                    q
                };
                let limit = p.t + 0.66 * (self.y.t - p.t);
                if p.t > x.t {
                    pick.min(limit)
                } else {
                    pick.max(limit)
                }
            } else {
                let pick = if (c - p.t).abs() > (q - p.t).abs() {
                    c
                } else {
                    q
                };
                pick.clamp(lo, hi)
            }
        } else if self.bracketed {
            // Case 4: derivative does not decrease; interpolate toward the other end.
            cubic_min(p, self.y)
        } else if p.t > x.t {
            hi
        } else {
            lo
        };
        if p.f > x.f {
            self.y = p;
        } else {
            if sgnd < 0.0 {
                self.y = x;
            }
            self.x = p;
        }
        next
    }
}

/// Searches along `phi` from step `stp` in `[0, stp_max]`. `phi(t)` returns the value and
/// directional derivative at `t`, or `None` when the evaluation budget is exhausted;
/// `f0, g0` are `phi(0), phi'(0)` with `g0 < 0`.
pub(crate) fn search<E>(
    mut phi: impl FnMut(f64) -> Result<Option<(f64, f64)>, E>,
    f0: f64,
    g0: f64,
    stp: f64,
    stp_max: f64,
) -> Result<Option<SearchResult>, E> {
    let gtest = C1 * g0;
    let mut stp = stp.min(stp_max);
    let start = Point {
        t: 0.0,
        f: f0,
        d: g0,
    };
    let mut iv = Interval {
        x: start,
        y: start,
        bracketed: false,
    };
    let mut stage_one = true;
    let mut width = stp_max;
    let mut width1 = 2.0 * width;
    let (mut stmin, mut stmax) = (0.0, stp + EXTRAP_HIGH * stp);
    let mut last: Option<SearchResult> = None;
    for evals in 1..=MAX_EVALS {
        let Some((f, d)) = phi(stp)? else {
            return Ok(last.map(|r| SearchResult {
                end: SearchEnd::Budget,
                ..r
            }));
        };
        let ftest = f0 + stp * gtest;
        let result = |end| SearchResult { step: stp, f, end };
        last = Some(result(SearchEnd::Stopped));
        if stage_one && f <= ftest && d >= 0.0 {
            stage_one = false;
        }
        if f <= ftest && d.abs() <= C2 * (-g0) {
            return Ok(Some(result(SearchEnd::Converged)));
        }
        let stopped = (iv.bracketed
            && (stp <= stmin || stp >= stmax || stmax - stmin <= XTOL * stmax))
            || (stp == stp_max && f <= ftest && d <= gtest)
            || (stp == 0.0 && (f > ftest || d >= gtest))
            || evals == MAX_EVALS;
        if stopped {
            return Ok(last);
        }
        let p = Point { t: stp, f, d };
        stp = if stage_one && f <= iv.x.f && f > ftest {
            // Work with psi: shift values and derivatives by the sufficient-decrease line.
            let shift = |q: Point| Point {
                t: q.t,
                f: q.f - q.t * gtest,
                d: q.d - gtest,
            };
            let unshift = |q: Point| Point {
                t: q.t,
                f: q.f + q.t * gtest,
                d: q.d + gtest,
            };
            let mut shifted = Interval {
                x: shift(iv.x),
                y: shift(iv.y),
                bracketed: iv.bracketed,
            };
            let next = shifted.step(shift(p), stmin, stmax);
            iv = Interval {
                x: unshift(shifted.x),
                y: unshift(shifted.y),
                bracketed: shifted.bracketed,
            };
            next
        } else {
            iv.step(p, stmin, stmax)
        };
        if iv.bracketed {
            if (iv.y.t - iv.x.t).abs() >= 0.66 * width1 {
                stp = iv.x.t + 0.5 * (iv.y.t - iv.x.t);
            }
            width1 = width;
            width = (iv.y.t - iv.x.t).abs();
            stmin = iv.x.t.min(iv.y.t);
            stmax = iv.x.t.max(iv.y.t);
        } else {
            stmin = stp + EXTRAP_LOW * (stp - iv.x.t);
            stmax = stp + EXTRAP_HIGH * (stp - iv.x.t);
        }
        stp = stp.clamp(0.0, stp_max);
        if !stp.is_finite()
            || (iv.bracketed && (stp <= stmin || stp >= stmax || stmax - stmin <= XTOL * stmax))
        {
            stp = iv.x.t;
        }
    }
    Ok(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(phi: impl Fn(f64) -> (f64, f64), stp: f64, stp_max: f64) -> SearchResult {
        let (f0, g0) = phi(0.0);
        search::<()>(|t| Ok(Some(phi(t))), f0, g0, stp, stp_max)
            .unwrap()
            .unwrap()
    }

    fn assert_wolfe(phi: impl Fn(f64) -> (f64, f64), r: SearchResult) {
        let (f0, g0) = phi(0.0);
        assert_eq!(r.end, SearchEnd::Converged);
        assert!(r.f <= f0 + C1 * r.step * g0);
        assert!(phi(r.step).1.abs() <= C2 * g0.abs());
    }

    #[test]
    fn satisfies_strong_wolfe_on_test_functions() {
        // Moré–Thuente test function 1: phi(a) = -a / (a^2 + beta), beta = 2.
        let f1 = |a: f64| (-a / (a * a + 2.0), (a * a - 2.0) / (a * a + 2.0).powi(2));
        for stp in [1e-3, 1e-1, 10.0, 1000.0] {
            assert_wolfe(f1, run(f1, stp, 1e10));
        }
        // Quartic with its minimum far away: needs extrapolation.
        let f2 = |a: f64| ((a - 30.0).powi(4) / 1e4, 4.0 * (a - 30.0).powi(3) / 1e4);
        assert_wolfe(f2, run(f2, 1e-2, 1e10));
        // Steep valley: needs interpolation back from a far step.
        let f3 = |a: f64| ((a - 0.01).powi(2) * 100.0, 200.0 * (a - 0.01));
        assert_wolfe(f3, run(f3, 1.0, 1e10));
    }

    #[test]
    fn stops_at_the_maximum_step_when_still_descending() {
        let phi = |a: f64| (-a, -1.0);
        let r = run(phi, 0.5, 2.0);
        assert_eq!(r.step, 2.0);
        assert_eq!(r.end, SearchEnd::Stopped);
    }
}

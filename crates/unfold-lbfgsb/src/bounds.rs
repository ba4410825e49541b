//! The feasible box `l <= x <= u` (infinite bounds allowed): validation, projection, the
//! projected gradient and the largest feasible step along a direction.

use crate::Error;

/// Validated box constraints.
#[derive(Debug, Clone)]
pub(crate) struct Bounds {
    pub(crate) lower: Vec<f64>,
    pub(crate) upper: Vec<f64>,
}

impl Bounds {
    /// Validates `(lower, upper)` pairs: no NaN, `lower <= upper`, and a finite point inside.
    pub(crate) fn new(bounds: &[(f64, f64)]) -> Result<Self, Error> {
        for (index, &(lower, upper)) in bounds.iter().enumerate() {
            if lower.is_nan() || upper.is_nan() {
                return Err(Error::NanBound { index });
            }
            if lower > upper {
                return Err(Error::LowerAboveUpper {
                    index,
                    lower,
                    upper,
                });
            }
            if lower == f64::INFINITY || upper == f64::NEG_INFINITY {
                return Err(Error::UnreachableBound {
                    index,
                    lower,
                    upper,
                });
            }
        }
        Ok(Self {
            lower: bounds.iter().map(|b| b.0).collect(),
            upper: bounds.iter().map(|b| b.1).collect(),
        })
    }

    /// True if some variable has a finite bound.
    pub(crate) fn any_finite(&self) -> bool {
        self.lower.iter().chain(&self.upper).any(|b| b.is_finite())
    }

    /// True if every variable has both bounds finite.
    pub(crate) fn all_boxed(&self) -> bool {
        self.lower.iter().chain(&self.upper).all(|b| b.is_finite())
    }

    /// Projects `x` onto the box in place; returns true if anything moved.
    pub(crate) fn project(&self, x: &mut [f64]) -> bool {
        let mut moved = false;
        for ((xi, &l), &u) in x.iter_mut().zip(&self.lower).zip(&self.upper) {
            let p = xi.clamp(l, u);
            moved |= p != *xi;
            *xi = p;
        }
        moved
    }

    /// Infinity norm of the projected gradient `P(x - g) - x`.
    pub(crate) fn projected_gradient_norm(&self, x: &[f64], g: &[f64]) -> f64 {
        (0..x.len())
            .map(|i| {
                let room = if g[i] > 0.0 {
                    x[i] - self.lower[i]
                } else {
                    self.upper[i] - x[i]
                };
                g[i].abs().min(room)
            })
            .fold(0.0, f64::max)
    }

    /// Largest `t >= 0` such that `x + t d` stays in the box (`+inf` if unbounded).
    pub(crate) fn max_step(&self, x: &[f64], d: &[f64]) -> f64 {
        (0..x.len())
            .map(|i| {
                if d[i] > 0.0 {
                    (self.upper[i] - x[i]) / d[i]
                } else if d[i] < 0.0 {
                    (self.lower[i] - x[i]) / d[i]
                } else {
                    f64::INFINITY
                }
            })
            .fold(f64::INFINITY, f64::min)
            .max(0.0)
    }
}

//! Euclidean projections onto the feasible set.

use crate::Error;
use std::cell::RefCell;
use std::fmt;

/// A user projection closure behind a `RefCell`, so that it can be called through `&Projection`.
pub type ProjectionFn = RefCell<Box<dyn FnMut(&mut [f64]) + Send>>;

/// The feasible set `C` of the projected method, given by its Euclidean projection `P_C`.
pub enum Projection {
    /// No constraint: `C = R^n`, `P_C(x) = x`.
    None,
    /// The non-negative orthant `x >= 0`: `P_C(x)_i = max(x_i, 0)`.
    NonNegative,
    /// A box `l_i <= x_i <= u_i`, one `(l_i, u_i)` pair per coordinate; infinite bounds are
    /// allowed. `P_C(x)_i = min(max(x_i, l_i), u_i)`.
    Box(Vec<(f64, f64)>),
    /// A user projection that overwrites its argument with `P_C(x)`. Build it with
    /// [`Projection::custom`]. It must be (close to) the Euclidean projection onto a closed
    /// convex set for the convergence guarantees to hold.
    Custom(ProjectionFn),
}

impl Projection {
    /// A user projection from a closure that projects its argument in place.
    pub fn custom<P: FnMut(&mut [f64]) + Send + 'static>(p: P) -> Self {
        Projection::Custom(RefCell::new(Box::new(p)))
    }

    /// Checks the projection against a point of dimension `n`: box length and bounds.
    pub fn validate(&self, n: usize) -> Result<(), Error> {
        if let Projection::Box(bounds) = self {
            if bounds.len() != n {
                return Err(Error::DimensionMismatch {
                    expected: bounds.len(),
                    got: n,
                });
            }
            for (index, &(lower, upper)) in bounds.iter().enumerate() {
                if lower.is_nan() || upper.is_nan() || lower > upper {
                    return Err(Error::BadBounds {
                        index,
                        lower,
                        upper,
                    });
                }
            }
        }
        Ok(())
    }

    /// Overwrites `x` with its projection `P_C(x)`. Assumes [`Projection::validate`] passed.
    pub fn apply(&self, x: &mut [f64]) {
        match self {
            Projection::None => {}
            Projection::NonNegative => x.iter_mut().for_each(|v| *v = v.max(0.0)),
            Projection::Box(bounds) => {
                for (v, &(l, u)) in x.iter_mut().zip(bounds) {
                    *v = v.max(l).min(u);
                }
            }
            Projection::Custom(p) => (p.borrow_mut())(x),
        }
    }

    /// Projects `x` and checks that the result is finite (`iteration` is for the error).
    pub(crate) fn apply_checked(&self, x: &mut [f64], iteration: usize) -> Result<(), Error> {
        self.apply(x);
        match x.iter().position(|v| !v.is_finite()) {
            Some(index) => Err(Error::NonFiniteProjection {
                iteration,
                index,
                value: x[index],
            }),
            None => Ok(()),
        }
    }
}

impl fmt::Debug for Projection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Projection::None => write!(f, "None"),
            Projection::NonNegative => write!(f, "NonNegative"),
            Projection::Box(b) => f.debug_tuple("Box").field(b).finish(),
            Projection::Custom(_) => write!(f, "Custom(<closure>)"),
        }
    }
}

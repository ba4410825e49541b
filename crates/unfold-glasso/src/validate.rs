//! Input checks: S, the penalty, the options and the warm start.

use crate::{Error, GlassoOptions, Penalty};
use nalgebra::DMatrix;

/// Relative tolerance of the symmetry checks (times the largest |entry|).
const SYMMETRY_TOL: f64 = 1e-10;

/// A checked problem in column-major storage.
pub(crate) struct Checked {
    /// Dimension.
    pub p: usize,
    /// `(S + S^T) / 2`, column-major.
    pub s: Vec<f64>,
    /// Penalties, column-major: off-diagonal `rho_ij` (possibly `+inf`), diagonal `rho_ii` when
    /// the diagonal is penalised and 0 otherwise.
    pub pen: Vec<f64>,
}

/// Checks S, the penalty and the options.
pub(crate) fn check(
    s: &DMatrix<f64>,
    penalty: &Penalty,
    opts: &GlassoOptions,
) -> Result<Checked, Error> {
    let (rows, cols) = s.shape();
    if rows == 0 || cols == 0 {
        return Err(Error::Empty);
    }
    if rows != cols {
        return Err(Error::NotSquare { rows, cols });
    }
    let p = rows;
    check_options(opts)?;
    let mut scale = 0.0f64;
    for c in 0..p {
        for r in 0..p {
            let v = s[(r, c)];
            if !v.is_finite() {
                return Err(Error::NonFinite {
                    row: r,
                    col: c,
                    value: v,
                });
            }
            scale = scale.max(v.abs());
        }
    }
    for i in 0..p {
        if s[(i, i)] < 0.0 {
            return Err(Error::NegativeVariance {
                index: i,
                value: s[(i, i)],
            });
        }
        for j in 0..i {
            let (upper, lower) = (s[(j, i)], s[(i, j)]);
            if (upper - lower).abs() > SYMMETRY_TOL * scale {
                return Err(Error::NotSymmetric {
                    row: j,
                    col: i,
                    upper,
                    lower,
                });
            }
        }
    }
    let mut sym = vec![0.0; p * p];
    for c in 0..p {
        for r in 0..p {
            sym[r + c * p] = 0.5 * (s[(r, c)] + s[(c, r)]);
        }
    }
    let pen = penalty_matrix(penalty, p, opts.penalize_diagonal)?;
    if let Some((w, t)) = &opts.warm_start {
        check_warm_start(w, t, p)?;
    }
    Ok(Checked { p, s: sym, pen })
}

/// The dense penalty matrix (see [`Checked::pen`]).
fn penalty_matrix(penalty: &Penalty, p: usize, penalize_diagonal: bool) -> Result<Vec<f64>, Error> {
    let mut pen = vec![0.0; p * p];
    match penalty {
        Penalty::Scalar(rho) => {
            if !(rho.is_finite() && *rho >= 0.0) {
                return Err(Error::BadPenalty {
                    row: 0,
                    col: 0,
                    value: *rho,
                    requirement: "a scalar penalty must be finite and >= 0",
                });
            }
            pen.iter_mut().for_each(|v| *v = *rho);
        }
        Penalty::Matrix(m) => {
            if m.shape() != (p, p) {
                return Err(Error::PenaltyShape {
                    rows: m.nrows(),
                    cols: m.ncols(),
                    p,
                });
            }
            for c in 0..p {
                for r in 0..p {
                    let v = m[(r, c)];
                    let diagonal = r == c;
                    if diagonal && !penalize_diagonal {
                        continue;
                    }
                    if v.is_nan() || v < 0.0 {
                        return Err(Error::BadPenalty {
                            row: r,
                            col: c,
                            value: v,
                            requirement: "penalties must be >= 0 (not NaN)",
                        });
                    }
                    if diagonal && v.is_infinite() {
                        return Err(Error::BadPenalty {
                            row: r,
                            col: c,
                            value: v,
                            requirement:
                                "a penalised diagonal must be finite (Theta_ii > 0 always)",
                        });
                    }
                    if r < c {
                        let lower = m[(c, r)];
                        let same = v == lower
                            || (v - lower).abs() <= SYMMETRY_TOL * v.abs().max(lower.abs());
                        if !same {
                            return Err(Error::PenaltyNotSymmetric {
                                row: r,
                                col: c,
                                upper: v,
                                lower,
                            });
                        }
                    }
                    pen[r + c * p] = v;
                }
            }
        }
    }
    if !penalize_diagonal {
        (0..p).for_each(|i| pen[i + i * p] = 0.0);
    }
    Ok(pen)
}

fn check_options(o: &GlassoOptions) -> Result<(), Error> {
    for (name, value) in [("tol", o.tol), ("inner_tol", o.inner_tol)] {
        if !(value.is_finite() && value > 0.0) {
            return Err(Error::InvalidOption {
                name,
                value,
                requirement: "a tolerance must be finite and > 0",
            });
        }
    }
    for (name, value) in [
        ("max_iter", o.max_iter),
        ("inner_max_iter", o.inner_max_iter),
    ] {
        if value == 0 {
            return Err(Error::InvalidOption {
                name,
                value: 0.0,
                requirement: "an iteration limit must be at least 1",
            });
        }
    }
    Ok(())
}

fn check_warm_start(w: &DMatrix<f64>, t: &DMatrix<f64>, p: usize) -> Result<(), Error> {
    for (name, m) in [("W", w), ("Theta", t)] {
        if m.shape() != (p, p) {
            return Err(Error::BadWarmStart {
                reason: format!(
                    "{name} is {} x {}, expected {p} x {p}",
                    m.nrows(),
                    m.ncols()
                ),
            });
        }
        if let Some(k) = m.iter().position(|v| !v.is_finite()) {
            return Err(Error::BadWarmStart {
                reason: format!("{name}[({}, {})] is not finite", k % p, k / p),
            });
        }
    }
    if let Some(i) = (0..p).find(|&i| t[(i, i)] <= 0.0) {
        return Err(Error::BadWarmStart {
            reason: format!("Theta[({i}, {i})] = {} must be > 0", t[(i, i)]),
        });
    }
    Ok(())
}

//! Preprocessing before any method, as single-cell and Monocle users expect: the steps of
//! `--preprocess` (`centre`, `scale`, `log1p`, `pca:Q`) applied in the order given.
//!
//! Fitting a pipeline to training data records what each step learned (means, standard
//! deviations, principal axes), so that [`Preprocessing::apply`] transforms new points
//! exactly as the training points were, which projection needs.

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
use unfold_core::{Error, Result};
use unfold_linalg::{principal_components, PcaSolver};

/// One step, as given on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Subtract each column's mean.
    Centre,
    /// z-score each column (mean 0, standard deviation 1 with divisor n - 1; a constant
    /// column is only centred).
    Scale,
    /// `ln(1 + y)` of every value (counts); values must exceed -1.
    Log1p,
    /// The coordinates on the top Q principal axes (exact or randomized PCA, chosen by the
    /// data's shape: [`PcaSolver::Auto`]).
    Pca(usize),
}

/// What `--preprocess` accepts, for messages.
const STEPS: &str = "centre, scale, log1p, pca:Q";

impl Step {
    /// Parses a comma-separated list such as `log1p,scale,pca:50`.
    pub fn parse_list(text: &str) -> Result<Vec<Step>> {
        let bad = |m: String| Error::invalid("preprocess", m);
        let steps = text
            .split(',')
            .map(str::trim)
            .map(|word| match word {
                "centre" | "center" => Ok(Step::Centre),
                "scale" => Ok(Step::Scale),
                "log1p" => Ok(Step::Log1p),
                _ => match word.strip_prefix("pca:").map(str::parse::<usize>) {
                    Some(Ok(q)) if q >= 1 => Ok(Step::Pca(q)),
                    Some(_) => Err(bad(format!(
                        "{word:?}: the number of PCA components must be a whole number >= 1, e.g. pca:50"
                    ))),
                    None => Err(bad(format!("{word:?} is not a step; use {STEPS}"))),
                },
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(steps)
    }
}

/// A fitted step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
enum Fitted {
    Centre {
        mean: DVector<f64>,
    },
    Scale {
        mean: DVector<f64>,
        scale: DVector<f64>,
    },
    Log1p,
    Pca {
        mean: DVector<f64>,
        components: DMatrix<f64>,
    },
}

/// A fitted pipeline: its steps with what they learned from the training data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Preprocessing {
    steps: Vec<Fitted>,
    /// Columns of the input the pipeline was fitted to.
    input_dim: usize,
}

impl Preprocessing {
    /// Fits `steps` to the training points `y` (rows) and returns the pipeline with the
    /// transformed points.
    pub fn fit(steps: &[Step], y: DMatrix<f64>) -> Result<(Preprocessing, DMatrix<f64>)> {
        let input_dim = y.ncols();
        let mut y = y;
        let mut fitted = Vec::with_capacity(steps.len());
        for &step in steps {
            let f = match step {
                Step::Centre => Fitted::Centre {
                    mean: DVector::from_fn(y.ncols(), |j, _| y.column(j).mean()),
                },
                Step::Scale => {
                    let s = crate::standardise(&y);
                    Fitted::Scale {
                        mean: s.mean,
                        scale: s.scale,
                    }
                }
                Step::Log1p => Fitted::Log1p,
                Step::Pca(q) => {
                    let (n, p) = (y.nrows(), y.ncols());
                    if q > p || q >= n {
                        return Err(Error::invalid(
                            "preprocess",
                            format!(
                                "pca:{q} needs fewer components than the {p} columns and the {n} points it gets; choose a smaller Q"
                            ),
                        ));
                    }
                    let pc = principal_components(&y, q, PcaSolver::Auto, 0)?;
                    Fitted::Pca {
                        mean: pc.mean,
                        components: pc.components,
                    }
                }
            };
            y = f.apply(y)?;
            fitted.push(f);
        }
        Ok((
            Preprocessing {
                steps: fitted,
                input_dim,
            },
            y,
        ))
    }

    /// Fits `steps` to a sparse matrix without a dense copy: leading `log1p` steps act on
    /// its stored values (`ln(1 + 0) = 0` keeps it sparse), then `pca:Q` is the exact
    /// sparse PCA ([`unfold_linalg::principal_components_sparse`]) and the steps after it
    /// act on the Q dense coordinates. Returns the pipeline, which applies to dense new
    /// points as usual, with the transformed points.
    ///
    /// # Errors
    /// Steps without `pca:Q` after the leading `log1p` (centring or scaling would make the
    /// matrix dense), values at or below -1 for `log1p`, and the steps' own errors.
    pub fn fit_sparse(
        steps: &[Step],
        mut y: crate::SparseCsr,
    ) -> Result<(Preprocessing, DMatrix<f64>)> {
        let logs = steps.iter().take_while(|s| **s == Step::Log1p).count();
        let Some(&Step::Pca(q)) = steps.get(logs) else {
            return Err(Error::invalid(
                "preprocess",
                "sparse input is reduced by pca:Q before anything else (log1p may come \
                 first): centre or scale would make it dense; e.g. --preprocess log1p,pca:50",
            ));
        };
        if logs > 0 {
            if let Some(v) = y.data.first_at_most(-1.0) {
                return Err(Error::invalid(
                    "preprocess",
                    format!("log1p needs values above -1; the sparse input holds {v}"),
                ));
            }
            y.data.map_in_place(|v| (0..logs).fold(v, |v, _| v.ln_1p()));
        }
        let (n, p) = (y.nrows, y.ncols);
        if q > p || q >= n {
            return Err(Error::invalid(
                "preprocess",
                format!(
                    "pca:{q} needs fewer components than the {p} columns and the {n} points it gets; choose a smaller Q"
                ),
            ));
        }
        let pc = y.principal_components(q, 0)?;
        let mut fitted = vec![Fitted::Log1p; logs];
        fitted.push(Fitted::Pca {
            mean: pc.mean,
            components: pc.components,
        });
        let (rest, points) = Preprocessing::fit(&steps[logs + 1..], pc.coords)?;
        fitted.extend(rest.steps);
        Ok((
            Preprocessing {
                steps: fitted,
                input_dim: p,
            },
            points,
        ))
    }

    /// Transforms new points (rows, with the training data's columns) as the training
    /// points were.
    pub fn apply(&self, y: DMatrix<f64>) -> Result<DMatrix<f64>> {
        if !self.steps.is_empty() && y.ncols() != self.input_dim {
            return Err(Error::DimensionMismatch(format!(
                "the preprocessing was fitted to {} columns, the new points have {}",
                self.input_dim,
                y.ncols()
            )));
        }
        self.steps.iter().try_fold(y, |y, f| f.apply(y))
    }

    /// True when there are no steps.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Checks a decoded pipeline (from a model file): each step's stored vectors and axes
    /// have the width its input has (the previous step's output, the first step the
    /// pipeline's input), every stored number is finite, scales are positive and principal
    /// axes exist. On success, [`Preprocessing::apply`] cannot fail on shapes.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Error::invalid("preprocessing", m);
        let finite = |what: &str, v: &[f64]| -> Result<()> {
            match v.iter().position(|x| !x.is_finite()) {
                Some(at) => Err(bad(format!("{what} holds a non-finite value at {at}"))),
                None => Ok(()),
            }
        };
        if !self.steps.is_empty() && self.input_dim == 0 {
            return Err(bad("the pipeline has no input columns".to_string()));
        }
        // A vector's length, or usize::MAX when its stored values disagree with its shape.
        let len = |v: &DVector<f64>| {
            if v.ncols() == 1 && v.nrows() == v.as_slice().len() {
                v.nrows()
            } else {
                usize::MAX
            }
        };
        let mut width = self.input_dim;
        for (i, step) in self.steps.iter().enumerate() {
            let wrong = |what: &str, found: usize| {
                bad(format!(
                    "step {} ({what}) has {found} values for {width} columns",
                    i + 1
                ))
            };
            match step {
                Fitted::Centre { mean } => {
                    if len(mean) != width {
                        return Err(wrong("centre", len(mean)));
                    }
                    finite("a mean", mean.as_slice())?;
                }
                Fitted::Scale { mean, scale } => {
                    if len(mean) != width || len(scale) != width {
                        return Err(wrong("scale", len(mean).min(len(scale))));
                    }
                    finite("a mean", mean.as_slice())?;
                    finite("a scale", scale.as_slice())?;
                    if scale.iter().any(|&v| v <= 0.0) {
                        return Err(bad(format!("step {} (scale) holds a scale <= 0", i + 1)));
                    }
                }
                Fitted::Log1p => {}
                Fitted::Pca { mean, components } => {
                    if len(mean) != width || components.nrows() != width {
                        return Err(wrong("pca", len(mean).min(components.nrows())));
                    }
                    let stored = components.as_slice().len();
                    if components.ncols() == 0
                        || Some(stored) != width.checked_mul(components.ncols())
                    {
                        return Err(bad(format!(
                            "step {} (pca) has {} axes stored in {stored} values",
                            i + 1,
                            components.ncols()
                        )));
                    }
                    finite("a mean", mean.as_slice())?;
                    finite("a principal axis", components.as_slice())?;
                    width = components.ncols();
                }
            }
        }
        Ok(())
    }

    /// The steps in words, e.g. `log1p,scale,pca:50`.
    pub fn describe(&self) -> String {
        let words: Vec<String> = self
            .steps
            .iter()
            .map(|f| match f {
                Fitted::Centre { .. } => "centre".to_string(),
                Fitted::Scale { .. } => "scale".to_string(),
                Fitted::Log1p => "log1p".to_string(),
                Fitted::Pca { components, .. } => format!("pca:{}", components.ncols()),
            })
            .collect();
        words.join(",")
    }
}

impl Fitted {
    fn apply(&self, mut y: DMatrix<f64>) -> Result<DMatrix<f64>> {
        match self {
            Fitted::Centre { mean } => {
                for (mut col, &m) in y.column_iter_mut().zip(mean.iter()) {
                    col.add_scalar_mut(-m);
                }
            }
            Fitted::Scale { mean, scale } => {
                for ((mut col, &m), &s) in y.column_iter_mut().zip(mean.iter()).zip(scale.iter()) {
                    col.apply(|v| *v = (*v - m) / s);
                }
            }
            Fitted::Log1p => {
                if let Some((at, v)) = y.iter().enumerate().find(|(_, v)| **v <= -1.0) {
                    let (row, col) = (at % y.nrows(), at / y.nrows());
                    return Err(Error::invalid(
                        "preprocess",
                        format!(
                            "log1p needs values above -1, but row {row}, column {col} holds {v}; log1p is for counts"
                        ),
                    ));
                }
                y.apply(|v| *v = v.ln_1p());
            }
            Fitted::Pca { mean, components } => {
                for (mut col, &m) in y.column_iter_mut().zip(mean.iter()) {
                    col.add_scalar_mut(-m);
                }
                y = unfold_linalg::gemm::mul(&y, components);
            }
        }
        Ok(y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts() -> DMatrix<f64> {
        DMatrix::from_fn(40, 6, |i, j| ((i * 7 + j * 3) % 11) as f64 * (j + 1) as f64)
    }

    #[test]
    fn parses_steps_in_order_and_names_bad_ones() {
        assert_eq!(
            Step::parse_list("log1p, scale,pca:3,center").unwrap(),
            [Step::Log1p, Step::Scale, Step::Pca(3), Step::Centre]
        );
        let e = Step::parse_list("log2").unwrap_err().to_string();
        assert!(e.contains("\"log2\"") && e.contains("pca:Q"), "{e}");
        let e = Step::parse_list("pca:0").unwrap_err().to_string();
        assert!(e.contains(">= 1"), "{e}");
        assert!(Step::parse_list("pca:x").is_err());
    }

    #[test]
    fn each_step_does_its_formula_and_new_points_follow_the_training_ones() {
        let y = counts();
        let steps = Step::parse_list("log1p,scale,pca:3").unwrap();
        let (pipe, out) = Preprocessing::fit(&steps, y.clone()).unwrap();
        assert_eq!(pipe.describe(), "log1p,scale,pca:3");
        // By hand: log1p, z-scores, then the PCA coordinates.
        let logged = y.map(f64::ln_1p);
        let z = crate::standardise(&logged).points;
        for j in 0..6 {
            assert!(z.column(j).mean().abs() < 1e-12);
            assert!((z.column(j).norm_squared() / 39.0 - 1.0).abs() < 1e-12);
        }
        let pc = principal_components(&z, 3, PcaSolver::Exact, 0).unwrap();
        assert!((&out - &pc.coords).amax() < 1e-12);
        // The training points through `apply` land where `fit` put them.
        let again = pipe.apply(y.clone()).unwrap();
        assert!((&again - &out).amax() < 1e-12);
        // A new point is transformed with the training statistics, not its own.
        let new = y.rows(0, 1).into_owned();
        assert!((pipe.apply(new).unwrap() - out.rows(0, 1)).amax() < 1e-12);
    }

    #[test]
    fn bad_input_is_named() {
        let mut y = counts();
        y[(3, 2)] = -2.0;
        let e = Preprocessing::fit(&[Step::Log1p], y)
            .unwrap_err()
            .to_string();
        assert!(e.contains("row 3, column 2") && e.contains("-2"), "{e}");
        let e = Preprocessing::fit(&[Step::Pca(7)], counts())
            .unwrap_err()
            .to_string();
        assert!(e.contains("pca:7") && e.contains("6 columns"), "{e}");
        let (pipe, _) = Preprocessing::fit(&[Step::Centre], counts()).unwrap();
        let e = pipe.apply(DMatrix::zeros(2, 5)).unwrap_err().to_string();
        assert!(e.contains("6 columns") && e.contains("5"), "{e}");
    }
}

//! Generalised LLE as a pseudolikelihood (`lle-pl`; Lawrence 2012 §2.7; spec
//! `meu_alle_drill.md` §4.2–4.4).
//!
//! The same local regressions as ALLE ([`crate::grf::regression`]) but on the ordinary kNN lists,
//! so `M` is not triangular and the product of the regressions is a pseudolikelihood
//! (the normalised column factors of Eq. 9/10, not Besag's full conditionals), reported with
//! [`EvidenceKind::PseudoLogLikelihood`](unfold_core::EvidenceKind::PseudoLogLikelihood). The precisions `m_ii^2` are estimated
//! (`p / ||r_i||^2`) or fixed to 1, which is standard LLE: the embedding, from the smallest
//! non-constant eigenvectors of `M M^T`, is then exactly that of [`crate::Lle`].

use crate::grf::regression::{
    regression_embedding, LocalRegressions, PrecisionRule, RegressionField, RegressionProjector,
    DEFAULT_REG, REG,
};
use crate::grf::{FieldScaling, GaussianRandomField, Precision, Trained, SCALING_HELP};
use crate::method::{Checked, Declared, Field, ParamSpec, Rule, Settings};
use crate::traits::{check_fit_input, check_new_points, OutOfSample, Projection};
use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
use unfold_core::{Evidence, Observer, Result, Silent};
use unfold_graph::{GraphSpec, Weighting};

crate::params! {
    /// Settings of [`LlePl`].
    #[derive(Clone, Debug, PartialEq)]
    pub struct LlePlParams {
        pub dim: usize = 2 => Rule::at_least(1, "latent dimension"),
        pub graph: GraphSpec = GraphSpec::knn(10) => Rule::group(),
        /// Ridge of the local Gram matrices relative to their trace.
        pub reg: f64 = DEFAULT_REG => REG,
        /// Estimated precisions, or unit ones (standard LLE): the parameter `unit_precision`.
        pub precision: PrecisionRule = PrecisionRule::Estimated => Rule::group(),
        pub scaling: FieldScaling = FieldScaling::UnitVariance => Rule::help(SCALING_HELP),
    }
}

/// lle-pl's parameter `unit_precision`: on for [`PrecisionRule::Unit`].
impl Field for PrecisionRule {
    fn field_specs(_: &'static str, _: &Rule, default: &Self) -> Vec<ParamSpec> {
        let unit = Rule::help(
            "lle-pl: fix every precision m_ii to 1 (standard LLE) instead of estimating it",
        );
        bool::field_specs("unit_precision", &unit, &(*default == PrecisionRule::Unit))
    }

    fn read_into(&mut self, _: &'static str, settings: &Settings) -> Result<()> {
        let mut unit = *self == PrecisionRule::Unit;
        unit.read_into("unit_precision", settings)?;
        *self = if unit {
            PrecisionRule::Unit
        } else {
            PrecisionRule::Estimated
        };
        Ok(())
    }

    fn write(&self, _: &'static str, settings: &mut Settings) {
        (*self == PrecisionRule::Unit).write("unit_precision", settings);
    }
}

impl LlePlParams {
    /// Estimated precisions, ridge 1e-3, unit-variance coordinates.
    pub fn new(dim: usize, k: usize) -> Self {
        LlePlParams {
            dim,
            graph: GraphSpec::knn(k),
            ..LlePlParams::default()
        }
    }

    /// Fits generalised LLE to the rows of `y` (features centred first).
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<LlePl> {
        self.clone().check()?.fit(y, &Silent)
    }
}

impl Checked<LlePlParams> {
    /// [`LlePlParams::fit`] with the parameters checked.
    pub fn fit(&self, y: &DMatrix<f64>, observer: &dyn Observer) -> Result<LlePl> {
        check_fit_input(y, self.dim, "lle-pl")?;
        let (yc, mean) = unfold_data::centre(y);
        let (nn, graph) = self
            .graph
            .build(&yc, Weighting::Binary, "lle-pl", observer)?;
        let regs = LocalRegressions::fit(&yc, nn.indices, self.reg, self.precision, "lle-pl")?;
        let evidence = RegressionField {
            regs: &regs,
            y: &yc,
            acyclic: false,
        }
        .pseudo_log_likelihood(&[])?;
        let (emb, latent_scale) = regression_embedding(&regs, self.dim, self.scaling)?;
        Ok(LlePl {
            regressions: regs,
            k: self.graph.k,
            reg: self.reg,
            rule: self.precision,
            eigenvalues: emb.eigenvalues,
            latent_scale,
            evidence,
            trained: Trained {
                mean,
                train: yc,
                graph,
                coords: emb.coords,
            },
        })
    }
}

/// A fitted generalised LLE.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LlePl {
    pub regressions: LocalRegressions,
    pub k: usize,
    pub reg: f64,
    pub rule: PrecisionRule,
    /// Eigenvalues `1 / mu` of the centred covariance for the embedding axes, descending.
    pub eigenvalues: DVector<f64>,
    pub latent_scale: DVector<f64>,
    /// Pseudo-log-likelihood of the centred training data (not comparable with a
    /// likelihood).
    pub evidence: Evidence,
    /// The training points, their mean, the graph and the embedding.
    pub trained: Trained,
}

impl LlePl {
    /// `L = M M^T`.
    pub fn precision(&self) -> Precision {
        Precision::Sparse(self.regressions.precision_matrix(true))
    }
}

crate::embedding!(LlePl, trained);

impl OutOfSample for LlePl {
    /// The regression of the new point on its k nearest training points, as in ALLE.
    fn project(&self, y_new: &DMatrix<f64>) -> Result<Projection> {
        check_new_points(y_new, self.trained.train.ncols())?;
        RegressionProjector {
            train: &self.trained.train,
            mean: &self.trained.mean,
            coords: &self.trained.coords,
            latent_scale: &self.latent_scale,
            k: self.k,
            reg: self.reg,
            rule: self.rule,
        }
        .project(y_new)
    }
}

/// LLE as a pseudo-likelihood in the method registry ([`crate::registry`]).
mod registration {
    use super::*;
    use crate::method::{Family, FitData, MethodInfo, Model, Registered};
    use unfold_core::EvidenceKind;
    use unfold_core::Observer;

    const ABOUT: &str = "LLE as a field fitted by pseudo-likelihood";

    impl Registered for LlePl {
        type Params = LlePlParams;

        fn info() -> MethodInfo {
            MethodInfo::new("lle-pl", Family::RandomField, ABOUT)
                .evidence(EvidenceKind::PseudoLogLikelihood)
                .projects()
        }

        fn fit(p: &Checked<Self::Params>, data: &FitData, observer: &dyn Observer) -> Result<Self> {
            p.fit(&data.y.matrix(), observer)
        }
    }

    impl Model for LlePl {
        fn validate(&self) -> Result<()> {
            use crate::method::validate::*;
            let n = self
                .trained
                .validate(&self.eigenvalues, &self.latent_scale, self.k)?;
            non_negative("reg", self.reg)?;
            self.regressions.validate(n)
        }

        fn out_of_sample(&self) -> Option<&dyn crate::traits::OutOfSample> {
            Some(self)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traits::Embedding;
    use crate::LleParams;

    fn roll(n: usize) -> DMatrix<f64> {
        DMatrix::from_fn(n, 3, |i, j| {
            let t = 1.5 + 3.0 * i as f64 / n as f64;
            let h = ((i * 37) % 11) as f64 / 11.0;
            [t * t.cos(), 2.0 * h, t * t.sin()][j]
        })
    }

    #[test]
    fn unit_precisions_are_standard_lle() {
        let y = roll(120);
        let pl = LlePlParams::new(2, 8)
            .precision(PrecisionRule::Unit)
            .fit(&y)
            .unwrap();
        let lle = LleParams::new(2, 8).fit(&y).unwrap();
        let diff = (pl.coords() - lle.coords()).abs().max();
        assert!(diff < 1e-8, "max coordinate difference {diff}");
        let yn = y.rows(5, 3).into_owned() * 1.001;
        let a = pl.project(&yn).unwrap().mean;
        let b = lle.project(&yn).unwrap().mean;
        assert!((a - b).abs().max() < 1e-8);
    }

    #[test]
    fn estimated_precisions_are_the_likelihood_fixed_point() {
        let y = roll(80);
        let pl = LlePlParams::new(2, 6).fit(&y).unwrap();
        assert_eq!(
            pl.evidence.kind,
            unfold_core::EvidenceKind::PseudoLogLikelihood
        );
        // Each term (p/2) log m^2 - m^2 r^2 / 2 is maximal in m^2 at p / r^2.
        for (&m, &r) in pl
            .regressions
            .precisions
            .iter()
            .zip(&pl.regressions.sq_residuals)
        {
            let f = |m: f64| 1.5 * m.ln() - 0.5 * m * r;
            assert!((m * r - 3.0).abs() < 1e-12);
            assert!(f(m) > f(m * 1.01) && f(m) > f(m * 0.99));
        }
    }
}

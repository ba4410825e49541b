//! A new model in under 100 lines: the field `L(lambda, beta) + gamma I`, L the kNN Laplacian
//! with heat weights, fitted by maximum likelihood and registered, so that `unfold`'s own
//! `fit`, `select`, `project`, model files and demo work for it:
//! `cargo run --release --example custom_model -- select --method heat --input data.csv`.
use nalgebra::DMatrix;
use unfold::core::{Evidence, EvidenceKind, Result};
use unfold::models::grf::{self, FieldFitOptions, FieldScaling::UnitVariance, Precision};
use unfold::models::registry::{decode, Family, FitData, Method, MethodInfo, Model};
use unfold::models::registry::{ParamSpec, Registry, Settings};
use unfold::models::{Embedding, GaussianRandomField, GraphSpec, OutOfSample, Projection};
use unfold::{graph::knn_query, linalg::spd_inverse};
const GAMMA: f64 = 1e-3;
/// The weight `lambda exp(-beta d^2)` of an edge, `t = [lambda, beta]`.
fn heat(d2: f64, t: &[f64]) -> f64 {
    t[0] * (-t[1] * d2).exp()
}
/// The data and the kNN edges `(i, j, d^2)`.
struct HeatField<'a>(&'a DMatrix<f64>, Vec<(usize, usize, f64)>);
impl GaussianRandomField for HeatField<'_> {
    fn shape(&self) -> (usize, usize) {
        self.0.shape()
    }
    fn bounds(&self) -> Vec<(f64, f64)> {
        vec![(1e-9, f64::INFINITY), (0.0, f64::INFINITY)]
    }
    fn precision(&self, t: &[f64]) -> Result<Precision> {
        let mut p = DMatrix::identity(self.0.nrows(), self.0.nrows()) * GAMMA;
        for &(i, j, d2) in &self.1 {
            let w = heat(d2, t);
            (p[(i, i)], p[(j, j)], p[(i, j)], p[(j, i)]) =
                (p[(i, i)] + w, p[(j, j)] + w, p[(i, j)] - w, p[(j, i)] - w);
        }
        Ok(Precision::Dense(p))
    }
    fn log_likelihood(&self, t: &[f64]) -> Result<Evidence> {
        grf::field_log_likelihood(&self.precision(t)?, self.0, "heat field")
    }
    /// `1/2 sum_e dw_e/dt (p r_e - d_e^2)`, `r_e = K_ii + K_jj - 2 K_ij`, `K = P^{-1}`.
    fn log_likelihood_gradient(&self, t: &[f64], grad: &mut [f64]) -> Result<f64> {
        let Precision::Dense(k) = self.precision(t)? else {
            unreachable!()
        };
        let (k, p) = (spd_inverse(&k, "heat field")?, self.n_features() as f64);
        grad.fill(0.0);
        for &(i, j, d2) in &self.1 {
            let r = 0.5 * heat(d2, t) * (p * (k[(i, i)] + k[(j, j)] - 2.0 * k[(i, j)]) - d2);
            (grad[0], grad[1]) = (grad[0] + r / t[0], grad[1] - r * d2);
        }
        Ok(self.log_likelihood(t)?.value)
    }
}
#[derive(serde::Serialize, serde::Deserialize)]
struct HeatEigenmaps {
    coords: DMatrix<f64>,
    y: DMatrix<f64>,
    theta: Vec<f64>,
    k: usize,
    evidence: Evidence,
}
impl Embedding for HeatEigenmaps {
    fn coords(&self) -> &DMatrix<f64> {
        &self.coords
    }
    fn evidence(&self) -> Evidence {
        self.evidence.clone()
    }
}
/// The field's conditional mean given the new point's k nearest training points.
impl OutOfSample for HeatEigenmaps {
    fn project(&self, y_new: &DMatrix<f64>) -> Result<Projection> {
        let nn = knn_query(&self.y, y_new, self.k)?;
        let w = |r: usize, m: usize| heat(nn.distances[r][m].powi(2), &self.theta);
        let x = DMatrix::from_fn(y_new.nrows(), self.coords.ncols(), |r, c| {
            let num: f64 = (0..self.k)
                .map(|m| w(r, m) * self.coords[(nn.indices[r][m], c)])
                .sum();
            num / ((0..self.k).map(|m| w(r, m)).sum::<f64>() + GAMMA)
        });
        Ok(Projection::point(x))
    }
}
impl Model for HeatEigenmaps {
    fn method(&self) -> &'static str {
        "heat"
    }
    fn out_of_sample(&self) -> Option<&dyn OutOfSample> {
        Some(self)
    }
}
pub struct Heat;
impl Method for Heat {
    fn info(&self) -> MethodInfo {
        MethodInfo::new(
            "heat",
            Family::Other,
            "a Laplacian field with fitted heat weights",
        )
        .params([ParamSpec::k()])
        .evidence(EvidenceKind::LogLikelihood)
        .projects()
    }
    fn fit(
        &self,
        data: &FitData,
        s: &Settings,
        _: &dyn unfold::vem::Observer,
    ) -> Result<Box<dyn Model>> {
        let (y, k) = (data.y, s.count("k")?);
        let (_, graph) = GraphSpec::knn(k).build(y, Default::default(), "heat eigenmaps")?;
        let d2 = |i: usize, j: usize| (y.row(i) - y.row(j)).norm_squared();
        let edges: Vec<_> = graph
            .edges()
            .iter()
            .map(|&(i, j, _)| (i, j, d2(i, j)))
            .collect();
        let beta0 = edges.len() as f64 / edges.iter().map(|e| e.2).sum::<f64>();
        let field = HeatField(y, edges);
        let (theta, _) =
            grf::maximise_likelihood(&field, &[1.0, beta0], &FieldFitOptions::default())?;
        let Precision::Dense(prec) = field.precision(&theta)? else {
            unreachable!()
        };
        let cov = spd_inverse(&prec, "heat")?;
        let coords = grf::covariance_embedding(cov, s.count("dim")?, UnitVariance)?.coords;
        let evidence = field.log_likelihood(&theta)?;
        Ok(Box::new(HeatEigenmaps {
            evidence,
            y: y.clone(),
            coords,
            theta,
            k,
        }))
    }
    fn decode(&self, payload: &[u8]) -> Result<Box<dyn Model>> {
        decode::<HeatEigenmaps>(payload)
    }
}
/// unfold's methods and this one.
pub fn registry() -> Registry {
    Registry::builtin()
        .with(Box::new(Heat))
        .expect("`heat` is a new name")
}
pub fn main() {
    std::process::exit(unfold::cli::run_with(registry()));
}

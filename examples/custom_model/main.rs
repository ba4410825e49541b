//! A new model in under 100 lines: the field `L(lambda, beta) + gamma I`, L the kNN Laplacian
//! with heat weights, fitted by maximum likelihood, selected over k, saved, loaded, projected.
use nalgebra::DMatrix;
use unfold::core::{load_model, save_model, Evidence, Result};
use unfold::models::grf::{self, FieldFitOptions, FieldScaling::UnitVariance};
use unfold::models::grf::{GaussianRandomField, Precision, PrecisionDerivative};
use unfold::models::{Embedding, GraphSpec, OutOfSample, Projection};
use unfold::{graph::knn_query, linalg::spd_inverse};
const GAMMA: f64 = 1e-3;
/// The weight `lambda exp(-beta d^2)` of an edge, `t = [lambda, beta]`; the field below holds
/// the data and the edges `(i, j, d^2)`.
fn heat(d2: f64, t: &[f64]) -> f64 {
    t[0] * (-t[1] * d2).exp()
}
struct HeatField<'a>(&'a DMatrix<f64>, Vec<(usize, usize, f64)>);
/// The trait needs the precision and its derivatives; it provides the likelihood, gradient, fit.
impl GaussianRandomField for HeatField<'_> {
    fn shape(&self) -> (usize, usize) {
        self.0.shape()
    }
    fn data(&self) -> &DMatrix<f64> {
        self.0
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
    /// `dP/dlambda = sum_e (w_e / lambda) A_e`, `dP/dbeta = -sum_e d_e^2 w_e A_e`.
    fn precision_derivatives(&self, t: &[f64]) -> Result<Vec<PrecisionDerivative>> {
        let along = |f: &dyn Fn(f64) -> f64| {
            PrecisionDerivative::edges(self.1.iter().map(|&(i, j, d2)| (i, j, f(d2) * heat(d2, t))))
        };
        Ok(vec![along(&|_| 1.0 / t[0]), along(&|d2| -d2)])
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
        let x = DMatrix::from_fn(y_new.nrows(), 2, |r, c| {
            let num: f64 = (0..self.k).map(|m| w(r, m) * self.coords[(nn.indices[r][m], c)]).sum();
            num / ((0..self.k).map(|m| w(r, m)).sum::<f64>() + GAMMA)
        });
        Ok(Projection::point(x))
    }
}
fn fit(y: &DMatrix<f64>, k: usize) -> Result<HeatEigenmaps> {
    let (_, graph) = GraphSpec::knn(k).build(y, Default::default(), "heat eigenmaps")?;
    let d2 = |i: usize, j: usize| (y.row(i) - y.row(j)).norm_squared();
    let edges: Vec<_> = graph.edges().iter().map(|&(i, j, _)| (i, j, d2(i, j))).collect();
    let beta0 = edges.len() as f64 / edges.iter().map(|e| e.2).sum::<f64>();
    let field = HeatField(y, edges);
    let theta = field.fit(&[1.0, beta0], &FieldFitOptions::default())?.theta;
    let Precision::Dense(prec) = field.precision(&theta)? else { unreachable!() };
    let coords = grf::covariance_embedding(spd_inverse(&prec, "heat")?, 2, UnitVariance)?.coords;
    Ok(HeatEigenmaps { evidence: field.log_likelihood(&theta)?, y: y.clone(), coords, theta, k })
}
pub fn main() -> Result<()> {
    let roll = unfold::data::synthetic::swiss_roll(300, 0.05, 0)?.points;
    let y = &roll - DMatrix::from_fn(300, 3, |_, c| roll.column(c).mean());
    let candidates = unfold::select::grid(&[6, 8, 10, 12], &[Default::default()], &[2], 1, 0);
    let selection = unfold::select::search(&candidates, |c| Ok(fit(&y, c.setting.k)?.evidence))?;
    let model = fit(&y, selection.settings[selection.best].setting.k)?;
    let path = std::env::temp_dir().join("unfold-heat-eigenmaps.bin");
    save_model(&path, "heat-eigenmaps", &model)?;
    let p = load_model::<HeatEigenmaps>(&path, "heat-eigenmaps")?.project(&y.rows(0, 3).into())?;
    println!("{}best k = {}, theta = {:?}", selection.to_csv(), model.k, model.theta);
    println!("projected {:.3}fitted at {:.3}", p.mean, model.coords.rows(0, 3));
    Ok(())
}

//! A new model in under 100 lines: the field `L(lambda, beta) + gamma I`, L the kNN Laplacian
//! with heat weights `lambda exp(-beta d^2)`, registered so that all of `unfold` works for it:
//! `cargo run --release --example custom_model -- select --method heat --input data.csv`
use nalgebra::DMatrix;
use unfold::prelude::*;
const GAMMA: f64 = 1e-3;
/// The data and the kNN edges `(i, j, d)`; `t = [lambda, beta]`.
pub struct HeatField<'a>(pub &'a DMatrix<f64>, pub Vec<(usize, usize, f64)>);
fn heat(d: f64, t: &[f64]) -> f64 {
    t[0] * (-t[1] * d * d).exp()
}
/// The precision and its derivatives; the trait gives the likelihood, its gradient, the fit.
impl GaussianRandomField for HeatField<'_> {
    fn data(&self) -> &DMatrix<f64> {
        self.0
    }
    fn bounds(&self) -> Vec<(f64, f64)> {
        vec![(1e-9, f64::INFINITY), (0.0, f64::INFINITY)]
    }
    fn precision(&self, t: &[f64]) -> Result<Precision> {
        let edges = self.1.iter().map(|&(i, j, d)| (i, j, heat(d, t)));
        let laplacian = Laplacian::new(self.0.nrows()).shift(GAMMA);
        Ok(Precision::Sparse(laplacian.sparse(edges)))
    }
    /// `dP/dlambda = sum_e (w_e / lambda) A_e`, `dP/dbeta = -sum_e d_e^2 w_e A_e`.
    fn precision_derivatives(&self, t: &[f64]) -> Result<Vec<PrecisionDerivative>> {
        let along = |f: &dyn Fn(f64) -> f64| {
            let edges = self.1.iter().map(|&(i, j, d)| (i, j, f(d) * heat(d, t)));
            PrecisionDerivative::edges(edges)
        };
        Ok(vec![along(&|_| 1.0 / t[0]), along(&|d| -d * d)])
    }
}
#[derive(serde::Serialize, serde::Deserialize)]
struct HeatEigenmaps {
    coords: DMatrix<f64>,
    evidence: Evidence,
    fit: FieldFit,
    y: DMatrix<f64>,
}
embedding!(HeatEigenmaps);
/// The field's conditional mean given the new point's edges to its 10 nearest points.
impl OutOfSample for HeatEigenmaps {
    fn project(&self, y_new: &DMatrix<f64>) -> Result<Projection> {
        let nn = knn_query(&self.y, y_new, 10)?;
        let row = |r: usize| {
            let w = nn.distances[r].iter().map(|&d| heat(d, &self.fit.theta));
            new_node_mean(&self.coords, nn.indices[r].iter().copied().zip(w), GAMMA)
        };
        let rows: Vec<_> = (0..y_new.nrows()).map(row).collect();
        Ok(Projection::point(DMatrix::from_rows(&rows)))
    }
}
impl Model for HeatEigenmaps {
    fn convergence(&self) -> Convergence {
        self.fit.convergence.clone()
    }
    fn out_of_sample(&self) -> Option<&dyn OutOfSample> {
        Some(self)
    }
}
params! {
    pub struct HeatParams {
        pub dim: usize = 2 => Rule::at_least(1, "latent dimension"),
        pub k: usize = 10 => Rule::at_least(1, ParamSpec::k().help),
    }
}
impl Registered for HeatEigenmaps {
    type Params = HeatParams;
    fn info() -> MethodInfo {
        let info = MethodInfo::new("heat", Family::Other, "a heat-kernel Laplacian field");
        info.projects().evidence(EvidenceKind::LogLikelihood)
    }
    fn fit(p: &Checked<HeatParams>, data: &FitData, observer: &dyn Observer) -> Result<Self> {
        let y = data.y.matrix().into_owned();
        let (_, graph) = GraphSpec::knn(p.k).build(&y, Weighting::Distance, "heat", observer)?;
        let edges = graph.edges();
        let beta0 = edges.len() as f64 / edges.iter().map(|e| e.2 * e.2).sum::<f64>();
        let field = HeatField(&y, edges);
        let fit = field.fit(&[1.0, beta0], &FieldFitOptions::default())?;
        let evidence = field.log_likelihood(&fit.theta)?;
        let scaling = FieldScaling::UnitVariance;
        let coords = field.embedding(&fit.theta, p.dim, scaling)?.coords;
        Ok(HeatEigenmaps {
            coords,
            evidence,
            fit,
            y,
        })
    }
}
/// unfold's methods and this one.
pub fn registry() -> Registry {
    let heat = registered::<HeatEigenmaps>();
    Registry::builtin().with(heat).expect("a new name")
}
pub fn main() {
    std::process::exit(unfold::cli::run_with(registry()));
}

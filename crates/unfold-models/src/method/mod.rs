//! The interface every model implements once: [`Registered`] (what the method is, its
//! typed parameters and its fit; [`Registration`] makes the registry's [`Method`] of it)
//! and [`Model`] (what a fitted model offers), with the typed parameters ([`params!`](crate::params)), the
//! points of a fit as a view of either layout ([`Points`]) and the checks of decoded
//! models ([`validate`]).
//!
//! This is the bottom layer of the crate: it depends on no model, family or registry, and
//! every model depends on it ([`crate::registry`] lists the models at the top).

mod declare;
pub(crate) mod jitter;
pub mod merged;
mod params;
mod points;
mod register;
pub mod validate;

pub use declare::{Checked, Choice, Declared, Field, Param, Rule};
pub use points::{Points, TrainingPoints};
pub use register::{registered, Registered, Registration};

use crate::traits::{Embedding, OutOfSample};
use nalgebra::DMatrix;
pub use params::{DefaultValue, Interval, ParamKind, ParamSpec, Settings, Value};
use serde::{de::DeserializeOwned, Serialize};
use unfold_core::Observer;
use unfold_core::{Convergence, Error, Evidence, EvidenceKind, Result};
use unfold_data::Preprocessing;
use unfold_graph::NeighbourGraph;

/// The family a method belongs to (its folder in unfold-models).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// PCA, CMDS, kernel PCA, Laplacian eigenmaps, LLE, Isomap, MVU.
    Spectral,
    /// Gaussian random fields: MEU, ALLE, lle-pl, DRILL.
    RandomField,
    /// Latent variable models fitted by variational EM: LL-LVM.
    LatentVariable,
    /// Posterior-regularised embeddings: SPL, MPME, DRTree, DDRTree.
    Regularised,
    /// A model from outside the library.
    Other,
}

impl Family {
    /// The family's name in tables and help.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Spectral => "spectral",
            Family::RandomField => "random field",
            Family::LatentVariable => "latent variable",
            Family::Regularised => "posterior-regularised",
            Family::Other => "other",
        }
    }
}

/// What a method is and what it can do.
#[derive(Clone, Debug)]
pub struct MethodInfo {
    /// The name on the command line and in model files (`meu`, `lle-pl`, ...).
    pub name: &'static str,
    pub family: Family,
    /// One line for help texts.
    pub about: &'static str,
    /// Its parameters (the registry adds `seed` to every method).
    pub params: Vec<ParamSpec>,
    /// The kind of evidence [`Model::evidence_on`] gives ([`EvidenceKind::None`] if none).
    pub evidence: EvidenceKind,
    /// Whether its fitted models project new points ([`Model::out_of_sample`]).
    pub projects: bool,
    /// Whether it fits on a given graph ([`FitData::graph`]) instead of building its own.
    pub takes_graph: bool,
    /// Whether it needs distinct points (a zero distance breaks its math): the registry
    /// then gives it the parameter `duplicates` and by default fits it to the distinct
    /// rows ([`merged`]).
    pub distinct_points: bool,
    /// Whether it fits sparse points as they are ([`Points::as_sparse`]), needing only
    /// their neighbours and distances; the registry densifies sparse points for the
    /// others, within the memory limit.
    pub sparse_points: bool,
}

impl MethodInfo {
    /// A method with the parameter `dim` only, no evidence, no projection and no given
    /// graph; the builders below add the rest.
    pub fn new(name: &'static str, family: Family, about: &'static str) -> Self {
        MethodInfo {
            name,
            family,
            about,
            params: vec![ParamSpec::dim()],
            evidence: EvidenceKind::None,
            projects: false,
            takes_graph: false,
            distinct_points: false,
            sparse_points: false,
        }
    }

    /// These parameters after `dim` (a parameter named as one already listed, such as
    /// the `dim` of a [`Declared`] struct, replaces it in place).
    pub fn params(mut self, params: impl IntoIterator<Item = ParamSpec>) -> Self {
        for p in params {
            match self.params.iter_mut().find(|q| q.name == p.name) {
                Some(q) => *q = p,
                None => self.params.push(p),
            }
        }
        self
    }

    /// The kind of evidence the fitted models report.
    pub fn evidence(mut self, kind: EvidenceKind) -> Self {
        self.evidence = kind;
        self
    }

    /// The fitted models project new points.
    pub fn projects(mut self) -> Self {
        self.projects = true;
        self
    }

    /// The method needs distinct points ([`MethodInfo::distinct_points`]).
    pub fn distinct_points(mut self) -> Self {
        self.distinct_points = true;
        self
    }

    /// The method fits sparse points without a dense copy ([`MethodInfo::sparse_points`]).
    pub fn sparse_points(mut self) -> Self {
        self.sparse_points = true;
        self
    }

    /// The method fits on a given graph.
    pub fn takes_graph(mut self) -> Self {
        self.takes_graph = true;
        self
    }

    /// Whether the method has the parameter `name`.
    pub fn has(&self, name: &str) -> bool {
        self.params.iter().any(|p| p.name == name)
    }
}

/// The data a method is fitted to: the points (n x p, one per row, in either layout) and,
/// for methods that take one, a neighbourhood graph on them.
#[derive(Clone, Copy)]
pub struct FitData<'a> {
    pub y: Points<'a>,
    pub graph: Option<&'a NeighbourGraph>,
}

impl<'a> FitData<'a> {
    /// Points only: the method builds its own graph if it needs one.
    pub fn points(y: &'a DMatrix<f64>) -> Self {
        FitData::view(Points::from(y))
    }

    /// Points given as a view of either layout ([`Points::new`]).
    pub fn view(y: Points<'a>) -> Self {
        FitData { y, graph: None }
    }

    /// These points on the given graph (`None`: the method builds its own).
    pub fn with_graph(self, graph: Option<&'a NeighbourGraph>) -> Self {
        FitData { graph, ..self }
    }
}

/// A method of unfold: a model type implements [`Registered`] (and [`Model`]) and the
/// registry lists [`registered`] of it (or a method implements this trait by hand); the
/// command line's `fit`, `project`, `select` and `demo`, model files and model selection
/// then work for it.
pub trait Method: Send + Sync {
    /// Name, family, parameters and capabilities.
    fn info(&self) -> MethodInfo;

    /// Fits the method. `settings` hold every declared parameter, checked and with the
    /// defaults filled in (those with an automatic default only when given); iterative
    /// fits report each iteration to `observer`.
    fn fit(
        &self,
        data: &FitData<'_>,
        settings: &Settings,
        observer: &dyn Observer,
    ) -> Result<Box<dyn Model>>;

    /// Decodes a fitted model from the payload [`Encode::encode`] wrote (use [`decode`]).
    fn decode(&self, payload: &[u8]) -> Result<Box<dyn Model>>;

    /// Decodes a payload of a file of format `version`
    /// ([`unfold_core::MODEL_FORMAT_VERSION`] and older): by default [`Method::decode`],
    /// for a method whose model's layout has not changed since the oldest version read.
    fn decode_version(&self, payload: &[u8], version: u32) -> Result<Box<dyn Model>> {
        let _ = version;
        self.decode(payload)
    }
}

/// An extra output table of a fitted model (DDRTree's tree and centres), written beside
/// the embedding as `<out>.<name>.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub name: &'static str,
    pub header: Vec<String>,
    pub rows: DMatrix<f64>,
}

/// What a model draws over the scatter plot of its embedding's first two coordinates.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Overlay {
    /// A value per point to colour the points by, with its name (for the colour bar).
    pub colour_by: Option<(String, Vec<f64>)>,
    /// Line segments in the embedding's coordinates, drawn over the points.
    pub segments: Vec<[(f64, f64); 2]>,
    /// Places marked over the points and segments (e.g. a tree's branch points).
    pub marks: Vec<(f64, f64)>,
}

/// The bytes of a model for its model file; every serialisable model has them.
pub trait Encode {
    /// The model encoded with bincode 2 (standard configuration) through serde.
    fn encode(&self) -> Result<Vec<u8>>;
}

impl<T: Serialize> Encode for T {
    fn encode(&self) -> Result<Vec<u8>> {
        bincode::serde::encode_to_vec(self, bincode::config::standard())
            .map_err(|e| Error::numerical("encoding the model", e.to_string()))
    }
}

/// The name of the method that fitted a model ([`MethodInfo::name`]): every
/// [`Registered`] model type has it from its [`Registered::info`]; a model of a method
/// written by hand implements it.
pub trait Named {
    /// The method's name.
    fn method(&self) -> &'static str;
}

/// A fitted model.
pub trait Model: Embedding + Encode + Named + Send + Sync {
    /// How the fit ended.
    fn convergence(&self) -> Convergence {
        Convergence::closed_form()
    }

    /// The out-of-sample rule, for methods that have one.
    fn out_of_sample(&self) -> Option<&dyn OutOfSample> {
        None
    }

    /// The model's labelled evidence on its training data `y`. By default the evidence
    /// of the fit; Laplacian eigenmaps and LLE compute theirs here, on demand.
    fn evidence_on(&self, _y: Points<'_>) -> Result<Evidence> {
        Ok(self.evidence())
    }

    /// The edges `(i, j, weight)` of the graph the model fitted or learned, if any.
    fn learned_edges(&self) -> Option<Vec<(usize, usize, f64)>> {
        self.graph().map(|g| g.edges())
    }

    /// Extra output tables.
    fn tables(&self) -> Vec<Table> {
        Vec::new()
    }

    /// What the model adds to the picture of its embedding (DDRTree: its tree, and the
    /// pseudotime of an ordering to colour the points by).
    fn overlay(&self) -> Option<Overlay> {
        None
    }

    /// Facts about the fit a user should read, as `(name, value)` (DDRTree's ordering:
    /// the root cell, the branch points and the number of states); the command line
    /// prints them and puts them in the report.
    fn notes(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Checks a decoded model before it is used: its shapes agree with each other, its
    /// values are finite, its indices are in range and its parameters in their valid
    /// ranges, so that a damaged or hand-made file is refused as corrupt instead of making
    /// a projection panic. [`decode`] calls it; every built-in model implements it with the
    /// helpers of [`crate::method::validate`] (`docs/model-files.md` lists the checks).
    fn validate(&self) -> Result<()> {
        Ok(())
    }
}

/// How a fit went: the common report of every method.
#[derive(Clone, Debug, PartialEq)]
pub struct FitReport {
    pub method: String,
    pub iterations: usize,
    pub converged: bool,
    /// What stopped the fit ([`Convergence::stopped_by`]).
    pub stopped_by: String,
    pub seconds: f64,
    pub evidence: Evidence,
    /// The objective after each iteration (empty for closed-form fits).
    pub trace: Vec<f64>,
}

/// The most bytes a payload of `len` bytes may make bincode claim while decoding: bincode
/// claims the in-memory size of every value (at most 16 bytes for a value stored in at
/// least one byte) and the whole length of a string before reading it, so a limit of 16
/// bytes per payload byte never refuses a genuine model, and a damaged length field
/// (10^12 elements, say) is refused instead of allocated. The limit is a type parameter
/// of bincode's configuration; it is taken from a ladder of powers of 16, so the bound is
/// at most 16 times looser than 16 x `len`.
fn decode_limited<T: DeserializeOwned>(
    payload: &[u8],
) -> std::result::Result<(T, usize), bincode::error::DecodeError> {
    use bincode::serde::decode_from_slice;
    let config = bincode::config::standard();
    let need = payload.len().saturating_mul(16);
    if need <= 1 << 20 {
        decode_from_slice(payload, config.with_limit::<{ 1 << 20 }>())
    } else if need <= 1 << 24 {
        decode_from_slice(payload, config.with_limit::<{ 1 << 24 }>())
    } else if need <= 1 << 28 {
        decode_from_slice(payload, config.with_limit::<{ 1 << 28 }>())
    } else if need <= 1 << 32 {
        decode_from_slice(payload, config.with_limit::<{ 1 << 32 }>())
    } else if need <= 1 << 36 {
        decode_from_slice(payload, config.with_limit::<{ 1 << 36 }>())
    } else {
        decode_from_slice(payload, config.with_limit::<{ 1 << 40 }>())
    }
}

/// A value of type `T` from the bytes [`Encode::encode`] wrote, every byte used; `what`
/// names it in the error. A length field larger than the bytes could hold is refused
/// before anything of that size is allocated ([`decode_limited`]).
pub(crate) fn decode_whole<T: DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T> {
    let (value, used) = decode_limited::<T>(bytes)
        .map_err(|e| Error::invalid(what, format!("the file is corrupt or truncated ({e})")))?;
    if used != bytes.len() {
        return Err(Error::invalid(
            what,
            format!(
                "the file is corrupt: {} unexpected bytes after the {what}",
                bytes.len() - used
            ),
        ));
    }
    Ok(value)
}

/// A model of type `T` from the bytes [`Encode::encode`] wrote; every byte must be used
/// and the model must pass [`Model::validate`] (`decode_whole`).
pub fn decode<T: DeserializeOwned + Model + 'static>(payload: &[u8]) -> Result<Box<dyn Model>> {
    let model = decode_whole::<T>(payload, "model")?;
    model.validate()?;
    Ok(Box::new(model))
}

/// The preprocessing of a model file's transform block ([`Encode::encode`] of a
/// [`Preprocessing`]), decoded as a model is and validated ([`Preprocessing::validate`]).
pub(crate) fn decode_preprocessing(bytes: &[u8]) -> Result<Preprocessing> {
    let pipeline = decode_whole::<Preprocessing>(bytes, "preprocessing")?;
    pipeline.validate()?;
    Ok(pipeline)
}

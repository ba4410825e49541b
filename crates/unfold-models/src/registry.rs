//! The method registry: one list of every method, through which the command line, model
//! selection, the demo, model files and the Python package reach the models.
//!
//! A model type implements [`Registered`] and [`Model`] in its own file and is added to
//! [`Registry::builtin`]'s list as [`registered`]`::<Model>()`; a researcher's crate adds
//! its own with [`Registry::register`] and gets the same `fit`, `project`, `select`, model files and
//! demo table. Settings are typed ([`Settings`]) and checked against each method's
//! declared parameters ([`ParamSpec`]) before any work starts.
//!
//! ```
//! use unfold_models::registry::{FitData, Registry, Settings};
//! use unfold_models::Embedding;
//! let y = unfold_data::synthetic::swiss_roll(200, 0.0, 0).unwrap().points;
//! let registry = Registry::builtin();
//! let settings = Settings::new().with("k", 8usize);
//! let fitted = registry.fit("meu", &FitData::points(&y), &settings, &unfold_core::Silent).unwrap();
//! assert!(fitted.report.iterations > 0 && fitted.report.converged);
//! assert_eq!(fitted.model.coords().shape(), (200, 2));
//! // Bad values are refused with the parameter's name and range, before any work.
//! let bad = Settings::new().with("gamma", -1.0);
//! let err = registry.fit("meu", &FitData::points(&y), &bad, &unfold_core::Silent).err().unwrap();
//! assert!(err.to_string().contains("`gamma`"));
//! ```

pub use crate::method::{
    decode, registered, validate, DefaultValue, Encode, Family, FitData, FitReport, Interval,
    Method, MethodInfo, Model, Named, Overlay, ParamKind, ParamSpec, Points, Registered, Settings,
    Table, Value,
};

use crate::method::jitter;
use crate::method::merged::{distinct, on_rows, Merged};
use std::path::Path;
use std::time::Instant;
use unfold_core::Observer;
use unfold_core::{Error, Result};
use unfold_data::Preprocessing;

/// A fitted model with the report of its fit.
pub struct Fitted {
    pub model: Box<dyn Model>,
    pub report: FitReport,
}

impl Fitted {
    /// `model`, fitted by `method` since `start`, with the report of how the fit went.
    fn reported(method: &str, model: Box<dyn Model>, start: Instant) -> Self {
        let seconds = start.elapsed().as_secs_f64();
        let c = model.convergence();
        let report = FitReport {
            method: method.to_string(),
            iterations: c.iterations,
            converged: c.converged,
            stopped_by: c.stopped_by,
            seconds,
            evidence: model.evidence(),
            trace: c.trace,
        };
        Fitted { model, report }
    }
}

/// Settings checked against one method's parameters, with its defaults filled in
/// ([`Registry::resolve`]); they read as [`Settings`].
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    method: String,
    settings: Settings,
}

impl Resolved {
    /// The method the settings were resolved for.
    pub fn method(&self) -> &str {
        &self.method
    }
}

impl std::ops::Deref for Resolved {
    type Target = Settings;
    fn deref(&self) -> &Settings {
        &self.settings
    }
}

/// What a model file holds: the model, and the preprocessing (the fitted steps of `unfold
/// fit --preprocess`) that new points go through before the model projects them; empty
/// for a model fitted on the data as given.
pub struct Saved {
    pub model: Box<dyn Model>,
    pub preprocessing: Preprocessing,
}

/// The methods a program knows.
pub struct Registry {
    methods: Vec<Box<dyn Method>>,
}

impl Registry {
    /// No methods.
    pub fn empty() -> Self {
        Registry {
            methods: Vec::new(),
        }
    }

    /// Every method of unfold: the one registration list.
    pub fn builtin() -> Self {
        use crate::method::registered;
        let all: Vec<Box<dyn Method>> = vec![
            registered::<crate::spectral::pca::Pca>(),
            registered::<crate::spectral::cmds::Cmds>(),
            registered::<crate::spectral::kernel_pca::KernelPca>(),
            registered::<crate::spectral::laplacian_eigenmaps::LaplacianEigenmaps>(),
            registered::<crate::spectral::lle::Lle>(),
            registered::<crate::spectral::isomap::Isomap>(),
            registered::<crate::spectral::mvu::Mvu>(),
            registered::<crate::grf::meu::Meu>(),
            registered::<crate::grf::alle::Alle>(),
            registered::<crate::grf::lle_pl::LlePl>(),
            registered::<crate::grf::drill::Drill>(),
            registered::<crate::lvm::lllvm::LlLvm>(),
            registered::<crate::regularised::spl::Spl>(),
            registered::<crate::regularised::mpme::Mpme>(),
            registered::<crate::regularised::drtree::DrTree>(),
            registered::<crate::regularised::ddrtree::DdrTree>(),
        ];
        let mut registry = Registry::empty();
        for m in all {
            registry
                .register(m)
                .expect("the built-in methods have distinct names and consistent parameters");
        }
        registry
    }

    /// Adds a method. Fails if its name is taken, or if it declares a parameter under a
    /// name another method uses with a different type (the command line has one flag per
    /// parameter name).
    pub fn register(&mut self, method: Box<dyn Method>) -> Result<()> {
        let info = method.info();
        if self.methods.iter().any(|m| m.info().name == info.name) {
            return Err(Error::invalid(
                "method",
                format!("a method named `{}` is already registered", info.name),
            ));
        }
        for p in info.params.iter().chain([&ParamSpec::seed()]) {
            for other in self.methods.iter().map(|m| m.info()) {
                if let Some(q) = other.params.iter().find(|q| q.name == p.name) {
                    if std::mem::discriminant(&q.kind) != std::mem::discriminant(&p.kind) {
                        return Err(Error::invalid(
                            p.name,
                            format!(
                                "`{}` declares it as {} but `{}` as {}; use another name",
                                info.name,
                                p.allowed(),
                                other.name,
                                q.allowed()
                            ),
                        ));
                    }
                }
            }
        }
        self.methods.push(method);
        Ok(())
    }

    /// These methods and `method`.
    pub fn with(mut self, method: Box<dyn Method>) -> Result<Self> {
        self.register(method)?;
        Ok(self)
    }

    /// Every method, in registration order.
    pub fn methods(&self) -> impl Iterator<Item = &dyn Method> {
        self.methods.iter().map(|m| m.as_ref())
    }

    /// Every method's name, in registration order.
    pub fn names(&self) -> Vec<&'static str> {
        self.methods().map(|m| m.info().name).collect()
    }

    /// The names of the methods whose info satisfies `keep`, as `a, b or c`.
    pub fn names_where(&self, keep: impl Fn(&MethodInfo) -> bool) -> String {
        let names: Vec<&str> = self
            .methods()
            .map(|m| m.info())
            .filter(|i| keep(i))
            .map(|i| i.name)
            .collect();
        match names.split_last() {
            None => String::new(),
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        }
    }

    /// The method called `name`.
    pub fn get(&self, name: &str) -> Result<&dyn Method> {
        self.methods()
            .find(|m| m.info().name == name)
            .ok_or_else(|| {
                Error::invalid(
                    "method",
                    format!(
                        "no method `{name}`; the methods are {}",
                        self.names().join(", ")
                    ),
                )
            })
    }

    /// The parameters of `name`: its own, `seed`, and `duplicates` where it needs
    /// distinct points.
    pub fn params(&self, name: &str) -> Result<Vec<ParamSpec>> {
        let info = self.get(name)?.info();
        let mut params = info.params;
        if !params.iter().any(|p| p.name == "seed") {
            params.push(ParamSpec::seed());
        }
        if info.distinct_points {
            params.push(ParamSpec::duplicates());
        }
        Ok(params)
    }

    /// Checks `given` against the parameters of `name` (every name known, every value of
    /// its type and in its range) and fills in the defaults.
    pub fn resolve(&self, name: &str, given: &Settings) -> Result<Resolved> {
        let params = self.params(name)?;
        let mut settings = Settings::new();
        for (key, value) in given.iter() {
            let spec = params.iter().find(|p| p.name == key).ok_or_else(|| {
                let names: Vec<&str> = params.iter().map(|p| p.name).collect();
                Error::invalid(
                    key,
                    format!(
                        "`{name}` has no such parameter; its parameters are {}",
                        names.join(", ")
                    ),
                )
            })?;
            spec.check(value)?;
            settings.set(key, value.clone());
        }
        for p in &params {
            if let (None, DefaultValue::Is(v)) = (settings.get(p.name), &p.default) {
                settings.set(p.name, v.clone());
            }
        }
        Ok(Resolved {
            method: name.to_string(),
            settings,
        })
    }

    /// Fits the method `name` with the settings `given` (checked first) and reports how
    /// the fit went.
    pub fn fit(
        &self,
        name: &str,
        data: &FitData<'_>,
        given: &Settings,
        observer: &dyn Observer,
    ) -> Result<Fitted> {
        self.fit_resolved(&self.resolve(name, given)?, data, observer)
    }

    /// Fits with settings already resolved ([`Registry::resolve`]), so that a command
    /// that checks its settings before reading the data checks them once.
    pub fn fit_resolved(
        &self,
        settings: &Resolved,
        data: &FitData<'_>,
        observer: &dyn Observer,
    ) -> Result<Fitted> {
        let name = settings.method();
        let method = self.get(name)?;
        let info = method.info();
        if data.graph.is_some() && !info.takes_graph {
            return Err(Error::invalid(
                "method",
                format!(
                    "{name} builds its own graph; given and epsilon-ball graphs are fitted by {}",
                    self.names_where(|i| i.takes_graph)
                ),
            ));
        }
        let start = Instant::now();
        // Sparse points become dense for a method that does not take them.
        let dense;
        let data = match data.y.as_sparse() {
            Some(sparse) if !info.sparse_points => {
                let (n, p) = sparse.shape();
                crate::traits::check_dense_copy(n, p)?;
                dense = sparse.to_dense();
                FitData::points(&dense).with_graph(data.graph)
            }
            _ => *data,
        };
        // Repeated rows, for a method that needs distinct points: merged or jittered here
        // (`error` is the method's own refusal).
        let handling = settings.choice("duplicates").ok().filter(|d| *d != "error");
        let model = match (info.distinct_points && data.graph.is_none(), handling) {
            (true, Some(handling)) => match distinct(data.y)? {
                Some((first, copy_of)) if handling == "jitter" => {
                    if data.y.as_sparse().is_some() {
                        return Err(jitter::sparse_refusal(name));
                    }
                    let seed = settings.count("seed")? as u64;
                    observer.warn(&jitter::message(name, &first, &copy_of, seed));
                    let moved = jitter::jittered(&data.y.matrix(), &first, &copy_of, seed)?;
                    method.fit(&FitData::points(&moved), settings, observer)?
                }
                Some((first, copy_of)) => {
                    observer.warn(&Merged::message(name, &first, &copy_of));
                    let inner = on_rows(data.y, &first, |rows| {
                        method.fit(&FitData::view(rows), settings, observer)
                    })??;
                    Box::new(Merged::new(inner, first, copy_of))
                }
                None => method.fit(&data, settings, observer)?,
            },
            _ => method.fit(&data, settings, observer)?,
        };
        Ok(Fitted::reported(name, model, start))
    }

    /// The model file of `model`: the one header, then its payload.
    pub fn to_bytes(model: &dyn Model) -> Result<Vec<u8>> {
        Self::to_bytes_with(model, &Preprocessing::default())
    }

    /// The model file of `model` fitted after `preprocessing` (the steps of `unfold fit
    /// --preprocess`), which is stored with it so that new points go through it first
    /// ([`Registry::load_saved`]).
    pub fn to_bytes_with(model: &dyn Model, preprocessing: &Preprocessing) -> Result<Vec<u8>> {
        let transform = if preprocessing.is_empty() {
            Vec::new()
        } else {
            preprocessing.encode()?
        };
        Ok(unfold_core::model_file_bytes(
            model.method(),
            &transform,
            &model.encode()?,
        ))
    }

    /// Saves `model` to `path` (atomically: a temporary file, then a rename).
    pub fn save(model: &dyn Model, path: &Path) -> Result<()> {
        unfold_core::write_atomic(path, &Self::to_bytes(model)?)
    }

    /// Saves `model` with the preprocessing it was fitted after ([`Registry::to_bytes_with`]).
    pub fn save_with(model: &dyn Model, preprocessing: &Preprocessing, path: &Path) -> Result<()> {
        unfold_core::write_atomic(path, &Self::to_bytes_with(model, preprocessing)?)
    }

    /// Reads a model from the bytes of a model file; `path` names the source in messages.
    /// The header is checked first (format version, length and checksum:
    /// [`unfold_core::read_model_file`]), then the payload is decoded by the method the
    /// header names and validated ([`Model::validate`]); every failure is an
    /// [`Error::ModelFile`] that says what is wrong (`docs/model-files.md`). A model fitted
    /// after a preprocessing is refused here (new points would skip it): read it with
    /// [`Registry::saved_from_bytes`].
    pub fn from_bytes(&self, bytes: &[u8], path: &Path) -> Result<Box<dyn Model>> {
        Self::bare(self.decode_file(None, bytes, path)?, path)
    }

    /// [`Registry::from_bytes`] where a model of the method `kind` is expected: a file of
    /// another kind is refused naming both.
    pub fn from_bytes_expecting(
        &self,
        kind: &str,
        bytes: &[u8],
        path: &Path,
    ) -> Result<Box<dyn Model>> {
        Self::bare(self.decode_file(Some(kind), bytes, path)?, path)
    }

    /// The model and the preprocessing it was fitted after (empty for none) from the bytes
    /// of a model file, checked as in [`Registry::from_bytes`]; the preprocessing is
    /// decoded and validated too ([`Preprocessing::validate`]).
    pub fn saved_from_bytes(&self, bytes: &[u8], path: &Path) -> Result<Saved> {
        self.decode_file(None, bytes, path)
    }

    /// The model alone, refused when it was fitted after a preprocessing.
    fn bare(saved: Saved, path: &Path) -> Result<Box<dyn Model>> {
        if saved.preprocessing.is_empty() {
            return Ok(saved.model);
        }
        Err(Error::ModelFile {
            path: path.to_path_buf(),
            message: format!(
                "the model was fitted after the preprocessing `{}` (unfold fit --preprocess), \
                 which new points must go through first: `unfold project` applies it (in \
                 Rust, Registry::load_saved)",
                saved.preprocessing.describe()
            ),
        })
    }

    fn decode_file(&self, expected: Option<&str>, bytes: &[u8], path: &Path) -> Result<Saved> {
        let parts = unfold_core::read_model_file(bytes, path)?;
        let kind = parts.kind;
        let bad = |message: String| Error::ModelFile {
            path: path.to_path_buf(),
            message,
        };
        if let Some(expected) = expected.filter(|&e| e != kind) {
            return Err(bad(format!(
                "it holds a `{kind}` model where a `{expected}` model is expected"
            )));
        }
        let method = self.get(kind).map_err(|_| {
            bad(format!(
                "it holds a `{kind}` model, which this program does not know (it knows {})",
                self.names().join(", ")
            ))
        })?;
        let to_file_error = |e| match e {
            Error::InvalidParameter { message, .. } => bad(message),
            other => other,
        };
        let preprocessing = if parts.transform.is_empty() {
            Preprocessing::default()
        } else {
            crate::method::decode_preprocessing(parts.transform).map_err(to_file_error)?
        };
        let model = method
            .decode_version(parts.payload, parts.version)
            .map_err(to_file_error)?;
        Ok(Saved {
            model,
            preprocessing,
        })
    }

    /// Loads a model saved by [`Registry::save`].
    pub fn load(&self, path: &Path) -> Result<Box<dyn Model>> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        self.from_bytes(&bytes, path)
    }

    /// Loads a model with the preprocessing it was fitted after
    /// ([`Registry::saved_from_bytes`]): what `unfold project` reads.
    pub fn load_saved(&self, path: &Path) -> Result<Saved> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        self.saved_from_bytes(&bytes, path)
    }

    /// Loads a model saved by [`Registry::save`] where a model of the method `kind` is
    /// expected ([`Registry::from_bytes_expecting`]).
    pub fn load_expecting(&self, kind: &str, path: &Path) -> Result<Box<dyn Model>> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        self.from_bytes_expecting(kind, &bytes, path)
    }
}

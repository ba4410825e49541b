//! Variational EM for any [`LatentVariableModel`].
//!
//! One run alternates the model's E-steps and M-step and evaluates the evidence lower bound
//! after every M-step. The bound of variational EM never decreases: each step is an exact
//! coordinate ascent on it. A decrease larger than round-off therefore means a wrong update,
//! and the driver reports it as an error instead of hiding it. [`fit`] runs seeded restarts in
//! parallel and keeps the best bound; the result does not depend on the number of threads.
//!
//! ```
//! # use unfold_core::{Evidence, EvidenceKind, Result, Rng};
//! # use unfold_vem::LatentVariableModel;
//! # struct Toy;
//! # impl LatentVariableModel for Toy {
//! #     type Posterior = f64;
//! #     type Hyper = ();
//! #     fn init(&self, _: &mut Rng) -> Result<(f64, ())> { Ok((0.0, ())) }
//! #     fn e_step(&self, q: &mut f64, _: &()) -> Result<()> { *q = 0.5 * (*q + 1.0); Ok(()) }
//! #     fn m_step(&self, _: &f64, _: &mut ()) -> Result<()> { Ok(()) }
//! #     fn elbo(&self, q: &f64, _: &()) -> Result<Evidence> {
//! #         Ok(Evidence::new(EvidenceKind::Elbo, -(q - 1.0).powi(2)))
//! #     }
//! # }
//! use unfold_core::Silent;
//! use unfold_vem::{fit, VemOptions};
//! let options = VemOptions { restarts: 3, abs_tol: 1e-12, ..VemOptions::default() };
//! let best = fit(&Toy, &options, &Silent).unwrap();
//! assert!(best.best().evidence.value > -1e-6);
//! ```

mod driver;
mod model;

pub use driver::{fit, run_from, Fit, Run, VemOptions};
pub use model::LatentVariableModel;

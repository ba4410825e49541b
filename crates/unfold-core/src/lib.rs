//! Shared vocabulary of the unfold workspace.
//!
//! Every crate reports failures through [`Error`], every probabilistic fit reports a
//! labelled [`Evidence`], and every random choice draws from [`seeded_rng`] so that the
//! same seed gives the same numbers on every machine and thread count.

mod convergence;
mod error;
mod evidence;
pub mod fuzz;
pub mod interrupt;
pub mod io;
mod memory;
mod observe;
mod validate;

pub use convergence::Convergence;
pub use error::{Error, Result};
pub use evidence::{Evidence, EvidenceKind};
pub use io::{
    model_file_bytes, payload_checksum, read_model_file, write_atomic, ModelFileParts,
    MODEL_FORMAT_VERSION, OLDEST_MODEL_FORMAT_VERSION,
};
pub use memory::{
    parse_size, ByteSize, Footprint, LimitSource, MemoryLimit, MemoryRefusal, Scaling,
    ASSUMED_MEMORY, MAX_MEMORY_ENV,
};
pub use observe::{Observer, Silent, Stop};
pub use validate::{
    check_dim, check_finite, check_finite_values, check_k, check_point_values, check_points,
    magnitude, Order, MAX_MAGNITUDE, MIN_MAGNITUDE,
};

/// The random number generator used throughout unfold: ChaCha with 12 rounds, seeded
/// explicitly. Its output is specified by the algorithm, not by the platform.
pub type Rng = rand_chacha::ChaCha12Rng;

/// A generator seeded with `seed`. The same seed gives the same stream everywhere.
pub fn seeded_rng(seed: u64) -> Rng {
    use rand::SeedableRng;
    Rng::seed_from_u64(seed)
}

//! Model selection: one call compares a model's evidence over neighbourhood sizes,
//! symmetrisations, epsilon-ball radii, given or learned graphs ([`GraphSource`]), latent
//! dimensions and seeded restarts ([`search`]), and tests suspected
//! edges of a graph by the change in evidence when each is added or removed
//! ([`edge_tests`]).
//!
//! [`search`] knows nothing about models: the caller passes a closure that fits one
//! candidate and returns its [`Evidence`]. [`Sweep`] is that closure for a registered
//! method (its settings per candidate, the fit and the score), shared by `unfold select`
//! and the Python package, serial or one candidate per distributed task. Candidates run in parallel with rayon, each from
//! its own seed, so the result does not depend on the thread count. Only evidence of one
//! kind is ranked: a log-likelihood is never compared with an evidence lower bound or a
//! pseudo-likelihood. A candidate that fails (a disconnected graph at small k) is recorded
//! with its error and the search goes on.

mod edges;
mod search;
mod sweep;
mod table;

pub use edges::{edge_tests, parse_edge_list, read_edge_list, EdgeTest};
pub use search::{
    grid, grid_graphs, search, Candidate, GraphSource, Selection, Setting, SettingSummary, Trial,
};
pub use sweep::{Plan, Score, Sweep};
pub use table::{table_columns, Resumed, Table, TableSpec};

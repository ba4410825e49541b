//! What the branching examples know of a simulated trajectory
//! (`unfold_data::synthetic::branching`): each cell's true time and segment, and the root
//! (the earliest cell). Included with `#[path]` by `branching.rs` and `branching_sweep.rs`.

use unfold::data::Dataset;

/// The true time and segment of each cell, and the earliest cell.
pub struct Truth<'a> {
    pub time: Vec<f64>,
    pub segment: &'a [usize],
    pub root: usize,
}

/// The truth of a data set made by `synthetic::branching` (its latent time and labels).
pub fn truth(data: &Dataset) -> Truth<'_> {
    let (time, root) = data.time_and_start().expect("the true time of some cells");
    Truth {
        time,
        segment: data.labels.as_deref().expect("segments"),
        root,
    }
}

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
    let time: Vec<f64> = data
        .latent
        .as_ref()
        .expect("true time")
        .column(0)
        .iter()
        .copied()
        .collect();
    let root = (0..time.len())
        .min_by(|&a, &b| time[a].total_cmp(&time[b]))
        .expect("at least one cell");
    Truth {
        time,
        segment: data.labels.as_deref().expect("segments"),
        root,
    }
}

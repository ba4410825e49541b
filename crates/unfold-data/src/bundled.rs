//! Small real data sets bundled into the binary (provenance in `data/README.md`).

use crate::csv::{parse_csv, CsvOptions};
use crate::Dataset;
use nalgebra::DMatrix;
use rand::seq::SliceRandom;
use unfold_core::seeded_rng;

const IRIS: &str = include_str!("../data/iris.csv");
const USHCN: &str = include_str!("../data/ushcn_prcp_2005_2014.csv");
const KRUMSIEK11: &str = include_str!("../data/krumsiek11.csv");

/// Fisher's iris: 150 flowers x 4 measurements (cm), labels setosa, versicolor, virginica.
pub fn iris() -> Dataset {
    let mut d = parse_csv(
        IRIS,
        "iris",
        &CsvOptions {
            label_column: Some("class".to_string()),
        },
    )
    .expect("the bundled iris file parses");
    d.label_names = ["setosa", "versicolor", "virginica"]
        .map(String::from)
        .to_vec();
    d
}

/// Krumsiek et al.'s simulated myeloid differentiation (scanpy's `krumsiek11`): 640 cells
/// x 11 transcription factors, four realisations of 160 steps from a common progenitor
/// state to the fates monocyte, erythrocyte, megakaryocyte and neutrophil. Labels are the
/// cell types (`progenitor`, `Mo`, `Ery`, `Mk`, `Neu`, in that order of first appearance
/// except as the file has them); `latent` is the simulation step (640 x 1).
pub fn krumsiek11() -> Dataset {
    let all = parse_csv(
        KRUMSIEK11,
        "krumsiek11",
        &CsvOptions {
            label_column: Some("cell_type".to_string()),
        },
    )
    .expect("the bundled krumsiek11 file parses");
    Dataset {
        name: "krumsiek11".to_string(),
        points: all.points.columns(1, 11).into_owned(),
        feature_names: all.feature_names[1..].to_vec(),
        labels: all.labels,
        label_names: all.label_names,
        latent: Some(all.points.columns(0, 1).into_owned()),
        row_names: Vec::new(),
    }
}

/// USHCN v2.5 average monthly precipitation 2005–2014: 1218 stations x 12 monthly values;
/// `latent` = [latitude, longitude], `row_names` = station ids.
pub fn ushcn() -> Dataset {
    let all = parse_csv(
        USHCN,
        "ushcn",
        &CsvOptions {
            label_column: Some("station".to_string()),
        },
    )
    .expect("the bundled USHCN file parses");
    // Columns after the label: latitude, longitude, elevation, prcp_m01..prcp_m12.
    let n = all.n();
    let points = all.points.columns(3, 12).into_owned();
    let latent = all.points.columns(0, 2).into_owned();
    Dataset {
        name: "ushcn".to_string(),
        points,
        feature_names: all.feature_names[3..].to_vec(),
        labels: None,
        label_names: Vec::new(),
        latent: Some(DMatrix::from(latent)),
        row_names: (0..n)
            .map(|i| all.label_names[all.labels.as_ref().expect("labels")[i]].clone())
            .collect(),
    }
}

/// The LL-LVM paper's subsample of USHCN (spec `lllvm.md` §5.4): every third station
/// (rows 0, 3, 6, ...: 406 stations), then 400 of those drawn at random with `seed`, kept
/// in file order.
pub fn ushcn_400(seed: u64) -> Dataset {
    let all = ushcn();
    let mut every_third: Vec<usize> = (0..all.n()).step_by(3).collect();
    every_third.shuffle(&mut seeded_rng(seed));
    let mut rows = every_third[..400].to_vec();
    rows.sort_unstable();
    let mut d = all.select_rows(&rows);
    d.name = "ushcn-400".to_string();
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iris_has_three_classes_of_fifty() {
        let d = iris();
        assert_eq!((d.n(), d.p()), (150, 4));
        let labels = d.labels.unwrap();
        for k in 0..3 {
            assert_eq!(labels.iter().filter(|&&l| l == k).count(), 50);
        }
        assert_eq!(d.points[(0, 0)], 5.1);
    }

    #[test]
    fn ushcn_shapes_and_subsample() {
        let d = ushcn();
        assert_eq!((d.n(), d.p()), (1218, 12));
        assert_eq!(d.row_names[0], "USH00011084");
        assert_eq!(d.latent.as_ref().unwrap()[(0, 0)], 31.0581);
        assert_eq!(d.points[(0, 0)], 1344.9);
        let a = ushcn_400(1);
        assert_eq!(a.n(), 400);
        assert_eq!(a, ushcn_400(1));
        assert_ne!(a.row_names, ushcn_400(2).row_names);
        let mut ids = a.row_names.clone();
        ids.dedup();
        assert_eq!(ids.len(), 400);
        let positions: Vec<usize> = a
            .row_names
            .iter()
            .map(|id| d.row_names.iter().position(|x| x == id).unwrap())
            .collect();
        assert!(positions.iter().all(|p| p % 3 == 0));
    }
}

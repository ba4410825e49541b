//! SVG scatter plots of embeddings.

use nalgebra::DMatrix;
use plotters::prelude::*;
use std::path::Path;
use unfold_core::{Error, Result};

/// How points are coloured.
pub enum Colouring<'a> {
    /// A continuous value per point (e.g. the true manifold coordinate), blue to red.
    Value(&'a [f64]),
    /// A class per point, from a fixed palette.
    Class(&'a [usize]),
    /// All points alike.
    None,
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// The range of `values` widened by 5% on each side (by 1 when they are all equal, so that
/// a flat series still gets an axis).
fn padded_range(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let pad = if hi > lo { 0.05 * (hi - lo) } else { 1.0 };
    (lo - pad)..(hi + pad)
}

fn plot_error(e: impl std::fmt::Display) -> Error {
    Error::numerical("drawing the plot", e.to_string())
}

/// Draws the first two columns of `x` (or the first against the row index when `x` has one
/// column) and writes the SVG to `path` atomically.
pub fn scatter_svg(
    path: &Path,
    x: &DMatrix<f64>,
    colouring: Colouring<'_>,
    title: &str,
) -> Result<()> {
    let n = x.nrows();
    let points: Vec<(f64, f64)> = (0..n)
        .map(|i| {
            if x.ncols() >= 2 {
                (x[(i, 0)], x[(i, 1)])
            } else {
                (i as f64, x[(i, 0)])
            }
        })
        .collect();
    let range = |f: fn(&(f64, f64)) -> f64| padded_range(points.iter().map(f));
    let colour = |i: usize| -> RGBColor {
        match &colouring {
            Colouring::Value(v) => {
                let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let t = if hi > lo {
                    (v[i] - lo) / (hi - lo)
                } else {
                    0.5
                };
                let hsl = HSLColor(0.66 * (1.0 - t), 0.85, 0.45).to_rgba();
                RGBColor(hsl.0, hsl.1, hsl.2)
            }
            Colouring::Class(c) => PALETTE[c[i] % PALETTE.len()],
            Colouring::None => PALETTE[0],
        }
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (520, 460)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(range(|p| p.0), range(|p| p.1))
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .draw()
            .map_err(plot_error)?;
        chart
            .draw_series(
                points
                    .iter()
                    .enumerate()
                    .map(|(i, &p)| Circle::new(p, 2, colour(i).filled())),
            )
            .map_err(plot_error)?;
        root.present().map_err(plot_error)?;
    }
    unfold_core::write_atomic(path, svg.as_bytes())
}

/// A line plot: one line per series of `(x, y)` points, with a marker line at `mark_x`
/// (e.g. the best k), written to `path` atomically.
pub fn lines_svg(
    path: &Path,
    series: &[(String, Vec<(f64, f64)>)],
    mark_x: Option<f64>,
    title: &str,
    y_label: &str,
) -> Result<()> {
    let all: Vec<(f64, f64)> = series.iter().flat_map(|s| s.1.iter().copied()).collect();
    if all.is_empty() {
        return Err(Error::invalid("plot", "there is nothing to draw"));
    }
    let span = |f: fn(&(f64, f64)) -> f64| padded_range(all.iter().map(f));
    let (xr, yr) = (span(|p| p.0), span(|p| p.1));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (620, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(70)
            .build_cartesian_2d(xr, yr.clone())
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .x_desc("k")
            .y_desc(y_label)
            .light_line_style(WHITE)
            .draw()
            .map_err(plot_error)?;
        for (i, (name, pts)) in series.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), colour.stroke_width(2)))
                .map_err(plot_error)?
                .label(name.clone())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], colour));
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                .map_err(plot_error)?;
        }
        if let Some(x) = mark_x {
            chart
                .draw_series(LineSeries::new(
                    [(x, yr.start), (x, yr.end)],
                    BLACK.stroke_width(1),
                ))
                .map_err(plot_error)?
                .label(format!("best k = {x}"))
                .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLACK));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(plot_error)?;
        root.present().map_err(plot_error)?;
    }
    unfold_core::write_atomic(path, svg.as_bytes())
}

/// The first two columns of `points` as dots, with every `(i, j)` of `edges` drawn as a line
/// segment beneath them (e.g. a learned graph), written to `path` atomically.
///
/// Errors: `points` with fewer than two columns, an edge index out of range, or a drawing
/// failure.
pub fn graph_svg(
    path: &Path,
    points: &DMatrix<f64>,
    edges: &[(usize, usize)],
    title: &str,
) -> Result<()> {
    let n = points.nrows();
    if points.ncols() < 2 || n == 0 {
        return Err(Error::invalid(
            "points",
            "a graph plot needs at least one point with two coordinates",
        ));
    }
    if let Some(&(i, j)) = edges.iter().find(|&&(i, j)| i >= n || j >= n) {
        return Err(Error::invalid(
            "edges",
            format!("edge ({i}, {j}) is out of range for {n} points"),
        ));
    }
    let xy = |i: usize| (points[(i, 0)], points[(i, 1)]);
    let span = |c: usize| padded_range(points.column(c).iter().copied());
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (520, 460)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(span(0), span(1))
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .draw()
            .map_err(plot_error)?;
        chart
            .draw_series(
                edges
                    .iter()
                    .map(|&(i, j)| PathElement::new([xy(i), xy(j)], PALETTE[3].stroke_width(1))),
            )
            .map_err(plot_error)?;
        chart
            .draw_series((0..n).map(|i| Circle::new(xy(i), 2, PALETTE[0].filled())))
            .map_err(plot_error)?;
        root.present().map_err(plot_error)?;
    }
    unfold_core::write_atomic(path, svg.as_bytes())
}

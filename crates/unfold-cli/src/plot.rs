//! SVG scatter plots of embeddings.

use nalgebra::DMatrix;
use plotters::coord::types::RangedCoordf64;
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

/// The frame of a plot: its size in pixels, the axis descriptions (x, y) if any, and
/// whether the labelled series get a legend.
struct Page<'a> {
    size: (u32, u32),
    axes: Option<(&'a str, &'a str)>,
    legend: bool,
}

/// Scatter-like plots: 520 x 460, no axis descriptions, no legend.
const SQUARE: Page<'static> = Page {
    size: (520, 460),
    axes: None,
    legend: false,
};

/// A colour bar beside a plot: the values' name and range.
struct Bar<'a> {
    name: &'a str,
    lo: f64,
    hi: f64,
}

/// The blue-to-red colour of the fraction `t` in `[0, 1]` of a value range.
fn ramp(t: f64) -> RGBColor {
    let hsl = HSLColor(0.66 * (1.0 - t.clamp(0.0, 1.0)), 0.85, 0.45).to_rgba();
    RGBColor(hsl.0, hsl.1, hsl.2)
}

/// The title's font size: 18 px, smaller for a title that would not fit the page's width
/// (about 0.58 em per character in a sans-serif face), never below 9 px.
fn title_size(title: &str, width: u32) -> f64 {
    let chars = title.chars().count().max(1) as f64;
    (f64::from(width.saturating_sub(24)) / (0.58 * chars)).clamp(9.0, 18.0)
}

/// An SVG page with a title and a mesh over `x` by `y`, and a colour bar at the right when
/// `bar` is given; `draw` adds the series. Written to `path` atomically.
fn page_2d(
    path: &Path,
    page: &Page<'_>,
    title: &str,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
    bar: Option<Bar<'_>>,
    draw: impl FnOnce(
        &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    ) -> Result<()>,
) -> Result<()> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, page.size).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let (plot_area, bar_area) = match &bar {
            Some(_) => {
                let (left, right) = root.split_horizontally(page.size.0.saturating_sub(70));
                (left, Some(right))
            }
            None => (root.clone(), None),
        };
        let (x_area, y_area) = if page.axes.is_some() {
            (36, 70)
        } else {
            (30, 50)
        };
        let mut chart = ChartBuilder::on(&plot_area)
            .caption(title, ("sans-serif", title_size(title, page.size.0)))
            .margin(12)
            .x_label_area_size(x_area)
            .y_label_area_size(y_area)
            .build_cartesian_2d(x, y)
            .map_err(plot_error)?;
        let mut mesh = chart.configure_mesh();
        if let Some((x_desc, y_desc)) = page.axes {
            mesh.x_desc(x_desc).y_desc(y_desc);
        }
        mesh.light_line_style(WHITE).draw().map_err(plot_error)?;
        draw(&mut chart)?;
        if page.legend {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(plot_error)?;
        }
        if let (Some(b), Some(area)) = (bar, bar_area) {
            let (top, height) = (60i32, page.size.1 as i32 - 130);
            let steps = 64;
            for s in 0..steps {
                let y0 = top + height - (s + 1) * height / steps;
                let y1 = top + height - s * height / steps;
                let colour = ramp(f64::from(s) / f64::from(steps - 1));
                area.draw(&Rectangle::new([(10, y0), (28, y1)], colour.filled()))
                    .map_err(plot_error)?;
            }
            let label = |v: f64| format!("{v:.3}");
            let font = ("sans-serif", 12).into_font();
            area.draw_text(&label(b.hi), &font.color(&BLACK), (6, top - 16))
                .map_err(plot_error)?;
            area.draw_text(&label(b.lo), &font.color(&BLACK), (6, top + height + 4))
                .map_err(plot_error)?;
            area.draw_text(b.name, &font.color(&BLACK), (2, top + height + 22))
                .map_err(plot_error)?;
        }
        root.present().map_err(plot_error)?;
    }
    unfold_core::write_atomic(path, svg.as_bytes())
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
    scatter_over_svg(path, x, colouring, "", &[], &[], title)
}

/// [`scatter_svg`] with line `segments` drawn over the points (DDRTree's tree), `marks` as
/// large ringed dots over both (its branch points) and, for a [`Colouring::Value`], a
/// colour bar named `value_name` (when not empty).
pub fn scatter_over_svg(
    path: &Path,
    x: &DMatrix<f64>,
    colouring: Colouring<'_>,
    value_name: &str,
    segments: &[[(f64, f64); 2]],
    marks: &[(f64, f64)],
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
    let ends = segments.iter().flatten();
    let range = |f: fn(&(f64, f64)) -> f64| padded_range(points.iter().chain(ends.clone()).map(f));
    let (lo, hi) = match &colouring {
        Colouring::Value(v) => v
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
                (lo.min(x), hi.max(x))
            }),
        _ => (0.0, 0.0),
    };
    let colour = |i: usize| -> RGBColor {
        match &colouring {
            Colouring::Value(v) => ramp(if hi > lo {
                (v[i] - lo) / (hi - lo)
            } else {
                0.5
            }),
            Colouring::Class(c) => PALETTE[c[i] % PALETTE.len()],
            Colouring::None => PALETTE[0],
        }
    };
    let bar = match colouring {
        Colouring::Value(_) if !value_name.is_empty() => Some(Bar {
            name: value_name,
            lo,
            hi,
        }),
        _ => None,
    };
    let page = Page {
        size: if bar.is_some() {
            (590, 460)
        } else {
            SQUARE.size
        },
        ..SQUARE
    };
    page_2d(
        path,
        &page,
        title,
        range(|p| p.0),
        range(|p| p.1),
        bar,
        |chart| {
            chart
                .draw_series(
                    points
                        .iter()
                        .enumerate()
                        .map(|(i, &p)| Circle::new(p, 2, colour(i).filled())),
                )
                .map_err(plot_error)?;
            chart
                .draw_series(
                    segments
                        .iter()
                        .map(|&[a, b]| PathElement::new([a, b], BLACK.stroke_width(2))),
                )
                .map_err(plot_error)?;
            chart
                .draw_series(marks.iter().flat_map(|&p| {
                    [
                        Circle::new(p, 7, BLACK.filled()),
                        Circle::new(p, 4, WHITE.filled()),
                    ]
                }))
                .map(|_| ())
                .map_err(plot_error)
        },
    )
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
    let page = Page {
        size: (620, 420),
        axes: Some(("k", y_label)),
        legend: true,
    };
    page_2d(path, &page, title, xr, yr.clone(), None, |chart| {
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
        Ok(())
    })
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
    page_2d(path, &SQUARE, title, span(0), span(1), None, |chart| {
        chart
            .draw_series(
                edges
                    .iter()
                    .map(|&(i, j)| PathElement::new([xy(i), xy(j)], PALETTE[3].stroke_width(1))),
            )
            .map_err(plot_error)?;
        chart
            .draw_series((0..n).map(|i| Circle::new(xy(i), 2, PALETTE[0].filled())))
            .map(|_| ())
            .map_err(plot_error)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_scatter_and_line_plots_draw_every_point_edge_and_label() {
        let dir = std::env::temp_dir().join(format!("unfold-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let points = DMatrix::from_row_slice(3, 2, &[0.0, 0.0, 1.0, 0.0, 0.0, 2.0]);
        let path = dir.join("g.svg");
        graph_svg(&path, &points, &[(0, 1), (1, 2), (0, 2)], "triangle").unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert_eq!(svg.matches("<circle").count(), 3);
        assert_eq!(svg.matches("stroke=\"#D62728\"").count(), 3, "{svg}");
        assert!(svg.contains("triangle"));
        assert!(graph_svg(&path, &points, &[(0, 3)], "bad").is_err());
        scatter_svg(&path, &points, Colouring::Class(&[0, 1, 1]), "dots").unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert_eq!(svg.matches("<circle").count(), 3);
        let series = vec![
            ("restart 0".to_string(), vec![(5.0, 1.0), (7.0, 3.0)]),
            ("restart 1".to_string(), vec![(5.0, 1.5), (7.0, 2.5)]),
        ];
        lines_svg(&path, &series, Some(7.0), "bound", "ELBO").unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        for text in ["restart 0", "restart 1", "best k = 7", "ELBO", "bound"] {
            assert!(svg.contains(text), "{text} missing");
        }
        assert_eq!(svg.matches("<circle").count(), 4);
        assert!(lines_svg(&path, &[], None, "empty", "ELBO").is_err());
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn trajectories_are_drawn_by_value_with_their_tree_and_a_colour_bar() {
        let dir = std::env::temp_dir().join(format!("unfold-plot-tree-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let points = DMatrix::from_row_slice(3, 2, &[0.0, 0.0, 1.0, 0.0, 0.0, 2.0]);
        let path = dir.join("t.svg");
        let segments = [[(0.0, 0.0), (1.0, 0.0)], [(0.0, 0.0), (0.0, 2.0)]];
        let title = "a long title that would not fit the page at the usual size of eighteen px";
        let values = [0.0, 1.0, 2.0];
        scatter_over_svg(
            &path,
            &points,
            Colouring::Value(&values),
            "pseudotime",
            &segments,
            &[(0.0, 0.0)],
            title,
        )
        .unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        // Three points and the branch point's two rings.
        assert_eq!(svg.matches("<circle").count(), 5);
        assert_eq!(
            svg.matches("stroke=\"#000000\" stroke-width=\"2\"").count(),
            2,
            "{svg}"
        );
        for text in ["pseudotime", "0.000", "2.000", "a long title"] {
            assert!(svg.contains(text), "{text} missing");
        }
        // The points take the ramp's ends: blue at the smallest value, red at the largest.
        for end in [ramp(0.0), ramp(1.0)] {
            let hex = format!("fill=\"#{:02X}{:02X}{:02X}\"", end.0, end.1, end.2);
            assert!(svg.contains(&hex), "{hex} missing");
        }
        assert!(ramp(0.0).2 > ramp(0.0).0 && ramp(1.0).0 > ramp(1.0).2);
        assert!(title_size(title, 590) < 18.0 && title_size("short", 590) == 18.0);
        std::fs::remove_dir_all(&dir).ok();
    }
}

//! DDRTree's ordering on simulated branching trajectories (`unfold_data::synthetic::branching`)
//! over a grid of DDRTree's own parameters, on one data set generated once: for every
//! combination, Spearman's correlation of pseudotime with the true time (the root at the
//! earliest cell) and the agreement of the states with the true segments (clustering
//! accuracy; surplus states count as errors), as `examples/branching.rs` measures them.
//!
//! `cargo run --release --example branching_sweep -- N D NOISE BRANCHES LAMBDAS SIGMAS GAMMAS
//! KS DIMS [SEED] [MIN_BRANCH] [TOLS] [MAX_ITERS] [--diag]`
//!
//! LAMBDAS, SIGMAS, GAMMAS, KS, DIMS, TOLS and MAX_ITERS are comma-separated lists (`auto`
//! for DDRTree's own lambda, 5 N, or Monocle's automatic K); the grid is their product,
//! fitted one after the other (e.g. `20000 50 0.1 3 200,2000 1e-3,3e-3 10 auto,274 2`).
//! SEED defaults to 1, MIN_BRANCH to 0, TOLS and MAX_ITERS to DDRTree's 1e-3 and 20.
//!
//! One Markdown table row per fit, with the columns N, D, noise, branches, seed, lambda,
//! sigma, gamma, K, dim, tol, max iter, min branch, iterations run, states, Spearman, state
//! agreement, two references and seconds. The references use the cells' in-plane
//! positions (the data projected on the fit's `W`, rotated onto the generator's plane by
//! orthogonal Procrustes against the noise-free positions):
//! - "true tree": each cell projected onto the nearest of the generator's own segments (past
//!   the trunk's start and the arms' ends, the distance beyond them), Spearman and
//!   agreement: what a perfect tree and ordering would give;
//! - "Bayes": the posterior mean time and the most probable segment under the generator's
//!   model (uniform segment and position, Gaussian noise of sd NOISE in the plane). The
//!   most probable segment is the Bayes classifier, so its agreement is the highest that any
//!   labelling of the cells by their positions can expect (the other D - 2 directions are
//!   noise independent of the segment).
//!
//! `--diag` adds, for each fit: the tree (leaves, branch points, length, centres by the
//! segment most of their cells come from), where its leaves and branch points lie on the
//! true tree (nearest segment, true time there, distance off it, median pseudotime of
//! their cells), and for the fit and the true tree where `1 - rho` comes from (Spearman's
//! `1 - rho` is `6 sum d_i^2 / (n (n^2 - 1))`, `d_i` the difference of a cell's two ranks,
//! so it splits exactly over cells): its share per true segment with the Spearman
//! correlation within the segment and the median pseudotime of its first and last tenth,
//! and its share per true-time bin with the pseudotime quantiles there.

use nalgebra::DMatrix;
use std::f64::consts::PI;
use unfold::data::synthetic::branching;
use unfold::eval::{clustering_accuracy, spearman};
use unfold::graph::trajectory::Root;
use unfold::models::regularised::ddrtree::DdrTreeParams;

#[path = "support/branching_truth.rs"]
mod branching_truth;

/// The ranks (0-based) of `x`; ties are broken by position (continuous data have none).
fn ranks(x: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..x.len()).collect();
    idx.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut r = vec![0.0; x.len()];
    for (k, &i) in idx.iter().enumerate() {
        r[i] = k as f64;
    }
    r
}

/// The `q` quantile of `v` (sorted copy, nearest rank).
fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[((s.len() - 1) as f64 * q).round() as usize]
}

/// The generator's geometry with its random base angle at 0: the trunk runs from (-1, 0)
/// (time 0) to the origin (time 1); arm `b` from the origin to `arms[b]` (time 1 to 2).
fn arms(branches: usize) -> Vec<[f64; 2]> {
    let spread = 2.0 * PI / 3.0;
    (0..branches)
        .map(|b| {
            let a = -spread + 2.0 * spread * b as f64 / (branches - 1) as f64;
            [a.cos(), a.sin()]
        })
        .collect()
}

/// Pseudotime and segment of every cell on the true tree, from its in-plane position.
fn true_tree_order(xy: &DMatrix<f64>, arms: &[[f64; 2]]) -> (Vec<f64>, Vec<usize>) {
    let n = xy.nrows();
    let mut pt = vec![0.0; n];
    let mut seg = vec![0; n];
    for i in 0..n {
        let (x, y) = (xy[(i, 0)], xy[(i, 1)]);
        // Trunk: along +x from (-1, 0); past the start the distance beyond it.
        let s = (x + 1.0).min(1.0);
        let px = s - 1.0;
        let mut best = ((x - px).powi(2) + y * y, s.abs(), 0);
        for (b, a) in arms.iter().enumerate() {
            let u = (x * a[0] + y * a[1]).max(0.0);
            let g = (x - u * a[0]).powi(2) + (y - u * a[1]).powi(2);
            if g < best.0 {
                best = (g, 1.0 + u, b + 1);
            }
        }
        pt[i] = best.1;
        seg[i] = best.2;
    }
    (pt, seg)
}

/// The posterior of each cell's segment and time given its in-plane position under the
/// generator's model (uniform segment, uniform position along it, isotropic Gaussian noise
/// of sd `noise` in the plane), by quadrature over 400 points per segment: the most probable
/// segment (the Bayes classifier, the highest expected agreement any ordering can reach
/// from these positions) and the posterior mean time.
fn bayes(xy: &DMatrix<f64>, arms: &[[f64; 2]], noise: f64) -> (Vec<f64>, Vec<usize>) {
    let m = 400;
    let mut points = Vec::new();
    for s in 0..=arms.len() {
        for j in 0..m {
            let u = (j as f64 + 0.5) / m as f64;
            let (p, t) = if s == 0 {
                ([u - 1.0, 0.0], u)
            } else {
                ([u * arms[s - 1][0], u * arms[s - 1][1]], 1.0 + u)
            };
            points.push((s, p, t));
        }
    }
    let n = xy.nrows();
    let mut mean_t = vec![0.0; n];
    let mut seg = vec![0; n];
    let mut mass = vec![0.0; arms.len() + 1];
    for i in 0..n {
        let (x, y) = (xy[(i, 0)], xy[(i, 1)]);
        mass.iter_mut().for_each(|v| *v = 0.0);
        let (mut total, mut tw) = (0.0, 0.0);
        for &(s, p, t) in &points {
            let g = ((x - p[0]).powi(2) + (y - p[1]).powi(2)) / (2.0 * noise * noise);
            let w = (-g).exp();
            mass[s] += w;
            total += w;
            tw += w * t;
        }
        mean_t[i] = if total > 0.0 { tw / total } else { f64::NAN };
        seg[i] = (0..mass.len())
            .max_by(|&a, &b| mass[a].total_cmp(&mass[b]))
            .unwrap_or(0);
    }
    (mean_t, seg)
}

/// The data's projection on `w` rotated onto the generator's plane (orthogonal
/// Procrustes with translation, reflections allowed) against the noise-free positions.
/// Returns the rotated points and the map `x -> x q + shift` (for points of the latent frame).
fn in_plane(
    y: &DMatrix<f64>,
    w: &DMatrix<f64>,
    truth: &DMatrix<f64>,
) -> (DMatrix<f64>, DMatrix<f64>, nalgebra::RowDVector<f64>) {
    let n = y.nrows() as f64;
    let mean_y = y.row_mean();
    let mut z = y * w;
    let mean_z = mean_y * w;
    for mut r in z.row_iter_mut() {
        r -= &mean_z;
    }
    let mean_t = truth.row_mean();
    let mut t = truth.clone();
    for mut r in t.row_iter_mut() {
        r -= &mean_t;
    }
    let m = z.transpose() * &t / n;
    let svd = m.svd(true, true);
    let q = svd.u.expect("u") * svd.v_t.expect("v_t");
    let mut out = &z * &q;
    for mut r in out.row_iter_mut() {
        r += &mean_t;
    }
    (out, q, mean_t)
}

struct Diagnosis<'a> {
    time: &'a [f64],
    segment: &'a [usize],
    segments: usize,
}

impl Diagnosis<'_> {
    /// Where `1 - rho` comes from, the Spearman correlation within each segment and the
    /// pseudotime quantiles per true-time bin.
    fn print(&self, name: &str, pt: &[f64]) {
        let n = pt.len() as f64;
        let (rp, rt) = (ranks(pt), ranks(self.time));
        let scale = 6.0 / (n * (n * n - 1.0));
        let d2: Vec<f64> = rp.iter().zip(&rt).map(|(a, b)| (a - b).powi(2)).collect();
        let total: f64 = d2.iter().sum::<f64>() * scale;
        println!("  {name}: 1 - rho = {total:.4}");
        for s in 0..self.segments {
            let cells: Vec<usize> = (0..pt.len()).filter(|&i| self.segment[i] == s).collect();
            let share: f64 = cells.iter().map(|&i| d2[i]).sum::<f64>() * scale;
            let a: Vec<f64> = cells.iter().map(|&i| pt[i]).collect();
            let b: Vec<f64> = cells.iter().map(|&i| self.time[i]).collect();
            let rho = spearman(&a, &b).unwrap_or(f64::NAN);
            let (t0, t1) = if s == 0 { (0.0, 1.0) } else { (1.0, 2.0) };
            let near = |lo: f64, hi: f64| -> Vec<f64> {
                cells
                    .iter()
                    .filter(|&&i| self.time[i] >= lo && self.time[i] < hi)
                    .map(|&i| pt[i])
                    .collect()
            };
            println!(
                "    segment {s}: {} cells, share of 1 - rho {share:.4}, Spearman within {rho:.4}, median pseudotime at its first / last tenth {:.3} / {:.3}",
                cells.len(),
                quantile(&near(t0, t0 + 0.1), 0.5),
                quantile(&near(t1 - 0.1, t1), 0.5)
            );
        }
        println!("    true time bin: share of 1 - rho | pseudotime q10 q50 q90");
        for bin in 0..10 {
            let (lo, hi) = (bin as f64 * 0.2, (bin + 1) as f64 * 0.2);
            let cells: Vec<usize> = (0..pt.len())
                .filter(|&i| self.time[i] >= lo && self.time[i] < hi)
                .collect();
            let share: f64 = cells.iter().map(|&i| d2[i]).sum::<f64>() * scale;
            let v: Vec<f64> = cells.iter().map(|&i| pt[i]).collect();
            println!(
                "    [{lo:.1}, {hi:.1}): {share:.4} | {:.3} {:.3} {:.3}",
                quantile(&v, 0.1),
                quantile(&v, 0.5),
                quantile(&v, 0.9)
            );
        }
    }
}

fn list(s: &str) -> Vec<String> {
    s.split(',').map(str::to_string).collect()
}

fn main() -> unfold::core::Result<()> {
    let all: Vec<String> = std::env::args().skip(1).collect();
    let diag = all.iter().any(|a| a == "--diag");
    let args: Vec<String> = all.into_iter().filter(|a| a != "--diag").collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or(default.into());
    let parse = |s: &str| s.parse::<f64>().expect("a number");
    let n = parse(&arg(0, "20000")) as usize;
    let p = parse(&arg(1, "50")) as usize;
    let noise = parse(&arg(2, "0.1"));
    let branches = parse(&arg(3, "3")) as usize;
    let lambdas = list(&arg(4, "auto"));
    let sigmas = list(&arg(5, "1e-3"));
    let gammas = list(&arg(6, "10"));
    let ks = list(&arg(7, "auto"));
    let dims = list(&arg(8, "2"));
    let seed = parse(&arg(9, "1")) as u64;
    let min_branch = parse(&arg(10, "0")) as usize;
    let tols = list(&arg(11, "1e-3"));
    let max_iters = list(&arg(12, "20"));

    let data = branching(n, branches, p, noise, seed)?;
    let branching_truth::Truth {
        time,
        segment,
        root,
    } = branching_truth::truth(&data);
    let arms = arms(branches);
    let truth = DMatrix::from_fn(n, 2, |i, j| {
        let u = time[i] - 1.0;
        match segment[i] {
            0 => [u, 0.0][j],
            s => u * arms[s - 1][j],
        }
    });
    let diagnosis = Diagnosis {
        time: &time,
        segment,
        segments: branches + 1,
    };
    for lambda in &lambdas {
        for sigma in &sigmas {
            for gamma in &gammas {
                for k in &ks {
                    for dim in &dims {
                        for tol in &tols {
                            for max_iter in &max_iters {
                                let mut params = DdrTreeParams::new(parse(dim) as usize);
                                if lambda != "auto" {
                                    params.lambda = Some(parse(lambda));
                                }
                                params.sigma = Some(parse(sigma));
                                params.gamma = parse(gamma);
                                params.tol = parse(tol);
                                params.max_iter = parse(max_iter) as usize;
                                if k != "auto" {
                                    params.ncenters = Some(parse(k) as usize);
                                }
                                let start = std::time::Instant::now();
                                let fit = params.fit(&data.points)?;
                                let order = fit.order_with(Root::Cell(root), min_branch)?;
                                let seconds = start.elapsed().as_secs_f64();
                                let rho = spearman(&order.pseudotime, &time)?;
                                let agreement = clustering_accuracy(&order.state, segment)?;
                                let (xy, q, shift) = in_plane(&data.points, &fit.w, &truth);
                                let (true_pt, true_seg) = true_tree_order(&xy, &arms);
                                let true_rho = spearman(&true_pt, &time)?;
                                let true_agreement = clustering_accuracy(&true_seg, segment)?;
                                let (bayes_t, bayes_seg) = bayes(&xy, &arms, noise);
                                let bayes_rho = spearman(&bayes_t, &time).unwrap_or(f64::NAN);
                                let bayes_agreement = clustering_accuracy(&bayes_seg, segment)?;
                                println!(
                            "| {n} | {p} | {noise} | {branches} | {seed} | {lambda} | {sigma} | {gamma} | {} | {dim} | {tol} | {max_iter} | {min_branch} | {} | {} | {rho:.4} | {agreement:.4} | {true_rho:.4} | {true_agreement:.4} | {bayes_rho:.4} | {bayes_agreement:.4} | {seconds:.2} |",
                            fit.centres.nrows(),
                            fit.convergence.iterations,
                            order.states,
                        );
                                if diag {
                                    let mut plane = &fit.centres * &q;
                                    for mut r in plane.row_iter_mut() {
                                        r += &shift;
                                    }
                                    diagnose(
                                        &diagnosis, &order, &fit.edges, &true_pt, &plane, &arms,
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// The `--diag` lines of one fit.
fn diagnose(
    d: &Diagnosis,
    order: &unfold::graph::trajectory::Trajectory,
    edges: &[(usize, usize, f64)],
    true_pt: &[f64],
    plane: &DMatrix<f64>,
    arms: &[[f64; 2]],
) {
    let k = edges.len() + 1;
    let mut count = vec![vec![0usize; d.segments]; k];
    for (i, &c) in order.centre.iter().enumerate() {
        count[c][d.segment[i]] += 1;
    }
    let mut per_segment = vec![0usize; d.segments];
    let mut degree = vec![0usize; k];
    for &(a, b, _) in edges {
        degree[a] += 1;
        degree[b] += 1;
    }
    let mut empty = 0;
    for row in &count {
        match row.iter().enumerate().max_by_key(|(_, &c)| c) {
            Some((s, &c)) if c > 0 => per_segment[s] += 1,
            _ => empty += 1,
        }
    }
    let leaves = degree.iter().filter(|&&g| g == 1).count();
    let length: f64 = edges.iter().map(|e| e.2.sqrt()).sum();
    println!(
        "  tree: {k} centres, {leaves} leaves, {} branch points, length {length:.3}; centres by majority segment {per_segment:?}, {empty} nearest to no cell",
        order.branch_points.len()
    );
    // Where the leaves and branch points are on the true tree: the segment nearest to them,
    // the true time there and the distance off it.
    let (at, seg) = true_tree_order(plane, arms);
    let place = |c: usize| {
        let (x, y) = (plane[(c, 0)], plane[(c, 1)]);
        let u = at[c] - if seg[c] == 0 { 0.0 } else { 1.0 };
        let p = if seg[c] == 0 {
            [u.min(1.0) - 1.0, 0.0]
        } else {
            [u * arms[seg[c] - 1][0], u * arms[seg[c] - 1][1]]
        };
        let off = ((x - p[0]).powi(2) + (y - p[1]).powi(2)).sqrt();
        let pt: Vec<f64> = (0..order.centre.len())
            .filter(|&i| order.centre[i] == c)
            .map(|i| order.pseudotime[i])
            .collect();
        format!(
            "seg {} t {:.2} off {:.2} pt {:.2}",
            seg[c],
            at[c],
            off,
            quantile(&pt, 0.5)
        )
    };
    let leaves: Vec<String> = (0..k).filter(|&c| degree[c] == 1).map(place).collect();
    let branch: Vec<String> = (0..k).filter(|&c| degree[c] > 2).map(place).collect();
    println!("  leaves: {}", leaves.join("; "));
    println!("  branch points: {}", branch.join("; "));
    d.print("fit", &order.pseudotime);
    d.print("true tree", true_pt);
}

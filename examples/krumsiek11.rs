//! Pseudotime and branches on Krumsiek et al.'s simulated myeloid differentiation
//! (scanpy's `krumsiek11`, bundled): DDRTree in 4 latent dimensions, the cells ordered
//! along its tree from the first progenitor, and the states against the known cell types.
//!
//! `cargo run --release --example krumsiek11`

use unfold::graph::trajectory::Root;
use unfold::models::regularised::ddrtree::DdrTreeParams;

fn main() -> unfold::core::Result<()> {
    let data = unfold::data::bundled::krumsiek11();
    let labels = data.labels.as_ref().expect("cell types");
    let fit = DdrTreeParams::new(4).fit(&data.points)?;
    let order = fit.order(Root::Cell(0))?;
    println!(
        "{} cells, {} centres; root cell {}, branch points (centres) {:?}, {} states\n",
        data.points.nrows(),
        fit.centres.nrows(),
        order.root_cell,
        order.branch_points,
        order.states
    );
    print!("| state |");
    for name in &data.label_names {
        print!(" {name} |");
    }
    println!(" mean pseudotime |");
    println!("|---|{}---|", "---|".repeat(data.label_names.len()));
    for s in 1..=order.states {
        let cells: Vec<usize> = (0..labels.len()).filter(|&i| order.state[i] == s).collect();
        print!("| {s} |");
        for t in 0..data.label_names.len() {
            print!(" {} |", cells.iter().filter(|&&i| labels[i] == t).count());
        }
        let mean = cells.iter().map(|&i| order.pseudotime[i]).sum::<f64>() / cells.len() as f64;
        println!(" {mean:.3} |");
    }
    let mean_of = |keep: &dyn Fn(usize) -> bool| {
        let v: Vec<f64> = (0..labels.len())
            .filter(|&i| keep(labels[i]))
            .map(|i| order.pseudotime[i])
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let progenitor = data
        .label_names
        .iter()
        .position(|n| n == "progenitor")
        .expect("progenitors");
    println!(
        "\nmean pseudotime: progenitors {:.3}, the four fates {:.3}",
        mean_of(&|t| t == progenitor),
        mean_of(&|t| t != progenitor)
    );
    Ok(())
}

//! Quick start: fit Isomap and LLE to the LL-LVM paper's Swiss roll, measure them, save a
//! model, load it back and place new points.
//!
//! ```text
//! cargo run --release --example quickstart
//! ```

use unfold::data::synthetic::swiss_roll;
use unfold::eval::{procrustes_error, trustworthiness};
use unfold::models::registry::Registry;
use unfold::models::{Embedding, IsomapParams, LleParams, OutOfSample};

fn main() -> unfold::Result<()> {
    // 1000 training points and 5 new ones from the same roll (different seed).
    let data = swiss_roll(1000, 0.0, 42)?;
    let new = swiss_roll(5, 0.0, 7)?;
    let truth = data
        .latent
        .as_ref()
        .expect("the generator returns the true coordinates");

    let iso = IsomapParams::new(2, 10).fit(&data.points)?;
    let lle = LleParams::new(2, 10).fit(&data.points)?;
    for (name, x) in [("isomap", iso.coords()), ("lle", lle.coords())] {
        println!(
            "{name:>6}: trustworthiness {:.4}, Procrustes error to the true (t, height) {:.4}",
            trustworthiness(&data.points, x, 10)?,
            procrustes_error(x, truth)?
        );
    }

    // Save, load, and project new points with the loaded model.
    let path = std::env::temp_dir().join("unfold-quickstart-isomap.bin");
    Registry::save(&iso, &path)?;
    let loaded = Registry::builtin().load(&path)?;
    let rule = loaded
        .out_of_sample()
        .expect("Isomap has an out-of-sample rule");
    let projected = rule.project(&new.points)?;
    assert_eq!(projected.mean, iso.project(&new.points)?.mean);
    println!("new points placed at\n{}", projected.mean);
    std::fs::remove_file(&path).ok();
    Ok(())
}

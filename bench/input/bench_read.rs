//! Reads one data file as `unfold fit --input` does (`unfold_data::read_points`) and
//! prints the seconds it took and the shape, for `bench/input/run.sh`.
//!
//! `cargo run --release --example bench_read -- FILE`

fn main() -> unfold::core::Result<()> {
    let path = std::env::args().nth(1).expect("usage: bench_read FILE");
    let start = std::time::Instant::now();
    let data = unfold::data::read_points(std::path::Path::new(&path), &Default::default())?;
    let seconds = start.elapsed().as_secs_f64();
    println!("{seconds} {} {}", data.points.nrows(), data.points.ncols());
    Ok(())
}

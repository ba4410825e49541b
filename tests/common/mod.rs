//! What several test files of the command line share.

/// A noiseless Swiss roll-like sheet of `n` points with a header row, as CSV.
pub fn sheet_csv(n: usize) -> String {
    let mut text = String::from("a,b,c\n");
    for i in 0..n {
        let t = 1.5 * std::f64::consts::PI * (1.0 + 2.0 * (i as f64 * 0.618034).fract());
        let h = 10.0 * (i as f64 * 0.414214).fract();
        text.push_str(&format!("{},{},{}\n", t * t.cos(), h, t * t.sin()));
    }
    text
}

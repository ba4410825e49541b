//! The peak resident memory of the running process, shared by the bench programs that
//! report it (included with `#[path]`).

/// The peak resident memory of this process in MiB (Linux's `VmHWM`), or NaN where it is
/// not available.
pub fn peak_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

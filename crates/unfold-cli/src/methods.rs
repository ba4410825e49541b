//! `unfold methods`: every registered method with its family, capabilities and
//! parameters, read from the registry.

use crate::args::flag_name;
use std::fmt::Write as _;
use unfold_models::registry::Registry;

/// The listing of every method of `registry`.
pub fn table(registry: &Registry) -> String {
    let mut out = String::new();
    for m in registry.methods() {
        let info = m.info();
        let yes = |b: bool| if b { "yes" } else { "no" };
        writeln!(
            out,
            "{} ({}): {}\n  evidence: {}; projects new points: {}; fits on a given graph: {}",
            info.name,
            info.family.as_str(),
            info.about,
            info.evidence,
            yes(info.projects),
            yes(info.takes_graph)
        )
        .ok();
        for p in registry.params(info.name).unwrap_or_default() {
            let default = p.default_text();
            writeln!(
                out,
                "  --{:<16} {} (default {default}; {})",
                flag_name(p.name),
                p.help,
                p.allowed()
            )
            .ok();
        }
        out.push('\n');
    }
    out
}

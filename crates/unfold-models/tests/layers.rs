//! The layers of unfold-models, checked on its sources (`docs/architecture.md`, "Layers"):
//!
//! - no module cycle: the graph of which file refers to which (`crate::...`, `super::...`
//!   paths in code, re-exports and tests left out) has no cycle;
//! - no family imports another: a file of `spectral/`, `grf/`, `lvm/` or `regularised/`
//!   refers to no file of another family (they share `method/`, `field/` and `optimise`);
//! - the bottom layer (`method/`, `traits`) refers to no model, family or registry.
//!
//! Tests are left out: a test may compare a model with another family's (MEU with all
//! pairs is PCA).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const FAMILIES: [&str; 4] = ["spectral", "grf", "lvm", "regularised"];
const BOTTOM: [&str; 2] = ["method", "traits"];

/// The module path of a source file (`grf/meu.rs` -> `grf::meu`, `grf/mod.rs` -> `grf`,
/// `lib.rs` -> ``).
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts.join("::")
}

fn sources(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("the source folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_some_and(|f| f != "tests.rs")
        {
            let rel = path.strip_prefix(root).expect("under src");
            let text = std::fs::read_to_string(&path).expect("a source file");
            out.push((module_of(rel), text));
        }
    }
}

/// The lines of code that refer to other modules: comments, `mod` and `pub use`
/// declarations (re-exports) and test modules left out. Each line comes with whether it
/// lies inside an inline module (`mod registration { ... }`), where `super` is the file.
fn code_lines(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    let mut in_reexport = false;
    let mut depth_of_inline: Vec<i64> = Vec::new();
    let mut depth: i64 = 0;
    while let Some(line) = lines.next() {
        let t = line.trim();
        if t == "#[cfg(test)]" {
            match lines.peek().map(|l| l.trim()) {
                Some(next) if next.starts_with("mod ") && next.ends_with('{') => break,
                _ => {
                    lines.next();
                    continue;
                }
            }
        }
        let opens = line.matches('{').count() as i64;
        let closes = line.matches('}').count() as i64;
        let inline_mod = (t.starts_with("mod ") || t.starts_with("pub mod ")) && t.ends_with('{');
        if inline_mod {
            depth_of_inline.push(depth);
        }
        depth += opens - closes;
        while depth_of_inline.last().is_some_and(|&d| depth <= d) {
            depth_of_inline.pop();
        }
        if t.starts_with("//") || t.starts_with("mod ") || t.starts_with("pub mod ") {
            continue;
        }
        let reexport = t.starts_with("pub use ") || t.starts_with("pub(crate) use ");
        if reexport || in_reexport {
            in_reexport = !t.ends_with(';');
            continue;
        }
        let code = t.split("//").next().unwrap_or("").to_string();
        out.push((code, !depth_of_inline.is_empty()));
    }
    out
}

/// The paths a line names: `crate::a::b`, `super::c` (made absolute from `module`), with
/// `use crate::{a::b, c}` groups expanded one level.
fn paths_of(line: &str, module: &str, inline: bool) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let parent: Vec<String> = {
        let mut m: Vec<String> = module
            .split("::")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        if !inline {
            m.pop();
        }
        m
    };
    for (prefix, base) in [("crate::", Vec::new()), ("super::", parent)] {
        let mut rest = line;
        while let Some(i) = rest.find(prefix) {
            let before = rest[..i].chars().last();
            rest = &rest[i + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or("");
                for item in inner.split(',') {
                    let mut p = base.clone();
                    p.extend(segments(item.trim()));
                    found.push(p);
                }
            } else {
                let mut p = base.clone();
                p.extend(segments(rest));
                found.push(p);
            }
        }
    }
    found
}

fn segments(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for seg in text.split("::") {
        let name: String = seg
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            break;
        }
        let whole = name.len() == seg.len();
        out.push(name);
        if !whole {
            break;
        }
    }
    out
}

/// The module a path lands in: its longest prefix that is a module of the crate.
fn resolve(path: &[String], modules: &BTreeSet<String>) -> String {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| modules.contains(m))
        .unwrap_or_default()
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, text) in &files {
        let out = edges.entry(module.clone()).or_default();
        for (line, inline) in code_lines(text) {
            for path in paths_of(&line, module, inline) {
                let to = resolve(&path, &modules);
                if &to != module {
                    out.insert(to);
                }
            }
        }
    }
    edges
}

fn top(module: &str) -> &str {
    module.split("::").next().unwrap_or("")
}

#[test]
fn the_module_graph_has_no_cycle() {
    let edges = graph();
    assert!(edges.len() > 40, "only {} modules were read", edges.len());
    // Depth-first search with colours; a grey successor closes a cycle.
    let mut colour: BTreeMap<&str, u8> = BTreeMap::new();
    fn visit<'a>(
        m: &'a str,
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        colour: &mut BTreeMap<&'a str, u8>,
        stack: &mut Vec<&'a str>,
    ) {
        colour.insert(m, 1);
        stack.push(m);
        for next in edges.get(m).into_iter().flatten() {
            match colour.get(next.as_str()) {
                Some(1) => {
                    let at = stack.iter().position(|s| s == next).expect("on the stack");
                    panic!("module cycle: {} -> {next}", stack[at..].join(" -> "));
                }
                Some(_) => {}
                None => visit(next, edges, colour, stack),
            }
        }
        stack.pop();
        colour.insert(m, 2);
    }
    for m in edges.keys() {
        if !colour.contains_key(m.as_str()) {
            visit(m, &edges, &mut colour, &mut Vec::new());
        }
    }
}

#[test]
fn no_family_imports_another_and_the_bottom_layer_imports_no_model() {
    let mut wrong = Vec::new();
    for (from, targets) in graph() {
        for to in targets {
            let (a, b) = (top(&from), top(&to));
            let across = FAMILIES.contains(&a) && FAMILIES.contains(&b) && a != b;
            let upward = BOTTOM.contains(&a) && !BOTTOM.contains(&b) && !to.is_empty();
            if across || upward {
                wrong.push(format!("{from} -> {to}"));
            }
        }
    }
    assert!(wrong.is_empty(), "layer violations: {wrong:#?}");
}

#[test]
fn the_checker_sees_paths_and_skips_tests_and_reexports() {
    let text = "use crate::grf::meu::Meu;\nuse crate::{field::DEFAULT_GAMMA, optimise};\n\
                pub use crate::spectral::pca::Pca;\nmod registration {\n    use super::*;\n    \
                use crate::registry::Method;\n}\n#[cfg(test)]\nmod tests {\n    use crate::lvm::x;\n}\n";
    let mut seen = Vec::new();
    for (line, inline) in code_lines(text) {
        for p in paths_of(&line, "grf::alle", inline) {
            seen.push(p.join("::"));
        }
    }
    assert_eq!(
        seen,
        [
            "grf::meu::Meu",
            "field::DEFAULT_GAMMA",
            "optimise",
            "grf::alle",
            "registry::Method"
        ]
    );
}

//! Exact block-diagonal screening (Witten, Friedman & Simon 2011; Mazumder & Hastie 2012):
//! the solution is block diagonal over the connected components of the graph with an edge
//! `i - j` whenever `|S_ij| > rho_ij` (never for an infinite penalty).

/// Component label of every variable (labels 0.. in order of first appearance) and the number
/// of components. With `enabled = false`, one component.
pub(crate) fn components(s: &[f64], pen: &[f64], p: usize, enabled: bool) -> (Vec<usize>, usize) {
    if !enabled {
        return (vec![0; p], 1);
    }
    let mut parent: Vec<usize> = (0..p).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for c in 0..p {
        for r in 0..c {
            if s[r + c * p].abs() > pen[r + c * p] {
                let (a, b) = (root(&mut parent, r), root(&mut parent, c));
                if a != b {
                    parent[a.max(b)] = a.min(b);
                }
            }
        }
    }
    let mut label = vec![usize::MAX; p];
    let mut of_root = vec![usize::MAX; p];
    let mut count = 0;
    for (i, l) in label.iter_mut().enumerate() {
        let r = root(&mut parent, i);
        if of_root[r] == usize::MAX {
            of_root[r] = count;
            count += 1;
        }
        *l = of_root[r];
    }
    (label, count)
}

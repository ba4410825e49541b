use serde::{Deserialize, Serialize};

/// What kind of number an [`Evidence`] is. Only values of the same kind may be compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceKind {
    /// An exact log-likelihood of the data.
    LogLikelihood,
    /// A variational evidence lower bound.
    Elbo,
    /// A pseudo-log-likelihood (sum of conditional log-densities), not a likelihood.
    PseudoLogLikelihood,
    /// A penalised or dual objective with no likelihood interpretation.
    Objective,
    /// The method has no probabilistic score.
    None,
}

impl EvidenceKind {
    /// The name used in reports and tables (`log_likelihood`, `elbo`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceKind::LogLikelihood => "log_likelihood",
            EvidenceKind::Elbo => "elbo",
            EvidenceKind::PseudoLogLikelihood => "pseudo_log_likelihood",
            EvidenceKind::Objective => "objective",
            EvidenceKind::None => "none",
        }
    }

    /// The kind named `name` ([`EvidenceKind::as_str`]'s names), if any.
    pub fn parse(name: &str) -> Option<EvidenceKind> {
        [
            EvidenceKind::LogLikelihood,
            EvidenceKind::Elbo,
            EvidenceKind::PseudoLogLikelihood,
            EvidenceKind::Objective,
            EvidenceKind::None,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
    }
}

impl std::fmt::Display for EvidenceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A labelled score of a fitted model with its named terms.
///
/// `value` is the sum of `terms` where the model has terms (for LL-LVM: the expected
/// log-likelihood, -KL(q(x)||p(x)) and -KL(q(C)||p(C))).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub value: f64,
    pub kind: EvidenceKind,
    pub terms: Vec<(String, f64)>,
}

impl Evidence {
    /// Evidence of a method with no probabilistic score.
    pub fn none() -> Self {
        Evidence {
            value: f64::NAN,
            kind: EvidenceKind::None,
            terms: Vec::new(),
        }
    }

    /// Evidence with a single value and no breakdown.
    pub fn new(kind: EvidenceKind, value: f64) -> Self {
        Evidence {
            value,
            kind,
            terms: Vec::new(),
        }
    }

    /// Evidence whose value is the sum of the given terms.
    pub fn from_terms(kind: EvidenceKind, terms: Vec<(String, f64)>) -> Self {
        let value = terms.iter().map(|(_, v)| v).sum();
        Evidence { value, kind, terms }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_is_sum_of_terms() {
        let e = Evidence::from_terms(
            EvidenceKind::Elbo,
            vec![("a".into(), 1.5), ("b".into(), -0.25)],
        );
        assert_eq!(e.value, 1.25);
        assert_eq!(e.kind.as_str(), "elbo");
    }
}

//! Typed method parameters: what each method declares ([`ParamSpec`]), the values a caller
//! gives ([`Value`], [`Settings`]), and the up-front check that refuses a bad value with the
//! parameter's name and its allowed range before any work starts.
//!
//! Text is parsed once, at the edge (the command line: [`ParamSpec::parse`]); from there on
//! settings travel as typed values.

use std::collections::BTreeMap;
use std::fmt;
use unfold_core::{Error, Result};

/// An interval of allowed real values; either end open or closed, `+-inf` for none.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
    pub lo_open: bool,
    pub hi_open: bool,
}

impl Interval {
    /// `(0, inf)`.
    pub const POSITIVE: Interval = Interval::new(0.0, f64::INFINITY, true, true);
    /// `(0, inf]`: positive, and infinity allowed (e.g. no bound at all).
    pub const POSITIVE_OR_INF: Interval = Interval::new(0.0, f64::INFINITY, true, false);
    /// `[0, inf)`.
    pub const NON_NEGATIVE: Interval = Interval::new(0.0, f64::INFINITY, false, true);

    /// An interval with the given ends.
    pub const fn new(lo: f64, hi: f64, lo_open: bool, hi_open: bool) -> Self {
        Interval {
            lo,
            hi,
            lo_open,
            hi_open,
        }
    }

    /// Whether `v` lies in the interval (NaN never does).
    pub fn contains(&self, v: f64) -> bool {
        let above = if self.lo_open {
            v > self.lo
        } else {
            v >= self.lo
        };
        let below = if self.hi_open {
            v < self.hi
        } else {
            v <= self.hi
        };
        above && below
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let end = |v: f64| {
            if v.is_infinite() {
                if v > 0.0 { "inf" } else { "-inf" }.to_string()
            } else {
                format!("{v}")
            }
        };
        write!(
            f,
            "{}{}, {}{}",
            if self.lo_open { '(' } else { '[' },
            end(self.lo),
            end(self.hi),
            if self.hi_open { ')' } else { ']' }
        )
    }
}

/// The type and allowed values of a parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamKind {
    /// A whole number of at least `min`.
    Count { min: usize },
    /// A real number in the interval.
    Real(Interval),
    /// A list of real numbers, each in the interval (comma-separated on the command line).
    Reals(Interval),
    /// On or off.
    Flag,
    /// One of the words.
    Choice(&'static [&'static str]),
    /// A real number in the interval (on the command line `VALUE` or `fixed:VALUE`) or one
    /// of the words (LL-LVM's `alpha`: `fixed:1e-3` or `optimise`).
    RealOr(Interval, &'static [&'static str]),
}

/// A typed parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Count(usize),
    Real(f64),
    Reals(Vec<f64>),
    Flag(bool),
    Choice(String),
}

impl From<usize> for Value {
    fn from(v: usize) -> Self {
        Value::Count(v)
    }
}

impl From<u64> for Value {
    fn from(v: u64) -> Self {
        Value::Count(v as usize)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Real(v)
    }
}

impl From<Vec<f64>> for Value {
    fn from(v: Vec<f64>) -> Self {
        Value::Reals(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Flag(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Choice(v.to_string())
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Count(v) => write!(f, "{v}"),
            Value::Real(v) => write!(f, "{v}"),
            Value::Reals(v) => {
                let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
                f.write_str(&parts.join(","))
            }
            Value::Flag(v) => write!(f, "{v}"),
            Value::Choice(v) => f.write_str(v),
        }
    }
}

/// A parameter's default: a value, or computed by the method from the data (the text says
/// how, e.g. "the mean kNN distance").
#[derive(Clone, Debug, PartialEq)]
pub enum DefaultValue {
    Is(Value),
    Auto(&'static str),
}

/// One parameter a method takes: its name (the command line's `--name`, with `_` written
/// `-`), its meaning, type, allowed values and default.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSpec {
    pub name: &'static str,
    pub help: &'static str,
    pub kind: ParamKind,
    pub default: DefaultValue,
}

impl ParamSpec {
    /// A whole number `>= min` with a default.
    pub fn count(name: &'static str, default: usize, min: usize, help: &'static str) -> Self {
        ParamSpec {
            name,
            help,
            kind: ParamKind::Count { min },
            default: DefaultValue::Is(Value::Count(default)),
        }
    }

    /// A whole number `>= min` that the method chooses when not given.
    pub fn count_auto(
        name: &'static str,
        auto: &'static str,
        min: usize,
        help: &'static str,
    ) -> Self {
        ParamSpec {
            name,
            help,
            kind: ParamKind::Count { min },
            default: DefaultValue::Auto(auto),
        }
    }

    /// A real number in `range` with a default.
    pub fn real(name: &'static str, default: f64, range: Interval, help: &'static str) -> Self {
        ParamSpec {
            name,
            help,
            kind: ParamKind::Real(range),
            default: DefaultValue::Is(Value::Real(default)),
        }
    }

    /// A real number in `range` that the method computes from the data when not given.
    pub fn real_auto(
        name: &'static str,
        auto: &'static str,
        range: Interval,
        help: &'static str,
    ) -> Self {
        ParamSpec {
            name,
            help,
            kind: ParamKind::Real(range),
            default: DefaultValue::Auto(auto),
        }
    }

    /// One of `words`, `default` first unless given.
    pub fn choice(
        name: &'static str,
        default: &'static str,
        words: &'static [&'static str],
        help: &'static str,
    ) -> Self {
        ParamSpec {
            name,
            help,
            kind: ParamKind::Choice(words),
            default: DefaultValue::Is(Value::Choice(default.to_string())),
        }
    }

    /// An on/off switch, off by default.
    pub fn flag(name: &'static str, help: &'static str) -> Self {
        ParamSpec {
            name,
            help,
            kind: ParamKind::Flag,
            default: DefaultValue::Is(Value::Flag(false)),
        }
    }

    /// The latent dimension, `>= 1` (every method has it).
    pub fn dim() -> Self {
        ParamSpec::count("dim", 2, 1, "latent dimension")
    }

    /// Neighbours per point of the kNN graph.
    pub fn k() -> Self {
        ParamSpec::count("k", 10, 1, "neighbours per point of the kNN graph")
    }

    /// Symmetrisation of the kNN graph.
    pub fn graph() -> Self {
        ParamSpec::choice(
            "graph",
            "union",
            &["union", "mutual"],
            "symmetrisation of the kNN graph: an edge where either point (union) or both \
             (mutual) list the other",
        )
    }

    /// What a kNN graph of several components becomes.
    pub fn connect() -> Self {
        ParamSpec::choice(
            "connect",
            "nearest",
            &["nearest", "off"],
            "a kNN graph that falls apart into components: join them through their closest \
             pairs of points, with a warning naming the edges (nearest), or leave it as it is \
             (off: methods that need one component refuse it)",
        )
    }

    /// What a method that needs distinct points does with repeated rows.
    pub fn duplicates() -> Self {
        ParamSpec::choice(
            "duplicates",
            "merge",
            &["merge", "jitter", "error"],
            "rows that repeat another exactly: fit the distinct points, every copy sharing its \
             point's embedding, with a warning (merge), move each copy by a seeded offset of 1% \
             of its point's nearest-neighbour distance, with a warning (jitter), or refuse them \
             (error)",
        )
    }

    /// The seed of every random choice; the registry gives every method this parameter
    /// (methods without random choices ignore it).
    pub fn seed() -> Self {
        ParamSpec::count("seed", 0, 0, "seed for every random choice")
    }

    /// The default in words: the value as the command line writes it (`fixed:0.001` for a
    /// number-or-word parameter), or how the method computes it.
    pub fn default_text(&self) -> String {
        match (&self.default, &self.kind) {
            (DefaultValue::Is(Value::Real(v)), ParamKind::RealOr(..)) => format!("fixed:{v}"),
            (DefaultValue::Is(v), _) => v.to_string(),
            (DefaultValue::Auto(how), _) => how.to_string(),
        }
    }

    /// What values are allowed, in words (for messages and help).
    pub fn allowed(&self) -> String {
        match &self.kind {
            ParamKind::Count { min } => format!("a whole number >= {min}"),
            ParamKind::Real(r) => format!("a number in {r}"),
            ParamKind::Reals(r) => format!("comma-separated numbers in {r}"),
            ParamKind::Flag => "on or off".to_string(),
            ParamKind::Choice(words) => format!("one of {}", words.join(", ")),
            ParamKind::RealOr(r, words) => {
                format!("fixed:VALUE with VALUE in {r}, or {}", words.join(", "))
            }
        }
    }

    fn refuse(&self, got: impl fmt::Display) -> Error {
        Error::invalid(self.name, format!("expected {}, got {got}", self.allowed()))
    }

    /// Parses the command line's text for this parameter into a checked value.
    pub fn parse(&self, text: &str) -> Result<Value> {
        let t = text.trim();
        let real = |s: &str| {
            s.trim()
                .parse::<f64>()
                .map_err(|_| self.refuse(format!("`{text}`")))
        };
        let value = match &self.kind {
            ParamKind::Count { .. } => {
                Value::Count(t.parse().map_err(|_| self.refuse(format!("`{text}`")))?)
            }
            ParamKind::Real(_) => Value::Real(real(t)?),
            ParamKind::Reals(_) => Value::Reals(t.split(',').map(real).collect::<Result<_>>()?),
            ParamKind::Flag => match t {
                "" | "true" | "on" | "yes" => Value::Flag(true),
                "false" | "off" | "no" => Value::Flag(false),
                _ => return Err(self.refuse(format!("`{text}`"))),
            },
            ParamKind::Choice(_) => Value::Choice(t.to_string()),
            ParamKind::RealOr(_, words) => {
                if words.contains(&t) {
                    Value::Choice(t.to_string())
                } else {
                    Value::Real(real(t.strip_prefix("fixed:").unwrap_or(t))?)
                }
            }
        };
        self.check(&value)?;
        Ok(value)
    }

    /// Fails unless `value` has this parameter's type and lies in its allowed range; the
    /// error names the parameter and the range.
    pub fn check(&self, value: &Value) -> Result<()> {
        let ok = match (&self.kind, value) {
            (ParamKind::Count { min }, Value::Count(v)) => v >= min,
            (ParamKind::Real(r), Value::Real(v)) | (ParamKind::RealOr(r, _), Value::Real(v)) => {
                r.contains(*v)
            }
            (ParamKind::Reals(r), Value::Reals(v)) => {
                !v.is_empty() && v.iter().all(|x| r.contains(*x))
            }
            (ParamKind::Flag, Value::Flag(_)) => true,
            (ParamKind::Choice(words), Value::Choice(w))
            | (ParamKind::RealOr(_, words), Value::Choice(w)) => words.contains(&w.as_str()),
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(self.refuse(value))
        }
    }
}

/// Parameter values by name. The registry checks them against a method's [`ParamSpec`]s
/// and fills in the defaults before the method sees them, so a method reads each of its
/// parameters with the accessor of its type.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    values: BTreeMap<String, Value>,
}

impl Settings {
    /// No values.
    pub fn new() -> Self {
        Settings::default()
    }

    /// These settings with `name` set to `value`.
    pub fn with(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.set(name, value);
        self
    }

    /// Sets `name` to `value`.
    pub fn set(&mut self, name: &str, value: impl Into<Value>) {
        self.values.insert(name.to_string(), value.into());
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    /// Every `(name, value)`, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// `other`'s values over these.
    pub fn merged(mut self, other: &Settings) -> Self {
        for (k, v) in &other.values {
            self.values.insert(k.clone(), v.clone());
        }
        self
    }

    fn missing(name: &str, what: &str) -> Error {
        Error::invalid(
            name,
            format!("expected {what}; the method reads a parameter it does not declare"),
        )
    }

    /// A whole-number parameter.
    pub fn count(&self, name: &str) -> Result<usize> {
        match self.get(name) {
            Some(Value::Count(v)) => Ok(*v),
            _ => Err(Self::missing(name, "a whole number")),
        }
    }

    /// A whole-number parameter whose default the method computes (`None` when not given).
    pub fn count_opt(&self, name: &str) -> Result<Option<usize>> {
        match self.get(name) {
            None => Ok(None),
            Some(_) => self.count(name).map(Some),
        }
    }

    /// A real parameter.
    pub fn real(&self, name: &str) -> Result<f64> {
        match self.get(name) {
            Some(Value::Real(v)) => Ok(*v),
            _ => Err(Self::missing(name, "a number")),
        }
    }

    /// A real parameter whose default the method computes (`None` when not given).
    pub fn real_opt(&self, name: &str) -> Result<Option<f64>> {
        match self.get(name) {
            None => Ok(None),
            Some(_) => self.real(name).map(Some),
        }
    }

    /// A list of reals (`None` when not given).
    pub fn reals_opt(&self, name: &str) -> Result<Option<Vec<f64>>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Reals(v)) => Ok(Some(v.clone())),
            Some(_) => Err(Self::missing(name, "a list of numbers")),
        }
    }

    /// An on/off parameter.
    pub fn flag(&self, name: &str) -> Result<bool> {
        match self.get(name) {
            Some(Value::Flag(v)) => Ok(*v),
            _ => Err(Self::missing(name, "on or off")),
        }
    }

    /// A word parameter.
    pub fn choice(&self, name: &str) -> Result<&str> {
        match self.get(name) {
            Some(Value::Choice(v)) => Ok(v),
            _ => Err(Self::missing(name, "a word")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_print_and_test_their_ends() {
        assert_eq!(Interval::POSITIVE.to_string(), "(0, inf)");
        assert_eq!(Interval::POSITIVE_OR_INF.to_string(), "(0, inf]");
        assert!(Interval::POSITIVE_OR_INF.contains(f64::INFINITY));
        assert!(!Interval::POSITIVE.contains(f64::INFINITY));
        assert!(!Interval::POSITIVE.contains(0.0) && Interval::NON_NEGATIVE.contains(0.0));
        assert!(!Interval::NON_NEGATIVE.contains(f64::NAN));
    }

    #[test]
    fn parsing_checks_type_and_range_and_names_the_parameter() {
        let c = ParamSpec::real("C", 1.0, Interval::POSITIVE_OR_INF, "slack");
        assert_eq!(
            c.parse("-1").unwrap_err().to_string(),
            "invalid value for `C`: expected a number in (0, inf], got -1"
        );
        assert_eq!(c.parse("inf").unwrap(), Value::Real(f64::INFINITY));
        assert!(c.parse("nan").is_err() && c.parse("x").is_err());
        let alpha = ParamSpec {
            kind: ParamKind::RealOr(Interval::POSITIVE, &["optimise"]),
            ..c.clone()
        };
        assert_eq!(alpha.parse("fixed:1e-3").unwrap(), Value::Real(1e-3));
        assert_eq!(
            alpha.parse("optimise").unwrap(),
            Value::Choice("optimise".into())
        );
        assert!(alpha.parse("fixed:-1").is_err() && alpha.parse("sometimes").is_err());
        let k = ParamSpec::k();
        assert!(k.parse("0").is_err() && k.parse("-3").is_err() && k.parse("2.5").is_err());
        assert_eq!(k.parse("7").unwrap(), Value::Count(7));
        let g = ParamSpec::graph();
        assert!(g.parse("mutual").is_ok() && g.parse("both").is_err());
    }

    #[test]
    fn accessors_read_typed_values() {
        let s = Settings::new()
            .with("k", 7usize)
            .with("gamma", 0.5)
            .with("graph", "union");
        assert_eq!(s.count("k").unwrap(), 7);
        assert_eq!(s.real("gamma").unwrap(), 0.5);
        assert_eq!(s.choice("graph").unwrap(), "union");
        assert_eq!(s.real_opt("sigma").unwrap(), None);
        assert!(s.real("k").is_err() && s.count("missing").is_err());
    }
}

//! Parameters declared once: a model's typed `XxxParams` struct, written with
//! [`params!`](crate::params), is the one declaration of its parameters. Each field gives
//! its type, default, allowed range and help; from them come the registry's [`ParamSpec`]s
//! (the command line's flags, the Python keywords, the help text), the reading of checked
//! [`Settings`] into the struct, the builder methods of the Rust API and the range check
//! ([`Declared::check`]). A new parameter is one field in one place, and a typo in its
//! name is a compile error.
//!
//! ```
//! use unfold_models::method::{Declared, Interval, Rule, Settings};
//! unfold_models::params! {
//!     /// Settings of a toy model.
//!     #[derive(Clone, Debug, PartialEq)]
//!     pub struct ToyParams {
//!         pub dim: usize = 2 => Rule::at_least(1, "latent dimension"),
//!         pub gamma: f64 = 1e-4 => Rule::within(Interval::NON_NEGATIVE, "toy: a precision"),
//!         pub ncentres: Option<usize> = None => Rule::auto("N / 10", "toy: the centres").min(1),
//!     }
//! }
//! let specs = ToyParams::specs();
//! assert_eq!(specs.iter().map(|p| p.name).collect::<Vec<_>>(), ["dim", "gamma", "ncentres"]);
//! assert!(ToyParams::default().gamma(-1.0).check().is_err());
//! let p = ToyParams::read(&Settings::new().with("dim", 3usize).with("gamma", 0.5)).unwrap();
//! assert_eq!((p.dim, p.gamma, p.ncentres), (3, 0.5, None));
//! ```

use super::params::{DefaultValue, Interval, ParamKind, ParamSpec, Settings, Value};
use std::ops::Deref;
use unfold_core::{Error, Result};
use unfold_graph::{Connect, GraphSpec, Symmetrisation};

/// What a field of a `params!` struct allows besides its type: its help text, the least
/// whole number or the interval of reals, and for an optional field (`Option<T>`, `None` by
/// default) how the method chooses the value when it is not given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rule {
    pub help: &'static str,
    pub min: usize,
    pub range: Interval,
    pub auto: &'static str,
}

impl Rule {
    /// Any value of the field's type (flags, words, whole numbers >= 0, any real).
    pub const fn help(help: &'static str) -> Self {
        Rule {
            help,
            min: 0,
            range: Interval::new(f64::NEG_INFINITY, f64::INFINITY, true, true),
            auto: "",
        }
    }

    /// A whole number of at least `min`.
    pub const fn at_least(min: usize, help: &'static str) -> Self {
        Rule::help(help).min(min)
    }

    /// A real number (or each of a list of them) in `range`.
    pub const fn within(range: Interval, help: &'static str) -> Self {
        Rule::help(help).range(range)
    }

    /// An optional value the method chooses from the data when it is not given, as `how`
    /// says (the help text's default).
    pub const fn auto(how: &'static str, help: &'static str) -> Self {
        let mut rule = Rule::help(help);
        rule.auto = how;
        rule
    }

    /// The rule of a field that groups parameters under their own names ([`Field`]).
    pub const fn group() -> Self {
        Rule::help("")
    }

    /// This rule with the least whole number `min`.
    pub const fn min(mut self, min: usize) -> Self {
        self.min = min;
        self
    }

    /// This rule with the interval `range`.
    pub const fn range(mut self, range: Interval) -> Self {
        self.range = range;
        self
    }
}

/// A type a declared parameter can have: it says its [`ParamKind`] under a [`Rule`] and
/// converts to and from the registry's typed [`Value`].
pub trait Param: Sized {
    /// The kind of the parameter under `rule`.
    fn kind(rule: &Rule) -> ParamKind;
    /// The value to store in [`Settings`] (`None`: absent, the method chooses).
    fn to_value(&self) -> Option<Value>;
    /// The parameter from a stored value, `None` when the value has another type.
    fn from_value(value: Option<&Value>) -> Option<Self>;

    /// The parameter `name` of checked settings.
    fn read(name: &'static str, settings: &Settings) -> Result<Self> {
        Self::from_value(settings.get(name)).ok_or_else(|| {
            Error::invalid(
                name,
                format!(
                    "the settings hold {} where the method declares another type",
                    settings
                        .get(name)
                        .map_or("nothing".to_string(), |v| format!("`{v}`"))
                ),
            )
        })
    }
}

/// A field of a [`params!`](crate::params) struct: one parameter (every [`Param`] type)
/// or a group of them under their own names (e.g. the kNN graph's `k` and `graph`, which
/// [`unfold_graph::GraphSpec`] holds together), whose name and rule are then unused.
pub trait Field {
    /// The specs of the field `name` under `rule`, with the default `default`.
    fn field_specs(name: &'static str, rule: &Rule, default: &Self) -> Vec<ParamSpec>;
    /// Sets the field from checked settings; absent parameters keep their value.
    fn read_into(&mut self, name: &'static str, settings: &Settings) -> Result<()>;
    /// Writes the field's values into `settings` (an optional one only when given).
    fn write(&self, name: &'static str, settings: &mut Settings);
}

impl<T: Param> Field for T {
    fn field_specs(name: &'static str, rule: &Rule, default: &Self) -> Vec<ParamSpec> {
        vec![ParamSpec {
            name,
            help: rule.help,
            kind: T::kind(rule),
            default: match default.to_value() {
                Some(v) => DefaultValue::Is(v),
                None => DefaultValue::Auto(rule.auto),
            },
        }]
    }

    fn read_into(&mut self, name: &'static str, settings: &Settings) -> Result<()> {
        if settings.get(name).is_some() {
            *self = T::read(name, settings)?;
        }
        Ok(())
    }

    fn write(&self, name: &'static str, settings: &mut Settings) {
        if let Some(v) = self.to_value() {
            settings.set(name, v);
        }
    }
}

impl Param for usize {
    fn kind(rule: &Rule) -> ParamKind {
        ParamKind::Count { min: rule.min }
    }
    fn to_value(&self) -> Option<Value> {
        Some(Value::Count(*self))
    }
    fn from_value(value: Option<&Value>) -> Option<Self> {
        match value {
            Some(Value::Count(v)) => Some(*v),
            _ => None,
        }
    }
}

impl Param for u64 {
    fn kind(rule: &Rule) -> ParamKind {
        ParamKind::Count { min: rule.min }
    }
    fn to_value(&self) -> Option<Value> {
        Some(Value::Count(*self as usize))
    }
    fn from_value(value: Option<&Value>) -> Option<Self> {
        match value {
            Some(Value::Count(v)) => Some(*v as u64),
            _ => None,
        }
    }
}

impl Param for f64 {
    fn kind(rule: &Rule) -> ParamKind {
        ParamKind::Real(rule.range)
    }
    fn to_value(&self) -> Option<Value> {
        Some(Value::Real(*self))
    }
    fn from_value(value: Option<&Value>) -> Option<Self> {
        match value {
            Some(Value::Real(v)) => Some(*v),
            _ => None,
        }
    }
}

impl Param for bool {
    fn kind(_: &Rule) -> ParamKind {
        ParamKind::Flag
    }
    fn to_value(&self) -> Option<Value> {
        Some(Value::Flag(*self))
    }
    fn from_value(value: Option<&Value>) -> Option<Self> {
        match value {
            Some(Value::Flag(v)) => Some(*v),
            _ => None,
        }
    }
}

impl Param for Vec<f64> {
    fn kind(rule: &Rule) -> ParamKind {
        ParamKind::Reals(rule.range)
    }
    fn to_value(&self) -> Option<Value> {
        Some(Value::Reals(self.clone()))
    }
    fn from_value(value: Option<&Value>) -> Option<Self> {
        match value {
            Some(Value::Reals(v)) => Some(v.clone()),
            _ => None,
        }
    }
}

/// An optional parameter: absent (`None`) unless given, the method choosing it from the
/// data as [`Rule::auto`] says.
macro_rules! optional_param {
    ($($t:ty),*) => {$(
        impl Param for Option<$t> {
            fn kind(rule: &Rule) -> ParamKind {
                <$t>::kind(rule)
            }
            fn to_value(&self) -> Option<Value> {
                self.as_ref().and_then(Param::to_value)
            }
            fn from_value(value: Option<&Value>) -> Option<Self> {
                match value {
                    None => Some(None),
                    some => <$t>::from_value(some).map(Some),
                }
            }
        }
    )*};
}

optional_param!(usize, f64, Vec<f64>);

/// A parameter whose values are words: an enum with one word per variant (written with
/// [`choice!`](crate::choice)).
pub trait Choice: Sized + Copy + 'static {
    /// Every word accepted: each variant's, then other spellings.
    const NAMES: &'static [&'static str];
    /// The word of this variant.
    fn word(&self) -> &'static str;
    /// The variant named by `word` (or another spelling of it).
    fn of_word(word: &str) -> Option<Self>;
}

/// Implements [`Choice`] and [`Param`] for an enum of unit variants, one word each:
///
/// ```ignore
/// choice!(Solver { Auto = "auto", Dense = "dense", Sparse = "sparse" });
/// choice!(AlphaWord { Optimise = "optimise" } aliases { "optimize" = Optimise });
/// ```
#[macro_export]
macro_rules! choice {
    ($t:ty { $($variant:ident = $word:literal),+ $(,)? } $(aliases { $($alias:literal = $target:ident),* $(,)? })?) => {
        impl $crate::method::Choice for $t {
            const NAMES: &'static [&'static str] = &[$($word,)+ $($($alias,)*)?];
            fn word(&self) -> &'static str {
                match self {
                    $(<$t>::$variant => $word,)+
                }
            }
            fn of_word(word: &str) -> Option<Self> {
                match word {
                    $($word => Some(<$t>::$variant),)+
                    $($($alias => Some(<$t>::$target),)*)?
                    _ => None,
                }
            }
        }

        impl $crate::method::Param for $t {
            fn kind(_: &$crate::method::Rule) -> $crate::method::ParamKind {
                $crate::method::ParamKind::Choice(<$t as $crate::method::Choice>::NAMES)
            }
            fn to_value(&self) -> Option<$crate::method::Value> {
                Some($crate::method::Value::Choice(
                    $crate::method::Choice::word(self).to_string(),
                ))
            }
            fn from_value(value: Option<&$crate::method::Value>) -> Option<Self> {
                match value {
                    Some($crate::method::Value::Choice(w)) => {
                        <$t as $crate::method::Choice>::of_word(w)
                    }
                    _ => None,
                }
            }
        }
    };
}

/// A struct of declared parameters (written with [`params!`](crate::params)).
pub trait Declared: Field + Default {
    /// The specs of its parameters, in declaration order, with the defaults of
    /// [`Default::default`].
    fn specs() -> Vec<ParamSpec> {
        <Self as Field>::field_specs("", &Rule::group(), &Self::default())
    }

    /// The parameters of settings that the registry has checked against [`Self::specs`]
    /// (every name known, every value in its range, the defaults filled in); a parameter
    /// absent from them keeps its default.
    fn read(settings: &Settings) -> Result<Self> {
        let mut p = Self::default();
        p.read_into("", settings)?;
        Ok(p)
    }

    /// These parameters as settings (optional ones only when given).
    fn settings(&self) -> Settings {
        let mut s = Settings::new();
        self.write("", &mut s);
        s
    }

    /// Checks every parameter against its declared range, for parameters set through the
    /// Rust API (the registry checks settings before reading them); the error names the
    /// parameter and its range.
    fn check(self) -> Result<Checked<Self>> {
        let settings = self.settings();
        for spec in Self::specs() {
            if let Some(value) = settings.get(spec.name) {
                spec.check(value)?;
            }
        }
        Ok(Checked(self))
    }

    /// The parameters of checked settings ([`Declared::read`]), as checked parameters.
    fn read_checked(settings: &Settings) -> Result<Checked<Self>> {
        Self::read(settings).map(Checked)
    }
}

/// Parameters whose every value lies in its declared range: what a model's fit takes, so
/// that the check happens once, in [`Declared::check`] or in the registry.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked<P>(P);

impl<P> Checked<P> {
    /// The parameters.
    pub fn into_inner(self) -> P {
        self.0
    }
}

impl<P> Deref for Checked<P> {
    type Target = P;
    fn deref(&self) -> &P {
        &self.0
    }
}

/// Declares a struct of parameters once: each field with its type, default and [`Rule`].
/// Generates the struct, its `Default`, a builder method per field, and [`Declared`]
/// (the registry's specs, reading checked settings, the range check).
///
/// A field written without `=> rule` is not a parameter: it keeps its default when the
/// struct is read from settings and has no spec (an option of the Rust API only).
#[macro_export]
macro_rules! params {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $fvis:vis $field:ident : $ty:ty = $default:expr $(=> $rule:expr)?
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $($(#[$fmeta])* $fvis $field: $ty,)+
        }

        impl Default for $name {
            fn default() -> Self {
                $name { $($field: $default,)+ }
            }
        }

        impl $name {
            $(
                #[doc = concat!("These parameters with `", stringify!($field), "` set.")]
                #[must_use]
                pub fn $field(mut self, value: $ty) -> Self {
                    self.$field = value;
                    self
                }
            )+
        }

        impl $crate::method::Field for $name {
            fn field_specs(
                _: &'static str,
                _: &$crate::method::Rule,
                _default: &Self,
            ) -> Vec<$crate::method::ParamSpec> {
                #[allow(unused_mut)]
                let mut specs = Vec::new();
                $($(
                    specs.extend(<$ty as $crate::method::Field>::field_specs(
                        stringify!($field),
                        &$rule,
                        &_default.$field,
                    ));
                )?)+
                specs
            }

            fn read_into(
                &mut self,
                _: &'static str,
                _settings: &$crate::method::Settings,
            ) -> $crate::__core::Result<()> {
                $($(
                    let _ = &$rule;
                    $crate::method::Field::read_into(&mut self.$field, stringify!($field), _settings)?;
                )?)+
                Ok(())
            }

            fn write(&self, _: &'static str, _settings: &mut $crate::method::Settings) {
                $($(
                    let _ = &$rule;
                    $crate::method::Field::write(&self.$field, stringify!($field), _settings);
                )?)+
            }
        }

        impl $crate::method::Declared for $name {}
    };
}

crate::choice!(Symmetrisation { Union = "union", Mutual = "mutual" });
crate::choice!(Connect { Nearest = "nearest", Off = "off" });

/// The kNN graph's parameters `k`, `graph` (its symmetrisation) and `connect`, held
/// together by [`GraphSpec`]; a `params!` field `graph: GraphSpec = GraphSpec::knn(10) =>
/// Rule::group()` declares them.
impl Field for GraphSpec {
    fn field_specs(_: &'static str, _: &Rule, default: &Self) -> Vec<ParamSpec> {
        let mut k = ParamSpec::k();
        k.default = DefaultValue::Is(Value::Count(default.k));
        let mut graph = ParamSpec::graph();
        graph.default = DefaultValue::Is(default.symmetrisation.to_value().expect("a word"));
        let mut connect = ParamSpec::connect();
        connect.default = DefaultValue::Is(default.connect.to_value().expect("a word"));
        vec![k, graph, connect]
    }

    fn read_into(&mut self, _: &'static str, settings: &Settings) -> Result<()> {
        self.k.read_into("k", settings)?;
        self.symmetrisation.read_into("graph", settings)?;
        self.connect.read_into("connect", settings)
    }

    fn write(&self, _: &'static str, settings: &mut Settings) {
        self.k.write("k", settings);
        self.symmetrisation.write("graph", settings);
        self.connect.write("connect", settings);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Shape {
        Round,
        Square,
    }
    crate::choice!(Shape { Round = "round", Square = "square" } aliases { "circle" = Round });

    crate::params! {
        /// A test struct.
        #[derive(Clone, Debug, PartialEq)]
        struct TestParams {
            dim: usize = 2 => Rule::at_least(1, "latent dimension"),
            gamma: f64 = 0.5 => Rule::within(Interval::POSITIVE, "a precision"),
            shape: Shape = Shape::Round => Rule::help("a shape"),
            order: bool = false => Rule::help("a flag"),
            centres: Option<usize> = None => Rule::auto("N / 10", "centres").min(1),
            hidden: u32 = 7,
        }
    }

    #[test]
    fn specs_come_from_the_fields() {
        let specs = TestParams::specs();
        let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
        assert_eq!(names, ["dim", "gamma", "shape", "order", "centres"]);
        assert_eq!(specs[0].kind, ParamKind::Count { min: 1 });
        assert_eq!(specs[1].default, DefaultValue::Is(Value::Real(0.5)));
        assert_eq!(
            specs[2].kind,
            ParamKind::Choice(&["round", "square", "circle"])
        );
        assert_eq!(specs[4].default, DefaultValue::Auto("N / 10"));
        assert_eq!(specs[4].kind, ParamKind::Count { min: 1 });
    }

    #[test]
    fn settings_are_read_and_written_back() {
        let s = Settings::new()
            .with("gamma", 2.0)
            .with("shape", "circle")
            .with("centres", 4usize);
        let p = TestParams::read(&s).unwrap();
        assert_eq!(p.gamma, 2.0);
        assert_eq!(p.shape, Shape::Round);
        assert_eq!(p.centres, Some(4));
        assert_eq!((p.dim, p.hidden), (2, 7));
        let back = p.settings();
        assert_eq!(back.get("shape"), Some(&Value::Choice("round".into())));
        assert_eq!(back.get("centres"), Some(&Value::Count(4)));
        assert!(TestParams::default().settings().get("centres").is_none());
        let wrong = Settings::new().with("gamma", 3usize);
        assert!(TestParams::read(&wrong)
            .unwrap_err()
            .to_string()
            .contains("`gamma`"));
    }

    #[test]
    fn the_range_check_names_the_parameter() {
        let err = TestParams::default().gamma(-1.0).check().unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid value for `gamma`: expected a number in (0, inf), got -1"
        );
        assert!(TestParams::default().dim(0).check().is_err());
        assert!(TestParams::default().centres(Some(0)).check().is_err());
        let ok = TestParams::default()
            .centres(Some(3))
            .shape(Shape::Square)
            .order(true)
            .hidden(3)
            .check()
            .unwrap();
        assert_eq!(ok.centres, Some(3));
        assert_eq!((ok.shape, ok.order, ok.hidden), (Shape::Square, true, 3));
    }
}

//! Which of several callables one call means: Swift's labels, the number
//! of arguments, then the types of the arguments as far as their syntax or
//! a declaration tells (a literal, a typed variable, a construction).

use super::values::{DEPTH, Val};
use super::*;
use crate::extract::{Arg, Lit};

/// Most definitions one call is marked ambiguous between; past it, the call
/// is counted as unbound.
const MOST_AMBIGUOUS: usize = 12;

/// What a call gives its callee, by which a level of candidates none of
/// which can take it is passed over (`applicable_levels`): the number of
/// arguments, and for a call read from the source, its labels and the
/// types of its arguments as far as they are told (read once, when first
/// needed).
pub(super) struct Taking<'c> {
    args: Option<u32>,
    call: Option<(usize, Option<DefIx>, &'c crate::extract::Call)>,
    given: std::cell::OnceCell<Vec<Given>>,
}

impl<'c> Taking<'c> {
    /// A call of `args` arguments, nothing else known of them.
    pub(super) fn args(args: Option<u32>) -> Self {
        Taking { args, call: None, given: std::cell::OnceCell::new() }
    }

    /// Call `c`, in file `fi` and scope `scope`.
    pub(super) fn call(fi: usize, scope: Option<DefIx>, c: &'c crate::extract::Call) -> Self {
        Taking { args: c.args, call: Some((fi, scope, c)), given: std::cell::OnceCell::new() }
    }
}

impl Resolver<'_> {
    /// Whether callable `d` can take what `t` gives: as many arguments,
    /// its labels, and no argument of a type its parameter cannot take.
    pub(super) fn can_take(&self, d: DefIx, t: &Taking<'_>) -> bool {
        if !t.args.is_none_or(|n| self.p.fact(d).arity.is_none_or(|a| a.fits(n))) {
            return false;
        }
        let Some((fi, scope, c)) = t.call else { return true };
        if !self.labels_fit(d, c) {
            return false;
        }
        if c.given.is_empty() {
            return true;
        }
        let given = t.given.get_or_init(|| c.given.iter().map(|a| self.given(fi, scope, a)).collect());
        self.matches(d, given, c.labels.as_deref()).is_some()
    }

    /// Of the definitions a call may mean (`level`, all of one rung), the
    /// ones that fit it: by the number of arguments, then by the types of
    /// the arguments whose type the syntax or a declaration tells (a
    /// literal, a typed variable, a construction), the most specific
    /// first. One left is the callee; several are each marked ambiguous.
    pub(super) fn choose(&self, fi: usize, scope: Option<DefIx>, level: &[DefIx], c: &crate::extract::Call) -> Bound {
        // Swift's labels name the method: `load(u, for: k)` is never
        // `load(_:using:)`.
        let labelled: Vec<DefIx>;
        let level = if c.labels.is_some() {
            labelled = level.iter().copied().filter(|&d| self.labels_fit(d, c)).collect();
            if labelled.is_empty() {
                return Bound::Outside;
            }
            &labelled[..]
        } else {
            level
        };
        if let [one] = level[..] {
            return Bound::One(one);
        }
        // A C# extension method called without a receiver is given its
        // `this` argument first (`Humanize(input, casing, source)`).
        let passes_this = |d: DefIx| c.receiver.is_none() && self.p.fact(d).this_param;
        let fit: Vec<DefIx> = level
            .iter()
            .copied()
            .filter(|&d| {
                let n = match c.args {
                    Some(n) if passes_this(d) => n.checked_sub(1),
                    n => n,
                };
                (c.args.is_none() || n.is_some()) && n.is_none_or(|n| self.p.fact(d).arity.is_none_or(|a| a.fits(n)))
            })
            .collect();
        let several = |v: Vec<DefIx>| if v.len() > MOST_AMBIGUOUS { Bound::Unbound } else { Bound::Several(v) };
        match fit.len() {
            0 => return several(level.to_vec()),
            1 => return Bound::One(fit[0]),
            _ => {}
        }
        let given: Vec<Given> = c.given.iter().map(|a| self.given(fi, scope, a)).collect();
        let scored: Vec<(DefIx, usize)> = fit
            .iter()
            .filter_map(|&d| {
                if !passes_this(d) {
                    return self.matches(d, &given, c.labels.as_deref()).map(|exact| (d, exact));
                }
                // The `this` argument against the type extended.
                let this = match (given.first(), self.p.fact(d).rare().extension.as_deref()) {
                    (Some(g), Some(ty)) => weight(self.fits(&crate::extract::simple_type(ty), g))?,
                    _ => 0,
                };
                self.matches(d, given.get(1..).unwrap_or_default(), None).map(|exact| (d, this + exact))
            })
            .collect();
        match scored.len() {
            0 => several(fit),
            1 => Bound::One(scored[0].0),
            _ => {
                // The most specific: the best score, if one has it.
                let best = scored.iter().map(|(_, e)| *e).max().unwrap_or(0);
                let top: Vec<DefIx> = scored.iter().filter(|(_, e)| *e == best).map(|(d, _)| *d).collect();
                if let [one] = top[..] { Bound::One(one) } else { several(top) }
            }
        }
    }

    /// Whether a call's Swift labels fit callable `d`'s: the call's, in
    /// order, among the declaration's (a parameter with a default value or
    /// a trailing closure may be left out). A declaration or a call
    /// without labels fits.
    pub(super) fn labels_fit(&self, d: DefIx, c: &crate::extract::Call) -> bool {
        let (Some(given), Some(declared)) = (&c.labels, &self.p.fact(d).rare().labels) else { return true };
        let mut declared = declared.iter();
        given.iter().all(|g| declared.any(|l| l == g))
    }

    /// What an argument's type is, as far as can be told.
    fn given(&self, fi: usize, scope: Option<DefIx>, a: &Arg) -> Given {
        match a {
            Arg::Literal(l) => Given::Literal(*l),
            // C#'s cast to a nullable type (`(LetterCasing?)casing`).
            Arg::New(t) if let Some(t) = t.strip_suffix('?') => match self.given_type(fi, scope, t) {
                Given::Project(t) => Given::Nullable(t),
                g => g,
            },
            Arg::New(t) => self.given_type(fi, scope, t),
            Arg::Expr(e) => match self.eval(fi, scope, e, false, DEPTH) {
                Val::Type(t) => Given::Project(t),
                Val::Written(w) => Given::Named(crate::extract::simple_type(&w.text)),
                _ => Given::Unknown,
            },
            Arg::Other => Given::Unknown,
        }
    }

    /// Whether the project defines a type of that name.
    fn is_project_type(&self, name: &str) -> bool {
        self.look.named(name).iter().any(|&p| self.p.kind(p).is_type())
    }

    fn given_type(&self, fi: usize, scope: Option<DefIx>, t: &str) -> Given {
        let name = Name { name: t.to_owned(), qualifier: None, span: Span::default(), generics: 0 };
        match self.ty(fi, scope.unwrap_or(usize::MAX), &name) {
            Some(d) => Given::Project(d),
            None => Given::Named(t.to_owned()),
        }
    }

    /// Whether definition `d` can take arguments of these types: none when
    /// one of them cannot be passed to its parameter; else how closely they
    /// match (the very type, then a supertype of the project, then a type
    /// not known to fit or not: the most specific overload scores most).
    /// Swift's `labels`, as the call writes them, place each argument at
    /// its parameter (one with a default value may be left out between).
    fn matches(&self, d: DefIx, given: &[Given], labels: Option<&[String]>) -> Option<usize> {
        let fact = self.p.fact(d);
        let params: Vec<&str> = fact.params().collect();
        let slots: Vec<usize> = match (labels, &fact.rare().labels) {
            (Some(labels), Some(declared)) if declared.len() == params.len() => {
                let mut next = 0;
                labels
                    .iter()
                    .map(|l| {
                        let at = declared.iter().skip(next).position(|d| d == l).map_or(next, |k| next + k);
                        next = at + 1;
                        at
                    })
                    .collect()
            }
            _ => (0..given.len()).collect(),
        };
        let mut score = 0;
        for (&i, g) in slots.iter().zip(given) {
            // A variadic last parameter takes the rest: an array of its
            // elements, or elements.
            let Some(written) = params.get(i).or_else(|| params.last().filter(|p| p.ends_with("..."))) else { break };
            let param = crate::extract::simple_type(written);
            let fit = match param.strip_suffix("[]").filter(|_| written.ends_with("...")) {
                Some(element) => match self.fits(&param, g) {
                    Fit::No => self.fits(element, g),
                    fit => fit,
                },
                None => self.fits(&param, g),
            };
            let nullable = written.trim_end().ends_with('?');
            // `null` is no value of an enum where nullable types are
            // written so (C#, Kotlin, Swift): only of `E?`.
            if matches!(g, Given::Literal(Lit::Null))
                && !nullable
                && self.p.sources[self.p.defs[d].file()].lang.rules.nullable_marked
                && self.look.named(&param).iter().any(|&t| self.p.kind(t) == Kind::Enum)
            {
                return None;
            }
            score += match (fit, g) {
                // A value of a nullable type goes to `T?` only.
                (_, Given::Nullable(_)) if !nullable => return None,
                (fit, Given::Nullable(_)) => weight(fit)?,
                // A value of the very type goes to `T` before `T?` (C#'s
                // identity before a nullable conversion, Swift's value
                // before an optional).
                (Fit::Exact, _) if nullable => 2,
                (fit, _) => weight(fit)?,
            };
        }
        Some(score)
    }

    /// Whether a value of what `g` says can be passed as a parameter of the
    /// type written `param` (its simple name).
    fn fits(&self, param: &str, g: &Given) -> Fit {
        if param.is_empty() || is_type_variable(param) {
            return Fit::Maybe;
        }
        let param = param.trim_end_matches("...");
        match g {
            Given::Unknown => Fit::Maybe,
            Given::Literal(l) => literal_fits(*l, param),
            Given::Named(n) => {
                let n = n.trim_end_matches("...");
                let array = |t: &str| t.strip_suffix("[]").map(str::to_owned);
                if n.eq_ignore_ascii_case(param) || boxed(n) == boxed(param) {
                    Fit::Exact
                } else if let (Some(a), Some(b)) = (array(n), array(param)) {
                    // Arrays convert only to arrays of a supertype of their
                    // elements: `boolean[]` is no `byte[]`.
                    let generic = |t: &str| is_type_variable(t) || is_object(t);
                    if generic(&a) || generic(&b) || (primitive(&a).is_none() && primitive(&b).is_none()) {
                        Fit::Maybe
                    } else {
                        Fit::No
                    }
                } else if array(n).is_some() != array(param).is_some() {
                    // An array is none of a value's types, and no value is an array.
                    if is_object(param) || matches!(param, "Cloneable" | "Serializable") { Fit::Maybe } else { Fit::No }
                } else if primitive(n).is_some() && primitive(param).is_none() {
                    // A primitive goes to its box and what the box is.
                    if is_object(param) || matches!(param, "Number" | "Comparable" | "Serializable") {
                        Fit::Maybe
                    } else {
                        Fit::No
                    }
                } else if primitive(n).is_some() && primitive(param).is_some() {
                    // Widening (`int` to `long`), never narrowing.
                    if widens(n, param) { Fit::Maybe } else { Fit::No }
                } else if primitive(param).is_some() && !is_object(n) {
                    Fit::No
                } else if !is_type_variable(n) && !is_object(param) && self.is_project_type(param) {
                    // A value of a type defined elsewhere is none of the
                    // project's types (nothing outside extends them).
                    Fit::No
                } else {
                    Fit::Maybe
                }
            }
            Given::Nullable(t) => self.fits(param, &Given::Project(*t)),
            Given::Project(t) => {
                let lineage = self.lineage(*t);
                let names: Vec<&str> = lineage.iter().map(|&s| self.p.fact(s).name()).collect();
                if names.first() == Some(&param) {
                    Fit::Exact
                } else if names.contains(&param) {
                    Fit::Super
                } else if is_object(param) {
                    Fit::Maybe
                } else if primitive(param).is_some() || self.is_project_type(param) {
                    // A primitive, or another type of the project that is
                    // none of its supertypes.
                    Fit::No
                } else if self.p.kind(*t) == Kind::Enum
                    && self.p.sources[self.p.defs[*t].file()].lang.name == "csharp"
                    && !matches!(
                        param,
                        "Enum" | "ValueType" | "IComparable" | "IConvertible" | "IFormattable" | "ISpanFormattable"
                    )
                {
                    // A C# enum implements no interface of its own: it is
                    // none of the types defined elsewhere but `Enum`'s.
                    Fit::No
                } else {
                    Fit::Maybe
                }
            }
        }
    }
}

/// How much a fit tells an overload apart: none if the argument cannot be
/// passed.
fn weight(fit: Fit) -> Option<usize> {
    match fit {
        Fit::No => None,
        Fit::Exact => Some(3),
        Fit::Super => Some(2),
        Fit::Maybe => Some(1),
    }
}

/// An argument's type, as far as can be told.
#[derive(Debug, Clone)]
enum Given {
    /// A literal of that kind.
    Literal(Lit),
    /// A type of the project.
    Project(DefIx),
    /// A nullable value of a type of the project (C#'s `(E?)e`).
    Nullable(DefIx),
    /// A type defined elsewhere, by its simple name.
    Named(String),
    /// Not known.
    Unknown,
}

/// How an argument fits a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fit {
    /// It cannot be passed.
    No,
    /// It may be (a type whose supertypes are not known, a conversion).
    Maybe,
    /// It is, through a supertype of the project.
    Super,
    /// The very type.
    Exact,
}

/// A type parameter (`T`, `K`, `TValue`) rather than a type: anything fits.
fn is_type_variable(t: &str) -> bool {
    let mut chars = t.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_uppercase())
        && (t.len() == 1
            || (t.len() <= 8 && t.starts_with('T') && t[1..].starts_with(|c: char| c.is_ascii_uppercase())))
}

/// Whether a parameter of this type takes any object.
fn is_object(t: &str) -> bool {
    matches!(t, "Object" | "object" | "Any" | "any" | "interface{}" | "dynamic" | "void*" | "NSObject" | "AnyObject")
}

/// A primitive number, character or boolean type's rank in widening order
/// (`byte` < `short` < `int` < `long` < `float` < `double`; `char`, `bool`
/// apart).
fn primitive(t: &str) -> Option<u8> {
    Some(match t {
        "byte" | "sbyte" | "int8" | "int8_t" | "uint8" | "uint8_t" | "u8" | "i8" => 1,
        "short" | "ushort" | "int16" | "int16_t" | "uint16" | "uint16_t" | "u16" | "i16" => 2,
        "int" | "uint" | "int32" | "int32_t" | "uint32" | "uint32_t" | "u32" | "i32" | "rune" | "unsigned" => 3,
        "long" | "ulong" | "int64" | "int64_t" | "uint64" | "uint64_t" | "u64" | "i64" | "size_t" | "usize"
        | "isize" | "Int" | "Long" => 4,
        "float" | "float32" | "f32" | "Float" => 5,
        "double" | "float64" | "f64" | "decimal" | "Double" => 6,
        "char" | "Char" | "wchar_t" => 7,
        "boolean" | "bool" | "Boolean" | "Bool" => 8,
        _ => return None,
    })
}

/// Java's and C#'s boxed types as their primitive (`Integer` → `int`).
fn boxed(t: &str) -> &str {
    match t {
        "Integer" | "Int32" => "int",
        "Long" | "Int64" => "long",
        "Short" | "Int16" => "short",
        "Byte" => "byte",
        "Character" => "char",
        "Float" | "Single" => "float",
        "Double" => "double",
        "Boolean" => "boolean",
        "String" => "string",
        other => other,
    }
}

/// Whether a value of primitive type `from` widens to `to`.
fn widens(from: &str, to: &str) -> bool {
    match (primitive(from), primitive(to)) {
        (Some(a), Some(b)) if a == b => true,
        (Some(7), Some(b)) => (3..=6).contains(&b),
        (Some(a), Some(b)) => a < 7 && b < 7 && a <= b,
        _ => false,
    }
}

/// How a literal fits a parameter type.
fn literal_fits(l: Lit, param: &str) -> Fit {
    let p = boxed(param);
    let text =
        matches!(p, "string" | "str" | "CharSequence" | "string_view" | "char*" | "wstring" | "NSString" | "Text");
    match l {
        Lit::Null => {
            if primitive(param).is_some() && param.chars().next().is_some_and(|c| c.is_lowercase()) {
                Fit::No
            } else {
                Fit::Maybe
            }
        }
        Lit::Str if text => Fit::Exact,
        Lit::Str => {
            if primitive(p).is_some() {
                Fit::No
            } else {
                Fit::Maybe
            }
        }
        _ if text => Fit::No,
        Lit::Bool => match primitive(p) {
            Some(8) => Fit::Exact,
            Some(_) => Fit::No,
            None => Fit::Maybe,
        },
        Lit::Char => match primitive(p) {
            Some(7) => Fit::Exact,
            Some(8) => Fit::No,
            Some(_) => Fit::Maybe,
            None => Fit::Maybe,
        },
        Lit::Int => match primitive(p) {
            // Kotlin's, Scala's and Swift's integer literal is an `Int`
            // unless a type says otherwise.
            Some(3) => Fit::Exact,
            _ if p == "Int" => Fit::Exact,
            Some(8) => Fit::No,
            Some(_) => Fit::Maybe,
            None => Fit::Maybe,
        },
        Lit::Float => match primitive(p) {
            Some(6) => Fit::Exact,
            Some(5) => Fit::Maybe,
            Some(_) => Fit::No,
            None => Fit::Maybe,
        },
    }
}

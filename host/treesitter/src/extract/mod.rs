//! One file → its facts: what the language's query captures, read into
//! plain data (owned strings, byte and line positions). No name is
//! resolved here; files are read in parallel and [`crate::resolve`] joins
//! them.

use std::time::Duration;

use tree_sitter::Node;

mod doctypes;
mod packed;
mod read;
mod rules;
mod syntax;
mod words;

pub use packed::{Body, Packed, Shelf, Unpack, Uses};
pub use read::Reader;
pub use syntax::simple_type;
pub use words::{Params, Parts, Words};

/// A source position: 0-based line and byte column.
pub type Point = (u32, u32);

/// A source range, end exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, serde::Serialize, serde::Deserialize)]
pub struct Span {
    /// Start (line, column).
    pub start: Point,
    /// End (line, column).
    pub end: Point,
    /// Byte offsets, for containment: 32 bits, as tree-sitter counts
    /// them (and a file read is far smaller, `Options::max_file_bytes`),
    /// which keeps the millions of spans held between edits 8 bytes
    /// smaller each.
    pub bytes: (u32, u32),
}

impl Span {
    fn of(n: Node<'_>) -> Span {
        let (s, e) = (n.start_position(), n.end_position());
        Span {
            start: (s.row as u32, s.column as u32),
            end: (e.row as u32, e.column as u32),
            bytes: (offset(n.start_byte()), offset(n.end_byte())),
        }
    }

    /// The byte offsets at full width, as a parse tree gives them.
    pub fn offsets(&self) -> (usize, usize) {
        (self.bytes.0 as usize, self.bytes.1 as usize)
    }

    /// Whether `other` lies inside this span.
    pub fn contains(&self, other: &Span) -> bool {
        self.bytes.0 <= other.bytes.0 && other.bytes.1 <= self.bytes.1
    }
}

/// A byte offset as a span holds it (tree-sitter's own are 32-bit: one
/// past them cannot come, and would end at the last a span can say).
pub fn offset(byte: usize) -> u32 {
    u32::try_from(byte).unwrap_or(u32::MAX)
}

/// What a definition is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Kind {
    /// `@def.class`
    Class,
    /// `@def.interface`
    Interface,
    /// `@def.enum`
    Enum,
    /// `@def.struct`
    Struct,
    /// `@def.trait`
    Trait,
    /// `@def.type` (an alias or a defined type).
    Type,
    /// `@def.module` (a namespace block).
    Module,
    /// `@def.method`
    Method,
    /// `@def.function`
    Function,
    /// `@def.constructor`
    Constructor,
    /// `@def.field`
    Field,
    /// `@def.property`
    Property,
    /// `@def.constant`
    Constant,
    /// `@def.variable`
    Variable,
    /// `@def.macro` (Rust's `macro_rules!`).
    Macro,
}

impl Kind {
    fn of_capture(name: &str) -> Option<Kind> {
        Some(match name.strip_prefix("def.")? {
            "class" => Kind::Class,
            "interface" => Kind::Interface,
            "enum" => Kind::Enum,
            "struct" => Kind::Struct,
            "trait" => Kind::Trait,
            "type" => Kind::Type,
            "module" => Kind::Module,
            "method" => Kind::Method,
            "function" => Kind::Function,
            "constructor" => Kind::Constructor,
            "field" => Kind::Field,
            "property" => Kind::Property,
            "constant" => Kind::Constant,
            "variable" => Kind::Variable,
            "macro" => Kind::Macro,
            _ => return None,
        })
    }

    /// A type: something with members, a receiver's type, a header's target.
    pub fn is_type(self) -> bool {
        matches!(self, Kind::Class | Kind::Interface | Kind::Enum | Kind::Struct | Kind::Trait | Kind::Type)
    }

    /// Something called (a macro is invoked like a function).
    pub fn is_callable(self) -> bool {
        matches!(self, Kind::Method | Kind::Function | Kind::Constructor | Kind::Macro)
    }

    /// How precisely the kind names what a definition is, when two
    /// patterns of a query match one: a constructor or method is a more
    /// precise function, and a function a more precise variable
    /// (TypeScript's `const f = () => …`).
    fn precision(self) -> u8 {
        match self {
            Kind::Constructor => 3,
            Kind::Method => 2,
            Kind::Function => 1,
            _ => 0,
        }
    }

    /// Something that holds a scope of typed names (a type or a callable).
    pub fn is_scope(self) -> bool {
        self.is_type() || self.is_callable() || self == Kind::Module
    }
}

/// How many arguments a callable takes: `min..=max` (`max` none: variadic).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Arity {
    /// Fewest.
    pub min: u32,
    /// Most, none when variadic.
    pub max: Option<u32>,
}

impl Arity {
    /// Whether a call with `n` arguments fits.
    pub fn fits(self, n: u32) -> bool {
        n >= self.min && self.max.is_none_or(|m| n <= m)
    }
}

/// A definition.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Def {
    /// What it is.
    pub kind: Kind,
    /// Its name as written, the type it belongs to when declared outside
    /// it (Go's receivers), the type a callable returns as written
    /// (`@returns`: `Self`, `Option<&Arg>`, `*Order`, `Promise<Shape>`,
    /// whitespace collapsed), and each parameter's type as written (`""`
    /// where none is written; overloads of one arity are told apart by
    /// them): see [`Def::name`], [`Def::owner`], [`Def::returns`],
    /// [`Def::params`].
    pub words: Words,
    /// The whole definition.
    pub span: Span,
    /// Its name.
    pub name_span: Span,
    /// A C# extension method (`this Reader r`): called without a receiver
    /// (`Decode(r, 2)`, in the static class or as `Ext.Decode(r, 2)`), it
    /// is given its `this` argument as its first.
    pub this_param: bool,
    /// A function that is a value bound to a name (`@term`: TypeScript's
    /// `const f = () => …`), spelled as a term (`f.`) as its indexer does.
    pub term: bool,
    /// An object literal's property (`@meta`: `module.exports = { parse
    /// }`): a definition of its file whatever encloses it, spelled as
    /// scip-typescript spells it, `parse0:`, counted per name in the file.
    pub meta: bool,
    /// Parameters, for callables.
    pub arity: Option<Arity>,
    /// Type parameters (`@generics`: `IValidator<T>` has 1): C# types of
    /// one name and another number of them are other types.
    pub generics: u8,
    /// A C or C++ function-like macro: a call to it calls what its body
    /// calls, once the preprocessor has expanded it.
    pub expands: bool,
    /// Ruby's method of the class itself (`def self.settings`, or a `def`
    /// in `class << self`), not of its instances.
    pub singleton: bool,
    /// Its header says `static` before its parameters: a member of the
    /// type, which overrides nothing.
    pub declared_static: bool,
    /// Its header is its name, then a type (`HOOKS: list[str] = …`): an
    /// annotated variable, which scip-python spells apart.
    pub annotated: bool,
    /// What few definitions have (see [`Rare`]); `None` where it would
    /// be empty, though an empty one means the same ([`Def::rare`]).
    pub rare: Option<Box<Rare>>,
}

/// What a definition has in a few languages only, held apart from its
/// record: a large project keeps hundreds of thousands of definitions
/// between edits, and these would otherwise be 120 empty bytes in each.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Rare {
    /// For an extension function (Kotlin's `fun Reader.decode()`, C#'s
    /// `static string Decode(this Reader r)`): the simple name of the type
    /// it extends. Its symbol stays where it is declared; calls on a value
    /// of that type find it. A C# extension's `this` parameter is left out
    /// of its arity and parameter types: calls do not pass it.
    pub extension: Option<String>,
    /// For a function in a Rust `impl` block: the impl's type and trait as
    /// written (`Circle`, `Shape`), which its symbol spells.
    pub impl_of: Option<(String, Option<String>)>,
    /// Swift's argument labels, one per parameter (`_` for none):
    /// `load(_:for:)` and `load(_:using:)` are two methods, each called by
    /// its labels.
    pub labels: Option<Vec<String>>,
    /// Python's outermost decorator as written, without its `@`
    /// (`click.group()`, `cli.command(cls=Aliased)`): what the name is
    /// bound to is what it gives applied to the function.
    pub decorated: Option<String>,
}

/// What a definition says that only its file's document reads: held
/// apart from its record, packed with the file's calls ([`Body`]), since
/// the graph made of the document holds it too.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Text {
    /// The header, whitespace collapsed.
    pub signature: String,
    /// The comment right above it.
    pub doc: String,
}

impl Text {
    /// The text of `def`: its header `signature` and its comment `doc`;
    /// sets on `def` what the resolve reads of the header.
    pub fn of(def: &mut Def, signature: String, doc: String) -> Text {
        def.declared_static = signature.split('(').next().unwrap_or("").split_whitespace().any(|w| w == "static");
        def.annotated = signature.strip_prefix(def.name()).is_some_and(|rest| rest.trim_start().starts_with(':'));
        Text { signature, doc }
    }
}

/// What a definition without a [`Rare`] part has.
static NONE_RARE: Rare = Rare { extension: None, impl_of: None, labels: None, decorated: None };

impl Def {
    /// What few definitions have: the empty [`Rare`] for most.
    pub fn rare(&self) -> &Rare {
        self.rare.as_deref().unwrap_or(&NONE_RARE)
    }

    /// [`Def::rare`], to set: made where there is none yet.
    pub fn rare_mut(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Box::default)
    }

    /// Whether `other` declares the same as this, wherever each is and
    /// whatever its comment says: what the whole project's lookups and
    /// overrides read of a definition, and its symbol but for one thing of
    /// its place (whether a Python module variable starts a line, which
    /// the caller compares).
    pub fn same_but_places(&self, other: &Def) -> bool {
        let Def {
            kind,
            words,
            span: _,
            name_span: _,
            this_param,
            term,
            meta,
            arity,
            generics,
            expands,
            singleton,
            declared_static,
            annotated,
            rare: _,
        } = self;
        *kind == other.kind
            && *words == other.words
            && *this_param == other.this_param
            && *term == other.term
            && *meta == other.meta
            && *arity == other.arity
            && *generics == other.generics
            && *expands == other.expands
            && *singleton == other.singleton
            && *declared_static == other.declared_static
            && *annotated == other.annotated
            && self.rare() == other.rare()
    }
}

/// A name used somewhere: a type in a header or an annotation, a called
/// name, a typed variable's type.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Name {
    /// The name.
    pub name: String,
    /// A package qualifier written before it (`orders.Order`).
    pub qualifier: Option<String>,
    /// Where.
    pub span: Span,
    /// Type arguments written after it (`IValidator<Order>`: 1), by which
    /// C# tells `IValidator` from `IValidator<T>`.
    pub generics: u8,
}

/// A call.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Call {
    /// The called name.
    pub name: String,
    /// The receiver expression's text (`this.repo`, `s.store`, `Orders`).
    pub receiver: Option<String>,
    /// Arguments given.
    pub args: Option<u32>,
    /// What each argument is, as far as its syntax tells (a literal, a
    /// name, a construction): overloads of one arity are told apart by it.
    pub given: Vec<Arg>,
    /// The called name's place.
    pub span: Span,
    /// `new T(…)`: a construction of type `name`.
    pub construct: bool,
    /// The receiver is a scope written before the name (`shapes::total`,
    /// `Shape::make`): a namespace or a type, never a value.
    pub scoped: bool,
    /// `@read`: a name used without a call that runs code all the same: a
    /// property read (`jwk.key_type`), a method passed as a value, a
    /// decorator (`@crypto_required`). It resolves only to a callable
    /// member of a known receiver or to a name in scope, never by guess.
    pub read: bool,
    /// Type arguments written after the name (`new Result<int>(…)`: 1), by
    /// which C# tells `Result` from `Result<T>`.
    pub generics: u8,
    /// Swift's argument labels as the call writes them (`_` for none).
    pub labels: Option<Vec<String>>,
}

/// What an argument is, as far as its syntax tells.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Arg {
    /// A literal.
    Literal(Lit),
    /// An expression whose value's type is read the way a receiver's is (a
    /// variable, a field, `Type.CONSTANT`, a call): its text, whitespace
    /// collapsed.
    Expr(String),
    /// A construction (`new T(…)`): a value of type `T` as written.
    New(String),
    /// Anything else (an operation, a lambda, a long expression).
    Other,
}

/// A literal's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Lit {
    /// `"text"`.
    Str,
    /// `'c'`.
    Char,
    /// `1`, `0x1F`.
    Int,
    /// `1.5`, `2e3`.
    Float,
    /// `true`, `false`.
    Bool,
    /// `null`, `nil`, `nullptr`, `None`.
    Null,
}

/// A name given a type: a field, parameter or local variable.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Var {
    /// The variable's name.
    pub name: String,
    /// Its type's name (for [`Typed::Like`], the other variable's name; for
    /// [`Typed::Value`], the expression, whitespace collapsed).
    pub ty: Name,
    /// What `ty` says of it.
    pub typed: Typed,
    /// The whole type as written, whitespace collapsed (`@var.written`:
    /// `Arc<RwLock<State>>`), when the query gives it: what a wrapper
    /// holds, for calls through it.
    pub written: Option<String>,
    /// The byte range of the innermost function literal (a lambda, a
    /// closure, Go's `func(…) {…}`) it is declared in, if any: it names
    /// that value only there (`r *http.Request` in a handler literal is not
    /// the `r` of the function around it).
    pub within: Option<(usize, usize)>,
    /// A member of the type around it though declared in its constructor's
    /// parameters (`@var.member`: PHP's promoted `public readonly Level
    /// $level`): its scope is the type, not the constructor.
    pub member: bool,
    /// The bytes of the expression of a [`Typed::Value`] or
    /// [`Typed::Element`] (empty where the value is made up, as a variant's
    /// field is): it is read as seen from its start (`let a = match x {
    /// Some(a) => a.f(), … }`: the arm's `a`), and the name is not seen
    /// from inside it (`var request = try request.asURLRequest()`).
    pub at: (usize, usize),
}

/// The innermost of `ranges` (sorted by start) around byte `at`.
fn innermost_range(ranges: &[(usize, usize)], at: usize) -> Option<(usize, usize)> {
    let upto = ranges.partition_point(|r| r.0 <= at);
    ranges[..upto].iter().rev().find(|r| at < r.1).copied()
}

/// How a variable's type is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Typed {
    /// `@var.type`: it is of that type.
    Is,
    /// `@var.elem`: it holds elements of that type (`shapes: &[Box<dyn
    /// Shape>]`, `Shape[]`, `List[Shape]`).
    Holds,
    /// `@var.like`: it is an element of the variable named (`for shape in
    /// shapes`, `shapes.map((s) => …)`).
    Like,
    /// `@var.value`: it is bound to what an expression gives (`let o =
    /// Order::new(…)`, `x := repo.Find(id)`), read when a call needs it.
    Value,
    /// `@var.of`: it is an element of what an expression gives (`for a in
    /// self.args()`, `.map(|a| …)` on an iterator of `&Arg`).
    Element,
}

impl Typed {
    /// Read from an expression, so a written type says more.
    fn inferred(self) -> bool {
        matches!(self, Typed::Value | Typed::Element)
    }
}

/// An import.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Import {
    /// The imported path as written, quotes removed (`com.example.Order`,
    /// `example.com/shop/orders`).
    pub path: String,
    /// The name it is imported as, when given.
    pub alias: Option<String>,
}

impl Import {
    /// The path before its last dotted segment, when that segment is
    /// `name` (`com.example` for `com.example.Order` and `Order`): what
    /// `path.rsplit_once('.')` tells, without looking for the dot in every
    /// import a file has, for every name a resolve looks up in it (5 % of a
    /// whole index's time on three copies of Kafka went to that search).
    pub fn package_of(&self, name: &str) -> Option<&str> {
        let at = self.path.len().checked_sub(name.len() + 1)?;
        let names_it = self.path.ends_with(name) && self.path.as_bytes()[at] == b'.' && !name.contains('.');
        names_it.then(|| &self.path[..at])
    }
}

/// Everything one file says.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Facts {
    /// Its package declaration.
    pub package: Option<String>,
    /// Its imports.
    pub imports: Vec<Import>,
    /// Definitions, in source order.
    pub defs: Vec<Def>,
    /// Each definition's header and comment, in the order of `defs` (in a
    /// [`crate::resolve::Source`], empty: its `body` holds them, packed).
    pub texts: Vec<Text>,
    /// Header types (`extends`, `implements`, embedded types).
    pub supers: Vec<Name>,
    /// Typed names. (In a [`crate::resolve::Source`], empty: its `body`
    /// holds them, packed.)
    pub vars: Vec<Var>,
    /// Calls (in a `Source`, empty: its `body` holds them).
    pub calls: Vec<Call>,
    /// Type names used (in a `Source`, empty: its `body` holds them).
    pub types: Vec<Name>,
    /// Bodies of anonymous classes (`new ToStringStyle() { … }`, `@anonymous`)
    /// and the type each extends: in one, that type's members are in scope.
    pub anonymous: Vec<((usize, usize), Name)>,
    /// Bodies where `self` is a value of a type written so (`@self.type`:
    /// Swift's `extension [ServerTrustEvaluating] { … }`, an array of the
    /// protocol), with that type as written.
    pub self_types: Vec<((usize, usize), String)>,
    /// Lines.
    pub lines: usize,
    /// Where the parser first met syntax it does not know (its 1-based
    /// line; it recovers, and what it could read is kept).
    pub syntax_errors: Option<u32>,
    /// Invocations of the file's own `macro_rules!` expanded, and left as
    /// written (no rule matched, past the bounds): [`crate::macros`].
    pub macros: (u32, u32),
    /// The query ran out of time: where it stopped. What it matched before
    /// is kept; the rest of the file is not read.
    pub cut: Option<Cut>,
    /// It declares something `expect` (Kotlin): where an `expect`
    /// declaration and its `actual`s are one symbol, the symbol is placed
    /// at the `expect` one.
    pub expects: bool,
}

impl Facts {
    /// Keeps the definitions `keep` says, and their texts. (Facts made by
    /// hand, in tests, may have no texts.)
    pub fn retain_defs(&mut self, mut keep: impl FnMut(&Def) -> bool) {
        debug_assert!(self.texts.is_empty() || self.texts.len() == self.defs.len(), "one text per definition");
        let kept: Vec<bool> = self.defs.iter().map(&mut keep).collect();
        if self.texts.len() == kept.len() {
            let mut each = kept.iter();
            self.texts.retain(|_| each.next().copied().unwrap_or(true));
        }
        let mut each = kept.into_iter();
        self.defs.retain(|_| each.next().unwrap_or(true));
    }

    /// Sorts the definitions by `key`, and their texts with them.
    pub fn sort_defs_by_key<K: Ord>(&mut self, mut key: impl FnMut(&Def) -> K) {
        debug_assert!(self.texts.is_empty() || self.texts.len() == self.defs.len(), "one text per definition");
        if self.texts.len() != self.defs.len() {
            self.defs.sort_by_key(key);
            return;
        }
        let mut both: Vec<(Def, Text)> =
            std::mem::take(&mut self.defs).into_iter().zip(std::mem::take(&mut self.texts)).collect();
        both.sort_by_key(|(d, _)| key(d));
        (self.defs, self.texts) = both.into_iter().unzip();
    }

    /// Gives back what its lists hold beyond their length: a file's facts
    /// are held for as long as it is served.
    fn shrink_to_fit(&mut self) {
        self.imports.shrink_to_fit();
        self.defs.shrink_to_fit();
        self.texts.shrink_to_fit();
        self.supers.shrink_to_fit();
        self.anonymous.shrink_to_fit();
        self.self_types.shrink_to_fit();
    }
}

/// Where the query over a file stopped, out of time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Cut {
    /// The 1-based line it was at.
    pub line: usize,
    /// The deadline it ran out of (parse and query together).
    pub after: Duration,
}

/// Why a file was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Skip {
    /// Parsing took too long.
    #[error("parsing ran out of time ({0:?} for parse and query together); skipped")]
    ParseTimeout(Duration),
    /// Not text.
    #[error("a NUL byte in the first 8 KiB: not source text")]
    Binary,
    /// The query does not compile against the grammar (a bug in signpost).
    #[error("the {0} query does not compile: {1}")]
    Query(&'static str, String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_imports_package_before_a_name_is_what_splitting_at_its_last_dot_gives() {
        let paths = ["com.example.Order", "Order", ".Order", "Order.", "a..Order", "", "x.Order.Order", "a.b.c"];
        let names = ["Order", "", "example.Order", "c", "b.c", "der", "x", "."];
        for path in paths {
            let import = Import { path: path.to_owned(), alias: None };
            for name in names {
                let split = path.rsplit_once('.').filter(|(_, last)| *last == name).map(|(package, _)| package);
                assert_eq!(import.package_of(name), split, "{path:?} and {name:?}");
            }
        }
    }

    fn def() -> Def {
        Def {
            kind: Kind::Function,
            words: Words::new(Parts { name: "load".into(), ..Parts::default() }),
            span: Span::default(),
            name_span: Span::default(),
            this_param: false,
            term: false,
            meta: false,
            arity: None,
            generics: 0,
            expands: false,
            singleton: false,
            declared_static: false,
            annotated: false,
            rare: None,
        }
    }

    /// A large project keeps every definition's record between edits
    /// (350,000 in the seven-repository benchmark tree): what only a few
    /// languages say is held apart, not as empty fields in each, and its
    /// words are one text ([`Words`]).
    #[test]
    fn a_definitions_record_holds_no_rare_fields_inline() {
        let size = std::mem::size_of::<Def>();
        assert!(size <= 112, "a definition's record takes {size} bytes");
        assert_eq!(std::mem::size_of::<Option<Box<Rare>>>(), 8);
    }

    /// Spans are in every record and every use a project keeps (millions):
    /// 32-bit byte offsets, and a file's offsets past them saturate rather
    /// than wrap.
    #[test]
    fn a_span_is_six_32_bit_numbers() {
        assert_eq!(std::mem::size_of::<Span>(), 24);
        assert_eq!(offset(7), 7);
        assert_eq!(offset(usize::MAX), u32::MAX);
        let s = Span { start: (0, 3), end: (1, 0), bytes: (3, 9) };
        assert_eq!(s.offsets(), (3, 9));
    }

    /// An empty rare part is no part: two readings of one definition are
    /// the same whether it was made and left empty or never made; a rare
    /// field set tells them apart.
    #[test]
    fn an_empty_rare_part_is_the_same_as_none() {
        let (plain, mut made) = (def(), def());
        made.rare_mut();
        assert!(made.rare.is_some());
        assert!(plain.same_but_places(&made) && made.same_but_places(&plain));
        made.rare_mut().labels = Some(vec!["_".into(), "for".into()]);
        assert!(!plain.same_but_places(&made));
        assert_eq!(made.rare().labels.as_deref(), Some(&["_".to_owned(), "for".to_owned()][..]));
        assert_eq!(plain.rare(), &Rare::default());
    }

    /// A definition's header and comment are held apart from it, in the
    /// order of the definitions, however the reading drops or sorts them;
    /// what the resolve reads of the header is kept on the record.
    #[test]
    fn texts_follow_their_definitions_through_a_drop_and_a_sort() {
        let mut facts = Facts::default();
        for (name, at, signature) in [
            ("load", 30, "public static Order load()"),
            ("HOOKS", 10, "HOOKS: list[str]"),
            ("save", 20, "void save(int x)"),
        ] {
            let mut d = Def {
                words: Words::new(Parts { name: name.into(), ..Parts::default() }),
                span: Span { bytes: (at, at + 5), ..Span::default() },
                ..def()
            };
            let text = Text::of(&mut d, signature.into(), format!("// {name}"));
            facts.defs.push(d);
            facts.texts.push(text);
        }
        assert!(facts.defs[0].declared_static && !facts.defs[0].annotated);
        assert!(facts.defs[1].annotated && !facts.defs[1].declared_static);
        assert!(!facts.defs[2].declared_static && !facts.defs[2].annotated);
        // `static` only counts before the parameters.
        let mut d = def();
        Text::of(&mut d, "void run(static_assert x)".into(), String::new());
        assert!(!d.declared_static);
        facts.sort_defs_by_key(|d| d.span.bytes.0);
        facts.retain_defs(|d| d.name() != "save");
        let names: Vec<&str> = facts.defs.iter().map(|d| d.name()).collect();
        let docs: Vec<&str> = facts.texts.iter().map(|t| t.doc.as_str()).collect();
        assert_eq!(names, ["HOOKS", "load"]);
        assert_eq!(docs, ["// HOOKS", "// load"]);
        assert_eq!(facts.texts[1].signature, "public static Order load()");
        // Facts made by hand, with no texts, sort and drop all the same.
        let mut bare = Facts { texts: Vec::new(), ..facts.clone() };
        bare.retain_defs(|d| d.name() == "load");
        bare.sort_defs_by_key(|d| d.span.bytes.1);
        assert_eq!(bare.defs.len(), 1);
        assert!(bare.texts.is_empty());
    }
}

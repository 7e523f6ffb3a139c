//! One file → its facts: what the language's query captures, read into
//! plain data (owned strings, byte and line positions). No name is
//! resolved here; files are read in parallel and [`crate::resolve`] joins
//! them.

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use tree_sitter::{Node, ParseOptions, Parser, Query, QueryCursor, StreamingIterator};

use crate::languages::Lang;

/// A source position: 0-based line and byte column.
pub type Point = (u32, u32);

/// A source range, end exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Span {
    /// Start (line, column).
    pub start: Point,
    /// End (line, column).
    pub end: Point,
    /// Byte offsets, for containment.
    pub bytes: (usize, usize),
}

impl Span {
    fn of(n: Node<'_>) -> Span {
        let (s, e) = (n.start_position(), n.end_position());
        Span {
            start: (s.row as u32, s.column as u32),
            end: (e.row as u32, e.column as u32),
            bytes: (n.start_byte(), n.end_byte()),
        }
    }

    /// Whether `other` lies inside this span.
    pub fn contains(&self, other: &Span) -> bool {
        self.bytes.0 <= other.bytes.0 && other.bytes.1 <= self.bytes.1
    }
}

/// What a definition is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
#[derive(Debug, Clone)]
pub struct Def {
    /// What it is.
    pub kind: Kind,
    /// Its name as written.
    pub name: String,
    /// The whole definition.
    pub span: Span,
    /// Its name.
    pub name_span: Span,
    /// The type it belongs to when declared outside it (Go's receivers).
    pub owner: Option<String>,
    /// For a function in a Rust `impl` block: the impl's type and trait as
    /// written (`Circle`, `Shape`), which its symbol spells.
    pub impl_of: Option<(String, Option<String>)>,
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
    /// Each parameter's type as written (`""` where none is written), for
    /// callables: overloads of one arity are told apart by them.
    pub params: Vec<String>,
    /// A C or C++ function-like macro: a call to it calls what its body
    /// calls, once the preprocessor has expanded it.
    pub expands: bool,
    /// The type a callable returns, as written (`@returns`: `Self`,
    /// `Option<&Arg>`, `*Order`, `Promise<Shape>`), whitespace collapsed.
    pub returns: Option<String>,
    /// The header, whitespace collapsed.
    pub signature: String,
    /// The comment right above it.
    pub doc: String,
}

/// A name used somewhere: a type in a header or an annotation, a called
/// name, a typed variable's type.
#[derive(Debug, Clone)]
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
#[derive(Debug, Clone)]
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
}

/// What an argument is, as far as its syntax tells.
#[derive(Debug, Clone, PartialEq, Eq)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
#[derive(Debug, Clone)]
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
}

/// The innermost of `ranges` (sorted by start) around byte `at`.
fn innermost_range(ranges: &[(usize, usize)], at: usize) -> Option<(usize, usize)> {
    let upto = ranges.partition_point(|r| r.0 <= at);
    ranges[..upto].iter().rev().find(|r| at < r.1).copied()
}

/// How a variable's type is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
#[derive(Debug, Clone)]
pub struct Import {
    /// The imported path as written, quotes removed (`com.example.Order`,
    /// `example.com/shop/orders`).
    pub path: String,
    /// The name it is imported as, when given.
    pub alias: Option<String>,
}

/// Everything one file says.
#[derive(Debug, Clone)]
pub struct Facts {
    /// Its package declaration.
    pub package: Option<String>,
    /// Its imports.
    pub imports: Vec<Import>,
    /// Definitions, in source order.
    pub defs: Vec<Def>,
    /// Header types (`extends`, `implements`, embedded types).
    pub supers: Vec<Name>,
    /// Typed names.
    pub vars: Vec<Var>,
    /// Calls.
    pub calls: Vec<Call>,
    /// Type names used.
    pub types: Vec<Name>,
    /// Bodies of anonymous classes (`new ToStringStyle() { … }`, `@anonymous`)
    /// and the type each extends: in one, that type's members are in scope.
    pub anonymous: Vec<((usize, usize), Name)>,
    /// Lines.
    pub lines: usize,
    /// Whether the parser met syntax it does not know (it recovers; what
    /// it could read is kept).
    pub syntax_errors: bool,
    /// The query ran out of time: where it stopped. What it matched before
    /// is kept; the rest of the file is not read.
    pub cut: Option<Cut>,
}

/// Where the query over a file stopped, out of time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// A language's parser and compiled query, made once per thread.
pub struct Reader {
    lang: &'static Lang,
    parser: Parser,
    query: &'static Query,
    names: Vec<String>,
    timeout: Duration,
}

impl Reader {
    /// A reader of `lang`'s files that gives up on one after `timeout`.
    pub fn new(lang: &'static Lang, timeout: Duration) -> Result<Reader, Skip> {
        let grammar = (lang.grammar)();
        let mut parser = Parser::new();
        parser.set_language(&grammar).map_err(|e| Skip::Query(lang.name, e.to_string()))?;
        let query = query_of(lang, &grammar)?;
        let names = query.capture_names().iter().map(|s| (*s).to_owned()).collect();
        Ok(Reader { lang, parser, query, names, timeout })
    }

    /// `text`'s syntax tree, or a skip once `started` is past the deadline.
    fn parse(&mut self, text: &[u8], started: Instant) -> Result<tree_sitter::Tree, Skip> {
        self.parse_from(text, None, started)
    }

    /// `text`'s syntax tree, reusing what `old` (edited to match) has.
    fn parse_again(
        &mut self,
        text: &[u8],
        old: &tree_sitter::Tree,
        started: Instant,
    ) -> Result<tree_sitter::Tree, Skip> {
        self.parse_from(text, Some(old), started)
    }

    fn parse_from(
        &mut self,
        text: &[u8],
        old: Option<&tree_sitter::Tree>,
        started: Instant,
    ) -> Result<tree_sitter::Tree, Skip> {
        let timeout = self.timeout;
        let mut give_up = |_: &tree_sitter::ParseState| {
            if started.elapsed() > timeout { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        };
        let len = text.len();
        self.parser
            .parse_with_options(
                &mut |at, _| if at < len { &text[at..] } else { &[] },
                old,
                Some(ParseOptions::new().progress_callback(&mut give_up)),
            )
            .ok_or(Skip::ParseTimeout(timeout))
    }

    /// The facts of one file's text. Parsing and the query share one
    /// deadline: a parse past it skips the file; a query past it stops
    /// where it is, and what it had matched before is kept ([`Facts::cut`]).
    pub fn read(&mut self, text: &[u8]) -> Result<Facts, Skip> {
        if memchr_nul(&text[..text.len().min(8192)]) {
            return Err(Skip::Binary);
        }
        // Same length, every position kept: lone CRs made LFs, C and C++
        // export macros made spaces ([`crate::prepass`]).
        let mut prepared = crate::prepass::prepare(self.lang, text);
        let started = Instant::now();
        let timeout = self.timeout;
        let mut tree = self.parse(&prepared, started)?;
        // A C or C++ file the grammar could not read whole, read again
        // without its conditional directives; the reading with fewer errors
        // is kept.
        if self.lang.name == "cpp" && tree.root_node().has_error() {
            let (before, in_conditional) = errors(tree.root_node());
            // Only where the errors are in a conditional: a misread macro
            // elsewhere is no matter of directives.
            if in_conditional > 0
                && let Some((one, blanked)) = crate::prepass::unconditional(&prepared)
            {
                // Incrementally: what the directives were not part of is
                // reused, not parsed again.
                let mut edited = tree.clone();
                let mut points = Points::new(&one);
                for (a, b) in blanked {
                    let (start, end) = (points.at(a), points.at(b));
                    edited.edit(&tree_sitter::InputEdit {
                        start_byte: a,
                        old_end_byte: b,
                        new_end_byte: b,
                        start_position: start,
                        old_end_position: end,
                        new_end_position: end,
                    });
                }
                let again = self.parse_again(&one, &edited, started)?;
                if errors(again.root_node()).0 < before {
                    (tree, prepared) = (again, std::borrow::Cow::Owned(one));
                }
            }
        }
        let text = &prepared[..];
        let root = tree.root_node();
        let mut facts = Facts {
            package: None,
            imports: Vec::new(),
            defs: Vec::new(),
            supers: Vec::new(),
            vars: Vec::new(),
            calls: Vec::new(),
            types: Vec::new(),
            anonymous: Vec::new(),
            lines: text.iter().filter(|&&b| b == b'\n').count()
                + usize::from(!text.ends_with(b"\n") && !text.is_empty()),
            syntax_errors: root.has_error(),
            cut: None,
        };
        let mut cursor = QueryCursor::new();
        // The query is bounded by the same deadline, checked inside
        // tree-sitter's matching (one step over a pathological tree can
        // take minutes, so a check between matches is not enough): past
        // it, the cursor halts and only finished matches come out.
        let halted_at = std::cell::Cell::new(None);
        let mut stop = |state: &tree_sitter::QueryCursorState| {
            if started.elapsed() > timeout {
                halted_at.set(Some(state.current_byte_offset()));
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let options = tree_sitter::QueryCursorOptions::new().progress_callback(&mut stop);
        let mut matches = cursor.matches_with_options(self.query, root, text, options);
        let mut typed: std::collections::HashMap<(usize, usize), usize> = std::collections::HashMap::new();
        let mut defined: std::collections::HashMap<(usize, usize), usize> = std::collections::HashMap::new();
        // Each variable's one binding, by its name's place: a written type
        // wins over a value.
        let mut bound: std::collections::HashMap<(usize, usize, bool), usize> = std::collections::HashMap::new();
        // The function literals of the file (`@literal`).
        let mut literals: Vec<(usize, usize)> = Vec::new();
        // What parses as a definition but is a macro call's block
        // (`@macro.block`).
        let mut blocks: Vec<(usize, usize)> = Vec::new();
        while let Some(m) = matches.next() {
            let get = |name: &str| m.captures().iter().find(|c| self.names[c.index as usize] == name).map(|c| c.node);
            let txt = |n: Node<'_>| String::from_utf8_lossy(&text[n.byte_range()]).into_owned();
            for c in m.captures() {
                let cap = self.names[c.index as usize].as_str();
                let n = c.node;
                match cap {
                    // PHP's `Acme\Shop` is dotted like the others.
                    "package" => facts.package = Some(txt(n).split_whitespace().collect::<String>().replace('\\', ".")),
                    "import" => {
                        let mut path: String =
                            txt(n).trim_matches(['"', '`']).split_whitespace().collect::<String>().replace('\\', ".");
                        // `from a.b import C`: the module, then the name.
                        if let Some(from) = get("import.from") {
                            path = format!("{}.{path}", txt(from).trim());
                        }
                        // A grammar that leaves a wildcard out of the name
                        // (Kotlin's `import a.b.*`): the import says it.
                        // C++'s `using namespace a::b;`: every name of `a.b`.
                        if get("import.namespace").is_some() {
                            path = path.replace("::", ".") + ".*";
                        }
                        let wild = n.parent().is_some_and(|p| txt(p).trim_end().trim_end_matches(';').ends_with('*'));
                        if wild && !path.ends_with('*') {
                            path.push_str(".*");
                        }
                        facts.imports.push(Import { path, alias: get("import.alias").map(txt) });
                    }
                    "extends" => facts.supers.push(Name {
                        name: txt(n),
                        qualifier: get("ref.qualifier").map(txt),
                        span: Span::of(n),
                        generics: generics(get("ref.generics")),
                    }),
                    "literal" => literals.push((n.start_byte(), n.end_byte())),
                    "macro.block" => blocks.push((n.start_byte(), n.end_byte())),
                    "anonymous" => {
                        if let Some(t) = get("anonymous.type") {
                            let name = Name {
                                name: txt(t),
                                qualifier: get("ref.qualifier").map(txt),
                                span: Span::of(t),
                                generics: generics(get("ref.generics")),
                            };
                            facts.anonymous.push(((n.start_byte(), n.end_byte()), name));
                        }
                    }
                    "var.name" => {
                        let typed = [
                            ("var.type", Typed::Is),
                            ("var.elem", Typed::Holds),
                            ("var.like", Typed::Like),
                            ("var.value", Typed::Value),
                            ("var.of", Typed::Element),
                            ("var.written", Typed::Is),
                        ];
                        if let Some((ty, typed)) = typed.iter().find_map(|(c, t)| get(c).map(|n| (n, *t))) {
                            let var = Var {
                                name: txt(n),
                                ty: Name {
                                    name: match typed {
                                        // `if let Some(x) = v`: what `v` holds.
                                        Typed::Value if get("var.unwrap").is_some() => compact(&txt(ty)) + "?",
                                        Typed::Value | Typed::Element => compact(&txt(ty)),
                                        _ => txt(ty),
                                    },
                                    qualifier: get("var.qualifier").map(txt),
                                    span: Span::of(n),
                                    generics: generics(get("ref.generics")),
                                },
                                typed,
                                written: get("var.written").map(|w| compact(&txt(w))),
                                // Set once every function literal is known.
                                within: Some((n.start_byte(), n.start_byte())),
                            };
                            // What a collection holds is said beside its own type.
                            match bound.entry((n.start_byte(), n.end_byte(), typed == Typed::Holds)) {
                                std::collections::hash_map::Entry::Occupied(e) => {
                                    let had = &mut facts.vars[*e.get()];
                                    if had.typed.inferred() && !typed.inferred() {
                                        *had = var;
                                    } else if had.written.is_none() && had.typed == typed {
                                        had.written = var.written;
                                    }
                                }
                                std::collections::hash_map::Entry::Vacant(e) => {
                                    e.insert(facts.vars.len());
                                    facts.vars.push(var);
                                }
                            }
                        }
                    }
                    "call" => facts.calls.push(Call {
                        name: txt(n),
                        receiver: get("call.receiver").or(get("call.scope")).map(txt),
                        args: get("call.args").map(count_args),
                        given: get("call.args").map(|a| args_given(a, text)).unwrap_or_default(),
                        span: Span::of(n),
                        construct: false,
                        scoped: get("call.scope").is_some(),
                        read: false,
                        generics: generics(get("ref.generics")),
                    }),
                    "read" => facts.calls.push(Call {
                        name: txt(n),
                        receiver: get("call.receiver").map(txt),
                        args: None,
                        given: Vec::new(),
                        span: Span::of(n),
                        construct: false,
                        scoped: false,
                        read: true,
                        generics: generics(get("ref.generics")),
                    }),
                    "new" => facts.calls.push(Call {
                        name: txt(n),
                        // `new shapes::Square(…)`: the type's qualifier.
                        receiver: get("ref.qualifier").map(txt),
                        args: get("call.args").map(count_args),
                        given: get("call.args").map(|a| args_given(a, text)).unwrap_or_default(),
                        span: Span::of(n),
                        construct: true,
                        scoped: false,
                        read: false,
                        generics: generics(get("ref.generics")),
                    }),
                    "ref.type" => {
                        let key = (n.start_byte(), n.end_byte());
                        let name = Name {
                            name: txt(n),
                            qualifier: get("ref.qualifier").map(txt),
                            span: Span::of(n),
                            generics: generics(get("ref.generics")),
                        };
                        // The same name met by a plain and a qualified pattern: keep the qualifier.
                        match typed.get(&key) {
                            Some(&i) => {
                                if name.qualifier.is_some() {
                                    facts.types[i] = name;
                                }
                            }
                            None => {
                                typed.insert(key, facts.types.len());
                                facts.types.push(name);
                            }
                        }
                    }
                    _ => {
                        let Some(kind) = Kind::of_capture(cap) else { continue };
                        let Some(name) = get("name") else { continue };
                        // Two patterns naming one definition: the more
                        // precise kind wins (a constructor over a function).
                        match defined.entry((name.start_byte(), name.end_byte())) {
                            std::collections::hash_map::Entry::Occupied(e) => {
                                let d: &mut Def = &mut facts.defs[*e.get()];
                                if kind.precision() > d.kind.precision() {
                                    d.kind = kind;
                                }
                                // What only one of them says (a Rust impl's
                                // type) is kept.
                                if d.owner.is_none() {
                                    d.owner = get("owner").map(txt);
                                }
                                d.term |= get("term").is_some();
                                d.meta |= get("meta").is_some();
                                if d.returns.is_none() {
                                    d.returns = get("returns").map(|r| compact(&txt(r)));
                                }
                                if d.impl_of.is_none() {
                                    d.impl_of = get("impl.type").map(|t| {
                                        (unqualified(&txt(t)), get("impl.trait").map(|t| unqualified(&txt(t))))
                                    });
                                }
                                continue;
                            }
                            std::collections::hash_map::Entry::Vacant(e) => {
                                e.insert(facts.defs.len());
                            }
                        }
                        facts.defs.push(Def {
                            kind,
                            name: txt(name),
                            span: Span::of(n),
                            name_span: Span::of(name),
                            owner: get("owner").map(txt),
                            term: get("term").is_some(),
                            meta: get("meta").is_some(),
                            impl_of: get("impl.type")
                                .map(|t| (unqualified(&txt(t)), get("impl.trait").map(|t| unqualified(&txt(t))))),
                            arity: get("params").map(|p| arity(p, text)),
                            generics: generics(get("generics")),
                            params: get("params").map(|p| param_types(p, text)).unwrap_or_default(),
                            expands: n.kind() == "preproc_function_def",
                            returns: get("returns").map(|r| compact(&txt(r))),
                            signature: signature(n, text),
                            doc: doc_above(n, text),
                        });
                    }
                }
            }
        }
        if !blocks.is_empty() {
            facts.defs.retain(|d| !blocks.contains(&d.span.bytes));
        }
        // Each name declared in a function literal is seen only inside it.
        literals.sort_unstable();
        for v in &mut facts.vars {
            v.within = v.within.and_then(|(at, _)| innermost_range(&literals, at));
        }
        // A function-like macro's body is no syntax tree: the calls in it
        // are read off its text, where they are written.
        let macros: Vec<(usize, usize)> = facts.defs.iter().filter(|d| d.expands).map(|d| d.span.bytes).collect();
        for (start, end) in macros {
            if let Some(def) = root.descendant_for_byte_range(start, end).filter(|n| n.kind() == "preproc_function_def")
                && let Some(value) = def.child_by_field_name("value")
            {
                facts.calls.extend(calls_in_text(text, value));
            }
        }
        // One call met by two patterns (a plain name, and the same name after
        // a receiver or scope; a call's name, and the attribute it reads):
        // the one that knows more is kept.
        facts.calls.sort_by_key(|c| (c.span.bytes, c.read, c.receiver.is_none()));
        facts.calls.dedup_by_key(|c| c.span.bytes);
        // A definition's own name is not a use of it.
        facts.types.retain(|t| !defined.contains_key(&t.span.bytes));
        facts.defs.sort_by_key(|d| (d.span.bytes.0, std::cmp::Reverse(d.span.bytes.1)));
        drop(matches);
        facts.cut = halted_at.get().map(|at| Cut {
            line: text[..at.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1,
            after: timeout,
        });
        // Facts are held until the whole project is resolved: without the
        // room their vectors grew into.
        facts.calls.shrink_to_fit();
        facts.defs.shrink_to_fit();
        facts.vars.shrink_to_fit();
        facts.types.shrink_to_fit();
        facts.supers.shrink_to_fit();
        Ok(facts)
    }
}

/// Each language's compiled query, made once per process and shared by
/// every reader: a large grammar's query takes half a second to compile
/// (Swift's), which no edit should wait for again.
fn query_of(lang: &'static Lang, grammar: &tree_sitter::Language) -> Result<&'static Query, Skip> {
    use std::sync::{Mutex, OnceLock};
    type Compiled = Result<&'static Query, String>;
    static QUERIES: OnceLock<Mutex<Vec<(usize, Compiled)>>> = OnceLock::new();
    let key = std::ptr::from_ref(lang) as usize;
    let mut all = QUERIES.get_or_init(Mutex::default).lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let compiled = match all.iter().find(|(k, _)| *k == key) {
        Some((_, c)) => c.clone(),
        None => {
            // Compiled once per language for the process's life.
            let c: Compiled =
                Query::new(grammar, lang.query).map(|q| &*Box::leak(Box::new(q))).map_err(|e| e.to_string());
            all.push((key, c.clone()));
            c
        }
    };
    compiled.map_err(|e| Skip::Query(lang.name, e))
}

/// Rows and columns of bytes of a text, asked in increasing order.
struct Points<'t> {
    text: &'t [u8],
    /// The last byte asked, its row, and where its line starts.
    at: usize,
    row: usize,
    line: usize,
}

impl<'t> Points<'t> {
    fn new(text: &'t [u8]) -> Self {
        Points { text, at: 0, row: 0, line: 0 }
    }

    /// The row and column of byte `to` (at or after the last asked).
    fn at(&mut self, to: usize) -> tree_sitter::Point {
        let to = to.min(self.text.len()).max(self.at);
        for i in memchr::memchr_iter(b'\n', &self.text[self.at..to]) {
            self.row += 1;
            self.line = self.at + i + 1;
        }
        self.at = to;
        tree_sitter::Point { row: self.row, column: to - self.line }
    }
}

/// How many nodes of a tree are errors or missing (how much of it the
/// grammar could not read), and how many of them are in a conditional
/// (`#if`, `#ifdef`, an `#else` branch).
fn errors(root: Node<'_>) -> (usize, usize) {
    let mut cursor = root.walk();
    let (mut n, mut in_conditional) = (0, 0);
    let mut conditionals = 0usize;
    let conditional = |k: &str| k.starts_with("preproc_if") || k.starts_with("preproc_el");
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            n += 1;
            in_conditional += usize::from(conditionals > 0);
        }
        // Only a subtree with an error has one to count.
        if node.has_error() && cursor.goto_first_child() {
            conditionals += usize::from(conditional(node.kind()));
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return (n, in_conditional);
            }
            conditionals -= usize::from(conditional(cursor.node().kind()));
        }
    }
}

/// How many type parameters or arguments a list (`<T, U>`) holds: 0 for
/// none.
fn generics(list: Option<Node<'_>>) -> u8 {
    list.map_or(0, |l| u8::try_from(l.named_child_count()).unwrap_or(u8::MAX))
}

/// A path's last segment, with its generic arguments (`fmt::Display` →
/// `Display`, `convert::From<&str>` → `From<&str>`): how rust-analyzer
/// names an impl's type and trait.
fn unqualified(path: &str) -> String {
    let head = path.find('<').unwrap_or(path.len());
    let start = path[..head].rfind("::").map_or(0, |i| i + 2);
    compact(&path[start..])
}

/// Source text with each run of whitespace one space (a type or an
/// expression, read as steps by [`crate::resolve`]).
fn compact(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn memchr_nul(b: &[u8]) -> bool {
    b.contains(&0)
}

fn is_comment(n: Node<'_>) -> bool {
    n.kind().contains("comment")
}

/// Arguments in an argument list.
fn count_args(list: Node<'_>) -> u32 {
    let mut c = list.walk();
    list.named_children(&mut c).filter(|n| !is_comment(*n)).count() as u32
}

/// The calls written in a macro's body (`name(`, not after `.`, `->` or
/// `#`), as plain calls: the body is text to the grammar.
fn calls_in_text(text: &[u8], value: Node<'_>) -> Vec<Call> {
    let (start, end) = (value.start_byte(), value.end_byte().min(text.len()));
    let body = &text[start..end];
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < body.len() {
        if !(body[i].is_ascii_alphabetic() || body[i] == b'_') || (i > 0 && ident(body[i - 1])) {
            i += 1;
            continue;
        }
        let a = i;
        while i < body.len() && ident(body[i]) {
            i += 1;
        }
        let mut j = i;
        while j < body.len() && matches!(body[j], b' ' | b'\t') {
            j += 1;
        }
        let before = body[..a].iter().rev().find(|c| !c.is_ascii_whitespace()).copied();
        if body.get(j) != Some(&b'(') || matches!(before, Some(b'.' | b'>' | b'#')) {
            continue;
        }
        let name = String::from_utf8_lossy(&body[a..i]).into_owned();
        if matches!(name.as_str(), "if" | "while" | "for" | "switch" | "return" | "sizeof" | "defined" | "do") {
            continue;
        }
        // The place, counted from the value's start.
        let line_of = |k: usize| body[..k].iter().filter(|&&c| c == b'\n').count() as u32;
        let col_of = |k: usize| (k - body[..k].iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1)) as u32;
        let (row0, col0) = (value.start_position().row as u32, value.start_position().column as u32);
        let at = |k: usize| {
            let r = line_of(k);
            (row0 + r, if r == 0 { col0 + col_of(k) } else { col_of(k) })
        };
        out.push(Call {
            name,
            receiver: None,
            args: None,
            given: Vec::new(),
            span: Span { start: at(a), end: at(i), bytes: (start + a, start + i) },
            construct: false,
            scoped: false,
            read: false,
            generics: 0,
        });
    }
    out
}

/// What each argument of an argument list is.
fn args_given(list: Node<'_>, text: &[u8]) -> Vec<Arg> {
    let mut c = list.walk();
    list.named_children(&mut c).filter(|n| !is_comment(*n)).map(|n| arg_of(n, text)).collect()
}

/// What one argument is: a literal by its node's kind, a plain name, a
/// construction; an argument node of one child (C#'s `argument`, Kotlin's
/// `value_argument`) is what that child is.
fn arg_of(n: Node<'_>, text: &[u8]) -> Arg {
    let mut n = n;
    while n.named_child_count() == 1
        && (n.kind().contains("argument") || n.kind() == "parenthesized_expression")
        && let Some(c) = n.named_child(0)
    {
        n = c;
    }
    let kind = n.kind();
    let txt = || n.utf8_text(text).unwrap_or("").trim().to_owned();
    let lit = |l| Arg::Literal(l);
    match kind {
        "true" | "false" | "boolean_literal" | "boolean" => lit(Lit::Bool),
        "null_literal" | "null" | "nil" | "nullptr" | "none" | "None" => lit(Lit::Null),
        "identifier"
        | "simple_identifier"
        | "field_access"
        | "member_access_expression"
        | "selector_expression"
        | "method_invocation"
        | "call_expression"
        | "invocation_expression"
        | "navigation_expression"
        | "member_expression"
        | "attribute"
        | "call"
        | "this"
        | "self"
        | "array_access"
        | "element_access_expression"
        | "subscript_expression"
        | "index_expression" => {
            let t = compact(&txt());
            if t.len() <= 160 { Arg::Expr(t) } else { Arg::Other }
        }
        // `(long[]) lhs`: a value of the type it is cast to.
        "cast_expression" => match n.child_by_field_name("type") {
            Some(t) => Arg::New(simple_type(t.utf8_text(text).unwrap_or(""))),
            None => Arg::Other,
        },
        "object_creation_expression" | "new_expression" | "instance_creation_expression" => {
            match n.child_by_field_name("type").or_else(|| n.child_by_field_name("constructor")) {
                Some(t) => Arg::New(simple_type(t.utf8_text(text).unwrap_or(""))),
                None => Arg::Other,
            }
        }
        k if k.contains("char") && k.contains("literal") => lit(Lit::Char),
        k if k.contains("string") => lit(Lit::Str),
        k if k.contains("float") || k.contains("real_literal") || k.contains("double") => lit(Lit::Float),
        k if k.contains("integer") || k.contains("int_literal") || k.contains("decimal") || k.contains("hex") => {
            lit(Lit::Int)
        }
        "number_literal" | "number" | "integer" => {
            let t = txt();
            let float = t.contains('.') || (!t.starts_with("0x") && t.contains(['e', 'E']));
            lit(if float { Lit::Float } else { Lit::Int })
        }
        _ => Arg::Other,
    }
}

/// A type as written, reduced to its simple name: qualifiers, generic
/// arguments, array and pointer marks, `const`, `final` and `?` left out
/// (`java.util.List<String>` → `List`, `const std::string&` → `string`,
/// `int[]` → `int[]` stays an array).
pub fn simple_type(written: &str) -> String {
    let mut t = written.trim();
    for prefix in ["const ", "final ", "volatile ", "struct ", "class ", "enum ", "in ", "out ", "ref ", "params "] {
        t = t.strip_prefix(prefix).unwrap_or(t).trim_start();
    }
    let array = t.ends_with("[]") || t.ends_with("...");
    let head = t.find('<').map_or(t, |i| &t[..i]);
    let head = head.trim_end_matches(['*', '&', '?', ' ', '.', ']', '[']).trim_end_matches(" const");
    let last = head.rsplit(['.', ':', '\\']).next().unwrap_or(head).trim();
    if array { format!("{last}[]") } else { last.to_owned() }
}

/// Each parameter's type as written (`""` where none is written).
fn param_types(list: Node<'_>, text: &[u8]) -> Vec<String> {
    if list.kind() == "identifier" {
        return vec![String::new()];
    }
    let mut c = list.walk();
    let params: Vec<Node<'_>> = if list.kind().ends_with("_declaration") {
        list.children(&mut c).filter(|n| n.kind() == "parameter").collect()
    } else {
        list.named_children(&mut c).filter(|n| !is_comment(*n)).collect()
    };
    let mut out = Vec::new();
    for p in params {
        if matches!(p.kind(), "receiver_parameter" | "self_parameter" | "block_parameter") {
            continue;
        }
        let mut pc = p.walk();
        let ty = p.child_by_field_name("type").or_else(|| {
            p.named_children(&mut pc).find(|c| c.kind().ends_with("type") || c.kind() == "type_annotation")
        });
        let written = ty.map_or(String::new(), |t| {
            let t = t.utf8_text(text).unwrap_or("").trim_start_matches(':').trim();
            let spread = p.kind().contains("spread") || p.kind().contains("variadic");
            if spread { format!("{t}...") } else { t.to_owned() }
        });
        // Go's `a, b int` declares two of one type.
        let mut pc = p.walk();
        let names = p.children_by_field_name("name", &mut pc).count().max(1);
        out.extend(std::iter::repeat_n(written, names));
    }
    out
}

/// Parameters in a parameter list: a Go `a, b int` declares two; a
/// variadic last parameter (`String... xs`, `xs ...int`) opens the top; one
/// with a default value (`x=1`, `int x = 1`) may be left out; C's `(void)`
/// takes none.
fn arity(list: Node<'_>, text: &[u8]) -> Arity {
    // A lone parameter written without parentheses (`x => …`).
    if list.kind() == "identifier" {
        return Arity { min: 1, max: Some(1) };
    }
    // Swift's parameters are the declaration's own children, each default
    // value a field of the declaration after its parameter.
    if list.kind().ends_with("_declaration") {
        let mut c = list.walk();
        let params = list.children(&mut c).filter(|n| n.kind() == "parameter").count() as u32;
        let mut c = list.walk();
        let defaults = list.children_by_field_name("default_value", &mut c).count() as u32;
        return Arity { min: params.saturating_sub(defaults), max: Some(params) };
    }
    let mut c = list.walk();
    let mut min = 0u32;
    let mut optional = 0u32;
    let mut variadic = false;
    let params: Vec<Node<'_>> = list.named_children(&mut c).filter(|n| !is_comment(*n)).collect();
    if let [only] = params[..]
        && only.named_child_count() == 1
        && only.utf8_text(text).is_ok_and(|t| t.trim() == "void")
    {
        return Arity { min: 0, max: Some(0) };
    }
    // C's `...` is a token of the list, not a named parameter.
    let mut all = list.walk();
    if list.children(&mut all).any(|n| !n.is_named() && n.kind() == "...") {
        variadic = true;
    }
    for p in params {
        // Ruby's `&block` is no argument.
        if p.kind() == "block_parameter" {
            continue;
        }
        if p.kind().contains("spread") || p.kind().contains("variadic") || p.kind().contains("splat") {
            variadic = true;
            continue;
        }
        // TypeScript's `...rest: T[]`.
        let mut rc = p.walk();
        if p.named_children(&mut rc).any(|c| c.kind().contains("rest")) {
            variadic = true;
            continue;
        }
        // `x = 1` in TypeScript's parameters is a field of the parameter.
        if p.kind().contains("optional") || p.kind().contains("default") || p.child_by_field_name("value").is_some() {
            optional += 1;
            continue;
        }
        // Java's receiver parameter and Rust's `self` are not arguments.
        if p.kind() == "receiver_parameter" || p.kind() == "self_parameter" {
            continue;
        }
        let mut pc = p.walk();
        let names = p.children_by_field_name("name", &mut pc).count() as u32;
        min += names.max(1);
    }
    Arity { min, max: (!variadic).then_some(min + optional) }
}

/// The declaration up to its body (or its first line), whitespace
/// collapsed, at most 300 characters.
fn signature(def: Node<'_>, text: &[u8]) -> String {
    let end = def.child_by_field_name("body").map_or(def.end_byte(), |b| b.start_byte());
    // A declaration the grammar nests alone in a keyword's list (Go's
    // `type Order struct`) starts at the keyword.
    let start = match def.parent() {
        Some(p) if p.named_child_count() == 1 && p.start_position().row == def.start_position().row => p.start_byte(),
        _ => def.start_byte(),
    };
    let raw = String::from_utf8_lossy(&text[start..end]);
    let head = if def.child_by_field_name("body").is_some() { &raw[..] } else { raw.lines().next().unwrap_or("") };
    let mut out = String::new();
    for w in head.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
        if out.len() > 300 {
            let cut = (0..=300).rev().find(|&i| out.is_char_boundary(i)).unwrap_or(0);
            out.truncate(cut);
            out.push('…');
            break;
        }
    }
    out.trim_end_matches(['{', ' ', ';', '=']).to_owned()
}

/// The comments right above a definition (or above its container when the
/// grammar nests the name in a declaration list), markers stripped.
fn doc_above(def: Node<'_>, text: &[u8]) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut at = def;
    // Go's type_spec sits in a type_declaration; Java's field in a declaration.
    if at.prev_sibling().is_none_or(|p| !is_comment(p))
        && let Some(parent) = at.parent()
        && parent.named_child_count() == 1
    {
        at = parent;
    }
    let mut next_row = at.start_position().row;
    while let Some(p) = at.prev_sibling().filter(|p| is_comment(*p) && p.end_position().row + 1 >= next_row) {
        let body = String::from_utf8_lossy(&text[p.byte_range()]).into_owned();
        let mut chunk: Vec<String> = body
            .lines()
            .map(|l| {
                l.trim()
                    .trim_start_matches("/**")
                    .trim_start_matches("/*")
                    .trim_end_matches("*/")
                    .trim_start_matches("///")
                    .trim_start_matches("//")
                    .trim_start_matches('*')
                    .trim()
                    .to_owned()
            })
            .filter(|l| !l.is_empty())
            .collect();
        chunk.append(&mut lines);
        lines = chunk;
        next_row = p.start_position().row;
        at = p;
    }
    lines.join("\n")
}

//! Every file's facts → symbols, and each use of a name → the definition
//! it most probably means.
//!
//! Names resolve the way a reader of the code would, nearest first: the
//! enclosing definitions and the types they extend, the file, what the file
//! imports, its package, and last a name defined once in the whole project.
//! A call on a receiver whose type is written down (a field, parameter or
//! local variable, `this`) looks in that type and the types it extends;
//! overloads are told apart by their number of arguments. A name that
//! stays ambiguous resolves to nothing: a missing edge costs less than a
//! wrong one.

/// Hash maps keyed by names and definition numbers: millions of lookups
/// per resolve, over the project's own names (no adversary to flood them).
pub type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
/// Hash sets of the same.
pub type HashSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

use crate::expr::{self, Step, TypeText};
use crate::extract::{Facts, Kind, Name, Span, Typed};
use crate::languages::{Lang, Packages};
use rayon::prelude::*;

mod again;
mod calls;
mod compact;
mod def;
mod hierarchy;
mod ladder;
mod lookup;
mod overloads;
mod symbols;
mod uses;
mod values;
mod warm;
mod written;

pub use again::Memo;
use again::{FileUses, Plan, Shape};
pub use calls::Bound;
pub use compact::compact_readings;
pub use def::Def;
use def::{FileSymbols, Symbols, index32};
use hierarchy::{anonymous_overrides, implicit_interfaces, overrides};
use ladder::Resolver;
use lookup::{Binding, Lookup, Names, Vars, Want, innermost_in, members_of};
use overloads::Taking;
use symbols::symbols;
pub use symbols::{package_symbol, spelled_alone};
use uses::resolve_files;
pub use uses::{Unbound, Use};
use values::{REEXPORTS, Receiver};
pub(crate) use warm::with_sharing;

/// Index of a definition in [`Project::defs`].
pub type DefIx = usize;

/// A file of the project.
#[derive(Debug, Clone)]
pub struct Source {
    /// Path relative to the project root, `/`-separated.
    pub path: String,
    /// Its language.
    pub lang: &'static Lang,
    /// What it says, but for its calls, type names and typed names,
    /// which `body` holds packed.
    pub facts: Facts,
    /// Its calls, type names and typed names, unpacked when read.
    pub body: crate::extract::Body,
    /// The package namespace its top-level definitions live in
    /// (descriptor names, outermost first).
    pub package: Vec<String>,
    /// The SCIP package name of its project (Go's module path; empty when
    /// the build does not say).
    pub module: String,
}

/// The project, resolved.
#[derive(Debug, Default)]
pub struct Project {
    /// Its files.
    pub sources: Vec<std::sync::Arc<Source>>,
    /// Every definition.
    pub defs: Vec<Def>,
    /// Their symbols.
    symbols: Symbols,
    /// Each definition's supertypes (resolved headers, and Go's implicit
    /// interface satisfaction).
    pub supers: HashMap<DefIx, Vec<DefIx>>,
    /// Each file's uses of names (calls and type references) and its calls
    /// not bound to one definition of the project that has some of that
    /// name (counted, so that no "nobody calls it" is silent): the very
    /// lists the resolve's [`Memo`] keeps for the next, shared, not copied
    /// (a large project's uses are millions). See [`Project::uses_of`].
    uses: std::sync::Arc<Vec<FileUses>>,
    /// What the calls to C or C++ function-like macros expand to: uses at
    /// each call's place, with its file, in the order of the files' uses.
    expanded: Vec<(u32, Use)>,
    /// Calls found / resolved, type names found / resolved.
    pub counts: Counts,
    /// Each file's first definition in `defs` (its definitions follow in
    /// source order).
    first_def: Vec<DefIx>,
}

/// How much resolved.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    /// Calls met.
    pub calls: usize,
    /// Calls resolved to a definition in the project.
    pub calls_resolved: usize,
    /// Of those, calls resolved to several overloads, each marked ambiguous.
    pub calls_ambiguous: usize,
    /// Calls the project has definitions of that name for, not bound.
    pub calls_unbound: usize,
    /// Header types met.
    pub supers: usize,
    /// Header types resolved.
    pub supers_resolved: usize,
}

impl Project {
    /// Drops what the next [`resolve_again`] does not read (the uses, the
    /// unbound calls and the supertypes: its memo has each file's), once
    /// the project is written.
    pub fn keep_for_next(&mut self) {
        self.uses = std::sync::Arc::default();
        self.expanded = Vec::new();
        self.supers = HashMap::default();
    }

    /// Takes `files` as the project's uses, with what the C or C++ macros
    /// they call expand to: the two set together, never one alone.
    fn set_uses(&mut self, files: std::sync::Arc<Vec<FileUses>>) {
        self.expanded = uses::expand_macros(self, &files);
        self.uses = files;
    }

    /// The uses in file `f`: its own calls and type names, in the order
    /// they were resolved, then what the macros it calls expand to.
    pub fn uses_of(&self, f: usize) -> impl Iterator<Item = &Use> {
        let own = self.uses.get(f).map_or(&[][..], |u| &u.uses[..]);
        let from = self.expanded.partition_point(|&(file, _)| (file as usize) < f);
        let to = self.expanded.partition_point(|&(file, _)| file as usize <= f);
        own.iter().chain(self.expanded[from..to].iter().map(|(_, u)| u))
    }

    /// The calls in file `f` bound to none of the definitions of their
    /// name.
    pub fn unbound_of(&self, f: usize) -> &[Unbound] {
        self.uses.get(f).map_or(&[], |u| &u.unbound[..])
    }

    /// The definitions of file `f`, in source order.
    pub(crate) fn defs_of_file(&self, f: usize) -> std::ops::Range<DefIx> {
        self.first_def[f]..self.first_def[f] + self.sources[f].facts.defs.len()
    }

    fn fact(&self, d: DefIx) -> &crate::extract::Def {
        let def = &self.defs[d];
        &self.sources[def.file()].facts.defs[def.at()]
    }

    /// The SCIP symbol of definition `d` (empty for one that has none).
    pub fn symbol(&self, d: DefIx) -> &str {
        let def = &self.defs[d];
        self.symbols.get(def.file(), def.at())
    }

    /// The kind of definition `d`.
    pub fn kind(&self, d: DefIx) -> Kind {
        self.fact(d).kind
    }

    /// The extracted definition `d`.
    pub fn def(&self, d: DefIx) -> &crate::extract::Def {
        self.fact(d)
    }
}

/// Resolves `sources` (files of one language family, one project root).
pub fn resolve(sources: Vec<std::sync::Arc<Source>>) -> Project {
    resolve_again(sources, None).0
}

/// How much of a resolve was done again.
#[derive(Debug, Clone, Default)]
pub struct Again {
    /// Files whose uses were resolved.
    pub resolved: usize,
    /// Files whose uses were kept from the last resolve.
    pub kept: usize,
    /// Why every file was resolved, when the last resolve was given.
    pub all_because: Option<&'static str>,
    /// Every definition was what it was: the lookups, supertypes and
    /// overrides of the last resolve were kept.
    pub definitions_kept: bool,
    /// When every definition was kept: the files whose uses were resolved
    /// again. Every other file's document is what the last resolve wrote.
    pub touched: Option<Vec<usize>>,
    /// The symbols of the files that did not change were the last
    /// resolve's, and only the changed files' were spelled (as when every
    /// definition was kept).
    pub symbols_kept: bool,
}

/// Resolves `sources`; given the last resolve of the same workspace (its
/// project and memo), resolves again only the uses of the files that
/// changed and of those whose uses the change may move (`again.rs`), with
/// the same result as resolving everything. Returns the memo for the next.
pub fn resolve_again(sources: Vec<std::sync::Arc<Source>>, last: Option<(Project, Memo)>) -> (Project, Memo, Again) {
    let mut step = Steps(std::time::Instant::now());
    let mut last = last;
    if let Some(done) = warm::again(&mut last, &sources, &mut step) {
        return done;
    }
    let (p, partial, symbols_kept) = definitions(sources, last.as_ref().map(|(p, _)| p), &mut step);
    resolve_uses(p, partial, last, symbols_kept, step)
}

/// The definitions of `sources` alone: their owners and symbols (the ids
/// the whole resolve gives them too), no use resolved, no supertype. What
/// resolve, find and search answer from while the rest is resolved.
pub fn definitions_only(sources: Vec<std::sync::Arc<Source>>) -> Project {
    definitions(sources, None, &mut Steps(std::time::Instant::now())).0
}

/// The definitions of `sources`, their lexical parents and owners, their
/// symbols (those `last`, the last resolve of the same files, still holds
/// kept: then true), and the parts of each partial type joined (part → the
/// type).
fn definitions(
    sources: Vec<std::sync::Arc<Source>>,
    last: Option<&Project>,
    step: &mut Steps,
) -> (Project, HashMap<DefIx, DefIx>, bool) {
    let mut p = Project { sources, ..Project::default() };
    // Definitions and their lexical parents.
    let mut starts: Vec<DefIx> = Vec::with_capacity(p.sources.len());
    // Those declared apart from their owner, told as the facts are walked.
    let mut apart: Vec<DefIx> = Vec::new();
    for (fi, s) in p.sources.iter().enumerate() {
        starts.push(p.defs.len());
        let mut stack: Vec<(DefIx, Span)> = Vec::new();
        for (at, d) in s.facts.defs.iter().enumerate() {
            while stack.last().is_some_and(|(_, sp)| !sp.contains(&d.span)) {
                stack.pop();
            }
            // A field's declaration holds its initialiser, not members; a
            // Rust function's body holds no members either.
            let flat = s.lang.items_in_bodies_are_the_modules;
            let parent = stack
                .iter()
                .rev()
                .find(|(ix, _)| {
                    let k = s.facts.defs[*ix - starts[fi]].kind;
                    k.is_scope() && !(flat && k.is_callable())
                })
                .map(|e| e.0);
            // An object literal's property belongs to its file.
            let parent = parent.filter(|_| !d.meta);
            // A field assigned in a method (Python's `self.x = …`) or
            // declared by a constructor's parameter (TypeScript's
            // `constructor(private x: number)`) is its type's.
            let parent = match parent {
                Some(m)
                    if matches!(d.kind, Kind::Field | Kind::Property)
                        && s.facts.defs[m - starts[fi]].kind.is_callable() =>
                {
                    p.defs[m].parent().filter(|&t| s.facts.defs[t - starts[fi]].kind.is_type()).or(parent)
                }
                _ => parent,
            };
            let ix = p.defs.len();
            p.defs.push(Def::new(fi, at, parent));
            stack.push((ix, d.span));
            if d.owner().is_some() {
                apart.push(ix);
            }
        }
    }
    p.first_def = starts;
    // Owners declared apart (Go's receivers, C++'s `Type::method`): a type
    // of the same package, at its top level or in a namespace. The names
    // they are looked up by are tabled only where some are (none in Java).
    let mut tabled: Option<Names> = None;
    for ix in apart {
        let Some(owner) = p.fact(ix).owner().map(str::to_owned) else { continue };
        let names = tabled.get_or_insert_with(|| Names::of(&p));
        let file = p.defs[ix].file();
        let pkg = &p.sources[file].package;
        let found = top_level_types(&p, names, &owner, |t| p.sources[p.defs[t].file()].package == *pkg);
        if let [t] = found[..] {
            p.defs[ix].set_parent(Some(t));
            continue;
        }
        // Ruby's `class Shop::Gift` (or `Shop::Admin::Gift`, or `class
        // Thor::Runner` in a class `Thor`): the module or class its path
        // names, written in one place or reopened in several (one symbol).
        let nesting = p.sources[file].lang.rules.nested_modules;
        if found.is_empty() || nesting {
            let last = owner.rsplit("::").next().unwrap_or(&owner);
            let modules: Vec<DefIx> = names
                .get(last)
                .iter()
                .copied()
                .filter(|&m| {
                    (p.kind(m) == Kind::Module || nesting && p.kind(m).is_type())
                        && p.sources[p.defs[m].file()].package == *pkg
                })
                .collect();
            if let [first, rest @ ..] = &modules[..]
                && rest.iter().all(|&m| {
                    p.defs[m].parent().map(|x| p.fact(x).name()) == p.defs[*first].parent().map(|x| p.fact(x).name())
                })
            {
                p.defs[ix].set_parent(Some(*first));
                continue;
            }
        }
        // A Rust `impl Error { … }` in a module that imports the type
        // (`use crate::Error;`): the one top-level type of that name.
        let s = &p.sources[file];
        let imports_it = |i: &crate::extract::Import| {
            i.alias.as_deref() == Some(owner.as_str())
                || (i.alias.is_none() && i.path.rsplit(['.', ':']).next() == Some(owner.as_str()))
        };
        if found.is_empty() && s.lang.impl_blocks && s.facts.imports.iter().any(imports_it) {
            let found = top_level_types(&p, names, &owner, |t| p.sources[p.defs[t].file()].lang.name == s.lang.name);
            // Namesakes in other modules (a test crate's own `Error`): the
            // one in the module the import names.
            let from: Vec<&str> = s
                .facts
                .imports
                .iter()
                .filter(|i| imports_it(i))
                .filter_map(|i| i.path.rsplit_once('.').map(|(m, _)| m))
                .collect();
            let named: Vec<DefIx> = found
                .iter()
                .copied()
                .filter(|&t| from.contains(&p.sources[p.defs[t].file()].package.join(".").as_str()))
                .collect();
            if let [t] = found[..] {
                p.defs[ix].set_parent(Some(t));
            } else if let [t] = named[..] {
                p.defs[ix].set_parent(Some(t));
            }
        }
    }
    step.done("definitions and owners");
    let kept = symbols(&mut p, last);
    let partial = join_partial_types(&mut p);
    step.done("symbols");
    (p, partial, kept)
}

/// The uses of `p`'s files resolved (again only those the change may move,
/// given the `last` resolve, whose symbols the unchanged files kept when
/// `symbols_kept`), with the supertypes and the counts.
fn resolve_uses(
    p: Project,
    partial: HashMap<DefIx, DefIx>,
    last: Option<(Project, Memo)>,
    symbols_kept: bool,
    mut step: Steps,
) -> (Project, Memo, Again) {
    // The last resolve's lookups, taken from its memo (nothing after this
    // reads them): their names' numbers carry over.
    let mut last = last;
    let last_look = match last.as_mut() {
        Some((q, memo)) => memo.warm.as_mut().map(|w| (&*q, std::mem::take(&mut w.look))),
        None => None,
    };
    let (members, look) = rayon::join(|| members_of(&p), || Lookup::of(&p, last_look));
    let vars = Vars::of(&p);
    step.done("lookups");
    let held = ladder::Held { whole: partial.clone(), ..Default::default() };
    let mut r = Resolver::new(&p, &look, &members, &vars, held);
    for (&part, &one) in &partial {
        r.held.parts.entry(one).or_default().push(part);
    }
    r.held.parts.values_mut().for_each(|parts| parts.sort_unstable());
    // Headers first: calls look up through them.
    let mut counts = Counts::default();
    for (fi, s) in p.sources.iter().enumerate() {
        for sup in &s.facts.supers {
            counts.supers += 1;
            // A Ruby module's own mixins (`module Common; extend Loader`) are
            // its supertypes too, and so are a Scala object's (`object
            // Inherit extends ProcessInput with ProcessOutput`).
            let mixes = s.lang.rules.nested_modules || s.lang.rules.companion_objects;
            let Some(owner) = r.innermost(fi, &sup.span, |k| k.is_type() || mixes && k == Kind::Module) else {
                continue;
            };
            // A header is read from around the type it heads: the type's
            // own members are not in scope there (`class Doc implements
            // Builder` with a nested `Doc.Builder` means the imported one).
            let around = p.defs[owner].parent().unwrap_or(usize::MAX);
            let owner = partial.get(&owner).copied().unwrap_or(owner);
            // A Ruby class's header names modules too (`include Sortable`).
            let want = if s.lang.rules.nested_modules { Want::Mixin } else { Want::Type };
            // A header never names the type it heads: where the name
            // finds that type (C#'s `interface IRelayCommand<T> :
            // IRelayCommand` in a file of its own, whose own name is found
            // first), it means the namesake of as many type parameters in
            // the same package, if one is.
            let found = r.ty_as(fi, around, sup, want).map(|t| {
                if t != owner || p.fact(owner).generics == sup.generics {
                    return t;
                }
                let namesakes: Vec<DefIx> = r
                    .look
                    .named(&sup.name)
                    .iter()
                    .copied()
                    .filter(|&d| {
                        d != owner
                            && p.kind(d).is_type()
                            && p.fact(d).generics == sup.generics
                            && p.sources[p.defs[d].file()].package == s.package
                    })
                    .collect();
                if let [one] = namesakes[..] { one } else { t }
            });
            if let Some(t) = found {
                counts.supers_resolved += 1;
                if t != owner {
                    r.held.supers.entry(owner).or_default().push(t);
                }
            }
        }
    }
    step.done("headers");
    // Extension functions, by the type they extend, read from where they
    // are declared.
    let mut extensions: HashMap<DefIx, Vec<DefIx>> = HashMap::default();
    let mut foreign: HashMap<String, Vec<DefIx>> = HashMap::default();
    // (each file's facts walked in place, in the definitions' order)
    let facts = p.sources.iter().flat_map(|s| &s.facts.defs);
    for ((ix, def), fact) in p.defs.iter().enumerate().zip(facts) {
        if let Some(of) = &fact.rare().extension {
            let name = Name { name: of.clone(), qualifier: None, span: fact.name_span, generics: 0 };
            match r.ty(def.file(), def.parent().unwrap_or(usize::MAX), &name) {
                Some(t) => {
                    extensions.entry(t).or_default().push(ix);
                    if p.sources[def.file()].lang.rules.receiver_in_scope {
                        r.held.receivers.insert(ix, t);
                    }
                }
                None => foreign.entry(crate::extract::simple_type(of)).or_default().push(ix),
            }
        } else if def.parent().is_none()
            && p.sources[def.file()].lang.rules.foreign_extensions
            && let Some(owner) = fact.owner()
        {
            // A Swift extension's member of a type the project does not
            // define (`extension String { func slug() }`, `extension
            // URLRequest { init(…) }`).
            foreign.entry(crate::extract::simple_type(owner)).or_default().push(ix);
        }
    }
    r.held.extensions = extensions;
    for ds in foreign.values() {
        for &d in ds {
            r.held.foreign_named.entry(p.fact(d).name().to_owned()).or_default().push(d);
        }
    }
    r.held.foreign_extensions = foreign;
    implicit_interfaces(&p, &members, &mut r.held.supers);
    step.done("implicit interfaces");
    let overrides = overrides(&r, &members);
    let anonymous = (0..p.sources.len()).into_par_iter().map(|fi| anonymous_overrides(&r, &members, fi)).collect();
    step.done("overrides");
    let shape = Shape::of(&p, &r.held.supers, &r.held.extensions, &r.held.foreign_extensions, &partial, &look);
    let held = r.held();
    let warm = warm::Warm { look, members, held, overrides, anonymous, counts };
    resolve_files(p, warm, Some(shape), last, symbols_kept, step)
}

/// The types called `name` at the top level of a file or in a namespace
/// that `also` admits.
fn top_level_types(p: &Project, names: &Names, name: &str, also: impl Fn(DefIx) -> bool) -> Vec<DefIx> {
    names
        .get(name)
        .iter()
        .copied()
        .filter(|&t| p.kind(t).is_type() && p.defs[t].parent().is_none_or(|par| p.kind(par) == Kind::Module) && also(t))
        .collect()
}

/// Types written in several places under one symbol (C#'s partial
/// classes) are one type: the members of each part are the first part's,
/// and so are its supertypes. Returns each later part's first part.
fn join_partial_types(p: &mut Project) -> HashMap<DefIx, DefIx> {
    let mut first: HashMap<&str, DefIx> = HashMap::default();
    let mut partial: HashMap<DefIx, DefIx> = HashMap::default();
    // Ruby's modules too: `module Shop` reopened in every file of a gem is
    // one namespace, whose names (`class Item < Base`) are seen from each.
    // Each file's facts walked in place: a large part has hundreds of
    // thousands of definitions, a few of them types.
    for (f, s) in p.sources.iter().enumerate() {
        let reopens = s.lang.rules.nested_modules;
        for (at, d) in s.facts.defs.iter().enumerate() {
            if !(d.kind.is_type() || reopens && d.kind == Kind::Module) {
                continue;
            }
            let symbol = p.symbols.get(f, at);
            if symbol.is_empty() {
                continue;
            }
            let ix = p.first_def[f] + at;
            match first.entry(symbol) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    partial.insert(ix, *e.get());
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(ix);
                }
            }
        }
    }
    if !partial.is_empty() {
        for d in &mut p.defs {
            if let Some(&one) = d.parent().and_then(|par| partial.get(&par)) {
                d.set_parent(Some(one));
            }
        }
    }
    partial
}

/// Each definition's supertypes as the index writes them, wherever they
/// are held.
pub(crate) trait SuperTypes {
    /// Definition `d`'s, when it has some listed.
    fn of(&self, d: DefIx) -> Option<&[DefIx]>;
}

impl SuperTypes for HashMap<DefIx, Vec<DefIx>> {
    fn of(&self, d: DefIx) -> Option<&[DefIx]> {
        self.get(&d).map(Vec::as_slice)
    }
}

/// The supertypes written as definition `ix`'s relationships (with those
/// of its declaration `twin`, for a member defined apart): the direct
/// ones, or every one up the hierarchy (64 at most) where the language's
/// indexer writes them all (`all`).
pub(crate) fn written_supers(supers: &impl SuperTypes, all: bool, ix: DefIx, twin: Option<DefIx>) -> Vec<DefIx> {
    let of = |t: &DefIx| supers.of(*t).unwrap_or_default();
    let mut out: Vec<DefIx> = std::iter::once(ix).chain(twin).flat_map(|t| of(&t).iter().copied()).collect();
    if all {
        let mut i = 0;
        while i < out.len() && out.len() < 64 {
            for &s in of(&out[i]) {
                if s != ix && !out.contains(&s) {
                    out.push(s);
                }
            }
            i += 1;
        }
    }
    out
}

/// Drops `value` on a thread of its own: freeing what a large project's
/// last resolve held takes milliseconds that an edit need not wait for.
fn drop_aside<T: Send + 'static>(value: T) {
    // Should the thread not start, the value is dropped here, as before.
    let _ = std::thread::Builder::new().name("signpost-drop".into()).spawn(move || drop(value));
}

/// Time per resolve step, logged at debug level
/// (`RUST_LOG=signpost_treesitter=debug`).
struct Steps(std::time::Instant);

impl Steps {
    fn done(&mut self, step: &str) {
        tracing::debug!(step, ms = self.0.elapsed().as_millis() as u64, "resolve");
        self.0 = std::time::Instant::now();
    }
}

/// Whether definition `ix` is written as a scope of references (with an
/// enclosing range). A namespace block (C++, C#, Rust) is not: what is in
/// it outside any definition the indexer knows (a form of function its
/// query does not read) is left out rather than credited to the namespace;
/// and so a namespace defined in many files is spliced per file (the graph
/// imports the documents of a symbol that scopes references in several
/// together). A Ruby module's body and a Scala object's run: what they
/// call, the module calls.
pub(crate) fn scopes(project: &Project, ix: DefIx) -> bool {
    let lang = project.sources[project.defs[ix].file()].lang;
    project.def(ix).kind != Kind::Module || lang.rules.nested_modules || lang.rules.companion_objects
}

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
type HashSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

use crate::expr::{self, Step, TypeText};
use crate::extract::{Facts, Kind, Name, Span, Typed};
use crate::languages::{Lang, Packages};
use rayon::prelude::*;

/// Index of a definition in [`Project::defs`].
pub type DefIx = usize;

/// A file of the project.
#[derive(Debug)]
pub struct Source {
    /// Path relative to the project root, `/`-separated.
    pub path: String,
    /// Its language.
    pub lang: &'static Lang,
    /// What it says.
    pub facts: Facts,
    /// The package namespace its top-level definitions live in
    /// (descriptor names, outermost first).
    pub package: Vec<String>,
    /// The SCIP package name of its project (Go's module path; empty when
    /// the build does not say).
    pub module: String,
}

/// A definition with its place in the project.
#[derive(Debug)]
pub struct Def {
    /// The file.
    pub file: usize,
    /// Index in the file's `facts.defs`.
    pub at: usize,
    /// The definition it belongs to (lexically, or by its `@owner`).
    pub parent: Option<DefIx>,
    /// Its SCIP symbol.
    pub symbol: String,
    /// For a callable defined apart from its type (C++'s `double
    /// Circle::area() const { … }`): the member declaration in the type it
    /// defines, whose symbol it shares. The declaration stands for both in
    /// name lookups; the definition is written where its body is.
    pub twin_of: Option<DefIx>,
}

/// A resolved use: from which definition, to which, how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Use {
    /// File the use is in.
    pub file: usize,
    /// The name's place.
    pub span: Span,
    /// What it means.
    pub target: DefIx,
}

/// The project, resolved.
#[derive(Debug, Default)]
pub struct Project {
    /// Its files.
    pub sources: Vec<std::sync::Arc<Source>>,
    /// Every definition.
    pub defs: Vec<Def>,
    /// Each definition's supertypes (resolved headers, and Go's implicit
    /// interface satisfaction).
    pub supers: HashMap<DefIx, Vec<DefIx>>,
    /// Uses of names: calls and type references.
    pub uses: Vec<Use>,
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
    /// Header types met.
    pub supers: usize,
    /// Header types resolved.
    pub supers_resolved: usize,
}

impl Project {
    fn fact(&self, d: DefIx) -> &crate::extract::Def {
        let def = &self.defs[d];
        &self.sources[def.file].facts.defs[def.at]
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
    let mut step = Steps(std::time::Instant::now());
    let mut p = Project { sources, ..Project::default() };
    // Definitions and their lexical parents.
    let mut starts: Vec<DefIx> = Vec::with_capacity(p.sources.len());
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
                    p.defs[m].parent.filter(|&t| s.facts.defs[t - starts[fi]].kind.is_type()).or(parent)
                }
                _ => parent,
            };
            let ix = p.defs.len();
            p.defs.push(Def { file: fi, at, parent, symbol: String::new(), twin_of: None });
            stack.push((ix, d.span));
        }
    }
    p.first_def = starts;
    let names = Names::of(&p);
    // Owners declared apart (Go's receivers, C++'s `Type::method`): a type
    // of the same package, at its top level or in a namespace.
    for ix in 0..p.defs.len() {
        let Some(owner) = p.fact(ix).owner.clone() else { continue };
        let file = p.defs[ix].file;
        let pkg = &p.sources[file].package;
        let found: Vec<DefIx> = names
            .get(&owner)
            .iter()
            .copied()
            .filter(|&t| {
                p.kind(t).is_type()
                    && p.defs[t].parent.is_none_or(|par| p.kind(par) == Kind::Module)
                    && p.sources[p.defs[t].file].package == *pkg
            })
            .collect();
        if let [t] = found[..] {
            p.defs[ix].parent = Some(t);
        }
    }
    step.done("definitions and owners");
    symbols(&mut p);
    step.done("symbols");
    let ((members, vars), look) = rayon::join(|| rayon::join(|| members_of(&p), || Vars::of(&p)), || Lookup::of(&p));
    step.done("lookups");
    let mut r = Resolver { p: &p, look: &look, members: &members, vars: &vars, supers: HashMap::default() };
    // Headers first: calls look up through them.
    let mut counts = Counts::default();
    for (fi, s) in p.sources.iter().enumerate() {
        for sup in &s.facts.supers {
            counts.supers += 1;
            let Some(owner) = r.innermost(fi, &sup.span, |k| k.is_type()) else { continue };
            if let Some(t) = r.ty(fi, owner, sup) {
                counts.supers_resolved += 1;
                if t != owner {
                    r.supers.entry(owner).or_default().push(t);
                }
            }
        }
    }
    step.done("headers");
    implicit_interfaces(&p, &members, &mut r.supers);
    step.done("implicit interfaces");
    let overrides = overrides(&r, &members);
    step.done("overrides");
    // Files resolve independently of each other from here on: in
    // parallel, their uses kept in file order.
    let per_file: Vec<(Vec<Use>, usize)> = (0..p.sources.len())
        .into_par_iter()
        .map(|fi| {
            let facts = &p.sources[fi].facts;
            let mut uses = Vec::new();
            for t in &facts.types {
                let scope = r.innermost(fi, &t.span, |_| true);
                if let Some(target) = r.ty(fi, scope.unwrap_or(usize::MAX), t) {
                    uses.push(Use { file: fi, span: t.span, target });
                }
            }
            let mut calls_resolved = 0;
            for c in &facts.calls {
                let scope = r.innermost(fi, &c.span, |k| k.is_scope());
                if let Some(target) = r.call(fi, scope, c) {
                    calls_resolved += usize::from(!c.read);
                    uses.push(Use { file: fi, span: c.span, target });
                }
            }
            (uses, calls_resolved)
        })
        .collect();
    counts.calls = p.sources.iter().map(|s| s.facts.calls.iter().filter(|c| !c.read).count()).sum();
    counts.calls_resolved = per_file.iter().map(|(_, n)| n).sum();
    let mut uses = Vec::with_capacity(per_file.iter().map(|(u, _)| u.len()).sum());
    for (u, _) in per_file {
        uses.extend(u);
    }
    step.done("uses");
    let mut supers = std::mem::take(&mut r.supers);
    supers.extend(overrides);
    p.supers = supers;
    p.uses = uses;
    p.counts = counts;
    p
}

/// Definitions by name.
struct Names(HashMap<String, Vec<DefIx>>);

impl Names {
    fn of(p: &Project) -> Names {
        let mut m: HashMap<String, Vec<DefIx>> = HashMap::default();
        for ix in 0..p.defs.len() {
            m.entry(p.fact(ix).name.clone()).or_default().push(ix);
        }
        Names(m)
    }

    fn get(&self, name: &str) -> &[DefIx] {
        self.0.get(name).map_or(&[], Vec::as_slice)
    }
}

/// What a name may mean, by where it is defined: the indexes every rung of
/// the resolution ladder reads, so a name costs its own definitions, never
/// every definition of the project.
struct Lookup<'p> {
    /// Everything by name.
    by_name: HashMap<&'p str, Vec<DefIx>>,
    /// Members by their owner and name.
    by_owner: HashMap<(DefIx, &'p str), Vec<DefIx>>,
    /// Top-level definitions by file and name.
    by_file: HashMap<(usize, &'p str), Vec<DefIx>>,
    /// Top-level definitions by package (dotted) and name.
    by_package: HashMap<(u32, &'p str), Vec<DefIx>>,
    /// Each package (dotted) met, numbered: lookups by package allocate
    /// nothing.
    packages: HashMap<String, u32>,
    /// Each file's package number.
    file_package: Vec<u32>,
    /// The files of each package number.
    package_files: HashMap<u32, Vec<usize>>,
}

/// The definitions a use may mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// Types (header names, written types, receivers).
    Type,
    /// Callables.
    Callable,
    /// Callables and named values (a decorator: a function, or a variable
    /// bound to one).
    Value,
}

impl Want {
    fn admits(self, k: Kind) -> bool {
        match self {
            Want::Type => k.is_type(),
            Want::Callable => k.is_callable(),
            Want::Value => k.is_callable() || matches!(k, Kind::Variable | Kind::Constant),
        }
    }
}

impl<'p> Lookup<'p> {
    fn of(p: &'p Project) -> Lookup<'p> {
        let mut packages: HashMap<String, u32> = HashMap::default();
        let file_package: Vec<u32> = p
            .sources
            .iter()
            .map(|s| {
                let n = packages.len() as u32;
                *packages.entry(s.package.join(".")).or_insert(n)
            })
            .collect();
        let mut package_files: HashMap<u32, Vec<usize>> = HashMap::default();
        for (f, &n) in file_package.iter().enumerate() {
            package_files.entry(n).or_default().push(f);
        }
        let mut l = Lookup {
            by_name: HashMap::default(),
            by_owner: HashMap::default(),
            by_file: HashMap::default(),
            by_package: HashMap::default(),
            packages,
            file_package,
            package_files,
        };
        for (ix, d) in p.defs.iter().enumerate() {
            // A member defined apart is found as its declaration; one whose
            // type is not found (`Outer::Inner::f`, a type not indexed) is
            // a scope of its own, never what a plain name means.
            if d.twin_of.is_some() || (p.fact(ix).owner.is_some() && !d.parent.is_some_and(|t| p.kind(t).is_type())) {
                continue;
            }
            let name = p.fact(ix).name.as_str();
            l.by_name.entry(name).or_default().push(ix);
            match d.parent {
                Some(par) if p.kind(par) != Kind::Module => l.by_owner.entry((par, name)).or_default().push(ix),
                _ => {
                    l.by_file.entry((d.file, name)).or_default().push(ix);
                    l.by_package.entry((l.file_package[d.file], name)).or_default().push(ix);
                }
            }
        }
        l
    }

    /// The top-level definitions called `name` of the package `pkg`.
    fn in_package<'s>(&'s self, pkg: &str, name: &'s str) -> &'s [DefIx] {
        match self.packages.get(pkg) {
            Some(&n) => self.in_package_of(n, name),
            None => &[],
        }
    }

    /// The same, by package number.
    fn in_package_of<'s>(&'s self, pkg: u32, name: &'s str) -> &'s [DefIx] {
        Lookup::get(&self.by_package, &(pkg, name))
    }

    fn get<'a, K: std::hash::Hash + Eq>(map: &'a HashMap<K, Vec<DefIx>>, key: &K) -> &'a [DefIx] {
        map.get(key).map_or(&[], Vec::as_slice)
    }
}

fn members_of(p: &Project) -> HashMap<DefIx, Vec<DefIx>> {
    let mut m: HashMap<DefIx, Vec<DefIx>> = HashMap::default();
    for (ix, d) in p.defs.iter().enumerate() {
        if d.twin_of.is_some() {
            continue;
        }
        if let Some(parent) = d.parent {
            m.entry(parent).or_default().push(ix);
        }
    }
    m
}

/// A scope of typed names: the file, and the innermost type or callable
/// around them (none: the file's top level).
type Scope = (usize, Option<DefIx>);

/// What a typed name is bound to.
#[derive(Debug, Clone)]
enum Binding {
    /// A written type: its name, and the whole type as written when the
    /// query gives it (`Arc<Mutex<State>>`).
    Type(Name, Option<String>),
    /// What an expression gives (`let o = Order::new(…)`), read when a call
    /// needs it.
    Value(String),
    /// An element of what an expression gives (`for a in cmd.args()`).
    Element(String),
}

/// Typed names (variable, what it is bound to) by their scope.
struct Vars(HashMap<Scope, Vec<(String, Binding)>>);

impl Vars {
    fn of(p: &Project) -> Vars {
        let mut m: HashMap<Scope, Vec<(String, Binding)>> = HashMap::default();
        // What collections hold, by scope: an element of one (`for shape in
        // shapes`) is of that type.
        let mut holds: HashMap<Scope, Vec<(String, Name)>> = HashMap::default();
        for (fi, s) in p.sources.iter().enumerate() {
            for v in &s.facts.vars {
                let scope = innermost_in(p, fi, &v.ty.span, |k| k.is_scope());
                let bound = match v.typed {
                    Typed::Is => Binding::Type(v.ty.clone(), v.written.clone()),
                    Typed::Value => Binding::Value(v.ty.name.clone()),
                    Typed::Element => Binding::Element(v.ty.name.clone()),
                    Typed::Holds => {
                        holds.entry((fi, scope)).or_default().push((v.name.clone(), v.ty.clone()));
                        continue;
                    }
                    Typed::Like => {
                        let held = holds.get(&(fi, scope)).and_then(|h| h.iter().rev().find(|(n, _)| *n == v.ty.name));
                        let Some((_, ty)) = held else { continue };
                        Binding::Type(Name { span: v.ty.span, ..ty.clone() }, None)
                    }
                };
                m.entry((fi, scope)).or_default().push((v.name.clone(), bound));
            }
        }
        Vars(m)
    }
}

/// The innermost definition of file `fi` around `span` whose kind passes.
fn innermost_in(p: &Project, fi: usize, span: &Span, pass: impl Fn(Kind) -> bool) -> Option<DefIx> {
    let defs = &p.sources[fi].facts.defs;
    // Definitions are sorted by start; the innermost container starts last.
    let upto = defs.partition_point(|d| d.span.bytes.0 <= span.bytes.0);
    let base = p.first_def[fi];
    (0..upto)
        .rev()
        .find(|&i| defs[i].span.contains(span) && defs[i].name_span != *span && pass(defs[i].kind))
        .map(|i| base + i)
}

struct Resolver<'a> {
    p: &'a Project,
    look: &'a Lookup<'a>,
    members: &'a HashMap<DefIx, Vec<DefIx>>,
    vars: &'a Vars,
    supers: HashMap<DefIx, Vec<DefIx>>,
}

impl Resolver<'_> {
    fn innermost(&self, fi: usize, span: &Span, pass: impl Fn(Kind) -> bool) -> Option<DefIx> {
        innermost_in(self.p, fi, span, pass)
    }

    /// The innermost type around `scope` (what `self`, `this` and `Self`
    /// mean there).
    fn enclosing_type(&self, scope: Option<DefIx>) -> Option<DefIx> {
        self.chain(scope).find(|&d| self.p.kind(d).is_type())
    }

    /// The one of `level` that takes `args` arguments (any, when not
    /// known), if exactly one does.
    fn fitting(&self, level: &[DefIx], args: Option<u32>) -> Option<DefIx> {
        let mut fit =
            level.iter().copied().filter(|&d| args.is_none_or(|n| self.p.fact(d).arity.is_none_or(|a| a.fits(n))));
        match (fit.next(), fit.next()) {
            (Some(one), None) => Some(one),
            _ => None,
        }
    }

    /// Whether `name` names a namespace of the project (C++'s `shapes`).
    fn is_namespace(&self, name: &str) -> bool {
        Lookup::get(&self.look.by_name, &name).iter().any(|&d| self.p.kind(d) == Kind::Module)
    }

    /// The chain of definitions from `d` outwards.
    fn chain(&self, d: Option<DefIx>) -> impl Iterator<Item = DefIx> + '_ {
        std::iter::successors(d, |&x| self.p.defs[x].parent)
    }

    /// `t` and its supertypes, nearest first, each once.
    fn lineage(&self, t: DefIx) -> Vec<DefIx> {
        let mut out = vec![t];
        let mut i = 0;
        while i < out.len() && out.len() < 64 {
            for &s in self.supers.get(&out[i]).map_or(&[][..], Vec::as_slice) {
                if !out.contains(&s) {
                    out.push(s);
                }
            }
            i += 1;
        }
        out
    }

    /// The definitions named `name` that file `fi`'s imports bring in: the
    /// imported type itself (`import a.b.C`), a package's member
    /// (`import a.b.*`, a Go import path), or a member of an imported type.
    fn imported(&self, fi: usize, name: &str) -> Vec<DefIx> {
        let s = &self.p.sources[fi];
        let mut out = Vec::new();
        for i in &s.facts.imports {
            if s.lang.packages == Packages::ModulePath {
                out.extend_from_slice(self.look.in_package(&i.path, name));
                continue;
            }
            if let Some(pkg) = i.path.strip_suffix(".*") {
                out.extend(self.exported(pkg, name, REEXPORTS));
                // A namespace of the project (C++'s `using namespace`).
                out.extend(self.in_namespace(pkg.rsplit('.').next().unwrap_or(pkg), name, |_| true));
                continue;
            }
            let Some((pkg, last)) = i.path.rsplit_once('.') else { continue };
            let types = self.exported(pkg, last, REEXPORTS);
            if last == name {
                out.extend_from_slice(&types);
            } else {
                for &t in &types {
                    out.extend_from_slice(Lookup::get(&self.look.by_owner, &(t, name)));
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The top-level definitions called `name` of package `pkg`; where it
    /// defines none, what its files import under that name (Rust's `pub
    /// use`, a Python package's `__init__`), followed at most `hops` times.
    fn exported(&self, pkg: &str, name: &str, hops: u8) -> Vec<DefIx> {
        let direct = self.look.in_package(pkg, name);
        if !direct.is_empty() || hops == 0 {
            return direct.to_vec();
        }
        let Some(n) = self.look.packages.get(pkg) else { return Vec::new() };
        let mut out = Vec::new();
        for &f in Lookup::get(&self.look.package_files, n) {
            for i in &self.p.sources[f].facts.imports {
                let (from, last) = i.path.rsplit_once('.').unwrap_or(("", &i.path));
                if from == pkg {
                    continue;
                }
                if last == "*" {
                    out.extend(self.exported(from, name, hops - 1));
                } else if i.alias.as_deref().unwrap_or(last) == name {
                    out.extend(self.exported(from, last, hops - 1));
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The package file `fi` imports as `alias` (Go: the alias, else the
    /// path's last element), dotted as [`Lookup`] keys it.
    fn package_alias(&self, fi: usize, alias: &str) -> Option<String> {
        let s = &self.p.sources[fi];
        s.facts.imports.iter().find_map(|i| {
            let named = i.alias.as_deref().unwrap_or_else(|| i.path.rsplit(['/', '.']).next().unwrap_or(""));
            (named == alias).then(|| i.path.clone())
        })
    }

    /// What `name` means seen from scope `from` in file `fi`, nearest rung
    /// first: one definition at the first rung that has any, or none when
    /// that rung has several and `tie` cannot choose.
    fn ladder(
        &self,
        fi: usize,
        from: Option<DefIx>,
        name: &str,
        want: Want,
        tie: impl Fn(&[DefIx]) -> Option<DefIx>,
    ) -> Option<DefIx> {
        let all = Lookup::get(&self.look.by_name, &name);
        if !all.iter().any(|&d| want.admits(self.p.kind(d))) {
            return None;
        }
        // Where a plain call never means a member (Rust, Python, Go,
        // TypeScript), members are not candidates.
        let plain = want == Want::Callable && !self.p.sources[fi].lang.members_in_scope;
        let admits = |d: DefIx| {
            want.admits(self.p.kind(d)) && !(plain && self.p.defs[d].parent.is_some_and(|t| self.p.kind(t).is_type()))
        };
        let imported = std::cell::OnceCell::new();
        let pick = |level: &[DefIx]| -> Option<Option<DefIx>> {
            let mut admitted = level.iter().copied().filter(|&d| admits(d));
            match (admitted.next(), admitted.next()) {
                (None, _) => None,
                (Some(one), None) => Some(Some(one)),
                _ => {
                    let level: Vec<DefIx> = level.iter().copied().filter(|&d| admits(d)).collect();
                    // Of several, the one the file imports (C++'s `using
                    // namespace metric;` between `metric::scale` and
                    // `imperial::scale`).
                    let imported: &Vec<DefIx> = imported.get_or_init(|| self.imported(fi, name));
                    let chosen: Vec<DefIx> = level.iter().copied().filter(|d| imported.contains(d)).collect();
                    if let [one] = chosen[..] { Some(Some(one)) } else { Some(tie(&level)) }
                }
            }
        };
        // Members of the enclosing definitions and their supertypes.
        for d in self.chain(from).filter(|_| !plain) {
            for t in self.lineage(d) {
                if let Some(r) = pick(Lookup::get(&self.look.by_owner, &(t, name))) {
                    return r;
                }
            }
        }
        // Each rung is looked at only when the ones before it had nothing.
        if let Some(r) = pick(Lookup::get(&self.look.by_file, &(fi, name))) {
            return r;
        }
        if let Some(r) = pick(&self.imported(fi, name)) {
            return r;
        }
        if let Some(r) = pick(self.look.in_package_of(self.look.file_package[fi], name)) {
            return r;
        }
        pick(all).flatten()
    }

    /// The type a name means, from scope `from` (usize::MAX: file level).
    fn ty(&self, fi: usize, from: DefIx, name: &Name) -> Option<DefIx> {
        let from = (from != usize::MAX).then_some(from);
        if let Some(q) = &name.qualifier {
            let Some(pkg) = self.package_alias(fi, q) else {
                // C++'s `shapes::Shape`: a type in a namespace of the
                // project called so; `std::vector`: not the project's.
                let found = self.in_namespace(q, &name.name, |k| k.is_type());
                return if let [one] = found[..] { Some(one) } else { None };
            };
            let found: Vec<DefIx> = self
                .look
                .in_package(&pkg, name.name.as_str())
                .iter()
                .copied()
                .filter(|&d| self.p.kind(d).is_type())
                .collect();
            return if let [one] = found[..] { Some(one) } else { None };
        }
        self.ladder(fi, from, &name.name, Want::Type, |_| None)
    }

    /// The definitions called `name` (of a kind `pass` admits) declared in
    /// a namespace (C++) of the project called `ns`.
    fn in_namespace(&self, ns: &str, name: &str, pass: impl Fn(Kind) -> bool) -> Vec<DefIx> {
        let ns = ns.rsplit("::").next().unwrap_or(ns);
        Lookup::get(&self.look.by_name, &name)
            .iter()
            .copied()
            .filter(|&d| {
                pass(self.p.kind(d))
                    && self.p.defs[d]
                        .parent
                        .is_some_and(|m| self.p.kind(m) == Kind::Module && self.p.fact(m).name == ns)
            })
            .collect()
    }

    /// What a typed name is bound to seen from `scope` (the innermost
    /// scope that declares it, then the members of the enclosing types'
    /// lineages, then the file), with where it was declared.
    fn var(&self, fi: usize, scope: Option<DefIx>, var: &str) -> Option<(usize, Option<DefIx>, &Binding)> {
        for d in self.chain(scope) {
            for t in self.lineage(d) {
                if let Some(found) = self.declared_in(t, var) {
                    return Some(found);
                }
            }
        }
        let (_, b) = self.vars.0.get(&(fi, None))?.iter().rev().find(|(n, _)| n == var)?;
        Some((fi, None, b))
    }

    /// A name declared in the scope of definition `d` (a field of a type, a
    /// local of a callable).
    fn declared_in(&self, d: DefIx, var: &str) -> Option<(usize, Option<DefIx>, &Binding)> {
        let df = self.p.defs[d].file;
        let (_, b) = self.vars.0.get(&(df, Some(d)))?.iter().rev().find(|(n, _)| n == var)?;
        Some((df, Some(d), b))
    }

    /// The value a binding gives, read where it was declared.
    fn bound(&self, (file, scope, b): (usize, Option<DefIx>, &Binding), depth: u8) -> Val {
        match b {
            Binding::Type(name, Some(written)) => {
                let self_ty = self.enclosing_type(scope);
                match self.written(file, scope, self_ty, written, depth) {
                    Val::Unknown => self.named_type(file, scope, name),
                    v => v,
                }
            }
            Binding::Type(name, None) => self.named_type(file, scope, name),
            Binding::Value(expr) => self.eval(file, scope, expr, false, depth),
            Binding::Element(expr) => match self.eval(file, scope, expr, false, depth) {
                Val::Written(w) => self.element(&w, depth),
                _ => Val::Unknown,
            },
        }
    }

    /// What one element of a collection or iterator is (`Vec<Arg>`, `impl
    /// Iterator<Item = &Arg>`, `Shape[]`).
    fn element(&self, w: &Written, depth: u8) -> Val {
        let Some(t) = TypeText::parse(&w.text) else { return Val::Unknown };
        let Some(depth) = depth.checked_sub(1) else { return Val::Unknown };
        let arg = match wrapper(t.head) {
            Some(Wrapper::Collection) => t.args.last(),
            Some(Wrapper::Iterates) => t.args.first(),
            Some(Wrapper::Deref) => {
                return match t.args.first().map(|a| self.written(w.file, w.scope, w.self_ty, a, depth)) {
                    Some(Val::Written(inner)) => self.element(&inner, depth),
                    _ => Val::Unknown,
                };
            }
            _ => None,
        };
        let Some(arg) = arg else { return Val::Unknown };
        // `Iterator<Item = &Arg>`.
        let arg = arg.split_once('=').map_or(*arg, |(_, t)| t);
        self.written(w.file, w.scope, w.self_ty, arg, depth)
    }

    /// A type name's value: the project's type, or one written but defined
    /// elsewhere.
    fn named_type(&self, file: usize, scope: Option<DefIx>, name: &Name) -> Val {
        match self.ty(file, scope.unwrap_or(usize::MAX), name) {
            Some(t) => Val::Type(t),
            None => Val::Written(Written { text: name.name.clone(), file, scope, self_ty: None }),
        }
    }

    /// The value of a type as written (`Option<&Arg>`, `Self`, `*Order`)
    /// in file `file` from `scope`, `Self` being `self_ty`.
    fn written(&self, file: usize, scope: Option<DefIx>, self_ty: Option<DefIx>, text: &str, depth: u8) -> Val {
        let Some(t) = TypeText::parse(text) else { return Val::Unknown };
        if matches!(t.head, "Self" | "this" | "self" | "static") {
            return self_ty.map_or(Val::Unknown, Val::Type);
        }
        let external = || Val::Written(Written { text: text.to_owned(), file, scope, self_ty });
        // A wrapper of the standard libraries is read as one even where the
        // project has an alias of its name (`type Result<T> = …`).
        if depth == 0 || wrapper(t.head).is_some() {
            return external();
        }
        let from = scope.unwrap_or(usize::MAX);
        let name = |qualifier: Option<&str>| Name {
            name: t.head.to_owned(),
            qualifier: qualifier.map(str::to_owned),
            span: Span::default(),
        };
        // A Rust or C++ path's module (`crate::builder::Arg`) is no package
        // alias: the name alone, then.
        let found = self.ty(file, from, &name(t.qualifier)).or_else(|| {
            let module = t.qualifier.is_some_and(|q| self.package_alias(file, q).is_none());
            if module { self.ty(file, from, &name(None)) } else { None }
        });
        found.map_or_else(external, |d| self.unalias(d, depth))
    }

    /// A type of the project, read through an alias (`type Error =
    /// error::Error<DefaultFormatter>`) to what it stands for.
    fn unalias(&self, t: DefIx, depth: u8) -> Val {
        let f = self.p.fact(t);
        match (f.kind, f.returns.as_deref()) {
            (Kind::Type, Some(target)) if depth > 0 => {
                let self_ty = self.enclosing_type(self.p.defs[t].parent);
                match self.written(self.p.defs[t].file, self.p.defs[t].parent, self_ty, target, depth - 1) {
                    Val::Unknown => Val::Type(t),
                    v => v,
                }
            }
            _ => Val::Type(t),
        }
    }

    /// The package a Rust path's first segment names (`output` in
    /// `crate::output::display_width`): a module of the file's own, its
    /// parent's, or the crate root's.
    fn module_path(&self, fi: usize, name: &str) -> Option<String> {
        let own = &self.p.sources[fi].package;
        (0..=own.len()).rev().find_map(|keep| {
            let mut path = own[..keep].join(".");
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(name);
            self.look.packages.contains_key(&path).then_some(path)
        })
    }

    /// What a callable `m` returns.
    fn returns(&self, m: DefIx, depth: u8) -> Val {
        let self_ty = self.enclosing_type(Some(m));
        if self.p.kind(m) == Kind::Constructor {
            return self_ty.map_or(Val::Unknown, Val::Type);
        }
        match self.p.fact(m).returns.as_deref() {
            Some(text) => self.written(self.p.defs[m].file, Some(m), self_ty, text, depth),
            None => Val::Unknown,
        }
    }

    /// What an expression's value is, read in file `fi` from `scope`:
    /// `scoped` when the expression is written before `::` (a scope, never
    /// a value).
    fn eval(&self, fi: usize, scope: Option<DefIx>, text: &str, scoped: bool, depth: u8) -> Val {
        let Some(depth) = depth.checked_sub(1) else { return Val::Unknown };
        let Some(mut steps) = expr::steps(text) else {
            // A literal (`{}`, `[]`, `"x"`, `0`) is no value of the project.
            let literal =
                text.starts_with(['{', '[', '"', '\'', '`']) || text.starts_with(|c: char| c.is_ascii_digit());
            return if literal { Val::Foreign } else { Val::Unknown };
        };
        // A Rust path from the crate or a module (`super::Arg::new`) names
        // the same as the path's rest.
        while let [Step::Name("crate" | "super" | "self"), Step::Member { name, scoped: true }, ..] = steps[..] {
            steps.remove(0);
            steps[0] = Step::Name(name);
        }
        let head_scoped = match steps.get(1) {
            Some(Step::Member { scoped, .. } | Step::Call { scoped, .. }) => *scoped,
            None => scoped,
            _ => false,
        };
        let mut val = self.head(fi, scope, steps[0], head_scoped, depth);
        for step in &steps[1..] {
            if matches!(val, Val::Unknown) {
                break;
            }
            val = self.step(fi, scope, val, *step, depth);
        }
        val
    }

    /// The value of an expression's first step.
    fn head(&self, fi: usize, scope: Option<DefIx>, step: Step<'_>, scoped: bool, depth: u8) -> Val {
        let type_named = |name: &str| {
            let named = Name { name: name.to_owned(), qualifier: None, span: Span::default() };
            self.ty(fi, scope.unwrap_or(usize::MAX), &named)
        };
        match step {
            // A Rust impl for a type the project does not define.
            // PHP's `$this`, `static::`.
            Step::Name("this" | "self" | "Self" | "$this" | "static") => {
                self.enclosing_type(scope).map_or(Val::Foreign, Val::Type)
            }
            Step::Name("super" | "parent") => {
                let sup = self.enclosing_type(scope).and_then(|t| self.supers.get(&t)?.first().copied());
                sup.map_or(Val::Unknown, Val::Type)
            }
            Step::Name(name) => {
                // A scope written before a name (`ns::f`) is never a value.
                if !scoped && let Some(b) = self.var(fi, scope, name) {
                    return self.bound(b, depth);
                }
                if let Some(t) = type_named(name) {
                    return self.unalias(t, depth);
                }
                if !scoped && let Some(pkg) = self.package_alias(fi, name) {
                    return Val::Package(pkg);
                }
                // A namespace of the project (`shapes::total`).
                if self.is_namespace(name) {
                    return Val::Namespace(name.to_owned());
                }
                // A module of a Rust crate (`output::display_width`).
                if scoped
                    && self.p.sources[fi].lang.packages == Packages::CratePath
                    && let Some(pkg) = self.module_path(fi, name)
                {
                    return Val::Package(pkg);
                }
                // A type or module path the project does not define
                // (`String::new`).
                if scoped { Val::Foreign } else { Val::Unknown }
            }
            Step::New(name) => type_named(name).map_or(Val::Foreign, Val::Type),
            Step::Call { name, args, .. } => {
                match self.ladder(fi, scope, name, Want::Callable, |level| self.fitting(level, Some(args))) {
                    Some(f) => self.returns(f, depth),
                    // `Order(…)`: a construction, where no `new` is written;
                    // else a function the project does not define.
                    None => type_named(name).map_or(Val::Foreign, Val::Type),
                }
            }
            Step::Member { .. } | Step::Unwrap | Step::Index | Step::Literal => Val::Unknown,
        }
    }

    /// The value after one more step.
    fn step(&self, fi: usize, scope: Option<DefIx>, val: Val, step: Step<'_>, depth: u8) -> Val {
        match (val, step) {
            (val, Step::Literal) => val,
            (Val::Type(t), Step::Unwrap) => Val::Type(t),
            (Val::Type(t), Step::Member { name, scoped: true }) => {
                let nested = self.lineage(t).into_iter().find_map(|o| {
                    Lookup::get(&self.look.by_owner, &(o, name)).iter().copied().find(|&d| self.p.kind(d).is_type())
                });
                nested.map_or(Val::Unknown, Val::Type)
            }
            (Val::Type(t), Step::Member { name, .. }) => {
                match self.lineage(t).into_iter().find_map(|o| self.declared_in(o, name)) {
                    Some(b) => self.bound(b, depth),
                    // A method called without parentheses (Ruby's
                    // `Cart.new`, Scala's `cart.total`) or a property's
                    // getter.
                    None => self.step(fi, scope, Val::Type(t), Step::Call { name, args: 0, scoped: false }, depth),
                }
            }
            (Val::Type(t), Step::Call { name, args, .. }) => match self.member_call(t, name, Some(args)) {
                Some(m) => self.returns(m, depth),
                // What the standard traits give of any type (`clone`,
                // `Default::default`), and what a wrapper already unwrapped
                // would have given.
                // Ruby's `Item.new(…)` gives an Item whatever `initialize` is.
                None if SAME_VALUE.contains(&name) || UNWRAPS.contains(&name) || name == "new" => Val::Type(t),
                None => Val::Unknown,
            },
            (Val::Written(w), step) => self.through(fi, scope, w, step, depth),
            (Val::Foreign, _) => Val::Foreign,
            (Val::Package(pkg), Step::Member { name, .. }) => {
                let nested = format!("{pkg}.{name}");
                if self.look.packages.contains_key(&nested) {
                    return Val::Package(nested);
                }
                let types: Vec<DefIx> =
                    self.exported(&pkg, name, REEXPORTS).into_iter().filter(|&d| self.p.kind(d).is_type()).collect();
                if let [one] = types[..] { self.unalias(one, depth) } else { Val::Unknown }
            }
            (Val::Package(pkg), Step::Call { name, args, .. }) => {
                let level: Vec<DefIx> = self
                    .exported(&pkg, name, REEXPORTS)
                    .into_iter()
                    .filter(|&d| self.p.kind(d).is_callable())
                    .collect();
                self.fitting(&level, Some(args)).map_or(Val::Unknown, |one| self.returns(one, depth))
            }
            (Val::Namespace(ns), Step::Member { name, .. }) => {
                let types = self.in_namespace(&ns, name, |k| k.is_type());
                match types[..] {
                    [one] => Val::Type(one),
                    _ if self.is_namespace(name) => Val::Namespace(name.to_owned()),
                    _ => Val::Unknown,
                }
            }
            (Val::Namespace(ns), Step::Call { name, args, .. }) => {
                let level = self.in_namespace(&ns, name, Kind::is_callable);
                self.fitting(&level, Some(args)).map_or(Val::Unknown, |one| self.returns(one, depth))
            }
            _ => Val::Unknown,
        }
    }

    /// A step on a value of a type the project does not define: through
    /// what it wraps, where the standard libraries say so.
    fn through(&self, fi: usize, scope: Option<DefIx>, w: Written, step: Step<'_>, depth: u8) -> Val {
        let Some(t) = TypeText::parse(&w.text) else { return Val::Unknown };
        let kind = wrapper(t.head);
        let inner = |k: usize| match t.args.get(k) {
            Some(arg) if depth > 0 => self.written(w.file, w.scope, w.self_ty, arg, depth - 1),
            _ => Val::Unknown,
        };
        match (kind, step) {
            // `Box<T>`, `Arc<T>`, a lock's guard: T's members, as they are.
            (Some(Wrapper::Deref), Step::Member { .. } | Step::Call { .. }) => {
                let v = inner(0);
                if matches!(v, Val::Unknown) || depth == 0 { v } else { self.step(fi, scope, v, step, depth - 1) }
            }
            (Some(Wrapper::Deref | Wrapper::Holds), Step::Unwrap) => inner(0),
            (Some(Wrapper::Holds), Step::Call { name, .. }) if UNWRAPS.contains(&name) => inner(0),
            (Some(Wrapper::Collection), Step::Index) => self.element(&w, depth),
            (Some(Wrapper::Collection | Wrapper::Iterates), Step::Call { name, .. }) if ELEMENT.contains(&name) => {
                self.element(&w, depth)
            }
            // `.iter()`, `.filter(…)`: the same elements.
            (Some(Wrapper::Collection | Wrapper::Iterates), Step::Call { name, .. }) if ADAPTERS.contains(&name) => {
                Val::Written(w)
            }
            (_, Step::Call { name, .. }) if SAME_VALUE.contains(&name) => Val::Written(w),
            _ => Val::Foreign,
        }
    }

    /// What a receiver expression names: a type whose members are called,
    /// or a package (Go) whose functions are.
    fn receiver(&self, fi: usize, scope: Option<DefIx>, text: &str, scoped: bool) -> Receiver {
        let mut val = self.eval(fi, scope, text, scoped, DEPTH);
        // `Box<Shape>`, Python's `Optional[Shape]`: the members are Shape's.
        for depth in (0..DEPTH).rev() {
            let Val::Written(w) = &val else { break };
            match TypeText::parse(&w.text) {
                Some(t) if wrapper(t.head) == Some(Wrapper::Deref) && !t.args.is_empty() => {
                    val = self.written(w.file, w.scope, w.self_ty, t.args[0], depth);
                }
                _ => break,
            }
        }
        match val {
            Val::Type(t) => Receiver::Type(t),
            Val::Package(pkg) => Receiver::Package(pkg),
            Val::Namespace(ns) => Receiver::Namespace(ns),
            // A typed name whose type is not the project's (`List<Item>
            // items`): its methods are not the project's either.
            Val::Written(_) | Val::Foreign => Receiver::External,
            Val::Unknown => Receiver::Unknown,
        }
    }

    /// The member of type `t` (or of the types it extends, nearest first,
    /// then of its companion: Scala's `object Item` beside `class Item`)
    /// called `name` that takes `args` arguments.
    fn member_call(&self, t: DefIx, name: &str, args: Option<u32>) -> Option<DefIx> {
        let companion = Lookup::get(&self.look.by_name, &self.p.fact(t).name.as_str()).iter().copied().find(|&c| {
            c != t
                && self.p.kind(c) == Kind::Module
                && self.p.fact(c).term
                && self.p.defs[c].parent == self.p.defs[t].parent
                && self.p.defs[c].file == self.p.defs[t].file
        });
        for t in self.lineage(t).into_iter().chain(companion) {
            // A namespace's members are looked up by their place, not kept
            // by owner.
            let level: Vec<DefIx> = if self.p.kind(t) == Kind::Module {
                Lookup::get(&self.look.by_name, &name)
                    .iter()
                    .copied()
                    .filter(|&d| self.p.defs[d].parent == Some(t) && self.p.kind(d).is_callable())
                    .collect()
            } else {
                Lookup::get(&self.look.by_owner, &(t, name))
                    .iter()
                    .copied()
                    .filter(|&d| self.p.kind(d).is_callable())
                    .collect()
            };
            match level[..] {
                [] => continue,
                [one] => return Some(one),
                _ => return self.fitting(&level, args),
            }
        }
        None
    }

    /// The definition a call means.
    fn call(&self, fi: usize, scope: Option<DefIx>, c: &crate::extract::Call) -> Option<DefIx> {
        let by_arity = |level: &[DefIx]| self.fitting(level, c.args);
        let callables =
            |defs: &[DefIx]| -> Vec<DefIx> { defs.iter().copied().filter(|&d| self.p.kind(d).is_callable()).collect() };
        // `new T(…)`: T's constructor that takes the arguments, or T itself
        // when it declares none.
        let construct = || {
            let t = match c.name.as_str() {
                // PHP's `new self(…)`, `new static(…)`; Ruby's `new(…)` in
                // a class method.
                "self" | "static" | "new" => self.enclosing_type(scope)?,
                _ => self.ty(
                    fi,
                    scope.unwrap_or(usize::MAX),
                    &Name { name: c.name.clone(), qualifier: c.receiver.clone().filter(|_| c.construct), span: c.span },
                )?,
            };
            let ctors: Vec<DefIx> = self
                .members
                .get(&t)
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .copied()
                .filter(|&m| self.p.kind(m) == Kind::Constructor)
                .collect();
            if ctors.is_empty() { Some(t) } else { by_arity(&ctors) }
        };
        if c.construct {
            return construct();
        }
        if c.read {
            return match c.receiver.as_deref().map(|r| self.receiver(fi, scope, r, false)) {
                // A property or a method read off a value of a known type.
                Some(Receiver::Type(t)) => self.member_call(t, &c.name, None),
                // A decorator: a callable or a value in scope.
                None => self.ladder(fi, scope, &c.name, Want::Value, |_| None),
                _ => None,
            };
        }
        let name = c.name.as_str();
        match c.receiver.as_deref().map(|r| self.receiver(fi, scope, r, c.scoped)) {
            None => self.ladder(fi, scope, name, Want::Callable, by_arity).or_else(|| {
                // `Order(…)` where nothing callable has that name: a
                // construction, in languages that need no `new` (Kotlin).
                let callable = Lookup::get(&self.look.by_name, &name).iter().any(|&d| self.p.kind(d).is_callable());
                if callable { None } else { construct() }
            }),
            Some(Receiver::Type(t)) => self.member_call(t, name, c.args),
            Some(Receiver::Package(pkg)) => {
                let level = callables(&self.exported(&pkg, name, REEXPORTS));
                if let [one] = level[..] { Some(one) } else { by_arity(&level) }
            }
            Some(Receiver::Namespace(ns)) => {
                let level = self.in_namespace(&ns, name, Kind::is_callable);
                if let [one] = level[..] { Some(one) } else { by_arity(&level) }
            }
            Some(Receiver::External) => None,
            // A scope written before the name that is neither a type nor a
            // namespace of the project (`std::sort`): not the project's.
            Some(Receiver::Unknown) if c.scoped => None,
            // An expression whose type is not written: a method of that
            // name defined once in the project, or none. A method of a
            // trait's impl (Rust's `impl Read for X { fn read… }`) answers
            // to a name every implementor has, the project's or not: never.
            // A name every standard collection, string or stream has
            // (`obj.get("kty")` on a dict) says nothing of the receiver.
            Some(Receiver::Unknown) if EVERYWHERE.contains(&name) => None,
            Some(Receiver::Unknown) => {
                let mut members = Lookup::get(&self.look.by_name, &name).iter().copied().filter(|&d| {
                    self.p.kind(d).is_callable()
                        && self.p.defs[d].parent.is_some_and(|t| self.p.kind(t).is_type())
                        && !self.p.fact(d).impl_of.as_ref().is_some_and(|(_, t)| t.is_some())
                });
                match (members.next(), members.next()) {
                    (Some(one), None) => Some(one),
                    _ => None,
                }
            }
        }
    }
}

/// What a call's receiver turned out to be.
enum Receiver {
    /// A type of the project.
    Type(DefIx),
    /// A package (Go) of the project, dotted as [`Lookup`] keys it.
    Package(String),
    /// A namespace of the project (C++), by name.
    Namespace(String),
    /// A value of a type written down but defined elsewhere.
    External,
    /// An expression whose type is not written down.
    Unknown,
}

/// How many re-exports (`pub use a::B;` in a module) a name is followed
/// through.
const REEXPORTS: u8 = 4;

/// How deep an expression is followed through the bindings and returns it
/// names (`let a = b.c(); a.d()` is two).
const DEPTH: u8 = 8;

/// What an expression's value is, as far as the resolver can tell.
#[derive(Debug, Clone)]
enum Val {
    /// A value of a type of the project (or the type itself, named).
    Type(DefIx),
    /// A value of a type written down but not the project's, kept as
    /// written so that what it wraps can be read.
    Written(Written),
    /// A package (Go) of the project.
    Package(String),
    /// A namespace (C++) of the project.
    Namespace(String),
    /// What a type the project does not define gives (`String::new()`,
    /// an unknown method of an external value): its members are not the
    /// project's.
    Foreign,
    /// Something not known.
    Unknown,
}

/// A type as written, and where: its arguments are read there.
#[derive(Debug, Clone)]
struct Written {
    text: String,
    file: usize,
    scope: Option<DefIx>,
    self_ty: Option<DefIx>,
}

/// What a wrapper of the standard libraries does with what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wrapper {
    /// Its members are what it points to (`Box<T>`, `Arc<T>`, a guard).
    Deref,
    /// It holds one value, given by an unwrap (`Option<T>`, `Promise<T>`,
    /// `Mutex<T>`).
    Holds,
    /// It holds many, given by index or a getter (the last argument: a
    /// map's value).
    Collection,
    /// It gives many, one at a time (the first argument, `Item = T`).
    Iterates,
}

/// The wrappers of Rust, TypeScript, Python, Java, Go and C#'s standard
/// libraries the resolver reads through.
fn wrapper(head: &str) -> Option<Wrapper> {
    Some(match head {
        // Python's `Optional[T]` is a T once checked; Java's `Optional<T>`'s
        // own methods (`get`, `orElseThrow`) are unwraps.
        "Box" | "Rc" | "Arc" | "MutexGuard" | "RwLockReadGuard" | "RwLockWriteGuard" | "Ref" | "RefMut" | "Cow"
        | "Pin" | "ManuallyDrop" | "MappedMutexGuard" | "Optional" => Wrapper::Deref,
        "Option" | "Result" | "LockResult" | "TryLockResult" | "Mutex" | "RwLock" | "RefCell" | "Cell" | "OnceCell"
        | "OnceLock" | "Weak" | "Promise" | "PromiseLike" | "Awaitable" | "Future" | "CompletableFuture" | "Task"
        | "ValueTask" | "AtomicReference" | "Readonly" => Wrapper::Holds,
        "[]" | "Vec" | "VecDeque" | "HashMap" | "BTreeMap" | "IndexMap" | "Array" | "ReadonlyArray" | "Map"
        | "Record" | "List" | "list" | "Sequence" | "Dict" | "dict" | "Mapping" | "ArrayList" | "LinkedList"
        | "Deque" | "map" | "IList" | "IReadOnlyList" | "Dictionary" | "IDictionary" => Wrapper::Collection,
        "Iterator"
        | "IntoIterator"
        | "DoubleEndedIterator"
        | "ExactSizeIterator"
        | "Iter"
        | "IterMut"
        | "IntoIter"
        | "Iterable"
        | "IterableIterator"
        | "Generator"
        | "AsyncIterator"
        | "AsyncIterable"
        | "Set"
        | "HashSet"
        | "BTreeSet"
        | "ReadonlySet"
        | "Collection"
        | "Stream"
        | "IEnumerable"
        | "ICollection"
        | "set"
        | "frozenset"
        | "Values"
        | "Keys" => Wrapper::Iterates,
        _ => return None,
    })
}

/// Methods that give what a wrapper holds.
const UNWRAPS: &[&str] = &[
    "unwrap",
    "expect",
    "unwrap_or",
    "unwrap_or_else",
    "unwrap_or_default",
    "unwrap_unchecked",
    "lock",
    "read",
    "write",
    "try_lock",
    "borrow",
    "borrow_mut",
    "get_mut",
    "get",
    "upgrade",
    "as_deref",
    "as_deref_mut",
    "into_inner",
    "orElseThrow",
];

/// Methods that give one element of a collection.
const ELEMENT: &[&str] = &[
    "get",
    "get_mut",
    "first",
    "last",
    "pop",
    "pop_front",
    "pop_back",
    "front",
    "back",
    "find",
    "at",
    "peek",
    "next",
    "next_back",
    "nth",
    "min",
    "max",
    "min_by_key",
    "max_by_key",
    "min_by",
    "max_by",
];

/// Methods of collections and iterators that give the same elements.
const ADAPTERS: &[&str] = &[
    "iter",
    "iter_mut",
    "into_iter",
    "values",
    "values_mut",
    "into_values",
    "filter",
    "rev",
    "skip",
    "take",
    "skip_while",
    "take_while",
    "peekable",
    "chain",
    "cloned",
    "copied",
    "by_ref",
    "step_by",
    "fuse",
    "inspect",
    "slice",
    "concat",
    "reverse",
    "sort",
    "toSorted",
    "toReversed",
    "sorted",
];

/// Methods the standard libraries' collections, strings and streams have
/// in every language: called on a value whose type cannot be told, such a
/// name is not taken to mean the one project method that has it.
const EVERYWHERE: &[&str] = &[
    "get",
    "set",
    "put",
    "add",
    "append",
    "extend",
    "insert",
    "remove",
    "pop",
    "push",
    "clear",
    "update",
    "keys",
    "values",
    "items",
    "entries",
    "contains",
    "has",
    "len",
    "size",
    "length",
    "count",
    "copy",
    "clone",
    "map",
    "filter",
    "find",
    "reduce",
    "join",
    "split",
    "replace",
    "format",
    "read",
    "write",
    "close",
    "open",
    "next",
    "iter",
    "toString",
    "to_string",
    "equals",
    "hashCode",
    "sort",
    "index",
    "indexOf",
    "slice",
    "lower",
    "upper",
    "strip",
    "trim",
    "startswith",
    "endswith",
    "encode",
    "decode",
    "then",
    "catch",
    "forEach",
    "includes",
    "push_str",
    "as_str",
    "is_empty",
    "unwrap",
    "expect",
    "sum",
    "min",
    "max",
    "any",
    "all",
    "first",
    "last",
];

/// Methods of every type that give a value of the same type.
const SAME_VALUE: &[&str] = &["clone", "to_owned", "as_ref", "as_mut", "default", "copy", "deepcopy"];

/// Methods that override (or implement) a method of a supertype: the
/// nearest one of the same name that takes the same number of parameters.
fn overrides(r: &Resolver<'_>, members: &HashMap<DefIx, Vec<DefIx>>) -> Vec<(DefIx, Vec<DefIx>)> {
    let p = r.p;
    let mut out = Vec::new();
    for (&t, ms) in members {
        if !p.kind(t).is_type() || !r.supers.contains_key(&t) {
            continue;
        }
        let lineage = r.lineage(t);
        // Callable members but constructors (a Kotlin `fun` in a class is a
        // function by its syntax, a method by its place).
        let method = |k: Kind| matches!(k, Kind::Method | Kind::Function);
        for &m in ms.iter().filter(|&&m| method(p.kind(m))) {
            let f = p.fact(m);
            let target = lineage[1..].iter().find_map(|s| {
                members.get(s)?.iter().copied().find(|&o| {
                    method(p.kind(o))
                        && p.fact(o).name == f.name
                        && p.fact(o).arity.map(|a| a.max) == f.arity.map(|a| a.max)
                })
            });
            if let Some(o) = target {
                out.push((m, vec![o]));
            }
        }
    }
    out
}

/// Go: a struct satisfies an interface of the project when it has every
/// method the interface names (by name; the types of their parameters are
/// not compared).
fn implicit_interfaces(p: &Project, members: &HashMap<DefIx, Vec<DefIx>>, supers: &mut HashMap<DefIx, Vec<DefIx>>) {
    let methods = |t: DefIx| -> Vec<&str> {
        let mut v: Vec<&str> = members
            .get(&t)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter(|&&m| p.kind(m).is_callable())
            .map(|&m| p.fact(m).name.as_str())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let go = |d: DefIx| p.sources[p.defs[d].file].lang.packages == Packages::ModulePath;
    let interfaces: Vec<(DefIx, Vec<&str>)> = (0..p.defs.len())
        .filter(|&d| go(d) && p.kind(d) == Kind::Interface)
        .map(|d| (d, methods(d)))
        .filter(|(_, m)| !m.is_empty())
        .collect();
    if interfaces.is_empty() {
        return;
    }
    for t in (0..p.defs.len()).filter(|&d| go(d) && matches!(p.kind(d), Kind::Struct | Kind::Type)) {
        let have = methods(t);
        if have.is_empty() {
            continue;
        }
        for (i, want) in &interfaces {
            if want.iter().all(|m| have.binary_search(m).is_ok()) {
                let e = supers.entry(t).or_default();
                if !e.contains(i) {
                    e.push(*i);
                }
            }
        }
    }
}

/// SCIP symbols: `<scheme> <manager> <module> . <descriptors>`, package
/// namespaces first, then each enclosing definition; overloads of a name
/// in one owner get `(+1)`, `(+2)`… in source order, as scip-java's do.
fn symbols(p: &mut Project) {
    // Each definition's own descriptor. A callable defined apart from its
    // type (C++'s `double Circle::area() const { … }`) is the member its
    // type declares with that name and parameters, not an overload: those
    // come after the rest.
    let mut overloads: HashMap<(Option<DefIx>, &[String], &str), u32> = HashMap::default();
    let mut declared: HashMap<(Option<DefIx>, &str), Vec<DefIx>> = HashMap::default();
    let mut own: Vec<String> = vec![String::new(); p.defs.len()];
    // Default values are written in the declaration only: count parameters.
    let params = |a: Option<crate::extract::Arity>| a.map(|a| a.max);
    let apart = |ix: DefIx| {
        p.fact(ix).kind.is_callable()
            && p.fact(ix).owner.is_some()
            && p.defs[ix].parent.is_some_and(|t| p.kind(t).is_type())
    };
    let mut twins: Vec<(DefIx, DefIx)> = Vec::new();
    // Object literals' properties, numbered per name in each file.
    let mut properties: HashMap<(usize, &str), u32> = HashMap::default();
    let mut taken: HashSet<DefIx> = HashSet::default();
    let (first, second): (Vec<DefIx>, Vec<DefIx>) = (0..p.defs.len()).partition(|&ix| !apart(ix));
    for ix in first.into_iter().chain(second) {
        let def = &p.defs[ix];
        let s = &p.sources[def.file];
        let f = p.fact(ix);
        let name =
            if f.kind == Kind::Constructor && !s.lang.constructor.is_empty() { s.lang.constructor } else { &f.name };
        // Paired one to one, and only when one declaration fits: two
        // overloads with as many parameters (told apart by their types)
        // leave the definition a symbol of its own.
        if apart(ix) {
            let fitting: Vec<DefIx> = declared
                .get(&(def.parent, name))
                .map(|ds| ds.iter().copied().filter(|d| params(p.fact(*d).arity) == params(f.arity)).collect())
                .unwrap_or_default();
            if let [same] = fitting[..]
                && taken.insert(same)
            {
                own[ix] = own[same].clone();
                twins.push((ix, same));
                continue;
            }
        }
        let mut d = String::new();
        if f.meta {
            let n = properties.entry((def.file, name)).or_insert(0);
            push_name(&mut d, &format!("{name}{n}"));
            d.push(':');
            *n += 1;
            own[ix] = d;
            continue;
        }
        push_name(&mut d, name);
        if f.kind == Kind::Macro {
            d.push('!');
        } else if f.term {
            d.push('.');
        } else if s.lang.impl_blocks && f.impl_of.is_some() && f.kind.is_callable() {
            // Rust has no overloads; the impl's descriptor (written with
            // the whole symbol, below) tells two impls' methods apart.
            d.push_str("().");
        } else if f.kind.is_callable() {
            let k = overloads.entry((def.parent, &s.package, name)).or_insert(0);
            match *k {
                0 => d.push_str("()."),
                n => d.push_str(&format!("(+{n}).")),
            }
            *k += 1;
            // Only a declaration in its type is a definition's twin (two
            // definitions apart, e.g. Go's per-platform files, stay two).
            if !apart(ix) {
                declared.entry((def.parent, name)).or_default().push(ix);
            }
        } else if f.kind.is_type() {
            d.push('#');
        } else if f.kind == Kind::Module {
            d.push('/');
        } else {
            d.push('.');
        }
        own[ix] = d;
    }
    // Whole symbols, parents first (a Go method's type may come later).
    let impl_spelled = |d: DefIx| p.sources[p.defs[d].file].lang.impl_blocks && p.fact(d).impl_of.is_some();
    let mut done: Vec<Option<String>> = vec![None; p.defs.len()];
    for ix in 0..p.defs.len() {
        let mut path = vec![ix];
        while let Some(par) = p.defs[*path.last().expect("not empty")].parent {
            if done[par].is_some() || path.len() > 64 || path.contains(&par) {
                break;
            }
            path.push(par);
        }
        for &d in path.iter().rev() {
            let mut prefix = match p.defs[d].parent.and_then(|par| done[par].clone()) {
                Some(parent) => parent,
                None => package_symbol(&p.sources[p.defs[d].file]),
            };
            // A member of a Rust impl block: `…/impl#[Circle][Shape]`
            // where its type is `…/Circle#` (or, for a type that is not
            // the project's, in the module the impl is in).
            if impl_spelled(d) {
                if let Some(t) = p.defs[d].parent.filter(|&t| p.kind(t).is_type()) {
                    prefix.truncate(prefix.len().saturating_sub(own[t].len()));
                }
                let (of, tr) = p.fact(d).impl_of.as_ref().expect("impl_spelled");
                prefix.push_str("impl#[");
                push_name(&mut prefix, of);
                prefix.push(']');
                if let Some(tr) = tr {
                    prefix.push('[');
                    push_name(&mut prefix, tr);
                    prefix.push(']');
                }
            }
            done[d] = Some(prefix + &own[d]);
        }
    }
    for (def, sym) in p.defs.iter_mut().zip(done) {
        def.symbol = sym.unwrap_or_default();
    }
    for (body, declaration) in twins {
        p.defs[body].twin_of = Some(declaration);
    }
}

/// The symbol of a file's package namespace (its top-level definitions'
/// prefix): `<scheme> <manager> <module> . <package descriptors>`.
pub fn package_symbol(s: &Source) -> String {
    let mut out = format!("{} {} {} . ", s.lang.scheme, s.lang.manager, escape_field(&s.module));
    for part in &s.package {
        push_name(&mut out, part);
        out.push('/');
    }
    out
}

/// A package field: spaces doubled, empty as `.`.
fn escape_field(s: &str) -> String {
    if s.is_empty() { ".".into() } else { s.replace(' ', "  ") }
}

/// A descriptor name: plain when simple, else in backticks.
fn push_name(out: &mut String, name: &str) {
    if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '+' | '-' | '$')) {
        out.push_str(name);
    } else {
        out.push('`');
        out.push_str(&name.replace('`', "``"));
        out.push('`');
    }
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

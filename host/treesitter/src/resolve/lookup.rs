//! What a name may mean, by where it is defined: the indexes every rung of
//! the resolution ladder reads, and the typed names of each scope.

use super::*;

/// Types and modules by name: what a definition declared apart from its
/// owner (Go's receivers, C++'s `Type::method`, Ruby's `class
/// Shop::Gift`, a Rust `impl`) is placed in. Only these: tabled on every
/// resolve of a part that has such definitions, a table of every
/// definition cost a C or C++ edit on a large tree 20 ms.
pub(super) struct Names(HashMap<String, Defs>);

/// Definitions of one name (in one place): most names have one, held
/// without an allocation of its own.
pub(super) type Defs = smallvec::SmallVec<[DefIx; 1]>;

/// Definitions by key, held between edits (a large tree's lookups have a
/// key for most of its hundreds of thousands of definitions): a key's one
/// definition is its value itself, several a list apart. 8 bytes a value,
/// where a list of its own takes 32.
#[derive(Clone, Default)]
pub(super) struct Table<K> {
    /// A definition, or [`SEVERAL`] and the number of its list in `several`.
    map: HashMap<K, usize>,
    several: Vec<Vec<DefIx>>,
}

/// The bit of a [`Table`]'s value that makes it a list's number.
const SEVERAL: usize = 1 << (usize::BITS - 1);

impl<K: std::hash::Hash + Eq> Table<K> {
    fn with_capacity(n: usize) -> Table<K> {
        Table { map: HashMap::with_capacity_and_hasher(n, Default::default()), several: Vec::new() }
    }

    /// Adds definition `d` under `key`, after those it has.
    fn push(&mut self, key: K, d: DefIx) {
        match self.map.entry(key) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(d);
            }
            std::collections::hash_map::Entry::Occupied(mut e) => {
                let v = *e.get();
                if v & SEVERAL == 0 {
                    e.insert(SEVERAL | self.several.len());
                    self.several.push(vec![v, d]);
                } else {
                    self.several[v & !SEVERAL].push(d);
                }
            }
        }
    }

    /// The definitions under `key`, in the order they were added.
    pub(super) fn get(&self, key: &K) -> &[DefIx] {
        match self.map.get(key) {
            None => &[],
            Some(&v) if v & SEVERAL != 0 => &self.several[v & !SEVERAL],
            Some(v) => std::slice::from_ref(v),
        }
    }
}

impl Names {
    pub(super) fn of(p: &Project) -> Names {
        let mut m: HashMap<String, Defs> = HashMap::default();
        for ix in (0..p.defs.len()).filter(|&ix| p.kind(ix).is_type() || p.kind(ix) == Kind::Module) {
            // Each name copied once, not once a definition.
            let name = p.fact(ix).name();
            match m.get_mut(name) {
                Some(defs) => defs.push(ix),
                None => {
                    m.insert(name.to_owned(), smallvec::smallvec![ix]);
                }
            }
        }
        Names(m)
    }

    pub(super) fn get(&self, name: &str) -> &[DefIx] {
        self.0.get(name).map_or(&[], |d| d.as_slice())
    }
}

/// What a name may mean, by where it is defined: the indexes every rung of
/// the resolution ladder reads, so a name costs its own definitions, never
/// every definition of the project. It owns its names (interned), so that
/// a resolve after an edit that keeps every definition reuses it.
#[derive(Clone, Default)]
pub(super) struct Lookup {
    /// Each name defined, numbered (and the names of definitions a past
    /// resolve of the same workspace had: numbers are never taken back).
    names: HashMap<Box<str>, u32>,
    /// Each definition's name number, by definition: an unchanged file's
    /// copied from the last resolve's, so that an edit looks up the names
    /// of its own files alone.
    name_of: Vec<u32>,
    /// Everything by name number.
    by_name: Vec<Defs>,
    /// Members by their owner and name.
    by_owner: Table<(DefIx, u32)>,
    /// Top-level definitions by file and name.
    by_file: Table<(usize, u32)>,
    /// Top-level definitions by package (dotted) and name.
    by_package: Table<(u32, u32)>,
    /// Each package (dotted) met, numbered: lookups by package allocate
    /// nothing.
    pub(super) packages: HashMap<String, u32>,
    /// Each file's package number.
    pub(super) file_package: Vec<u32>,
    /// The files of each package number.
    pub(super) package_files: HashMap<u32, Vec<usize>>,
}

/// The definitions a use may mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Want {
    /// Types (header names, written types, receivers).
    Type,
    /// Callables.
    Callable,
    /// Callables and named values (a decorator: a function, or a variable
    /// bound to one).
    Value,
    /// A Ruby header's name: a superclass, or a module mixed in
    /// (`include Sortable`).
    Mixin,
}

impl Want {
    pub(super) fn admits(self, k: Kind) -> bool {
        match self {
            Want::Type => k.is_type(),
            Want::Callable => k.is_callable(),
            Want::Value => k.is_callable() || matches!(k, Kind::Variable | Kind::Constant),
            Want::Mixin => k.is_type() || k == Kind::Module,
        }
    }
}

thread_local! {
    /// The names the file being resolved on this thread has looked up, as
    /// [`name_key`]s, while it is recorded ([`recording`]).
    static READS: std::cell::RefCell<Option<Vec<u64>>> = const { std::cell::RefCell::new(None) };
}

/// A name as the record of reads keeps it: a hash (two names that collide
/// only make a file be resolved again when it need not be).
pub(super) fn name_key(name: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x5167_9057).hash_one(name)
}

/// Notes that the use being resolved looked up `name`.
pub(super) fn read(name: &str) {
    read_key(name_key(name));
}

/// Notes a read recorded by its key.
pub(super) fn read_key(key: u64) {
    READS.with_borrow_mut(|r| {
        if let Some(r) = r {
            r.push(key);
        }
    });
}

/// The key of reading file `path`'s imports (a name seen from that file).
pub(super) fn imports_key(path: &str) -> u64 {
    name_key(path) ^ 0x1d3b_44a9_90e6_2f01
}

/// The key of reading what package `pkg`'s files import for others (a
/// re-export: Rust's `pub use`, a Python package's `__init__`).
pub(super) fn reexports_key(pkg: &str) -> u64 {
    name_key(pkg) ^ 0x6c0f_a1e5_3b27_d894
}

/// Runs `f` recording every name it looks up; returns what `f` gives and
/// the names, each once.
pub(super) fn recording<T>(f: impl FnOnce() -> T) -> (T, Vec<u64>) {
    let outer = READS.replace(Some(Vec::new()));
    let out = f();
    let mut reads = READS.replace(outer).unwrap_or_default();
    reads.sort_unstable();
    reads.dedup();
    // Kept until the next resolve: as long as the names, not the lookups.
    reads.shrink_to_fit();
    (out, reads)
}

impl Lookup {
    /// The number of a name some definition has.
    pub(super) fn number(&self, name: &str) -> Option<u32> {
        self.names.get(name).copied()
    }

    /// Every definition called `name`.
    pub(super) fn named(&self, name: &str) -> &[DefIx] {
        read(name);
        self.number(name).map_or(&[], |n| self.by_name[n as usize].as_slice())
    }

    /// The members of `t` called `name`.
    pub(super) fn owned(&self, t: DefIx, name: &str) -> &[DefIx] {
        read(name);
        self.members_numbered(t, self.number(name))
    }

    /// [`Lookup::owned`] by the name's number ([`Lookup::number`]: one
    /// hash of a name looked up in several owners),
    /// not recorded as read (what a type's methods override, read for the
    /// whole project).
    pub(super) fn members_numbered(&self, t: DefIx, name: Option<u32>) -> &[DefIx] {
        name.map_or(&[], |n| self.by_owner.get(&(t, n)))
    }

    /// The top-level definitions of file `fi` called `name`.
    pub(super) fn in_file(&self, fi: usize, name: &str) -> &[DefIx] {
        read(name);
        self.number(name).map_or(&[], |n| self.by_file.get(&(fi, n)))
    }

    /// The lookups of `p`; given the `last` resolve of the same files and
    /// its lookups (taken), the names of the files that did not change are
    /// not looked up again.
    pub(super) fn of(p: &Project, last: Option<(&Project, Lookup)>) -> Lookup {
        let mut packages: HashMap<String, u32> = HashMap::default();
        let file_package: Vec<u32> = p
            .sources
            .iter()
            .map(|s| {
                let n = packages.len() as u32;
                *packages.entry(s.package.join(".")).or_insert(n)
            })
            .collect();
        source_roots(p, &mut packages);
        let mut package_files: HashMap<u32, Vec<usize>> = HashMap::default();
        for (f, &n) in file_package.iter().enumerate() {
            package_files.entry(n).or_default().push(f);
        }
        let (names, name_of) = numbered(p, last);
        let mut l = Lookup {
            by_name: vec![Defs::new(); names.len()],
            names,
            name_of,
            // Sized to the definitions: grown instead, the map rehashes a
            // large project's keys many times over.
            by_owner: Table::with_capacity(p.defs.len()),
            by_file: Table::with_capacity(0),
            by_package: Table::with_capacity(0),
            packages,
            file_package,
            package_files,
        };
        for (ix, d) in p.defs.iter().enumerate() {
            // A member defined apart is found as its declaration; one whose
            // type (or module: Ruby's `class Shop::Gift`) is not found (`Outer::Inner::f`, a type not indexed) is
            // a scope of its own, never what a plain name means.
            let placed = |t: DefIx| p.kind(t).is_type() || p.kind(t) == Kind::Module;
            if d.twin_of().is_some() || (p.fact(ix).owner().is_some() && !d.parent().is_some_and(placed)) {
                continue;
            }
            let n = l.name_of[ix];
            l.by_name[n as usize].push(ix);
            // A Ruby module's names are its own (its mixins' are looked up
            // through them) as well as its file's, as a namespace's are.
            match d.parent() {
                Some(par) if p.kind(par) != Kind::Module => l.by_owner.push((par, n), ix),
                _ => {
                    if let Some(par) = d.parent().filter(|_| p.sources[d.file()].lang.rules.nested_modules) {
                        l.by_owner.push((par, n), ix);
                    }
                    l.by_file.push((d.file(), n), ix);
                    l.by_package.push((l.file_package[d.file()], n), ix);
                }
            }
        }
        l
    }

    /// The top-level definitions called `name` of the package `pkg`.
    pub(super) fn in_package(&self, pkg: &str, name: &str) -> &[DefIx] {
        match self.packages.get(pkg) {
            Some(&n) => self.in_package_of(n, name),
            None => &[],
        }
    }

    /// The same, by package number.
    pub(super) fn in_package_of(&self, pkg: u32, name: &str) -> &[DefIx] {
        read(name);
        self.number(name).map_or(&[], |n| self.by_package.get(&(pkg, n)))
    }

    pub(super) fn get<'a, K: std::hash::Hash + Eq, V: AsRef<[DefIx]>>(map: &'a HashMap<K, V>, key: &K) -> &'a [DefIx] {
        map.get(key).map_or(&[], |d| d.as_ref())
    }
}

/// Every definition's name numbered (by definition), with the numbers:
/// the `last` resolve's, its unchanged files' numbers copied, where it is
/// of the same files; otherwise made afresh.
fn numbered(p: &Project, last: Option<(&Project, Lookup)>) -> (HashMap<Box<str>, u32>, Vec<u32>) {
    let (mut names, last) = match last {
        Some((q, l)) if q.sources.len() == p.sources.len() && l.name_of.len() == q.defs.len() => {
            (l.names, Some((q, l.name_of)))
        }
        _ => (HashMap::default(), None),
    };
    let mut name_of: Vec<u32> = Vec::with_capacity(p.defs.len());
    for (f, s) in p.sources.iter().enumerate() {
        if let Some((q, was)) = &last
            && std::sync::Arc::ptr_eq(&q.sources[f], s)
        {
            name_of.extend_from_slice(&was[q.defs_of_file(f)]);
            continue;
        }
        for d in &s.facts.defs {
            let name = d.name();
            let n = match names.get(name) {
                Some(&n) => n,
                None => {
                    let n = u32::try_from(names.len()).expect("fewer than 2^32 names");
                    names.insert(name.into(), n);
                    n
                }
            };
            name_of.push(n);
        }
    }
    (names, name_of)
}

/// A Python project's packages as they are imported from a source root
/// (the `src/` of a src-layout project, a directory that is no package of
/// its own): `src.click.testing` is what a test's `import click.testing`
/// names once the project is installed. The package keeps its name as
/// scip-python spells it (`src.click.testing`, in ids); the name without
/// the root finds it too, where no package has that name already and no
/// other root gives it.
fn source_roots(p: &Project, packages: &mut HashMap<String, u32>) {
    let python: Vec<&str> = p
        .sources
        .iter()
        .filter(|s| s.lang.packages == crate::languages::Packages::ModuleFile)
        .filter_map(|s| s.package.first().map(String::as_str))
        .collect();
    let mut found: HashMap<String, Option<u32>> = HashMap::default();
    for module in python {
        let Some((root, rest)) = module.split_once('.') else { continue };
        // A root is no package: no `root/__init__.py`, no module `root.py`.
        if packages.contains_key(root) || packages.contains_key(rest) {
            continue;
        }
        let n = packages[module];
        found.entry(rest.to_owned()).and_modify(|m| *m = m.filter(|&m| m == n)).or_insert(Some(n));
    }
    packages.extend(found.into_iter().filter_map(|(name, n)| Some((name, n?))));
}

pub(super) fn members_of(p: &Project) -> HashMap<DefIx, Vec<DefIx>> {
    // About one parent in four definitions (a type's members, a method's
    // locals): sized so, the map seldom rehashes.
    let mut m: HashMap<DefIx, Vec<DefIx>> = HashMap::with_capacity_and_hasher(p.defs.len() / 4, Default::default());
    for (ix, d) in p.defs.iter().enumerate() {
        if d.twin_of().is_some() {
            continue;
        }
        if let Some(parent) = d.parent() {
            m.entry(parent).or_default().push(ix);
        }
    }
    m
}

/// A scope of typed names: the file, and the innermost type or callable
/// around them (none: the file's top level).
pub(super) type Scope = (usize, Option<DefIx>);

/// What a typed name is bound to.
#[derive(Debug, Clone)]
pub(super) enum Binding {
    /// A written type: its name, and the whole type as written when the
    /// query gives it (`Arc<Mutex<State>>`).
    Type(Name, Option<String>),
    /// What an expression gives (`let o = Order::new(…)`), read when a call
    /// needs it, as seen from where the expression is (its bytes).
    Value(String, (usize, usize)),
    /// An element of what an expression gives (`for a in cmd.args()`).
    Element(String, (usize, usize)),
}

/// Typed names (variable, what it is bound to) by their scope.
/// A typed name: the name, what it is bound to, and the function literal
/// it is declared in (its bytes), if any.
pub(super) type TypedName = (String, Binding, Option<(usize, usize)>);

/// Each file's typed names, by the definition they are in (none: the
/// file's top level): read from a file's facts when first asked, so that a
/// resolve of a few files reads the typed names of those and of the types
/// they reach, not every file's.
pub(super) struct Vars(Vec<std::sync::OnceLock<HashMap<Option<DefIx>, Vec<TypedName>>>>);

impl Vars {
    /// The typed names of `p`'s files, none read yet.
    pub(super) fn of(p: &Project) -> Vars {
        Vars((0..p.sources.len()).map(|_| std::sync::OnceLock::new()).collect())
    }

    /// The typed names in scope `(file, definition)` of `p`.
    pub(super) fn get<'v>(&'v self, p: &Project, (fi, scope): Scope) -> Option<&'v Vec<TypedName>> {
        self.0.get(fi)?.get_or_init(|| Vars::of_file(p, fi)).get(&scope)
    }

    fn of_file(p: &Project, fi: usize) -> HashMap<Option<DefIx>, Vec<TypedName>> {
        let mut m: HashMap<Option<DefIx>, Vec<TypedName>> = HashMap::default();
        // What collections hold, by scope: an element of one (`for shape in
        // shapes`) is of that type.
        let mut holds: HashMap<Option<DefIx>, Vec<(String, Name)>> = HashMap::default();
        for v in &p.sources[fi].body.vars.unpack() {
            let scope = if v.member {
                innermost_in(p, fi, &v.ty.span, |k| k.is_type())
            } else {
                innermost_in(p, fi, &v.ty.span, |k| k.is_scope())
            };
            let bound = match v.typed {
                Typed::Is => Binding::Type(v.ty.clone(), v.written.clone()),
                Typed::Value => Binding::Value(v.ty.name.clone(), v.at),
                Typed::Element => Binding::Element(v.ty.name.clone(), v.at),
                Typed::Holds => {
                    holds.entry(scope).or_default().push((v.name.clone(), v.ty.clone()));
                    continue;
                }
                Typed::Like => {
                    let held = holds.get(&scope).and_then(|h| h.iter().rev().find(|(n, _)| *n == v.ty.name));
                    let Some((_, ty)) = held else { continue };
                    Binding::Type(Name { span: v.ty.span, ..ty.clone() }, None)
                }
            };
            m.entry(scope).or_default().push((v.name.clone(), bound, v.within));
        }
        m
    }
}

/// The innermost definition of file `fi` around `span` whose kind passes.
pub(super) fn innermost_in(p: &Project, fi: usize, span: &Span, pass: impl Fn(Kind) -> bool) -> Option<DefIx> {
    let defs = &p.sources[fi].facts.defs;
    // Definitions are sorted by start; the innermost container starts last.
    let upto = defs.partition_point(|d| d.span.bytes.0 <= span.bytes.0);
    let base = p.first_def[fi];
    (0..upto)
        .rev()
        .find(|&i| defs[i].span.contains(span) && defs[i].name_span != *span && pass(defs[i].kind))
        .map(|i| base + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key's definitions come back in the order they were added, one
    /// held as the value itself, several as a list; a key never added has
    /// none.
    #[test]
    fn a_table_gives_each_key_its_definitions_in_order() {
        let mut t: Table<(usize, u32)> = Table::with_capacity(4);
        t.push((1, 7), 40);
        t.push((2, 7), 41);
        t.push((1, 7), 3);
        t.push((1, 7), 99);
        t.push((3, 0), 0);
        assert_eq!(t.get(&(1, 7)), [40, 3, 99]);
        assert_eq!(t.get(&(2, 7)), [41]);
        assert_eq!(t.get(&(3, 0)), [0]);
        assert_eq!(t.get(&(9, 9)), [] as [DefIx; 0]);
    }
}

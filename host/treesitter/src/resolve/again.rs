//! Resolving a project again after a few of its files changed, without
//! resolving every file's uses again.
//!
//! Everything but the uses is cheap and global (definitions, symbols, the
//! lookups, headers), so it is made again whole. The uses are most of the
//! cost, and each file's depend on the names it looked up: while a file's
//! uses are resolved, every name it looks up is recorded ([`super::lookup`]'s
//! reads). After an edit, the names whose meaning may have changed are
//! gathered from what the changed files define ([`dirty_names`]); a file
//! that looked none of them up, and none of whose uses points into what
//! changed, keeps its uses, renumbered. Every other file is resolved again.
//!
//! What this cannot follow by names falls back to resolving every file:
//! a change of what the project's types extend or implement (a header, a
//! Go method set that satisfies another interface), of its extension
//! functions, of its packages or the names their files declare, or of a
//! type written in parts. (A C or C++ function-like macro expands into
//! what its body calls after every file's uses are resolved: a file that
//! calls a macro of a changed file keeps its uses, and its document is
//! written again, `uses.rs`.) The workspace's tests check, edit after
//! random edit, that what this gives is what resolving from scratch gives.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::lookup::{imports_key, name_key, reexports_key};
use super::*;

/// One file's uses as resolved, with the names resolving them looked up.
#[derive(Debug, Clone, Default)]
pub(super) struct FileUses {
    pub(super) uses: Vec<Use>,
    pub(super) unbound: Vec<Unbound>,
    pub(super) resolved: usize,
    pub(super) ambiguous: usize,
    /// The names looked up, as [`name_key`]s, sorted.
    pub(super) reads: Vec<u64>,
    /// The uses in the body of a C or C++ function-like macro of the file:
    /// (the macro, what the use means), in the uses' order.
    pub(super) expansions: Vec<(DefIx, DefIx)>,
}

/// What a resolve keeps for the next one: each file's uses, and the shape
/// of what every file's uses depend on globally.
#[derive(Debug, Default)]
pub struct Memo {
    /// Each file's uses, shared with the project resolved until it is
    /// written ([`Project::keep_for_next`]).
    pub(super) files: Arc<Vec<FileUses>>,
    pub(super) shape: Shape,
    /// What the uses were resolved against (lookups, supertypes,
    /// overrides), for an edit that keeps every definition.
    pub(super) warm: Option<Box<super::warm::Warm>>,
}

/// What the uses of every file may depend on, by symbol (as
/// [`name_key`]s): when any of it changes, every file is resolved again.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Shape {
    /// Each type with its supertypes, nearest first (calls look up through
    /// them in that order).
    supers: BTreeSet<(u64, Vec<u64>)>,
    /// (type, extension function).
    extensions: BTreeSet<(u64, u64)>,
    /// (type the project does not define, extension function).
    foreign_extensions: BTreeSet<(String, u64)>,
    /// (later part, first part) of types written in parts.
    partial: BTreeSet<(u64, u64)>,
    /// Each package with the package name its first file declares.
    packages: BTreeSet<(String, Option<String>)>,
}

impl Shape {
    pub(super) fn of(
        p: &Project,
        supers: &HashMap<DefIx, Vec<DefIx>>,
        extensions: &HashMap<DefIx, Vec<DefIx>>,
        foreign_extensions: &HashMap<String, Vec<DefIx>>,
        partial: &HashMap<DefIx, DefIx>,
        look: &Lookup,
    ) -> Shape {
        let sym = |d: &DefIx| name_key(p.symbol(*d));
        let pairs = |m: &HashMap<DefIx, Vec<DefIx>>| -> BTreeSet<(u64, u64)> {
            m.iter().flat_map(|(k, vs)| vs.iter().map(move |v| (sym(k), sym(v)))).collect()
        };
        let packages = look
            .packages
            .iter()
            .map(|(name, n)| {
                let first = Lookup::get(&look.package_files, n).first();
                (name.clone(), first.and_then(|&f| p.sources[f].facts.package.clone()))
            })
            .collect();
        Shape {
            supers: supers.iter().map(|(k, vs)| (sym(k), vs.iter().map(sym).collect())).collect(),
            extensions: pairs(extensions),
            foreign_extensions: foreign_extensions
                .iter()
                .flat_map(|(k, vs)| vs.iter().map(move |v| (k.clone(), sym(v))))
                .collect(),
            partial: partial.iter().map(|(a, b)| (sym(a), sym(b))).collect(),
            packages,
        }
    }
}

/// What to do with each file of the new project: resolve it again, or keep
/// its old uses (renumbered).
pub(super) enum Plan {
    /// Resolve every file.
    All(&'static str),
    /// Per new file: its uses from the last resolve, renumbered, or `None`
    /// to resolve it again.
    Some(Vec<Option<FileUses>>),
}

/// What each file of `p` needs, given the last resolve `old` and its memo
/// (whose files' uses it takes), once the shape is known to be the same.
pub(super) fn plan(old: &Project, memo: Memo, p: &Project) -> Plan {
    let Memo { files: memo_files, warm, .. } = memo;
    drop_aside(warm);
    // Its own once the last project was written; copied otherwise.
    let memo_files = Arc::try_unwrap(memo_files).unwrap_or_else(|shared| shared.as_ref().clone());
    if memo_files.len() != old.sources.len() {
        return Plan::All("no record of the last resolve");
    }
    let old_at: HashMap<&str, usize> = old.sources.iter().enumerate().map(|(i, s)| (s.path.as_str(), i)).collect();
    let new_at: HashMap<&str, usize> = p.sources.iter().enumerate().map(|(i, s)| (s.path.as_str(), i)).collect();
    // Each new file's old self, when it is the very same reading.
    let same: Vec<Option<usize>> = p
        .sources
        .iter()
        .map(|s| old_at.get(s.path.as_str()).copied().filter(|&o| Arc::ptr_eq(&old.sources[o], s)))
        .collect();
    let mut unchanged_old = vec![false; old.sources.len()];
    for o in same.iter().flatten() {
        unchanged_old[*o] = true;
    }
    // The files that changed, were added or went, old side and new side.
    let changed_old: Vec<usize> = (0..old.sources.len()).filter(|&o| !unchanged_old[o]).collect();
    let changed_new: Vec<usize> = (0..p.sources.len()).filter(|&f| same[f].is_none()).collect();
    let mut dirty = dirty_names(old, &changed_old, p, &changed_new, &old_at, &new_at);
    // A definition of an unchanged file declared apart from its type (Go's
    // receivers, C++'s `Type::f`, a Rust `impl`) finds its type by name in
    // the whole project: what changed elsewhere may move it to another
    // type, or to none.
    for (nf, o) in same.iter().enumerate() {
        let Some(o) = *o else { continue };
        for (at, d) in p.sources[nf].facts.defs.iter().enumerate() {
            if d.owner().is_none() {
                continue;
            }
            let (a, b) = (old.first_def[o] + at, p.first_def[nf] + at);
            if !same_parent(old, a, p, b) {
                dirty.insert(name_key(d.name()));
                for (q, x) in [(old, old.defs[a].parent()), (p, p.defs[b].parent())] {
                    if let Some(t) = x {
                        dirty.insert(name_key(q.fact(t).name()));
                    }
                }
            }
        }
    }
    let new_file: Vec<Option<usize>> = old.sources.iter().map(|s| new_at.get(s.path.as_str()).copied()).collect();
    // The definitions of the changed files, by symbol.
    let mut by_symbol: HashMap<(usize, &str), Vec<DefIx>> = HashMap::default();
    for &nf in &changed_new {
        for n in p.defs_of_file(nf) {
            by_symbol.entry((nf, p.symbol(n))).or_default().push(n);
        }
    }
    // An old definition's new number: by place in an unchanged file; by
    // symbol in a changed one, when exactly one definition of the same
    // kind has it there and it reads the same.
    let new_ix = |d: DefIx| -> Option<DefIx> {
        let def = &old.defs[d];
        let nf = new_file[def.file()]?;
        if unchanged_old[def.file()] {
            return Some(p.first_def[nf] + def.at());
        }
        match by_symbol.get(&(nf, old.symbol(d))).map(Vec::as_slice) {
            Some(&[n]) if same_def(old.fact(d), p.fact(n)) => Some(n),
            _ => None,
        }
    };
    // Each new file's old uses moved to its place, then checked and
    // renumbered per file in parallel (a large project's are millions).
    let mut files: Vec<Option<FileUses>> = memo_files.into_iter().map(Some).collect();
    let placed: Vec<Option<FileUses>> = same.iter().map(|o| files[(*o)?].take()).collect();
    drop_aside(files);
    let keep = placed
        .into_par_iter()
        .map(|before| {
            let mut before = before?;
            if before.reads.iter().any(|r| dirty.contains(r)) {
                return None;
            }
            for u in &mut before.uses {
                *u = u.of(new_ix(u.target())?);
            }
            for (m, target) in &mut before.expansions {
                (*m, *target) = (new_ix(*m)?, new_ix(*target)?);
            }
            Some(before)
        })
        .collect();
    Plan::Some(keep)
}

/// The names whose meaning the change may have changed, as [`name_key`]s:
/// of each definition added, gone or declared otherwise (and of its type,
/// for a constructor or a member declared in another file), of each field
/// or file-level name bound otherwise; for a file whose imports changed,
/// the keys of what is seen from it and of what its package re-exports;
/// for a file whose package changed, everything it declares.
fn dirty_names(
    old: &Project,
    changed_old: &[usize],
    p: &Project,
    changed_new: &[usize],
    old_at: &HashMap<&str, usize>,
    new_at: &HashMap<&str, usize>,
) -> HashSet<u64> {
    let mut dirty: HashSet<u64> = HashSet::default();
    // Each side's definitions of a file, by symbol.
    fn defs_of(q: &Project, f: usize) -> HashMap<&str, Vec<DefIx>> {
        let mut m: HashMap<&str, Vec<DefIx>> = HashMap::default();
        for d in q.defs_of_file(f) {
            m.entry(q.symbol(d)).or_default().push(d);
        }
        m
    }
    // A definition's name, and its type's where the type's members depend
    // on it from elsewhere.
    fn mark(q: &Project, d: DefIx, dirty: &mut HashSet<u64>) {
        dirty.insert(name_key(q.fact(d).name()));
        if let Some(t) = q.defs[d].parent()
            && (q.kind(d) == Kind::Constructor || q.defs[t].file() != q.defs[d].file())
        {
            dirty.insert(name_key(q.fact(t).name()));
        }
    }
    // Fields and file-level names, with what they are bound to, in the
    // order they are written (the last binding of a name is the one read);
    // an element of a collection with what the collection holds.
    fn bindings(q: &Project, f: usize) -> Vec<(String, String)> {
        let s = &q.sources[f];
        let mut held: HashMap<(String, String), String> = HashMap::default();
        s.body
            .vars
            .unpack()
            .iter()
            .filter_map(|v| {
                let scope = innermost_in(q, f, &v.ty.span, |k| k.is_scope());
                let scope = match scope {
                    Some(d) if q.kind(d).is_callable() => return None,
                    Some(d) => q.symbol(d).to_owned(),
                    None => String::new(),
                };
                let ty = format!("{} {:?} {} {:?}", v.ty.name, v.ty.qualifier, v.ty.generics, v.written);
                let said = match v.typed {
                    Typed::Holds => {
                        held.insert((scope.clone(), v.name.clone()), ty.clone());
                        format!("{scope} holds {ty}")
                    }
                    Typed::Like => {
                        let of = held.get(&(scope.clone(), v.ty.name.clone())).cloned().unwrap_or_default();
                        format!("{scope} like {ty} of {of}")
                    }
                    t => format!("{scope} {t:?} {ty} {}", v.within.is_some()),
                };
                Some((v.name.clone(), said))
            })
            .collect()
    }
    // What resolving reads of a file's imports: names seen from it, and
    // what its package re-exports. (The names it imports are no key: no
    // other file reads them but through these two.)
    let seen_from = |q: &Project, f: usize, dirty: &mut HashSet<u64>| {
        dirty.insert(imports_key(&q.sources[f].path));
        dirty.insert(reexports_key(&q.sources[f].package.join(".")));
    };
    let everything = |q: &Project, f: usize, dirty: &mut HashSet<u64>| {
        for d in q.defs_of_file(f) {
            mark(q, d, dirty);
        }
        for (name, _) in bindings(q, f) {
            dirty.insert(name_key(&name));
        }
        seen_from(q, f, dirty);
    };
    for &o in changed_old {
        let path = old.sources[o].path.as_str();
        let Some(&n) = new_at.get(path) else {
            // Gone.
            everything(old, o, &mut dirty);
            continue;
        };
        let (a, b) = (&old.sources[o].facts, &p.sources[n].facts);
        let imports =
            |f: &crate::extract::Facts| f.imports.iter().map(|i| (i.path.clone(), i.alias.clone())).collect::<Vec<_>>();
        if old.sources[o].package != p.sources[n].package {
            everything(old, o, &mut dirty);
            everything(p, n, &mut dirty);
            continue;
        }
        if imports(a) != imports(b) {
            // What is seen from the file, and what its package exports.
            seen_from(old, o, &mut dirty);
            seen_from(p, n, &mut dirty);
        }
        let (before, after) = (defs_of(old, o), defs_of(p, n));
        for (sym, ds) in &before {
            let same = after.get(sym).is_some_and(|ns| {
                ns.len() == ds.len()
                    && ds.iter().zip(ns).all(|(&d, &e)| same_def(old.fact(d), p.fact(e)) && same_parent(old, d, p, e))
            });
            if !same {
                ds.iter().for_each(|&d| mark(old, d, &mut dirty));
                after.get(sym).into_iter().flatten().for_each(|&e| mark(p, e, &mut dirty));
            }
        }
        for (sym, ns) in &after {
            if !before.contains_key(sym) {
                ns.iter().for_each(|&e| mark(p, e, &mut dirty));
            }
        }
        let (vb, va) = (bindings(old, o), bindings(p, n));
        if vb != va {
            // Each name's bindings, in order, before and after.
            let by_name = |v: &[(String, String)]| {
                let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
                for (name, said) in v {
                    m.entry(name.clone()).or_default().push(said.clone());
                }
                m
            };
            let (before, after) = (by_name(&vb), by_name(&va));
            for name in before.keys().chain(after.keys()) {
                if before.get(name) != after.get(name) {
                    dirty.insert(name_key(name));
                }
            }
        }
    }
    for &n in changed_new {
        if !old_at.contains_key(p.sources[n].path.as_str()) {
            // Added.
            everything(p, n, &mut dirty);
        }
    }
    dirty
}

/// Whether two readings of a definition declare the same thing (where it
/// is aside).
fn same_def(a: &crate::extract::Def, b: &crate::extract::Def) -> bool {
    a.kind == b.kind
        && a.words == b.words
        && a.rare().extension == b.rare().extension
        && a.rare().impl_of == b.rare().impl_of
        && a.term == b.term
        && a.meta == b.meta
        && a.arity == b.arity
        && a.generics == b.generics
        && a.rare().labels == b.rare().labels
        && a.expands == b.expands
}

/// Whether two definitions' types (or scopes) are the same symbol.
pub(super) fn same_parent(old: &Project, d: DefIx, p: &Project, e: DefIx) -> bool {
    old.defs[d].parent().map(|x| old.symbol(x)) == p.defs[e].parent().map(|x| p.symbol(x))
        && old.defs[d].twin_of().map(|x| old.symbol(x)) == p.defs[e].twin_of().map(|x| p.symbol(x))
}

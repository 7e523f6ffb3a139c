//! Resolving again after an edit that keeps every definition: a body, a
//! call, a comment changed.
//!
//! What a resolve works out before any file's uses (the definitions, their
//! symbols, the lookups by name, the supertypes and extensions, the
//! overrides) depends on each file's definitions and their nesting, its
//! package and imports, its headers and its anonymous classes, never on
//! where in the file they are. When every changed file says the same of
//! those, all of it is what the last resolve had: it is kept ([`Warm`]),
//! and only the changed files' anonymous overrides are read again. The
//! uses are then resolved as after any edit (`again.rs`). The workspace's
//! tests check, edit after random edit, that what this gives is what
//! resolving from scratch gives.

use std::sync::Arc;

use super::ladder::Held;
use super::*;

/// What every file's uses were resolved against, kept for the next
/// resolve.
#[derive(Clone)]
pub(super) struct Warm {
    pub(super) look: Lookup,
    pub(super) members: HashMap<DefIx, Vec<DefIx>>,
    pub(super) held: Held,
    /// The methods that override one of a supertype of their type.
    pub(super) overrides: Vec<(DefIx, Vec<DefIx>)>,
    /// Each file's anonymous classes' methods that override one.
    pub(super) anonymous: Vec<Vec<(DefIx, Vec<DefIx>)>>,
    /// The headers met and resolved.
    pub(super) counts: Counts,
}

/// `files` of `p` with the files whose documents go with theirs, sorted:
/// those defining a symbol one of them defines that scopes references (a
/// C# partial class's parts, Kotlin's `expect` and `actual`, a Ruby module
/// reopened; not a C++ or C# namespace block, which the graph splices per
/// file: [`scopes`]), and those of a C++ member declared in one file and
/// defined in another (whose document carries the declaration's comment).
///
/// Asked after each edit of a few files: their symbols are looked for in
/// the others', told first by length, on every core (no table of every
/// symbol of the project).
pub(crate) fn with_sharing(p: &Project, files: &[usize]) -> Vec<usize> {
    let shared = |ix: DefIx| {
        let symbol = p.symbol(ix);
        !symbol.is_empty() && !symbol.starts_with("local ") && scopes(p, ix)
    };
    let mut given = vec![false; p.sources.len()];
    for &f in files {
        given[f] = true;
    }
    let wanted: HashSet<&str> =
        files.iter().flat_map(|&f| p.defs_of_file(f)).filter(|&ix| shared(ix)).map(|ix| p.symbol(ix)).collect();
    let lengths: HashSet<usize> = wanted.iter().map(|s| s.len()).collect();
    let mut out: Vec<usize> = files.to_vec();
    if !wanted.is_empty() {
        let defines = |f: usize| {
            !given[f]
                && p.defs_of_file(f).any(|ix| {
                    let symbol = p.symbol(ix);
                    lengths.contains(&symbol.len()) && wanted.contains(symbol) && shared(ix)
                })
        };
        out.par_extend((0..p.sources.len()).into_par_iter().filter(|&f| defines(f)));
    }
    twinned(p, |f| given[f], &mut out);
    out.sort_unstable();
    out.dedup();
    #[cfg(test)]
    assert_eq!(out, sharing_of_all(p, files), "the files that go with {files:?}");
    out
}

/// [`with_sharing`] from a table of every symbol, as it was made before:
/// what the tests check its search of the symbols against (the twins
/// are added alike).
#[cfg(test)]
fn sharing_of_all(p: &Project, files: &[usize]) -> Vec<usize> {
    let mut first: HashMap<&str, usize> = HashMap::default();
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::default();
    let mut out: Vec<usize> = files.to_vec();
    for ix in 0..p.defs.len() {
        let symbol = p.symbol(ix);
        if symbol.is_empty() || symbol.starts_with("local ") || !scopes(p, ix) {
            continue;
        }
        let f = p.defs[ix].file();
        match first.get(symbol) {
            None => {
                first.insert(symbol, f);
            }
            Some(&at) if at != f => groups.entry(symbol).or_insert_with(|| vec![at]).push(f),
            Some(_) => {}
        }
    }
    for group in groups.values() {
        if group.iter().any(|f| files.contains(f)) {
            out.extend_from_slice(group);
        }
    }
    twinned(p, |f| files.contains(&f), &mut out);
    out.sort_unstable();
    out.dedup();
    out
}

/// Adds to `out` both files of each C++ member declared in one file and
/// defined in another, where one of the two is `given`.
fn twinned(p: &Project, given: impl Fn(usize) -> bool, out: &mut Vec<usize>) {
    for d in &p.defs {
        if let Some(t) = d.twin_of() {
            let (a, b) = (d.file(), p.defs[t].file());
            if a != b && (given(a) || given(b)) {
                out.extend([a, b]);
            }
        }
    }
}

impl Memo {
    /// The project `p` (as the last resolve kept it) with what it dropped
    /// made again from this memo: its uses, unbound calls and supertypes,
    /// to write its whole index again.
    pub(crate) fn rebuilt(&self, p: &Project) -> Option<Project> {
        let warm = self.warm.as_ref()?;
        let mut q = Project {
            sources: p.sources.clone(),
            defs: p.defs.clone(),
            symbols: p.symbols.clone(),
            first_def: p.first_def.clone(),
            counts: p.counts,
            supers: warm.supers(),
            ..Project::default()
        };
        q.set_uses(self.files.clone());
        Some(q)
    }
}

/// What [`Warm::supers`] lists, looked up where it is held, not copied
/// (the last resolve's, compared once with the new).
pub(super) struct SupersView<'a> {
    held: &'a HashMap<DefIx, Vec<DefIx>>,
    later: HashMap<DefIx, &'a [DefIx]>,
}

impl SuperTypes for SupersView<'_> {
    fn of(&self, d: DefIx) -> Option<&[DefIx]> {
        self.later.get(&d).copied().or_else(|| self.held.get(&d).map(Vec::as_slice))
    }
}

impl Warm {
    /// [`Warm::supers`] without the copy.
    pub(super) fn supers_view(&self) -> SupersView<'_> {
        let later = self.overrides.iter().chain(self.anonymous.iter().flatten()).map(|(d, s)| (*d, s.as_slice()));
        SupersView { held: &self.held.supers, later: later.collect() }
    }

    /// Each definition's supertypes as written out: the headers' and Go's
    /// implicit interfaces, then what each method overrides (a later one
    /// replaces an earlier, as before).
    pub(super) fn supers(&self) -> HashMap<DefIx, Vec<DefIx>> {
        let mut supers = self.held.supers.clone();
        supers.extend(self.overrides.iter().chain(self.anonymous.iter().flatten()).cloned());
        supers
    }
}

impl std::fmt::Debug for Warm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Warm").field("overrides", &self.overrides.len()).finish_non_exhaustive()
    }
}

/// Resolves `sources` again from the `last` resolve (which it takes) when
/// every definition is kept; otherwise leaves `last` as it is.
pub(super) fn again(
    last: &mut Option<(Project, Memo)>,
    sources: &[Arc<Source>],
    step: &mut Steps,
) -> Option<(Project, Memo, Again)> {
    let (old, memo) = last.as_ref()?;
    memo.warm.as_ref()?;
    let changed = kept(old, sources)?;
    let (old, mut memo) = last.take()?;
    let mut warm = *memo.warm.take()?;
    let p = Project {
        sources: sources.to_vec(),
        defs: old.defs.clone(),
        symbols: old.symbols.clone(),
        first_def: old.first_def.clone(),
        ..Project::default()
    };
    {
        let vars = Vars::of(&p);
        let r = Resolver::new(&p, &warm.look, &warm.members, &vars, std::mem::take(&mut warm.held));
        for &fi in &changed {
            warm.anonymous[fi] = anonymous_overrides(&r, &warm.members, fi);
        }
        warm.held = r.held();
    }
    step.done("definitions kept");
    let step = std::mem::replace(step, Steps(std::time::Instant::now()));
    Some(resolve_files(p, warm, None, Some((old, memo)), true, step))
}

/// The files of `sources` that changed since `old`, when each says the
/// same as before of everything but the uses: the same files in the same
/// order, and in each changed one the same definitions nested the same
/// way, package, imports, headers and anonymous classes.
fn kept(old: &Project, sources: &[Arc<Source>]) -> Option<Vec<usize>> {
    if old.sources.len() != sources.len() || old.first_def.len() != sources.len() {
        return None;
    }
    let mut changed = Vec::new();
    for (fi, (a, b)) in old.sources.iter().zip(sources).enumerate() {
        if Arc::ptr_eq(a, b) {
            continue;
        }
        if !says_the_same(a, b) {
            return None;
        }
        changed.push(fi);
    }
    Some(changed)
}

/// Whether two readings of a file say the same but for places, uses and
/// comments.
fn says_the_same(a: &Source, b: &Source) -> bool {
    fn name(n: &Name) -> (&str, Option<&str>, u8) {
        (n.name.as_str(), n.qualifier.as_deref(), n.generics)
    }
    let (x, y) = (&a.facts, &b.facts);
    a.path == b.path
        && a.lang.name == b.lang.name
        && a.package == b.package
        && a.module == b.module
        && x.package == y.package
        && x.expects == y.expects
        && x.imports.len() == y.imports.len()
        && x.imports.iter().zip(&y.imports).all(|(i, j)| i.path == j.path && i.alias == j.alias)
        && x.defs.len() == y.defs.len()
        // scip-python spells a module variable written at column 0 apart
        // (`symbols.rs`): that much of a place is part of the symbol.
        && x.defs.iter().zip(&y.defs).all(|(d, e)| d.same_but_places(e) && (d.span.start.1 == 0) == (e.span.start.1 == 0))
        && nesting(x) == nesting(y)
        && x.supers.len() == y.supers.len()
        && x.supers.iter().zip(&y.supers).all(|(s, t)| name(s) == name(t))
        && x.supers.iter().map(|s| around(x, s.span.offsets())).eq(y.supers.iter().map(|s| around(y, s.span.offsets())))
        && x.anonymous.len() == y.anonymous.len()
        && x.anonymous.iter().zip(&y.anonymous).all(|((_, s), (_, t))| name(s) == name(t))
        && x.anonymous.iter().map(|(b, _)| around(x, *b)).eq(y.anonymous.iter().map(|(b, _)| around(y, *b)))
        && anonymous_of(x) == anonymous_of(y)
        && x.self_types.len() == y.self_types.len()
        && x.self_types.iter().zip(&y.self_types).all(|((_, s), (_, t))| s == t)
        && x.self_types.iter().map(|(b, _)| around(x, *b)).eq(y.self_types.iter().map(|(b, _)| around(y, *b)))
}

/// Each definition's innermost container among the file's definitions.
fn nesting(f: &Facts) -> Vec<Option<usize>> {
    let mut out = Vec::with_capacity(f.defs.len());
    let mut stack: Vec<usize> = Vec::new();
    for (at, d) in f.defs.iter().enumerate() {
        while stack.last().is_some_and(|&s| !f.defs[s].span.contains(&d.span)) {
            stack.pop();
        }
        out.push(stack.last().copied());
        stack.push(at);
    }
    out
}

/// The innermost definition of the file around `bytes`.
fn around(f: &Facts, bytes: (usize, usize)) -> Option<usize> {
    f.defs.iter().rposition(|d| {
        let (a, b) = d.span.offsets();
        a <= bytes.0 && bytes.1 <= b
    })
}

/// For each definition, the anonymous class bodies around it.
fn anonymous_of(f: &Facts) -> Vec<Vec<usize>> {
    if f.anonymous.is_empty() {
        return Vec::new();
    }
    f.defs
        .iter()
        .map(|d| {
            let at = d.span.offsets();
            (0..f.anonymous.len())
                .filter(|&i| {
                    let (a, b) = f.anonymous[i].0;
                    a <= at.0 && at.1 <= b
                })
                .collect()
        })
        .collect()
}

//! The symbols of an edit's resolve where the last resolve's still hold.
//!
//! A definition's symbol is its parents' (or its package's) and its own
//! descriptor, and a descriptor depends on other files in three ways only:
//! an overload's number counts the callables of the same name in the same
//! place (enclosing names and package) before it, across files, those
//! apart from their type after every other; a callable defined apart from
//! its type (C++'s `Type::method`, a Go method) takes the symbol of the one
//! declaration in its type that fits it, unless another took it first; and
//! a parent may be in another file (an owner declared apart). So when,
//! after an edit, every definition of an unchanged file has the parent it
//! had (none in a changed file), no definition apart of a changed file
//! shares its type and name with one of an unchanged file, and every place
//! a changed file's callables share with unchanged files' is one changed
//! file's, whose callables there are the bodies of declarations where
//! apart, and as many as before where files after it number some there,
//! then every unchanged file's definitions keep their symbols, and
//! spelling the changed files' alone, in order, each shared place counted
//! from the callables of the files before, gives what spelling every file
//! would. Otherwise every symbol is spelled ([`super::spell_all`]).
//!
//! Languages whose spelling reads more of the project (Kotlin's `expect`
//! and `actual`, Swift's extensions, Rust's impls and aliases, Python's
//! nested functions, C#'s generic arities) are always spelled whole. The
//! workspace's tests check the result against spelling every symbol, edit
//! after random edit.

use std::sync::Arc;

use super::*;

/// The descriptors of a few definitions (an edit's), by definition, where
/// spelling every one holds them in a vector: absent, one is empty.
#[derive(Default)]
struct Sparse(HashMap<DefIx, String>);

impl std::ops::Index<DefIx> for Sparse {
    type Output = String;

    fn index(&self, ix: DefIx) -> &String {
        static NONE: String = String::new();
        self.0.get(&ix).unwrap_or(&NONE)
    }
}

impl std::ops::IndexMut<DefIx> for Sparse {
    fn index_mut(&mut self, ix: DefIx) -> &mut String {
        self.0.entry(ix).or_default()
    }
}

/// Whether a language's symbols can be kept per file (module doc).
pub(super) fn keeps(lang: &Lang) -> bool {
    !(lang.impl_blocks
        || lang.rules.expect_actual
        || lang.rules.foreign_extensions
        || lang.packages == Packages::ModuleFile
        || lang.name == "csharp")
}

/// The place a callable is numbered in: its enclosing names (innermost
/// first, 64 at most, as [`Owners`] lists them), its package, its name.
type Place<'a> = (Vec<&'a str>, &'a [String], &'a str);

/// The callables of the changed files in one place: how many are not
/// apart (numbered first, in order), before the edit and after; whether
/// one apart was not the body of a declaration before (numbered after
/// every other); those apart now.
#[derive(Default)]
struct Counted {
    before: u32,
    now: u32,
    unpaired_before: bool,
    apart_now: Vec<DefIx>,
}

fn place<'a>(p: &'a Project, ix: DefIx, name: &'a str) -> Place<'a> {
    let mut names: Vec<&str> = Vec::new();
    let mut at = p.defs[ix].parent();
    while let Some(par) = at
        && names.len() < 64
    {
        names.push(p.fact(par).name());
        at = p.defs[par].parent();
    }
    (names, p.sources[p.defs[ix].file()].package.as_slice(), name)
}

/// The name definition `ix` of `q` is spelled by ([`Spelling::name`]).
pub(super) fn spelled(q: &Project, ix: DefIx) -> &str {
    let (f, lang) = (q.fact(ix), q.sources[q.defs[ix].file()].lang);
    if f.kind == Kind::Constructor && !lang.constructor.is_empty() { lang.constructor } else { f.name() }
}

/// Whether definition `ix` of `q` is a callable defined apart from its
/// type ([`Spelling::apart`]).
pub(super) fn apart(q: &Project, ix: DefIx) -> bool {
    q.fact(ix).kind.is_callable()
        && q.fact(ix).owner().is_some()
        && q.defs[ix].parent().is_some_and(|t| q.kind(t).is_type())
}

/// Spells the symbols of `p`'s changed files alone, keeping the others'
/// from `old` (the last resolve of the same files), when no change can
/// move them (module doc). Otherwise why not, and `p` untouched.
pub(super) fn respelled(p: &mut Project, old: &Project) -> Result<(), &'static str> {
    let files = p.sources.len();
    if old.sources.len() != files || old.first_def.len() != files || p.first_def.len() != files {
        return Err("files added or removed");
    }
    let mut changed = vec![false; files];
    let mut langs: Vec<&'static Lang> = Vec::new();
    for (f, (a, b)) in old.sources.iter().zip(&p.sources).enumerate() {
        if !langs.iter().any(|l| std::ptr::eq(*l, b.lang)) {
            langs.push(b.lang);
        }
        if !Arc::ptr_eq(a, b) {
            if a.path != b.path {
                return Err("files renamed");
            }
            changed[f] = true;
        }
    }
    if !langs.iter().all(|l| keeps(l)) {
        return Err("a language spelled whole");
    }
    let (mut old_changed, mut new_changed) = (Vec::new(), Vec::new());
    let changed_files: Vec<usize> = (0..files).filter(|&f| changed[f]).collect();
    for &f in &changed_files {
        old_changed.extend(old.defs_of_file(f));
        new_changed.extend(p.defs_of_file(f));
    }
    // Past a quarter of the definitions, spelling every one costs no more.
    if new_changed.is_empty() || new_changed.len() > p.defs.len() / 4 {
        return Err("no definition or many changed");
    }
    // An old definition of an unchanged file → the same one now.
    let first_def = p.first_def.clone();
    let mapped = |b: DefIx| {
        let f = old.defs[b].file();
        (!changed[f]).then(|| first_def[f] + old.defs[b].at())
    };
    // A definition now → the same one before, in an unchanged file.
    let unmapped = |a: DefIx| {
        let f = p.defs[a].file();
        (!changed[f]).then(|| old.first_def[f] + p.defs[a].at())
    };
    // Every unchanged file's definitions have the parents they had (none
    // in a changed file), and their bodies the same declarations. (The
    // last resolve's parents are those after the parts of a type declared
    // in several were joined, [`join_partial_types`]: a member of a later
    // part had the first part, of the same symbol, as its parent.)
    for f in (0..files).filter(|&f| !changed[f]) {
        for (new, was) in p.defs_of_file(f).zip(old.defs_of_file(f)) {
            let same = |a: Option<DefIx>, b: Option<DefIx>| match (a, b) {
                (None, None) => true,
                (Some(a), Some(b)) => {
                    mapped(b) == Some(a) || unmapped(a).is_some_and(|x| old.symbol(x) == old.symbol(b))
                }
                _ => false,
            };
            if !same(p.defs[new].parent(), old.defs[was].parent())
                || old.defs[was].twin_of().is_some_and(|t| mapped(t).is_none())
            {
                return Err("a parent or declaration moved");
            }
        }
    }
    // The places the changed files' callables are numbered in, before and
    // after: how many each has there, and whether one is apart (numbered
    // after every other, [`Spelling`]'s order).
    let mut places: HashMap<Place<'_>, Counted> = HashMap::default();
    let mut names: HashSet<&str> = HashSet::default();
    for (q, ds, now) in [(old, &old_changed, false), (&*p, &new_changed, true)] {
        for &ix in ds.iter().filter(|&&ix| Spelling::numbered(q, ix)) {
            let name = spelled(q, ix);
            names.insert(name);
            let counted = places.entry(place(q, ix, name)).or_default();
            if !apart(q, ix) {
                *if now { &mut counted.now } else { &mut counted.before } += 1;
            } else if now {
                counted.apart_now.push(ix);
            } else {
                counted.unpaired_before |= q.defs[ix].twin_of().is_none();
            }
        }
    }
    // No definition apart of a changed file, before or after, is of the
    // same type and name as one of an unchanged file (they would compete
    // for its declarations): types told by their symbols, as parts joined
    // are one type.
    let mut bodies: HashSet<(&str, &str)> = HashSet::default();
    for &ix in old_changed.iter().filter(|&&ix| apart(old, ix)) {
        if let Some(b) = old.defs[ix].parent() {
            bodies.insert((old.symbol(b), spelled(old, ix)));
        }
    }
    // (and the types of unchanged files the changed files' bodies are of)
    let mut seeds: HashSet<(DefIx, &str)> = HashSet::default();
    for &ix in new_changed.iter().filter(|&&ix| apart(p, ix)) {
        if let Some((t, x)) = p.defs[ix].parent().and_then(|t| Some((t, unmapped(t)?))) {
            bodies.insert((old.symbol(x), spelled(p, ix)));
            seeds.insert((t, spelled(p, ix)));
        }
    }
    // Each unchanged file's callables looked at (on every core: a large
    // part has a hundred thousand), the rest passed by; those numbered in
    // a place of the changed files' listed.
    let names: Vec<&str> = names.into_iter().collect();
    let q: &Project = p;
    let scan = |f: usize| -> Result<Vec<(Place<'_>, DefIx)>, &'static str> {
        let s = &q.sources[f];
        let mut shared = Vec::new();
        for (at, d) in s.facts.defs.iter().enumerate().filter(|(_, d)| d.kind.is_callable()) {
            let ix = q.first_def[f] + at;
            let name = spelled(q, ix);
            if names.contains(&name) && Spelling::numbered(q, ix) {
                let at = place(q, ix, name);
                if places.contains_key(&at) {
                    shared.push((at, ix));
                }
            }
            let body_of = |t: DefIx| unmapped(t).is_some_and(|x| bodies.contains(&(old.symbol(x), name)));
            if d.owner().is_some() && !bodies.is_empty() && apart(q, ix) && q.defs[ix].parent().is_some_and(body_of) {
                return Err("a declaration's bodies in several files");
            }
        }
        Ok(shared)
    };
    let shared: Vec<Vec<(Place<'_>, DefIx)>> =
        (0..files).into_par_iter().filter(|&f| !changed[f]).map(scan).collect::<Result<_, _>>()?;
    // A place one changed file shares with unchanged ones: its callables
    // there are numbered after those of the files before it, and those of
    // the files after it keep their numbers where it has as many as it had.
    // A definition apart (a C++ `Type::method`) is the body of its type's
    // declaration and numbered not at all, or numbered after every other:
    // in a shared place, the changed file's must each be a body, now (told
    // once spelled, `paired`) and before; an unchanged file's keeps its
    // number where the changed file has as many as it had.
    let mut before: HashMap<&Place<'_>, u32> = HashMap::default();
    let mut paired: Vec<DefIx> = Vec::new();
    for (at, ix) in shared.iter().flatten() {
        let counted = &places[at];
        let [one] = changed_files[..] else { return Err("a place of several changed files shared") };
        if counted.unpaired_before {
            return Err("a place of a definition apart shared");
        }
        paired.extend_from_slice(&counted.apart_now);
        if apart(q, *ix) {
            if unmapped(*ix).is_some_and(|x| old.defs[x].twin_of().is_none()) && counted.before != counted.now {
                return Err("a place of a definition apart shared");
            }
        } else if *ix < q.first_def[one] {
            *before.entry(at).or_default() += 1;
        } else if counted.before != counted.now {
            return Err("an overload's place shared with later files");
        }
    }
    // The changed files' definitions spelled, with the declarations of
    // unchanged types their bodies may be.
    let mut own = Sparse::default();
    let twins = {
        let mut s = Spelling::new(p, new_changed.len());
        s.any_apart = new_changed.iter().any(|&ix| s.apart(ix));
        // Numbered after those of the files before.
        for &ix in new_changed.iter().filter(|&&ix| Spelling::numbered(p, ix)) {
            let name = spelled(p, ix);
            if let Some(&n) = before.get(&place(p, ix, name)) {
                let key = (s.owners.of(p, p.defs[ix].parent()), s.package[p.defs[ix].file()], name);
                s.overloads.insert(key, n);
            }
        }
        if s.any_apart {
            for &(t, name) in &seeds {
                let parent = old.symbol(old.first_def[p.defs[t].file()] + p.defs[t].at());
                for ix in p.defs_of_file(p.defs[t].file()) {
                    if p.defs[ix].parent() == Some(t) && !s.apart(ix) && Spelling::numbered(p, ix) && s.name(ix) == name
                    {
                        let was = old.symbol(old.first_def[p.defs[ix].file()] + p.defs[ix].at());
                        let Some(descriptor) = was.strip_prefix(parent) else {
                            return Err("a declaration spelled apart from its type");
                        };
                        own[ix] = descriptor.to_owned();
                        s.declared.entry((Some(t), name)).or_default().push(ix);
                    }
                }
            }
        }
        let (first, second): (Vec<DefIx>, Vec<DefIx>) = new_changed.iter().partition(|&&ix| !s.apart(ix));
        for ix in first.into_iter().chain(second) {
            s.descriptor(ix, &mut own);
        }
        if !paired.iter().all(|ix| s.twins.iter().any(|(body, _)| body == ix)) {
            return Err("a place of a definition apart shared");
        }
        s.twins
    };
    // The changed files' symbols, parents first; a parent in an unchanged
    // file has the symbol it had.
    let kept = |par: DefIx| old.symbol(old.first_def[p.defs[par].file()] + p.defs[par].at());
    let mut done: HashMap<DefIx, String> = HashMap::default();
    let mut path: Vec<DefIx> = Vec::new();
    for &ix in &new_changed {
        path.clear();
        path.push(ix);
        while let Some(par) = p.defs[*path.last().expect("not empty")].parent() {
            if !changed[p.defs[par].file()] || done.contains_key(&par) {
                break;
            }
            if path.len() > 64 || path.contains(&par) {
                // Spelled whole, where the parents' walk stops the same way.
                return Err("parents nested deep or in a cycle");
            }
            path.push(par);
        }
        for &d in path.iter().rev() {
            let parent = p.defs[d].parent().map(|par| match done.get(&par) {
                Some(s) => s.as_str(),
                None => kept(par),
            });
            let mut symbol = match parent {
                Some(parent) => parent.to_owned(),
                None => package_symbol(&p.sources[p.defs[d].file()]),
            };
            symbol.push_str(&own[d]);
            done.insert(d, symbol);
        }
    }
    // Nothing is written before here: a `false` above leaves `p` as it was.
    let was = |d: &Def| old.first_def[d.file()] + d.at();
    p.defs.par_iter_mut().filter(|d| !changed[d.file()]).for_each(|d| {
        d.set_twin_of(old.defs[was(d)].twin_of().and_then(mapped));
    });
    let spelled = |f: usize| FileSymbols::of(p.defs_of_file(f).map(|ix| done.get(&ix).map_or("", String::as_str)));
    p.symbols = Symbols::of((0..files).map(|f| if changed[f] { Arc::new(spelled(f)) } else { old.symbols.file(f) }));
    for (body, declaration) in twins {
        p.defs[body].set_twin_of(Some(declaration));
    }
    Ok(())
}

/// Panics unless `p`'s symbols and twins are what spelling every one gives.
#[cfg(test)]
pub(super) fn check_against_whole(p: &Project) {
    let mut whole = Project {
        sources: p.sources.clone(),
        defs: p
            .defs
            .iter()
            .map(|d| {
                let mut d = *d;
                d.set_twin_of(None);
                d
            })
            .collect(),
        first_def: p.first_def.clone(),
        ..Project::default()
    };
    spell_all(&mut whole);
    for (ix, (a, b)) in p.defs.iter().zip(&whole.defs).enumerate() {
        assert_eq!(
            (p.symbol(ix), a.twin_of()),
            (whole.symbol(ix), b.twin_of()),
            "definition {ix} of {}: kept symbols differ from spelling every one",
            p.sources[a.file()].path
        );
    }
}

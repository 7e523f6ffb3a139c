//! Supertypes read from what the code does rather than its headers:
//! overriding methods, and Go's implicit interfaces.

use super::*;

/// Callable members but constructors (a Kotlin `fun` in a class is a
/// function by its syntax, a method by its place).
fn method(k: Kind) -> bool {
    matches!(k, Kind::Method | Kind::Function)
}

/// The method of the nearest of `supertypes` that `m` overrides (or
/// implements): of the same name, taking its parameters (their number, then
/// their types where both write them), never a static one.
fn overridden(r: &Resolver<'_>, members: &HashMap<DefIx, Vec<DefIx>>, m: DefIx, supertypes: &[DefIx]) -> Option<DefIx> {
    let p = r.p;
    let f = p.fact(m);
    if f.declared_static {
        return None;
    }
    let number = r.look.number(f.name());
    supertypes.iter().find_map(|s| {
        // A supertype's members of that name, as the lookups table them
        // (a type high in a large hierarchy has hundreds of members, asked
        // for each method below it); a module's where they are not tabled
        // by owner (a namespace's are its file's and package's).
        let named = if p.kind(*s) != Kind::Module || p.sources[p.defs[*s].file()].lang.rules.nested_modules {
            r.look.members_numbered(*s, number)
        } else {
            members.get(s)?.as_slice()
        };
        #[cfg(test)]
        {
            let all = members.get(s).map_or(&[][..], Vec::as_slice);
            let scanned: Vec<DefIx> = all.iter().copied().filter(|&o| p.fact(o).name() == f.name()).collect();
            assert_eq!(named, scanned, "the members of {s} called {} as tabled and as listed", f.name());
        }
        let same: Vec<DefIx> = named
            .iter()
            .copied()
            .filter(|&o| {
                method(p.kind(o))
                    && p.fact(o).name() == f.name()
                    && p.fact(o).arity.map(|a| a.max) == f.arity.map(|a| a.max)
                    && !p.fact(o).declared_static
            })
            .collect();
        match same[..] {
            [] => None,
            [one] => Some(one),
            _ => {
                let fit: Vec<DefIx> =
                    same.iter().copied().filter(|&o| same_params(p.fact(o).params(), f.params())).collect();
                if let [one] = fit[..] { Some(one) } else { None }
            }
        }
    })
}

/// Methods that override (or implement) a method of a supertype of their
/// type ([`overridden`]).
pub(super) fn overrides(r: &Resolver<'_>, members: &HashMap<DefIx, Vec<DefIx>>) -> Vec<(DefIx, Vec<DefIx>)> {
    use rayon::prelude::*;
    let p = r.p;
    // A Scala object's methods override its traits' (`object Inherit
    // extends ProcessOutput`).
    let object = |t: DefIx| p.kind(t) == Kind::Module && p.fact(t).term;
    let types: Vec<(DefIx, &Vec<DefIx>)> = members
        .iter()
        .filter(|(t, _)| (p.kind(**t).is_type() || object(**t)) && r.held.supers.contains_key(*t))
        .map(|(&t, ms)| (t, ms))
        .collect();
    // Each type's methods apart from every other's: in parallel.
    types
        .into_par_iter()
        .flat_map_iter(|(t, ms)| {
            let lineage = r.lineage(t);
            ms.iter()
                .filter(|&&m| method(p.kind(m)))
                .filter_map(|&m| overridden(r, members, m, &lineage[1..]).map(|o| (m, vec![o])))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The methods of file `fi`'s anonymous classes (`new ToStringStyle() {
/// … }`) that override one of the type each extends. A file's own: read
/// again when only its file changed.
pub(super) fn anonymous_overrides(
    r: &Resolver<'_>,
    members: &HashMap<DefIx, Vec<DefIx>>,
    fi: usize,
) -> Vec<(DefIx, Vec<DefIx>)> {
    let p = r.p;
    let s = &p.sources[fi];
    let mut out = Vec::new();
    if s.facts.anonymous.is_empty() {
        return out;
    }
    for ix in p.defs_of_file(fi).filter(|&ix| method(p.kind(ix))) {
        let d = &p.defs[ix];
        let at = p.fact(ix).span.offsets();
        // The innermost anonymous body around it, inside its parent.
        let Some((_, ty)) = s
            .facts
            .anonymous
            .iter()
            .filter(|((a, b), _)| *a <= at.0 && at.1 <= *b)
            .filter(|((a, b), _)| {
                d.parent().is_none_or(|par| {
                    let pb = p.fact(par).span.offsets();
                    pb.0 <= *a && *b <= pb.1
                })
            })
            .min_by_key(|((a, b), _)| b - a)
        else {
            continue;
        };
        let Some(t) = r.ty(fi, d.parent().unwrap_or(usize::MAX), ty) else { continue };
        if let Some(o) = overridden(r, members, ix, &r.lineage(t)) {
            out.push((ix, vec![o]));
        }
    }
    out
}

/// Whether two parameter lists as written take the same types: the same
/// simple names where both are written, a type parameter fitting any.
fn same_params<'a>(a: impl Iterator<Item = &'a str> + Clone, b: impl Iterator<Item = &'a str> + Clone) -> bool {
    let generic = |t: &str| t.len() == 1 && t.chars().all(|c| c.is_ascii_uppercase());
    a.clone().count() == b.clone().count()
        && a.zip(b).all(|(x, y)| {
            let (x, y) = (crate::extract::simple_type(x), crate::extract::simple_type(y));
            x.is_empty() || y.is_empty() || x == y || generic(&x) || generic(&y)
        })
}

/// Go: a type satisfies an interface of the project when its method set
/// (its own methods and those promoted from the types it embeds) has each
/// method the interface names (and those of the interfaces it embeds),
/// with the same number of parameters and, where both write them, the same
/// parameter types.
pub(super) fn implicit_interfaces(
    p: &Project,
    members: &HashMap<DefIx, Vec<DefIx>>,
    supers: &mut HashMap<DefIx, Vec<DefIx>>,
) {
    use rayon::prelude::*;
    let go = |d: DefIx| p.sources[p.defs[d].file()].lang.packages == Packages::ModulePath;
    // The methods of `t` and of what it embeds (its supertypes from its
    // header), nearest first: a name met again is shadowed.
    let method_set = |t: DefIx| -> Vec<DefIx> {
        let mut seen: Vec<&str> = Vec::new();
        let mut out = Vec::new();
        let mut todo = vec![t];
        let mut visited = vec![t];
        while let Some(x) = todo.pop() {
            for &m in members.get(&x).map_or(&[][..], Vec::as_slice) {
                let name = p.fact(m).name();
                if p.kind(m).is_callable() && !seen.contains(&name) {
                    seen.push(name);
                    out.push(m);
                }
            }
            for &s in supers.get(&x).map_or(&[][..], Vec::as_slice) {
                if !visited.contains(&s) && visited.len() < 32 {
                    visited.push(s);
                    todo.insert(0, s);
                }
            }
        }
        out
    };
    let interfaces: Vec<(DefIx, Vec<DefIx>)> = (0..p.defs.len())
        .filter(|&d| go(d) && p.kind(d) == Kind::Interface)
        .map(|d| (d, method_set(d)))
        .filter(|(_, m)| !m.is_empty())
        .collect();
    if interfaces.is_empty() {
        return;
    }
    let same = |have: DefIx, want: DefIx| {
        let (h, w) = (p.fact(have), p.fact(want));
        let arity = h.arity.map(|a| (a.min, a.max)) == w.arity.map(|a| (a.min, a.max));
        let types = h.params().count() != w.params().count()
            || h.params().zip(w.params()).all(|(a, b)| {
                a.is_empty() || b.is_empty() || crate::extract::simple_type(a) == crate::extract::simple_type(b)
            });
        // What they return, where both write it (`Flush()` and `Flush()
        // error` are two methods).
        // (Go's query reads the result of both, so none is none.)
        let returns = match (h.returns(), w.returns()) {
            (Some(a), Some(b)) => crate::extract::simple_type(a) == crate::extract::simple_type(b),
            (None, None) => true,
            _ => false,
        };
        h.name() == w.name() && arity && types && returns
    };
    // Each interface by the name of its first method: a type without a
    // method of that name satisfies none of them (a project's types are
    // not each checked against all its interfaces).
    let mut by_first: HashMap<&str, Vec<usize>> = HashMap::default();
    for (k, (_, want)) in interfaces.iter().enumerate() {
        by_first.entry(p.fact(want[0]).name()).or_default().push(k);
    }
    let types: Vec<DefIx> =
        (0..p.defs.len()).filter(|&d| go(d) && matches!(p.kind(d), Kind::Struct | Kind::Type)).collect();
    let found: Vec<(DefIx, DefIx)> = types
        .into_par_iter()
        .flat_map_iter(|t| {
            let have = method_set(t);
            let mut candidates: Vec<usize> =
                have.iter().filter_map(|&h| by_first.get(p.fact(h).name())).flatten().copied().collect();
            // In the interfaces' order, as every one was checked before.
            candidates.sort_unstable();
            candidates.dedup();
            candidates
                .into_iter()
                .filter(|&k| interfaces[k].1.iter().all(|&w| have.iter().any(|&h| same(h, w))))
                .map(|k| (t, interfaces[k].0))
                .collect::<Vec<_>>()
        })
        .collect();
    for (t, i) in found {
        let e = supers.entry(t).or_default();
        if !e.contains(&i) {
            e.push(i);
        }
    }
}

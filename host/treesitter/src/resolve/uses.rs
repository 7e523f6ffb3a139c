//! Every file's uses (calls and type names) resolved against what the
//! whole project says ([`warm::Warm`]): in parallel, each file's own, those
//! the last resolve's still hold kept; and the uses a C or C++ macro's
//! expansion adds.

use super::*;

/// The uses of `p`'s files resolved against `warm` (again only those the
/// change may move, given the `last` resolve), with the supertypes and the
/// counts. `shape` is none when it is the last resolve's (every definition
/// kept).
pub(super) fn resolve_files(
    mut p: Project,
    warm: warm::Warm,
    shape: Option<Shape>,
    last: Option<(Project, Memo)>,
    mut step: Steps,
) -> (Project, Memo, Again) {
    let definitions_kept = shape.is_none();
    let warm::Warm { look, members, held, overrides, anonymous, mut counts, sharing } = warm;
    let vars = Vars::of(&p);
    let r = Resolver::new(&p, &look, &members, &vars, held);
    // Files resolve independently of each other from here on: in
    // parallel, their uses kept in file order; those the last resolve's
    // still hold are kept.
    let (mut kept, all_because, shape) = match last {
        None => (Vec::new(), None, shape.unwrap_or_default()),
        Some((old, mut memo)) => {
            let last_shape = std::mem::take(&mut memo.shape);
            match shape {
                Some(shape) if shape != last_shape => {
                    (Vec::new(), Some("what types extend, their extensions, or the packages changed"), shape)
                }
                shape => match again::plan(&old, memo, &p) {
                    Plan::Some(kept) => (kept, None, shape.unwrap_or(last_shape)),
                    Plan::All(why) => (Vec::new(), Some(why), shape.unwrap_or(last_shape)),
                },
            }
        }
    };
    kept.resize_with(p.sources.len(), || None);
    let kept_files = kept.iter().filter(|k| k.is_some()).count();
    let touched = definitions_kept.then(|| (0..kept.len()).filter(|&f| kept[f].is_none()).collect());
    let again =
        Again { resolved: p.sources.len() - kept_files, kept: kept_files, all_because, definitions_kept, touched };
    let per_file: Vec<FileUses> = kept
        .into_par_iter()
        .enumerate()
        .map(|(fi, kept)| {
            kept.unwrap_or_else(|| {
                let (mut out, reads) = lookup::recording(|| uses_of(&r, fi));
                out.reads = reads;
                out
            })
        })
        .collect();
    counts.calls = p.sources.iter().map(|s| s.body.calls).sum();
    counts.calls_resolved = per_file.iter().map(|f| f.resolved).sum();
    counts.calls_ambiguous = per_file.iter().map(|f| f.ambiguous).sum();
    counts.calls_unbound = per_file.iter().map(|f| f.unbound.len()).sum();
    let (uses, unbound) = joined(&p, &per_file);
    step.done("uses");
    tracing::debug!(
        resolved = again.resolved,
        kept = again.kept,
        all_because = again.all_because,
        definitions_kept,
        "files' uses"
    );
    let held = r.held();
    p.uses = uses;
    p.unbound = unbound;
    p.counts = counts;
    let warm = warm::Warm { look, members, held, overrides, anonymous, counts, sharing };
    p.supers = warm.supers();
    (p, Memo { files: per_file, shape, warm: Some(Box::new(warm)) }, again)
}

/// The uses in file `fi`: its type names and calls, resolved.
fn uses_of(r: &Resolver<'_>, fi: usize) -> FileUses {
    let facts = r.p.sources[fi].body.uses.unpack();
    let mut out = FileUses::default();
    for t in &facts.types {
        values::at(fi, t.span.bytes.0);
        let scope = r.innermost(fi, &t.span, |_| true);
        if let Some(target) = r.ty(fi, scope.unwrap_or(usize::MAX), t) {
            out.uses.push(Use { file: fi, span: t.span, target, ambiguous: false });
        }
    }
    for c in &facts.calls {
        values::at(fi, c.span.bytes.0);
        let scope = r.innermost(fi, &c.span, |k| k.is_scope());
        match r.call(fi, scope, c) {
            Bound::One(target) => {
                out.resolved += usize::from(!c.read);
                out.uses.push(Use { file: fi, span: c.span, target, ambiguous: false });
            }
            Bound::Several(targets) => {
                out.resolved += usize::from(!c.read);
                out.ambiguous += usize::from(!c.read);
                for target in targets {
                    out.uses.push(Use { file: fi, span: c.span, target, ambiguous: true });
                }
            }
            Bound::Unbound if !c.read => {
                out.unbound.push(Unbound { file: fi, span: c.span, name: c.name.clone() });
            }
            Bound::Unbound | Bound::Outside => {}
        }
    }
    out
}

/// Every file's uses and unbound calls, in file order, with the uses a
/// macro's expansion adds.
pub(super) fn joined(p: &Project, files: &[FileUses]) -> (Vec<Use>, Vec<Unbound>) {
    let mut uses = Vec::with_capacity(files.iter().map(|f| f.uses.len()).sum());
    let mut unbound = Vec::with_capacity(files.iter().map(|f| f.unbound.len()).sum());
    for f in files {
        uses.extend_from_slice(&f.uses);
        unbound.extend_from_slice(&f.unbound);
    }
    expand_macros(p, &mut uses);
    (uses, unbound)
}

/// A call to a C or C++ function-like macro calls, once expanded, what the
/// macro's body calls: each such callee is a use at the macro call's place
/// too (one level: a macro's macros are expanded by their own uses).
fn expand_macros(p: &Project, uses: &mut Vec<Use>) {
    if !p.sources.iter().any(|s| s.facts.defs.iter().any(|d| d.expands)) {
        return;
    }
    let mut callees: HashMap<DefIx, Vec<DefIx>> = HashMap::default();
    for u in uses.iter() {
        let scope = innermost_in(p, u.file, &u.span, |k| k.is_callable());
        if let Some(m) = scope.filter(|&m| p.fact(m).expands && u.target != m) {
            let v = callees.entry(m).or_default();
            if !v.contains(&u.target) {
                v.push(u.target);
            }
        }
    }
    if callees.is_empty() {
        return;
    }
    let expanded: Vec<Use> = uses
        .iter()
        .filter_map(|u| Some((u, callees.get(&u.target)?)))
        .flat_map(|(u, targets)| targets.iter().map(move |&target| Use { target, ..*u }))
        .collect();
    uses.extend(expanded);
}

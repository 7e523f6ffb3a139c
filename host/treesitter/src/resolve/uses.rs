//! Every file's uses (calls and type names) resolved against what the
//! whole project says ([`warm::Warm`]): in parallel, each file's own, those
//! the last resolve's still hold kept; and the uses a C or C++ macro's
//! expansion adds.

use super::*;

/// A resolved use: where, of which definition, how. Held for every call
/// and type name of a project between edits (millions in a large tree),
/// in its file's list: 28 bytes, its target a 31-bit index whose top bit
/// says whether the use is ambiguous.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Use {
    /// The name's place.
    pub span: Span,
    /// The definition's index, [`AMBIGUOUS`] set for one of several.
    target: u32,
}

/// The bit of a use's target that marks it ambiguous.
const AMBIGUOUS: u32 = 1 << 31;

impl Use {
    /// The use at `span` of definition `target`; `ambiguous` for one of
    /// several definitions the call could mean (overloads name resolution
    /// could not tell apart), each a use of its own.
    pub fn new(span: Span, target: DefIx, ambiguous: bool) -> Use {
        Use { span, target: index31(target) | if ambiguous { AMBIGUOUS } else { 0 } }
    }

    /// What it means.
    pub fn target(&self) -> DefIx {
        (self.target & !AMBIGUOUS) as DefIx
    }

    /// One of several definitions the call could mean.
    pub fn ambiguous(&self) -> bool {
        self.target & AMBIGUOUS != 0
    }

    /// The same use, of definition `target`.
    pub fn of(self, target: DefIx) -> Use {
        Use::new(self.span, target, self.ambiguous())
    }
}

/// A definition's index as a use holds it. A project has far fewer than
/// 2^31 definitions (a definition's record alone is over a hundred bytes:
/// memory runs out long before).
fn index31(i: DefIx) -> u32 {
    u32::try_from(i)
        .ok()
        .filter(|&i| i & AMBIGUOUS == 0)
        .unwrap_or_else(|| panic!("definition {i} past 31 bits: more than 2 billion definitions"))
}

/// A call the project has definitions of that name for, not bound to one
/// of them (a receiver of unknown type, namesakes across the project): by
/// its place in its file's calls ([`crate::extract::Uses::calls`]), which
/// hold its name and span. Its file's reading is the one resolved, so the
/// place holds as long as the use is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unbound(u32);

impl Unbound {
    /// The call's index in its file's calls.
    pub fn call(self) -> usize {
        self.0 as usize
    }
}

/// The uses of `p`'s files resolved against `warm` (again only those the
/// change may move, given the `last` resolve), with the supertypes and the
/// counts. `shape` is none when it is the last resolve's (every definition
/// kept).
pub(super) fn resolve_files(
    mut p: Project,
    warm: warm::Warm,
    shape: Option<Shape>,
    last: Option<(Project, Memo)>,
    symbols_kept: bool,
    mut step: Steps,
) -> (Project, Memo, Again) {
    let definitions_kept = shape.is_none();
    let started = std::time::Instant::now();
    let part = |what: &str| tracing::trace!(part = what, us = started.elapsed().as_micros() as u64, "uses");
    let warm::Warm { look, members, held, overrides, anonymous, mut counts } = warm;
    let vars = Vars::of(&p);
    let r = Resolver::new(&p, &look, &members, &vars, held);
    // The last resolve's project, and (when some definitions changed) the
    // supertypes it wrote, to tell which documents the change moves.
    let mut before: Option<(Project, Box<warm::Warm>)> = None;
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
                shape => {
                    // The last resolve's supertypes stay in its memo's
                    // warm part, compared where they are held.
                    let warm_before = if definitions_kept { None } else { memo.warm.take() };
                    match (again::plan(&old, memo, &p), warm_before) {
                        (Plan::Some(kept), Some(warm)) => {
                            before = Some((old, warm));
                            (kept, None, shape.unwrap_or(last_shape))
                        }
                        (Plan::Some(kept), None) => {
                            drop_aside(old);
                            (kept, None, shape.unwrap_or(last_shape))
                        }
                        (Plan::All(why), _) => {
                            drop_aside(old);
                            (Vec::new(), Some(why), shape.unwrap_or(last_shape))
                        }
                    }
                }
            }
        }
    };
    part("plan");
    kept.resize_with(p.sources.len(), || None);
    let kept_files = kept.iter().filter(|k| k.is_some()).count();
    let resolved: Vec<bool> = kept.iter().map(Option::is_none).collect();
    let touched = definitions_kept.then(|| (0..kept.len()).filter(|&f| resolved[f]).collect());
    let mut again = Again {
        resolved: p.sources.len() - kept_files,
        kept: kept_files,
        all_because,
        definitions_kept,
        touched,
        symbols_kept,
    };
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
    part("files");
    counts.calls = p.sources.iter().map(|s| s.body.calls).sum();
    counts.calls_resolved = per_file.iter().map(|f| f.resolved).sum();
    counts.calls_ambiguous = per_file.iter().map(|f| f.ambiguous).sum();
    counts.calls_unbound = per_file.iter().map(|f| f.unbound.len()).sum();
    // The files that call a macro of a file resolved again: their own uses
    // were kept, but what the call expands to is the macro body's uses.
    let callers = macro_callers(&p, &per_file, &resolved);
    let mut moved_too = resolved;
    if !callers.is_empty() {
        for &f in &callers {
            moved_too[f] = true;
        }
        if let Some(touched) = again.touched.as_mut() {
            *touched = (0..moved_too.len()).filter(|&f| moved_too[f]).collect();
        }
    }
    step.done("uses");
    tracing::debug!(
        resolved = again.resolved,
        kept = again.kept,
        all_because = again.all_because,
        definitions_kept,
        uses = per_file.iter().map(|f| f.uses.len()).sum::<usize>(),
        unbound = counts.calls_unbound,
        reads = per_file.iter().map(|f| f.reads.len()).sum::<usize>(),
        "files' uses"
    );
    let held = r.held();
    let per_file = std::sync::Arc::new(per_file);
    p.set_uses(per_file.clone());
    part("expanded");
    p.counts = counts;
    let warm = warm::Warm { look, members, held, overrides, anonymous, counts };
    p.supers = warm.supers();
    part("supers");
    if let Some((old, old_warm)) = before {
        again.touched = moved(&old, &old_warm.supers_view(), &p, &moved_too, symbols_kept);
        drop_aside((old, old_warm));
    }
    part("moved");
    (p, Memo { files: per_file, shape, warm: Some(Box::new(warm)) }, again)
}

/// After an edit that changed some definitions: the files whose documents
/// may differ from those the last resolve (`old`, with the supertypes
/// `old_supers` it wrote) gave, when that can be told per file; `resolved`
/// marks the files whose uses were resolved again (every changed one among
/// them). None when the files are not the same ones (added, gone,
/// reordered) or a definition of an unchanged file is spelled otherwise
/// now (an overload numbered across files): every document is written.
///
/// Of an unchanged file whose uses were kept, only what its definitions
/// relate to can move: their types' symbols and kinds, their declarations
/// written apart, their supertypes (a method added to an interface is
/// overridden elsewhere). Its kept uses point at definitions of the same
/// symbols (`again::plan` renumbers them by symbol). When `symbols_kept`,
/// each unchanged file's symbols are the last resolve's, copied
/// (`symbols/kept.rs`): they are not compared again.
fn moved(
    old: &Project,
    old_supers: &(impl SuperTypes + Sync),
    p: &Project,
    resolved: &[bool],
    symbols_kept: bool,
) -> Option<Vec<usize>> {
    let same_files = old.sources.len() == p.sources.len()
        && old.first_def.len() == p.sources.len()
        && old.sources.iter().zip(&p.sources).all(|(a, b)| a.path == b.path);
    if !same_files {
        return None;
    }
    // Whether two lists of supertypes are written alike: of the same
    // symbols, in order.
    let alike =
        |a: &[DefIx], b: &[DefIx]| a.len() == b.len() && a.iter().zip(b).all(|(&s, &t)| old.symbol(s) == p.symbol(t));
    // Whether a definition (or its declaration) has supertypes written.
    fn listed(supers: &impl SuperTypes, d: DefIx, twin: Option<DefIx>) -> bool {
        supers.of(d).is_some() || twin.is_some_and(|t| supers.of(t).is_some())
    }
    // Per file: none when one of its definitions is spelled otherwise now
    // (every definition is looked at: another file's kept uses may point
    // at any), else whether its document moves.
    let per_file: Vec<Option<bool>> = (0..p.sources.len())
        .into_par_iter()
        .map(|f| {
            let (a, b) = (&old.sources[f], &p.sources[f]);
            if !std::sync::Arc::ptr_eq(a, b) {
                // Changed: the uses pointing into it were renumbered by symbol.
                return Some(true);
            }
            let mut moves = resolved[f];
            let all = b.lang.all_supertypes;
            for at in 0..b.facts.defs.len() {
                let (x, y) = (old.first_def[f] + at, p.first_def[f] + at);
                #[cfg(test)]
                assert!(!symbols_kept || old.symbol(x) == p.symbol(y), "a kept symbol differs");
                if !symbols_kept && old.symbol(x) != p.symbol(y) {
                    return None;
                }
                // Most definitions have no supertype on either side: none
                // listed to compare.
                let (tx, ty) = (old.defs[x].twin_of(), p.defs[y].twin_of());
                moves = moves
                    || !again::same_parent(old, x, p, y)
                    || old.defs[x].parent().map(|t| old.kind(t)) != p.defs[y].parent().map(|t| p.kind(t))
                    || ((listed(old_supers, x, tx) || listed(&p.supers, y, ty))
                        && !match (all, tx, ty) {
                            // The direct ones, as held: nothing to collect.
                            (false, None, None) => {
                                alike(old_supers.of(x).unwrap_or_default(), p.supers.of(y).unwrap_or_default())
                            }
                            _ => alike(&written_supers(old_supers, all, x, tx), &written_supers(&p.supers, all, y, ty)),
                        });
            }
            Some(moves)
        })
        .collect();
    let mut touched = Vec::new();
    for (f, moves) in per_file.into_iter().enumerate() {
        if moves? {
            touched.push(f);
        }
    }
    Some(touched)
}

/// The files whose uses were kept (not `resolved`) and that call a C or
/// C++ function-like macro of a file whose uses were resolved again: each
/// such call expands to what the macro's body calls now
/// ([`expand_macros`]), so their documents may move though their own uses
/// did not.
fn macro_callers(p: &Project, per_file: &[FileUses], resolved: &[bool]) -> Vec<usize> {
    if resolved.iter().all(|&r| r) {
        return Vec::new();
    }
    // Looked for among the resolved files' definitions only; none kept, no
    // caller. Marked by place: every kept use of the project is asked.
    let mut changed = vec![false; p.defs.len()];
    let mut some_changed = false;
    for f in (0..resolved.len()).filter(|&f| resolved[f]) {
        for d in p.defs_of_file(f).filter(|&d| p.fact(d).expands) {
            changed[d] = true;
            some_changed = true;
        }
    }
    if !some_changed {
        return Vec::new();
    }
    (0..per_file.len())
        .into_par_iter()
        .filter(|&f| !resolved[f] && per_file[f].uses.iter().any(|u| changed[u.target()]))
        .collect()
}

/// The uses in file `fi`: its type names and calls, resolved.
fn uses_of(r: &Resolver<'_>, fi: usize) -> FileUses {
    let facts = r.p.sources[fi].body.uses.unpack();
    let mut out = FileUses::default();
    for t in &facts.types {
        values::at(fi, t.span.bytes.0 as usize);
        let scope = r.innermost(fi, &t.span, |_| true);
        if let Some(target) = r.ty(fi, scope.unwrap_or(usize::MAX), t) {
            out.uses.push(Use::new(t.span, target, false));
        }
    }
    for (i, c) in facts.calls.iter().enumerate() {
        values::at(fi, c.span.bytes.0 as usize);
        let scope = r.innermost(fi, &c.span, |k| k.is_scope());
        match r.call(fi, scope, c) {
            Bound::One(target) => {
                out.resolved += usize::from(!c.read);
                out.uses.push(Use::new(c.span, target, false));
            }
            Bound::Several(targets) => {
                out.resolved += usize::from(!c.read);
                out.ambiguous += usize::from(!c.read);
                for target in targets {
                    out.uses.push(Use::new(c.span, target, true));
                }
            }
            Bound::Unbound if !c.read => {
                out.unbound.push(Unbound(index32(i)));
            }
            Bound::Unbound | Bound::Outside => {}
        }
    }
    out.expansions = expansions(r.p, fi, &out.uses);
    out
}

/// A call to a C or C++ function-like macro calls, once expanded, what the
/// macro's body calls: each such callee is a use at the macro call's place
/// too (one level: a macro's macros are expanded by their own uses), in
/// the order of the files' uses. What each macro's body calls is read from
/// the files' [`FileUses::expansions`].
pub(super) fn expand_macros(p: &Project, files: &[FileUses]) -> Vec<(u32, Use)> {
    let mut callees: HashMap<DefIx, Vec<DefIx>> = HashMap::default();
    for &(m, target) in files.iter().flat_map(|f| &f.expansions) {
        let v = callees.entry(m).or_default();
        if !v.contains(&target) {
            v.push(target);
        }
    }
    if callees.is_empty() {
        return Vec::new();
    }
    // Looked up by place, not hashed: every use of the project is asked.
    let mut expands = vec![false; p.defs.len()];
    for &m in callees.keys() {
        expands[m] = true;
    }
    files
        .iter()
        .zip(0u32..)
        .flat_map(|(f, fi)| f.uses.iter().map(move |u| (fi, u)))
        .filter(|(_, u)| expands[u.target()])
        .filter_map(|(fi, u)| Some((fi, u, callees.get(&u.target())?)))
        .flat_map(|(fi, u, targets)| targets.iter().map(move |&target| (fi, u.of(target))))
        .collect()
}

/// The uses among `uses` (file `fi`'s) that are in the body of a C or C++
/// function-like macro of the file, as (the macro, what the use means).
fn expansions(p: &Project, fi: usize, uses: &[Use]) -> Vec<(DefIx, DefIx)> {
    let defs = &p.sources[fi].facts.defs;
    // Sorted by start (as definitions are) and apart from each other (a
    // `#define` is its own lines): the last that starts before a use is the
    // only one that may hold it.
    let bodies: Vec<(usize, usize)> = defs.iter().filter(|d| d.expands).map(|d| d.span.offsets()).collect();
    if bodies.is_empty() {
        return Vec::new();
    }
    let in_a_body = |u: &Use| {
        let (start, end) = u.span.offsets();
        let upto = bodies.partition_point(|&(a, _)| a <= start);
        upto > 0 && end <= bodies[upto - 1].1
    };
    uses.iter()
        .filter(|u| in_a_body(u))
        .filter_map(|u| {
            let scope = innermost_in(p, fi, &u.span, |k| k.is_callable());
            scope.filter(|&m| p.fact(m).expands && u.target() != m).map(|m| (m, u.target()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project keeps each file's uses and unbound calls between edits
    /// (millions in a large tree): no file index in them (their list is
    /// the file's), the target a 32-bit index.
    #[test]
    fn a_use_and_an_unbound_call_are_compact() {
        assert_eq!(std::mem::size_of::<Use>(), 28);
        assert_eq!(std::mem::size_of::<Unbound>(), 4);
        let u = Use::new(Span::default(), 7, true);
        assert_eq!((u.target(), u.ambiguous()), (7, true));
        assert_eq!((u.of(9).target(), u.of(9).ambiguous()), (9, true));
        let last = (1 << 31) - 1;
        let v = Use::new(Span::default(), last, false);
        assert_eq!((v.target(), v.ambiguous()), (last, false));
        assert!(std::panic::catch_unwind(|| Use::new(Span::default(), 1 << 31, false)).is_err());
    }
}

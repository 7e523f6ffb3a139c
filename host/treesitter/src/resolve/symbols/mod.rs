//! SCIP symbols for the project's definitions, spelled as each language's
//! SCIP indexer spells them.

use std::collections::hash_map;

use super::*;

mod kept;

/// SCIP symbols: `<scheme> <manager> <module> . <descriptors>`, package
/// namespaces first, then each enclosing definition; overloads of a name
/// in one owner get `(+1)`, `(+2)`… in source order, as scip-java's do.
/// Given the `last` resolve of the same files, the definitions of the files
/// that did not change keep their symbols where no change can move them
/// (`kept.rs`), and only the changed files' are spelled: then true.
pub(super) fn symbols(p: &mut Project, last: Option<&Project>) -> bool {
    if let Some(old) = last {
        match kept::respelled(p, old) {
            Ok(()) => {
                #[cfg(test)]
                kept::check_against_whole(p);
                return true;
            }
            Err(why) => tracing::debug!(why, "every symbol spelled"),
        }
    }
    spell_all(p);
    false
}

/// Whether the symbols of `p`'s definitions are those they have in any
/// project of more files that come after these in path order: no
/// language of its spells a definition by what other files hold (those
/// `kept.rs` spells whole), and none of its definitions is declared apart
/// from its owner (a Go method, C++'s `Type::method`, Ruby's `class
/// A::B`), which a later file may define. Overloads are numbered in path
/// order, so later files number theirs after these.
pub fn spelled_alone(p: &Project) -> bool {
    let mut langs: Vec<&'static Lang> = Vec::new();
    for s in &p.sources {
        if !langs.iter().any(|l| std::ptr::eq(*l, s.lang)) {
            langs.push(s.lang);
        }
    }
    langs.iter().all(|l| kept::keeps(l)) && p.sources.iter().all(|s| s.facts.defs.iter().all(|d| d.owner().is_none()))
}

/// Every definition's symbol spelled.
fn spell_all(p: &mut Project) {
    let n = p.defs.len();
    let (own, twins) = {
        let mut s = Spelling::new(p, n);
        let mut own: Vec<String> = vec![String::new(); n];
        // A callable defined apart from its type (C++'s `double
        // Circle::area() const { … }`) is the member its type declares
        // with that name and parameters, not an overload: those come after
        // the rest.
        let (first, second): (Vec<DefIx>, Vec<DefIx>) = (0..n).partition(|&ix| !s.apart(ix));
        // Declarations are looked up by the definitions apart alone.
        s.any_apart = !second.is_empty();
        for ix in first.into_iter().chain(second) {
            s.descriptor(ix, &mut own);
        }
        (own, s.twins)
    };
    let done = whole_symbols(p, &own);
    let file = |f: usize| FileSymbols::of(p.defs_of_file(f).map(|d| done[d].as_deref().unwrap_or_default()));
    p.symbols = Symbols::of((0..p.sources.len()).map(|f| std::sync::Arc::new(file(f))));
    for (body, declaration) in twins {
        p.defs[body].set_twin_of(Some(declaration));
    }
}

/// (enclosing names, package, name): a callable's place.
type Place<'a> = (u32, u32, &'a str);
/// (parent, package, name): a C# type's scope.
type Scope<'a> = (Option<DefIx>, &'a [String], &'a str);

/// What spelling each definition's own descriptor counts as it goes, in
/// the order definitions are spelled.
///
/// Overloads are numbered per declaring type, not per definition of it: a
/// type declared in parts (a Swift extension, a C# partial class, a Ruby
/// class reopened, Kotlin's `expect` and `actual`) numbers its members
/// across all of them, so that two of them never share a symbol. The type
/// is named by its enclosing names (64 at most), each list of them by a
/// number, counted once per parent.
struct Spelling<'a> {
    p: &'a Project,
    owners: Owners<'a>,
    /// Each file's package, numbered.
    package: Vec<u32>,
    /// Sized to the definitions: grown instead, the maps rehash a large
    /// project's keys many times over.
    overloads: HashMap<Place<'a>, u32>,
    /// A Swift type's properties by place: the file of the first.
    terms: HashMap<Place<'a>, usize>,
    /// Kotlin's `actual` member is its `expect` member, declared in another
    /// file with the same parameter types: one symbol.
    expected: HashMap<(Place<'a>, Vec<String>), (usize, DefIx)>,
    /// The declarations in each type, by name: what a definition apart
    /// may be the body of.
    declared: HashMap<(Option<DefIx>, &'a str), Vec<DefIx>>,
    /// Object literals' properties, numbered per name in each file.
    properties: HashMap<(usize, &'a str), u32>,
    /// The declarations a definition apart was paired with.
    taken: HashSet<DefIx>,
    /// C#'s types of one name and different numbers of type parameters
    /// (`IValidator`, `IValidator<T>`) are different types. scip-dotnet
    /// spells each by its name alone, the same symbol; here a generic one
    /// with a namesake of another arity in its scope is spelled by its
    /// metadata name (`` `IValidator`1`# ``), every other type as
    /// scip-dotnet does.
    arities: HashMap<Scope<'a>, HashSet<u8>>,
    /// Whether any definition is apart: declarations are tabled only then.
    any_apart: bool,
    /// (definition apart, the declaration it is the body of).
    twins: Vec<(DefIx, DefIx)>,
}

impl<'a> Spelling<'a> {
    /// For spelling about `count` definitions of `p`.
    fn new(p: &'a Project, count: usize) -> Self {
        let package: Vec<u32> = {
            let mut numbered: HashMap<&[String], u32> = HashMap::default();
            p.sources
                .iter()
                .map(|s| {
                    let next = numbered.len() as u32;
                    *numbered.entry(s.package.as_slice()).or_insert(next)
                })
                .collect()
        };
        let mut arities: HashMap<Scope<'_>, HashSet<u8>> = HashMap::default();
        if p.sources.iter().any(|s| s.lang.name == "csharp") {
            for ix in 0..p.defs.len() {
                let f = p.fact(ix);
                if f.kind.is_type() && p.sources[p.defs[ix].file()].lang.name == "csharp" {
                    let pkg = p.sources[p.defs[ix].file()].package.as_slice();
                    arities.entry((p.defs[ix].parent(), pkg, f.name())).or_default().insert(f.generics);
                }
            }
        }
        Spelling {
            p,
            owners: Owners::default(),
            package,
            overloads: HashMap::with_capacity_and_hasher(count, Default::default()),
            terms: HashMap::default(),
            expected: HashMap::default(),
            declared: HashMap::with_capacity_and_hasher(count, Default::default()),
            properties: HashMap::default(),
            taken: HashSet::default(),
            arities,
            any_apart: false,
            twins: Vec::new(),
        }
    }

    /// The name definition `ix` is spelled by (a constructor by its
    /// language's name for one, where it has one).
    fn name(&self, ix: DefIx) -> &'a str {
        kept::spelled(self.p, ix)
    }

    /// Whether `ix` is a callable defined apart from its type.
    fn apart(&self, ix: DefIx) -> bool {
        kept::apart(self.p, ix)
    }

    /// Whether `ix` is spelled as a callable, numbered among its namesakes
    /// of the same place, enclosing names and package (`name().`,
    /// `name(+1).`…).
    fn numbered(p: &Project, ix: DefIx) -> bool {
        let (f, lang) = (p.fact(ix), p.sources[p.defs[ix].file()].lang);
        f.kind.is_callable()
            && f.kind != Kind::Macro
            && !f.meta
            && !f.term
            && !(lang.impl_blocks && f.rare().impl_of.is_some())
    }

    /// Definition `ix`'s own descriptor, into `own[ix]`.
    fn descriptor<O: std::ops::IndexMut<DefIx, Output = String> + ?Sized>(&mut self, ix: DefIx, own: &mut O) {
        let p = self.p;
        let def = &p.defs[ix];
        let s = &p.sources[def.file()];
        let f = p.fact(ix);
        let name = self.name(ix);
        // Default values are written in the declaration only: count parameters.
        let params = |a: Option<crate::extract::Arity>| a.map(|a| a.max);
        // Paired one to one, and only when one declaration fits, by the
        // number of parameters, then by their types as written (two
        // overloads with as many parameters, `set(int)` and `set(double)`);
        // one that still cannot be told apart keeps a symbol of its own.
        // A Swift extension's method is a member of its own, never the
        // definition of one its type declares (`validate(statusCode:)` in
        // `extension DataRequest` is not the class's `validate(_:)`).
        if self.apart(ix) && !s.lang.rules.foreign_extensions {
            let same_types = |d: DefIx| {
                let (a, b) = (p.fact(d).params(), f.params());
                a.clone().count() == b.clone().count()
                    && a.zip(b).all(|(x, y)| crate::extract::simple_type(x) == crate::extract::simple_type(y))
            };
            let mut fitting: Vec<DefIx> = self
                .declared
                .get(&(def.parent(), name))
                .map(|ds| ds.iter().copied().filter(|d| params(p.fact(*d).arity) == params(f.arity)).collect())
                .unwrap_or_default();
            if fitting.len() > 1 {
                fitting.retain(|&d| same_types(d));
            }
            if let [same] = fitting[..]
                && self.taken.insert(same)
            {
                own[ix] = own[same].clone();
                self.twins.push((ix, same));
                return;
            }
        }
        let mut d = String::with_capacity(name.len() + 8);
        if f.meta {
            let n = self.properties.entry((def.file(), name)).or_insert(0);
            push_name(&mut d, &format!("{name}{n}"));
            d.push(':');
            *n += 1;
            own[ix] = d;
            return;
        }
        let arity_named = f.kind.is_type()
            && f.generics > 0
            && self.arities.get(&(def.parent(), s.package.as_slice(), f.name())).is_some_and(|a| a.len() > 1);
        if arity_named {
            push_name(&mut d, &format!("{name}`{}", f.generics));
        } else {
            push_name(&mut d, name);
        }
        if f.kind == Kind::Macro {
            d.push('!');
        } else if f.term {
            d.push('.');
        } else if s.lang.impl_blocks && f.rare().impl_of.is_some() && f.kind.is_callable() {
            // Rust has no overloads; the impl's descriptor (written with
            // the whole symbol, below) tells two impls' methods apart.
            d.push_str("().");
        } else if f.kind.is_callable() {
            let owner = self.owners.of(p, def.parent());
            let package = self.package[def.file()];
            if s.lang.rules.expect_actual && def.parent().is_some() {
                let types = f.params().map(crate::extract::simple_type).collect();
                match self.expected.entry(((owner, package, name), types)) {
                    hash_map::Entry::Occupied(e) if e.get().0 != def.file() => {
                        own[ix] = own[e.get().1].clone();
                        return;
                    }
                    hash_map::Entry::Occupied(_) => {}
                    hash_map::Entry::Vacant(e) => {
                        e.insert((def.file(), ix));
                    }
                }
            }
            let k = self.overloads.entry((owner, package, name)).or_insert(0);
            match *k {
                0 => d.push_str("()."),
                n => d.push_str(&format!("(+{n}).")),
            }
            *k += 1;
            // Only a declaration in its type is a definition's twin (two
            // definitions apart, e.g. Go's per-platform files, stay two).
            if self.any_apart && !self.apart(ix) {
                self.declared.entry((def.parent(), name)).or_default().push(ix);
            }
        } else if f.kind.is_type() {
            d.push('#');
        } else if f.kind == Kind::Module {
            d.push('/');
        } else if s.lang.packages == Packages::ModuleFile
            && def.parent().is_none()
            && f.span.start.1 == 0
            && f.annotated
        {
            // scip-python spells an annotated module variable (`HOOKS:
            // list[str] = …`) twice, `HOOKS.HOOKS.`, where it is written at
            // the module's top level (not in an `if TYPE_CHECKING:` block).
            d.push('.');
            push_name(&mut d, name);
            d.push('.');
        } else if s.lang.rules.foreign_extensions && def.parent().is_some_and(|t| p.kind(t).is_type()) {
            // Swift's `fileprivate var completionFunctions` in an extension
            // of one type in each of two files: two properties, numbered
            // per type as overloads are (`completionFunctions(+1).`).
            let owner = self.owners.of(p, def.parent());
            let package = self.package[def.file()];
            let first = self.terms.entry((owner, package, name)).or_insert(def.file());
            if *first == def.file() {
                d.push('.');
            } else {
                let k = self.overloads.entry((owner, package, name)).or_insert(1);
                d.push_str(&format!("(+{k})."));
                *k += 1;
            }
        } else {
            d.push('.');
        }
        own[ix] = d;
    }
}

/// Each definition's whole symbol, from the descriptors `own`: its
/// parents' (or its package's), then its own.
fn whole_symbols(p: &Project, own: &[String]) -> Vec<Option<String>> {
    // scip-python spells a function nested in a method as a member of the
    // method's class (`Group#decorator().` for `Group.command`'s nested
    // `decorator`), where no other member of the class is spelled so.
    let hoisted = python_hoisted(p, own);
    // Names a Rust crate imports under another name (`use std::error::Error
    // as StdError;`): rust-analyzer spells an impl's types by what they
    // stand for. One name aliased to two things is left as written.
    let mut aliases: HashMap<&str, Option<&str>> = HashMap::default();
    for src in p.sources.iter().filter(|s| s.lang.impl_blocks) {
        for i in &src.facts.imports {
            let (Some(alias), Some(real)) = (i.alias.as_deref(), i.path.rsplit('.').next()) else { continue };
            if alias != real && !real.is_empty() && real != "*" {
                aliases.entry(alias).and_modify(|r| *r = r.filter(|r| *r == real)).or_insert(Some(real));
            }
        }
    }
    // A name a module defines itself (`mod ext { pub trait StdError … }`)
    // is that definition there, whatever the crate imports under that name.
    let module_of = |d: DefIx| {
        std::iter::successors(p.defs[d].parent(), |&x| p.defs[x].parent()).find(|&x| p.kind(x) == Kind::Module)
    };
    // The inline module (`mod local { … }`) an impl's member is written in,
    // by place: its parent is the impl's type, which may be elsewhere.
    type Placed = ((usize, usize), DefIx);
    let mut modules: HashMap<usize, Vec<Placed>> = HashMap::default();
    for (ix, d) in p.defs.iter().enumerate() {
        if p.kind(ix) == Kind::Module && p.sources[d.file()].lang.impl_blocks {
            modules.entry(d.file()).or_default().push((p.fact(ix).span.offsets(), ix));
        }
    }
    let impl_module = |d: DefIx| {
        let at = p.fact(d).span.offsets();
        let inside = modules.get(&p.defs[d].file())?.iter().filter(|((a, b), _)| *a <= at.0 && at.1 <= *b);
        inside.min_by_key(|((a, b), _)| b - a).map(|(_, m)| *m)
    };
    let types_in: HashSet<(usize, Option<DefIx>, &str)> = p
        .defs
        .iter()
        .enumerate()
        .filter(|(ix, d)| p.sources[d.file()].lang.impl_blocks && p.kind(*ix).is_type())
        .map(|(ix, d)| (d.file(), module_of(ix), p.fact(ix).name()))
        .collect();
    // Whole symbols, parents first (a Go method's type may come later).
    let impl_spelled = |d: DefIx| p.sources[p.defs[d].file()].lang.impl_blocks && p.fact(d).rare().impl_of.is_some();
    let mut done: Vec<Option<String>> = vec![None; p.defs.len()];
    // Each file's package symbol, made once.
    let mut packages: Vec<Option<String>> = vec![None; p.sources.len()];
    let mut package_of = |file: usize| packages[file].get_or_insert_with(|| package_symbol(&p.sources[file])).clone();
    let mut path: Vec<DefIx> = Vec::new();
    for ix in 0..p.defs.len() {
        path.clear();
        path.push(ix);
        while let Some(par) = p.defs[*path.last().expect("not empty")].parent() {
            if done[par].is_some() || path.len() > 64 || path.contains(&par) {
                break;
            }
            path.push(par);
        }
        for &d in path.iter().rev() {
            let parent = if hoisted.contains(&d) {
                p.defs[d].parent().and_then(|m| p.defs[m].parent())
            } else {
                p.defs[d].parent()
            };
            let foreign = p.defs[d].parent().is_none()
                && p.sources[p.defs[d].file()].lang.rules.foreign_extensions
                && p.fact(d).owner().is_some();
            // The common case: the parent's symbol and the descriptor.
            if !foreign
                && !impl_spelled(d)
                && let Some(parent) = parent.and_then(|par| done[par].as_deref())
            {
                let mut symbol = String::with_capacity(parent.len() + own[d].len());
                symbol.push_str(parent);
                symbol.push_str(&own[d]);
                done[d] = Some(symbol);
                continue;
            }
            let mut prefix = match parent.and_then(|par| done[par].clone()) {
                Some(parent) => parent,
                None => package_of(p.defs[d].file()),
            };
            // A method of a Swift extension of a type the project does not
            // define (`extension String { func slug() }`): still the
            // type's, `String#slug().`, not a top-level function.
            if p.defs[d].parent().is_none()
                && p.sources[p.defs[d].file()].lang.rules.foreign_extensions
                && let Some(owner) = p.fact(d).owner()
            {
                push_name(&mut prefix, owner);
                prefix.push('#');
            }
            // A member of a Rust impl block: `…/impl#[Circle][Shape]`
            // where its type is `…/Circle#` (or, for a type that is not
            // the project's, in the module the impl is in).
            if impl_spelled(d) {
                if let Some(m) = impl_module(d) {
                    // An impl in an inline module (`mod local { impl T for
                    // Oops { … } }`) is spelled in that module.
                    let mut chain: Vec<DefIx> = std::iter::successors(Some(m), |&x| p.defs[x].parent())
                        .take_while(|&x| p.kind(x) == Kind::Module)
                        .collect();
                    chain.reverse();
                    prefix = package_of(p.defs[d].file());
                    for x in chain {
                        prefix.push_str(&own[x]);
                    }
                } else if let Some(t) = p.defs[d].parent().filter(|&t| p.kind(t).is_type()) {
                    if p.defs[t].file() == p.defs[d].file() {
                        prefix.truncate(prefix.len().saturating_sub(own[t].len()));
                    } else {
                        // A type of another module (`use crate::Error;`):
                        // the impl is spelled in its own module.
                        prefix = package_of(p.defs[d].file());
                    }
                }
                let (of, tr) = p.fact(d).rare().impl_of.as_ref().expect("impl_spelled");
                prefix.push_str("impl#[");
                let (file, module) = (p.defs[d].file(), impl_module(d));
                let real = |w: &str| match aliases.get(w) {
                    Some(Some(real)) if !types_in.contains(&(file, module, w)) => Some(*real),
                    _ => None,
                };
                push_name(&mut prefix, &as_rust_analyzer_spells(of, &real));
                prefix.push(']');
                if let Some(tr) = tr {
                    prefix.push('[');
                    push_name(&mut prefix, &as_rust_analyzer_spells(tr, &real));
                    prefix.push(']');
                }
            }
            let mut symbol = String::with_capacity(prefix.len() + own[d].len());
            symbol.push_str(&prefix);
            symbol.push_str(&own[d]);
            done[d] = Some(symbol);
        }
    }
    done
}

/// A Rust type as rust-analyzer spells it in an impl's descriptor: a name
/// imported under another name is the name it stands for (`StdError` →
/// `Error`), and a trait object written as a type's argument without a
/// lifetime has the one it gets by default (`AsRef<dyn Error + Send>` →
/// `AsRef<dyn Error + Send + 'static>`).
fn as_rust_analyzer_spells<'a>(text: &str, real: &impl Fn(&str) -> Option<&'a str>) -> String {
    let mut out = String::with_capacity(text.len() + 10);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(real(word).unwrap_or(word));
        word.clear();
    };
    // The `dyn` bound lists open inside `<…>`, by depth: whether one has a
    // lifetime.
    let mut depth = 0usize;
    let mut dyn_at: Vec<(usize, bool)> = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    for (k, &c) in chars.iter().enumerate() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if word == "dyn" && depth > 0 {
            dyn_at.push((depth, false));
        }
        if !word.is_empty() {
            flush(&mut word, &mut out);
        }
        match c {
            '\'' => {
                if let Some(last) = dyn_at.last_mut().filter(|(d, _)| *d == depth) {
                    last.1 = true;
                }
            }
            '<' => depth += 1,
            '>' | ',' => {
                // The end of a `dyn` list at this depth.
                if let Some(&(d, lifetime)) = dyn_at.last()
                    && d == depth
                {
                    dyn_at.pop();
                    if !lifetime {
                        while out.ends_with(' ') {
                            out.pop();
                        }
                        out.push_str(" + 'static");
                    }
                }
                if c == '>' && chars.get(k.wrapping_sub(1)) != Some(&'-') {
                    depth = depth.saturating_sub(1);
                }
            }
            _ => {}
        }
        out.push(c);
    }
    if !word.is_empty() {
        flush(&mut word, &mut out);
    }
    out
}

/// Python functions nested in a method whose symbol scip-python spells
/// under the method's class: those whose descriptor no member of the class,
/// and no other function so nested in it, has.
fn python_hoisted(p: &Project, own: &[String]) -> HashSet<DefIx> {
    let python = |d: DefIx| p.sources[p.defs[d].file()].lang.packages == Packages::ModuleFile;
    if !(0..p.defs.len()).any(python) {
        return HashSet::default();
    }
    let class_of = |d: DefIx| {
        let m = p.defs[d].parent()?;
        let c = p.defs[m].parent()?;
        let nested = p.sources[p.defs[d].file()].lang.packages == Packages::ModuleFile
            && p.kind(d).is_callable()
            && p.kind(m).is_callable()
            && p.kind(c).is_type();
        nested.then_some(c)
    };
    let mut spelled: HashMap<(DefIx, &str), u32> = HashMap::default();
    // Only a Python class's members are counted: no other is hoisted.
    for (d, descriptor) in own.iter().enumerate().filter(|(d, _)| python(*d)) {
        let class = class_of(d).or_else(|| p.defs[d].parent().filter(|&c| p.kind(c).is_type()));
        if let Some(c) = class {
            *spelled.entry((c, descriptor.as_str())).or_insert(0) += 1;
        }
    }
    (0..p.defs.len()).filter(|&d| class_of(d).is_some_and(|c| spelled[&(c, own[d].as_str())] == 1)).collect()
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
pub(super) fn escape_field(s: &str) -> String {
    if s.is_empty() { ".".into() } else { s.replace(' ', "  ") }
}

/// The enclosing names of definitions (their parents' names, innermost
/// first, 64 at most), each list numbered: two parents in different files
/// with the same names (a type declared in parts) share a number.
#[derive(Default)]
struct Owners<'a> {
    numbered: HashMap<Vec<&'a str>, u32>,
    by_parent: HashMap<Option<DefIx>, u32>,
}

impl<'a> Owners<'a> {
    fn of(&mut self, p: &'a Project, parent: Option<DefIx>) -> u32 {
        if let Some(&n) = self.by_parent.get(&parent) {
            return n;
        }
        let mut names: Vec<&str> = Vec::new();
        let mut at = parent;
        while let Some(par) = at
            && names.len() < 64
        {
            names.push(p.fact(par).name());
            at = p.defs[par].parent();
        }
        let next = self.numbered.len() as u32;
        let n = *self.numbered.entry(names).or_insert(next);
        self.by_parent.insert(parent, n);
        n
    }
}

/// A descriptor name: plain when simple, else in backticks.
pub(super) fn push_name(out: &mut String, name: &str) {
    let plain = |c: char| c.is_alphanumeric() || matches!(c, '_' | '+' | '-' | '$');
    if !name.is_empty()
        && (name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-' | b'$'))
            || name.chars().all(plain))
    {
        out.push_str(name);
    } else {
        out.push('`');
        out.push_str(&name.replace('`', "``"));
        out.push('`');
    }
}

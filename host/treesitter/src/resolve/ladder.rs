//! The resolution ladder: what a name means seen from a scope, nearest
//! rung first (enclosing definitions and their supertypes, the file, its
//! imports, its package, the project), and the supertypes a type has.

use super::*;

pub(super) struct Resolver<'a> {
    pub(super) p: &'a Project,
    pub(super) look: &'a Lookup,
    pub(super) members: &'a HashMap<DefIx, Vec<DefIx>>,
    pub(super) vars: &'a Vars,
    /// What it works out before any file's uses.
    pub(super) held: Held,
}

/// What a resolver works out before any file's uses, and owns: kept
/// with the lookups for the next resolve ([`super::warm::Warm`]).
#[derive(Default, Clone)]
pub(super) struct Held {
    /// Each type's supertypes, nearest first.
    pub(super) supers: HashMap<DefIx, Vec<DefIx>>,
    /// The extension functions of each type (Kotlin's `fun Reader.decode()`,
    /// C#'s `this Reader r`), found by calls on its values when the type
    /// and its supertypes have no member of that name.
    pub(super) extensions: HashMap<DefIx, Vec<DefIx>>,
    /// The extension functions of types the project does not define
    /// (Kotlin's `fun String.slug()`, `fun Type.canonicalize()`), by the
    /// type's last name: found by calls on values written of that type.
    pub(super) foreign_extensions: HashMap<String, Vec<DefIx>>,
    /// The type each extension function extends, where its members are in
    /// the function's scope (`receiver_in_scope`).
    pub(super) receivers: HashMap<DefIx, DefIx>,
    /// The other parts of each type declared in parts (a C# `partial`
    /// class, Kotlin's `expect` class and its `actual` ones), by the part
    /// that stands for them all.
    pub(super) parts: HashMap<DefIx, Vec<DefIx>>,
    /// The reverse: each later part's first part, which holds the type's
    /// members and supertypes.
    pub(super) whole: HashMap<DefIx, DefIx>,
    /// The same, by their own name: what a call on a value of unknown type
    /// may mean.
    pub(super) foreign_named: HashMap<String, Vec<DefIx>>,
}

impl<'a> Resolver<'a> {
    /// A resolver of `p`'s names through `look`, with what `held` holds.
    pub(super) fn new(
        p: &'a Project,
        look: &'a Lookup,
        members: &'a HashMap<DefIx, Vec<DefIx>>,
        vars: &'a Vars,
        held: Held,
    ) -> Resolver<'a> {
        Resolver { p, look, members, vars, held }
    }

    /// What it holds, for the next resolve.
    pub(super) fn held(self) -> Held {
        self.held
    }
}

impl Resolver<'_> {
    pub(super) fn innermost(&self, fi: usize, span: &Span, pass: impl Fn(Kind) -> bool) -> Option<DefIx> {
        innermost_in(self.p, fi, span, pass)
    }

    /// The innermost type around `scope` (what `self`, `this` and `Self`
    /// mean there).
    pub(super) fn enclosing_type(&self, scope: Option<DefIx>) -> Option<DefIx> {
        self.scopes(scope).find(|&d| self.p.kind(d).is_type())
    }

    /// The chain of definitions from `d` outwards, with the type an
    /// extension function extends right after it where that type's
    /// members are in its scope (Kotlin).
    pub(super) fn scopes(&self, d: Option<DefIx>) -> impl Iterator<Item = DefIx> + '_ {
        self.chain(d).flat_map(|x| std::iter::once(x).chain(self.held.receivers.get(&x).copied()))
    }

    /// The one of `level` that takes `args` arguments (any, when not
    /// known), if exactly one does.
    pub(super) fn fitting(&self, level: &[DefIx], args: Option<u32>) -> Option<DefIx> {
        let mut fit =
            level.iter().copied().filter(|&d| args.is_none_or(|n| self.p.fact(d).arity.is_none_or(|a| a.fits(n))));
        match (fit.next(), fit.next()) {
            (Some(one), None) => Some(one),
            _ => None,
        }
    }

    /// Whether `name` names a namespace of the project (C++'s `shapes`).
    pub(super) fn is_namespace(&self, name: &str) -> bool {
        self.look.named(name).iter().any(|&d| self.p.kind(d) == Kind::Module)
    }

    /// Whether Ruby's `self` at scope `d` is the class (or module) rather
    /// than an instance: in a class method (`def self.x`, `class << self`)
    /// or in the class body.
    pub(super) fn in_class_context(&self, d: Option<DefIx>) -> bool {
        self.chain(d)
            .find_map(|d| match self.p.kind(d) {
                k if k.is_callable() => Some(self.p.fact(d).singleton),
                k if k.is_type() || k == Kind::Module => Some(true),
                _ => None,
            })
            .unwrap_or(false)
    }

    /// The chain of definitions from `d` outwards.
    pub(super) fn chain(&self, d: Option<DefIx>) -> impl Iterator<Item = DefIx> + '_ {
        std::iter::successors(d, |&x| self.p.defs[x].parent())
    }

    /// `t` and its supertypes, nearest first, each once (of a type declared
    /// in parts, from the part that holds its members).
    pub(super) fn lineage(&self, t: DefIx) -> Vec<DefIx> {
        let mut out = vec![self.held.whole.get(&t).copied().unwrap_or(t)];
        let mut i = 0;
        while i < out.len() && out.len() < 64 {
            for &s in self.held.supers.get(&out[i]).map_or(&[][..], Vec::as_slice) {
                if !out.contains(&s) {
                    out.push(s);
                }
            }
            i += 1;
        }
        out
    }

    /// The definitions named `name` that file `fi`'s imports bring in: the
    /// imported definition itself (`import a.b.C`), a package's member
    /// (`import a.b.*`, a Go import path), a member of a type imported by
    /// name (`import static a.b.C.isEmpty`, `import a.b.Outer.Inner`) or
    /// all of them (`import static a.b.C.*`). Importing a type brings in
    /// the type, never its members (`import a.Strings;` does not make its
    /// nested `Builder` a name of the file).
    pub(super) fn imported(&self, fi: usize, name: &str) -> Vec<DefIx> {
        let s = &self.p.sources[fi];
        lookup::read_key(lookup::imports_key(&s.path));
        let mut out = Vec::new();
        for i in &s.facts.imports {
            // A Go import binds the package's name, not its members: only
            // a dot import (`import . "pkg"`) brings them into the file.
            if s.lang.packages == Packages::ModulePath {
                if i.alias.as_deref() == Some(".") {
                    out.extend_from_slice(self.look.in_package(&i.path, name));
                }
                continue;
            }
            if let Some(pkg) = i.path.strip_suffix(".*") {
                // `import * as util`: names of the module through `util.`
                // only (see [`Self::package_alias`]).
                if i.alias.is_some() {
                    continue;
                }
                out.extend(self.exported(pkg, name, REEXPORTS));
                // A namespace of the project (C++'s `using namespace`).
                out.extend(self.in_namespace(pkg.rsplit('.').next().unwrap_or(pkg), name, |_| true));
                for t in self.type_at(pkg, 4) {
                    out.extend_from_slice(self.look.owned(t, name));
                }
                continue;
            }
            // `using W = Toolkit.Core.Widget;`, `from a import B as C`.
            if let Some(alias) = i.alias.as_deref().filter(|a| *a != ".") {
                if alias == name
                    && let Some((pkg, last)) = i.path.rsplit_once('.')
                {
                    out.extend(self.exported(pkg, last, REEXPORTS));
                    for t in self.type_at(pkg, 4) {
                        out.extend_from_slice(self.look.owned(t, last));
                    }
                }
                continue;
            }
            if let Some(pkg) = i.package_of(name) {
                out.extend(self.exported(pkg, name, REEXPORTS));
                for t in self.type_at(pkg, 4) {
                    out.extend_from_slice(self.look.owned(t, name));
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The types of the project a dotted path names (`a.b.C`, a nested
    /// `a.b.Outer.Inner`), through at most `depth` enclosing types.
    fn type_at(&self, path: &str, depth: u8) -> Vec<DefIx> {
        let Some((outer, last)) = path.rsplit_once('.') else { return Vec::new() };
        let mut found: Vec<DefIx> =
            self.look.in_package(outer, last).iter().copied().filter(|&t| self.p.kind(t).is_type()).collect();
        if found.is_empty() && depth > 0 {
            for t in self.type_at(outer, depth - 1) {
                found.extend(self.look.owned(t, last).iter().filter(|&&d| self.p.kind(d).is_type()));
            }
        }
        found
    }

    /// The top-level definitions called `name` of package `pkg`; where it
    /// defines none, what its files import under that name (Rust's `pub
    /// use`, a Python package's `__init__`), followed at most `hops` times,
    /// in the languages whose imports re-export ([`Rules::reexports`]).
    ///
    /// Breadth first, each package and name once: packages that import
    /// each other, or many files of one package importing the same module,
    /// cost one visit each, not one per path through them (followed per
    /// path, a C# namespace's `using`s fanned out as files × imports per
    /// hop: minutes for one library). The first visit of a pair is the one
    /// with the most hops left, so nothing is found that the paths would not.
    ///
    /// [`Rules::reexports`]: crate::languages::Rules::reexports
    pub(super) fn exported(&self, pkg: &str, name: &str, hops: u8) -> Vec<DefIx> {
        let direct = self.look.in_package(pkg, name);
        if !direct.is_empty() || hops == 0 {
            return direct.to_vec();
        }
        let mut out = Vec::new();
        let mut seen: super::HashSet<(&str, &str)> = super::HashSet::default();
        seen.insert((pkg, name));
        let mut queue = std::collections::VecDeque::from([(pkg, name, hops)]);
        while let Some((pkg, name, hops)) = queue.pop_front() {
            let direct = self.look.in_package(pkg, name);
            if !direct.is_empty() || hops == 0 {
                out.extend_from_slice(direct);
                continue;
            }
            let Some(n) = self.look.packages.get(pkg) else { continue };
            lookup::read_key(lookup::reexports_key(pkg));
            for &f in Lookup::get(&self.look.package_files, n) {
                let s = &self.p.sources[f];
                if !s.lang.rules.reexports {
                    continue;
                }
                for i in &s.facts.imports {
                    let (from, last) = i.path.rsplit_once('.').unwrap_or(("", &i.path));
                    // A file's own name re-exported as its `default` is followed.
                    if from == pkg && i.alias.as_deref() != Some("default") {
                        continue;
                    }
                    let next = if last == "*" {
                        (from, name)
                    } else if i.alias.as_deref().unwrap_or(last) == name {
                        (from, last)
                    } else {
                        continue;
                    };
                    if seen.insert(next) {
                        queue.push_back((next.0, next.1, hops - 1));
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The package file `fi` imports as `alias` (Go: the alias, else the
    /// path's last element), dotted as [`Lookup`] keys it.
    pub(super) fn package_alias(&self, fi: usize, alias: &str) -> Option<String> {
        let s = &self.p.sources[fi];
        lookup::read_key(lookup::imports_key(&s.path));
        s.facts.imports.iter().find_map(|i| {
            let named = match i.alias.as_deref() {
                Some(a) => a,
                None => self.package_name(&i.path),
            };
            // Rust's `use crate::hir::{self}` is `.hir`, a name of the
            // crate root: the module `hir` where there is one.
            (named == alias).then(|| match i.path.strip_prefix('.') {
                Some(module) if self.look.packages.contains_key(module) => module.to_owned(),
                // A module imported whole under a name (`import * as util`).
                _ => i.path.strip_suffix(".*").filter(|_| i.alias.is_some()).unwrap_or(&i.path).to_owned(),
            })
        })
    }

    /// The name an import of package `path` binds without an alias: the
    /// name its files declare, for a package of the project (Go's
    /// `example.com/chi/v5` is `chi`); else the path's last element, a
    /// major version left out (`…/chi/v5`, `gopkg.in/yaml.v3`).
    fn package_name<'a>(&'a self, path: &'a str) -> &'a str {
        let declared = self.look.packages.get(path).and_then(|n| {
            let f = *Lookup::get(&self.look.package_files, n).first()?;
            self.p.sources[f].facts.package.as_deref()
        });
        if let Some(name) = declared.filter(|n| !n.is_empty() && !n.contains(['.', '/'])) {
            return name;
        }
        let version = |w: &str| w.len() > 1 && w.starts_with('v') && w[1..].bytes().all(|c| c.is_ascii_digit());
        let mut words = path.rsplit(['/', '.']).filter(|w| !w.is_empty());
        let last = words.next().unwrap_or("");
        if version(last) { words.next().unwrap_or(last) } else { last }
    }

    /// What `name` means seen from scope `from` in file `fi`, nearest rung
    /// first: one definition at the first rung that has any, or none when
    /// that rung has several and `tie` cannot choose.
    pub(super) fn ladder(
        &self,
        fi: usize,
        from: Option<DefIx>,
        name: &str,
        want: Want,
        tie: impl Fn(&[DefIx]) -> Option<DefIx>,
    ) -> Option<DefIx> {
        self.ladder_taking(fi, from, name, want, None, tie)
    }

    /// [`Self::ladder`] for a call with `args` arguments (any, when not
    /// known): where the language resolves level by level among the
    /// candidates that can take them (`applicable_levels`), a level with
    /// none that can is passed over.
    pub(super) fn ladder_taking(
        &self,
        fi: usize,
        from: Option<DefIx>,
        name: &str,
        want: Want,
        args: Option<u32>,
        tie: impl Fn(&[DefIx]) -> Option<DefIx>,
    ) -> Option<DefIx> {
        let (level, _) = self.rung(fi, from, name, want, args.map(|n| Taking::args(Some(n))).as_ref())?;
        if let [one] = level[..] { Some(one) } else { tie(&level) }
    }

    /// The definitions `name` may mean seen from scope `from` in file `fi`:
    /// those of the first rung that has any (of several, the ones the file
    /// imports, when it imports some), and whether that rung is the last,
    /// the whole project (where several are no overloads but namesakes).
    pub(super) fn rung(
        &self,
        fi: usize,
        from: Option<DefIx>,
        name: &str,
        want: Want,
        taking: Option<&Taking<'_>>,
    ) -> Option<(Vec<DefIx>, bool)> {
        let all = self.look.named(name);
        if !all.iter().any(|&d| want.admits(self.p.kind(d))) {
            // No definition is called so; an import may name one so
            // (`using W = Toolkit.Core.Widget;`).
            lookup::read_key(lookup::imports_key(&self.p.sources[fi].path));
            // Or a re-export under a new name names one so (`import { b }
            // from "./index"`, where the index writes `export { a as b }
            // from "./x"`).
            let names = |i: &crate::extract::Import| match i.alias.as_deref() {
                Some(a) => a == name,
                None => i.package_of(name).is_some(),
            };
            if !self.p.sources[fi].facts.imports.iter().any(names) {
                return None;
            }
            let aliased: Vec<DefIx> =
                self.imported(fi, name).into_iter().filter(|&d| want.admits(self.p.kind(d))).collect();
            return (!aliased.is_empty()).then_some((aliased, false));
        }
        // Where a plain call never means a member (Rust, Python, Go,
        // TypeScript), members are not candidates.
        let plain = want == Want::Callable && !self.p.sources[fi].lang.members_in_scope;
        let scoped_variants = self.p.sources[fi].lang.rules.scoped_variants;
        let admits = |d: DefIx| {
            want.admits(self.p.kind(d))
                && !(plain && self.p.defs[d].parent().is_some_and(|t| self.p.kind(t).is_type()))
                && !(scoped_variants && self.p.defs[d].parent().is_some_and(|t| self.p.kind(t) == Kind::Enum))
        };
        let imported = std::cell::OnceCell::new();
        // Ruby's class methods and instance methods of one name: the kind
        // the use is in (`settings` in `class << self` is `def
        // self.settings`, in an instance method `def settings`; in the
        // class body, where `self` is the class, a class method).
        let singleton =
            from.filter(|_| self.p.sources[fi].lang.rules.nested_modules).map(|f| self.in_class_context(Some(f)));
        // Kotlin, C# and Java look a called name up level by level among
        // the candidates that can take the call: a member of the receiver
        // that cannot (`readUtf8Line()` for `readUtf8Line(newline)`; a
        // subclass's `SetProperty(ref f, v, bool broadcast)` for
        // `SetProperty(ref f, v, name)`) leaves the call to the next level
        // (the extension function, the base class's overload).
        let applicable = taking.filter(|_| self.p.sources[fi].lang.rules.applicable_levels);
        let pick = |level: &[DefIx]| -> Option<Vec<DefIx>> {
            let mut level: Vec<DefIx> = level.iter().copied().filter(|&d| admits(d)).collect();
            if let Some(t) = applicable
                && !level.is_empty()
                && !level.iter().any(|&d| self.can_take(d, t))
            {
                return None;
            }
            if let Some(s) = singleton
                && level.len() > 1
                && level.iter().any(|&d| self.p.fact(d).singleton == s)
            {
                level.retain(|&d| !self.p.kind(d).is_callable() || self.p.fact(d).singleton == s);
            }
            match level.len() {
                0 => None,
                1 => Some(level),
                _ => {
                    // Of several, the one the file imports (C++'s `using
                    // namespace metric;` between `metric::scale` and
                    // `imperial::scale`).
                    let imported: &Vec<DefIx> = imported.get_or_init(|| self.imported(fi, name));
                    let chosen: Vec<DefIx> = level.iter().copied().filter(|d| imported.contains(d)).collect();
                    Some(if chosen.is_empty() { level } else { chosen })
                }
            }
        };
        // Members of the types extended by the anonymous classes around the
        // use (`new ToStringStyle() { { setUseClassName(true); } }`),
        // innermost first, then of the enclosing definitions and their
        // supertypes.
        if !plain && !matches!(want, Want::Type | Want::Mixin) {
            for t in self.anonymous_around(fi, from) {
                for t in self.lineage(t) {
                    if let Some(r) = pick(self.look.owned(t, name)) {
                        return Some((r, false));
                    }
                }
            }
        }
        // The definitions around the use, nearest first, each with its
        // supertypes and mixins: Ruby's modules (`Module.nesting`), a
        // module reopened in several files being one, its names (and those
        // of the modules it extends, in whichever file) seen from each.
        for d in self.scopes(from) {
            // A plain call never means a member, but a function's nested
            // definitions are in its scope (Python's local `def filter()`
            // over the builtin, Rust's nested `fn imp()`).
            if plain {
                if self.p.kind(d).is_callable()
                    && let Some(r) = pick(self.look.owned(d, name))
                {
                    return Some((r, false));
                }
                continue;
            }
            for t in self.lineage(d) {
                if let Some(r) = pick(self.look.owned(t, name)) {
                    return Some((r, false));
                }
            }
        }
        // Each rung is looked at only when the ones before it had nothing.
        if let Some(r) = pick(self.look.in_file(fi, name)) {
            return Some((r, false));
        }
        if let Some(r) = pick(&self.imported(fi, name)) {
            return Some((r, false));
        }
        // C's (and C++'s global namespace's) one package is the whole
        // project: its namesakes are other files' functions, not overloads.
        // So is Ruby's, which has no packages.
        let package = self.look.file_package[fi];
        let whole = self.p.sources[fi].package.is_empty()
            && (self.p.sources[fi].lang.name == "cpp" || self.p.sources[fi].lang.rules.nested_modules);
        if let Some(r) = pick(self.look.in_package_of(package, name)) {
            return Some((r, whole));
        }
        // Scala's chained package clauses (`package cats.kernel` then
        // `package instances`): the enclosing packages' names are in scope
        // too, nearest first.
        if self.p.sources[fi].lang.name == "scala" {
            let pkg = &self.p.sources[fi].package;
            for k in (1..pkg.len()).rev() {
                if let Some(r) = pick(self.look.in_package(&pkg[..k].join("."), name)) {
                    return Some((r, false));
                }
            }
        }
        // A call of a name in scope nowhere: the project's only where its
        // language has global names.
        let lang = self.p.sources[fi].lang;
        if matches!(want, Want::Callable | Want::Value) && (!lang.global_names || lang.builtins.contains(&name)) {
            return None;
        }
        pick(all).map(|r| (r, true))
    }

    /// The types the anonymous classes around the current use extend,
    /// innermost first.
    fn anonymous_around(&self, fi: usize, from: Option<DefIx>) -> Vec<DefIx> {
        let anonymous = &self.p.sources[fi].facts.anonymous;
        if anonymous.is_empty() {
            return Vec::new();
        }
        let at = super::values::here();
        let mut around: Vec<&((usize, usize), Name)> =
            anonymous.iter().filter(|((a, b), _)| (*a..*b).contains(&at)).collect();
        around.sort_by_key(|((a, b), _)| b - a);
        around.iter().filter_map(|(_, t)| self.ty(fi, from.unwrap_or(usize::MAX), t)).collect()
    }

    /// The type a name means, from scope `from` (usize::MAX: file level).
    pub(super) fn ty(&self, fi: usize, from: DefIx, name: &Name) -> Option<DefIx> {
        self.ty_as(fi, from, name, Want::Type)
    }

    /// The project's own type named like a wrapper of the standard
    /// libraries (`Ref`, `Map`), where the use sees it: defined in a scope
    /// around it, in its file, imported by it or in its package, or named
    /// through one of the project's modules (`ptr::Ref`, `crate::ptr::Ref`).
    /// Not a namesake found only project-wide, and not an alias of the
    /// name (`type Result<T> = …`), which stays the wrapper.
    pub(super) fn own_namesake(&self, fi: usize, scope: Option<DefIx>, name: &Name) -> Option<DefIx> {
        let d = match name.qualifier.as_deref() {
            Some(q) => {
                let first = q.split("::").next().unwrap_or(q);
                let project = matches!(first, "crate" | "super" | "self") || self.module_path(fi, first).is_some();
                if !project {
                    return None;
                }
                let bare = Name { qualifier: None, ..name.clone() };
                self.ty(fi, scope.unwrap_or(usize::MAX), name)
                    .or_else(|| self.ty(fi, scope.unwrap_or(usize::MAX), &bare))?
            }
            None => {
                let (level, whole) = self.rung(fi, scope, &name.name, Want::Type, None)?;
                if whole {
                    return None;
                }
                self.one_type(&level, name)?
            }
        };
        let alias = self.p.kind(d) == Kind::Type && self.p.fact(d).returns().is_some();
        (!alias).then_some(d)
    }

    /// [`Self::ty`], of the kinds `want` admits (a Ruby header's module).
    pub(super) fn ty_as(&self, fi: usize, from: DefIx, name: &Name, want: Want) -> Option<DefIx> {
        let from = (from != usize::MAX).then_some(from);
        if let Some(q) = &name.qualifier {
            // Kotlin's and Java's `JsonAdapter.Factory`: a type nested in a
            // type in scope called so (imported or not).
            let nested = || {
                let outer_name = q.rsplit(['.', ':']).next().unwrap_or(q);
                if outer_name.is_empty() || q.contains("::") {
                    return None;
                }
                let outer = Name { name: outer_name.to_owned(), qualifier: None, span: name.span, generics: 0 };
                let outer = self.ladder(fi, from, outer_name, Want::Type, |l| self.one_type(l, &outer))?;
                let outer = self.held.whole.get(&outer).copied().unwrap_or(outer);
                let found: Vec<DefIx> = self
                    .look
                    .owned(outer, &name.name)
                    .iter()
                    .copied()
                    .filter(|&d| want.admits(self.p.kind(d)))
                    .collect();
                self.one_type(&found, name)
            };
            let Some(pkg) = self.package_alias(fi, q) else {
                // C++'s `shapes::Shape`, Ruby's `Shop::Base`: a type in a
                // namespace of the project called so; `std::vector`: not
                // the project's.
                let found = self.in_namespace(q, &name.name, |k| want.admits(k));
                return self.one_type(&found, name).or_else(nested);
            };
            let found: Vec<DefIx> = self
                .look
                .in_package(&pkg, name.name.as_str())
                .iter()
                .copied()
                .filter(|&d| want.admits(self.p.kind(d)))
                .collect();
            return self.one_type(&found, name).or_else(nested);
        }
        self.ladder(fi, from, &name.name, want, |level| self.one_type(level, name))
    }

    /// The one type of several namesakes that `name` means: the one with
    /// as many type parameters as it has arguments (C#'s `IValidator`
    /// against `IValidator<T>`), or one definition of one symbol (a C#
    /// partial class written in several places).
    fn one_type(&self, found: &[DefIx], name: &Name) -> Option<DefIx> {
        let one_symbol = |ds: &[DefIx]| match ds {
            [first, rest @ ..] if rest.iter().all(|&d| self.p.symbol(d) == self.p.symbol(*first)) => Some(*first),
            _ => None,
        };
        one_symbol(found)
            .or_else(|| {
                let same: Vec<DefIx> =
                    found.iter().copied().filter(|&d| self.p.fact(d).generics == name.generics).collect();
                one_symbol(&same)
            })
            .or_else(|| {
                // Scala's class or trait and its companion object, one name:
                // in a type's place, the type.
                let types: Vec<DefIx> = found
                    .iter()
                    .copied()
                    .filter(|&d| !(self.p.kind(d) == Kind::Module && self.p.fact(d).term))
                    .collect();
                (types.len() < found.len()).then(|| one_symbol(&types)).flatten()
            })
    }

    /// The definitions called `name` (of a kind `pass` admits) declared in
    /// a namespace (C++) of the project called `ns`.
    pub(super) fn in_namespace(&self, ns: &str, name: &str, pass: impl Fn(Kind) -> bool) -> Vec<DefIx> {
        let ns = ns.rsplit("::").next().unwrap_or(ns);
        self.look
            .named(name)
            .iter()
            .copied()
            .filter(|&d| {
                pass(self.p.kind(d))
                    && self.p.defs[d]
                        .parent()
                        .is_some_and(|m| self.p.kind(m) == Kind::Module && self.p.fact(m).name() == ns)
            })
            .collect()
    }
}

//! What an expression gives: a receiver's type read from the bindings,
//! returns and wrappers it names (`let a = b.c(); a.d()`, `Arc<Mutex<T>>`).

use super::written::{ADAPTERS, ELEMENT, SAME_VALUE, UNWRAPS, Wrapper, path_before, returned_by, wrapper};
use super::*;

thread_local! {
    /// Where the use being resolved on this thread is (a byte offset in its
    /// file): a name declared in a function literal is seen only inside it.
    static AT: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
    /// The file that use is in.
    static FILE: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
}

/// Sets where the use about to be resolved on this thread is.
pub(super) fn at(file: usize, offset: usize) {
    FILE.set(file);
    AT.set(offset);
}

/// While what file `file` declares is read for a use in another file: no
/// function literal or anonymous class of `file` is around that use (its
/// offset means nothing there). Restores the use's place when dropped.
pub(super) struct Elsewhere(Option<usize>);

pub(super) fn elsewhere(file: usize) -> Elsewhere {
    Elsewhere((FILE.get() != file).then(|| AT.replace(usize::MAX)))
}

impl Drop for Elsewhere {
    fn drop(&mut self) {
        if let Some(at) = self.0 {
            AT.set(at);
        }
    }
}

/// While an expression of file `file` at byte `at` is read (a variable's
/// value): the names seen are those seen from there. Restores the use's
/// place when dropped.
pub(super) fn seen_from(file: usize, at: usize) -> Elsewhere {
    Elsewhere((FILE.get() == file).then(|| AT.replace(at)))
}

/// Where the use being resolved on this thread is.
pub(super) fn here() -> usize {
    AT.get()
}

/// Whether a name declared within `within` (a function literal's bytes;
/// none: the whole scope) is seen where the current use is.
fn visible(within: Option<(usize, usize)>) -> bool {
    within.is_none_or(|(a, b)| (a..b).contains(&AT.get()))
}

/// Of a scope's names, the binding of `var` seen from the current use: one
/// declared in the innermost function literal or match arm around the use
/// before one declared outside them, and of those, the last declared. A
/// shadow bound to the name it shadows (Swift's `var request = request`)
/// is the binding before it, where the scope has one. A name is never seen
/// from its own value (`var request = try request.asURLRequest()`, and
/// while that value is read): that is the binding before it too. `file` is
/// the file that declares `vars`.
fn nearest<'v>(file: usize, vars: &'v [lookup::TypedName], var: &str) -> Option<&'v Binding> {
    let width = |w: &Option<(usize, usize)>| w.map_or(usize::MAX, |(a, b)| b - a);
    let shadow = |b: &Binding| matches!(b, Binding::Value(e, _) if e == var);
    let in_own_value = |b: &Binding| match b {
        Binding::Value(_, (from, to)) | Binding::Element(_, (from, to)) => {
            FILE.get() == file && (*from..*to).contains(&AT.get())
        }
        Binding::Type(..) => false,
    };
    let best = |skip_shadows: bool| {
        let mut best: Option<&lookup::TypedName> = None;
        let seen = |(n, b, w): &&lookup::TypedName| {
            n == var && visible(*w) && !in_own_value(b) && !(skip_shadows && shadow(b))
        };
        for v in vars.iter().filter(seen) {
            if best.is_none_or(|b| width(&v.2) <= width(&b.2)) {
                best = Some(v);
            }
        }
        best.map(|(_, b, _)| b)
    };
    best(true).or_else(|| best(false))
}

impl Resolver<'_> {
    /// What a typed name is bound to seen from `scope` (the innermost
    /// scope that declares it, then the members of the enclosing types'
    /// lineages, then the file), with where it was declared.
    pub(super) fn var(&self, fi: usize, scope: Option<DefIx>, var: &str) -> Option<(usize, Option<DefIx>, &Binding)> {
        lookup::read(var);
        for d in self.scopes(scope) {
            for t in self.lineage(d) {
                if let Some(found) = self.declared_in(t, var) {
                    return Some(found);
                }
            }
        }
        let b = nearest(fi, self.vars.get(self.p, (fi, None))?, var)?;
        Some((fi, None, b))
    }

    /// The val declared beside type alias `t` under its name (a package
    /// object's `val NonEmptyMap = NonEmptyMapImpl` beside `type
    /// NonEmptyMap[K, A]`): what the name means as a value.
    fn val_beside(&self, t: DefIx) -> Option<(usize, Option<DefIx>, &Binding)> {
        let (df, parent) = (self.p.defs[t].file(), self.p.defs[t].parent());
        Some((df, parent, nearest(df, self.vars.get(self.p, (df, parent))?, self.p.fact(t).name())?))
    }

    /// A name declared in the scope of definition `d` (a field of a type, a
    /// local of a callable).
    /// A type declared in parts (a C# `partial` class, Kotlin's `expect`
    /// class and its `actual` ones) declares what any part declares, the
    /// part in the use's own file first.
    pub(super) fn declared_in(&self, d: DefIx, var: &str) -> Option<(usize, Option<DefIx>, &Binding)> {
        lookup::read(var);
        let in_part = |x: DefIx| {
            let df = self.p.defs[x].file();
            let b = nearest(df, self.vars.get(self.p, (df, Some(x)))?, var)?;
            Some((df, Some(x), b))
        };
        let Some(parts) = self.held.parts.get(&d) else { return in_part(d) };
        let here = FILE.get();
        let all = || std::iter::once(d).chain(parts.iter().copied());
        let near = all().filter(|&x| self.p.defs[x].file() == here);
        near.chain(all().filter(|&x| self.p.defs[x].file() != here)).find_map(in_part)
    }

    /// What `self` is written as around `scope` of file `fi`, where the
    /// file says (Swift's `extension [ServerTrustEvaluating]`).
    fn self_type(&self, fi: usize, scope: Option<DefIx>) -> Option<&str> {
        let at = self.p.fact(scope?).span.offsets();
        let types = &self.p.sources[fi].facts.self_types;
        types.iter().find(|((a, b), _)| *a <= at.0 && at.1 <= *b).map(|(_, t)| t.as_str())
    }

    /// The value a binding gives, read where it was declared.
    pub(super) fn bound(&self, (file, scope, b): (usize, Option<DefIx>, &Binding), depth: u8) -> Val {
        let _there = elsewhere(file);
        match b {
            Binding::Type(name, Some(written)) => {
                let self_ty = self.enclosing_type(scope);
                match self.written(file, scope, self_ty, written, depth) {
                    Val::Unknown => self.named_type(file, scope, name),
                    v => v,
                }
            }
            Binding::Type(name, None) => self.named_type(file, scope, name),
            Binding::Value(expr, (at, _)) => {
                let _here = seen_from(file, *at);
                self.eval(file, scope, expr, false, depth)
            }
            Binding::Element(expr, (at, _)) => {
                let _here = seen_from(file, *at);
                match self.eval(file, scope, expr, false, depth) {
                    Val::Written(w) => self.element(&w, depth),
                    // A Swift sequence of the project: its `Element`.
                    Val::Type(t) if self.p.sources[file].lang.name == "swift" => {
                        self.nested_type(t, "Element").map_or(Val::Unknown, Val::Type)
                    }
                    _ => Val::Unknown,
                }
            }
        }
    }

    /// What one element of a collection or iterator is (`Vec<Arg>`, `impl
    /// Iterator<Item = &Arg>`, `Shape[]`).
    pub(super) fn element(&self, w: &Written, depth: u8) -> Val {
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
    pub(super) fn named_type(&self, file: usize, scope: Option<DefIx>, name: &Name) -> Val {
        match self.ty(file, scope.unwrap_or(usize::MAX), name) {
            Some(t) => Val::Type(t),
            None => Val::Written(Written { text: name.name.clone(), file, scope, self_ty: None }),
        }
    }

    /// The value of a type as written (`Option<&Arg>`, `Self`, `*Order`)
    /// in file `file` from `scope`, `Self` being `self_ty`.
    pub(super) fn written(
        &self,
        file: usize,
        scope: Option<DefIx>,
        self_ty: Option<DefIx>,
        text: &str,
        depth: u8,
    ) -> Val {
        // A function's type (`unsafe fn(Ref<T>) -> R`, `(a: A) => R`):
        // what calling it gives is read when it is called.
        if returned_by(text).is_some() {
            return Val::Written(Written { text: text.to_owned(), file, scope, self_ty });
        }
        let Some(t) = TypeText::parse(text) else { return Val::Unknown };
        if matches!(t.head, "Self" | "this" | "self" | "static") {
            return self_ty.map_or(Val::Unknown, Val::Type);
        }
        let external = || Val::Written(Written { text: text.to_owned(), file, scope, self_ty });
        if depth == 0 {
            return external();
        }
        let from = scope.unwrap_or(usize::MAX);
        let name = |qualifier: Option<&str>| Name {
            name: t.head.to_owned(),
            qualifier: qualifier.map(str::to_owned),
            span: Span::default(),
            generics: 0,
        };
        // A wrapper of the standard libraries is read as one even where the
        // project has an alias of its name (`type Result<T> = …`), or a
        // namesake the use does not see. A type of the project's own that
        // the use does see, defined beside it or imported (anyhow's
        // `ptr::Ref`, a module's own `Map`), is that type.
        if wrapper(t.head).is_some() {
            return self.own_namesake(file, scope, &name(t.qualifier)).map_or_else(external, Val::Type);
        }
        // A Rust path through the crate's modules (`ast::parse::ParserBuilder`
        // with `use crate::ast;`): that module's type, never a namesake of
        // the file's own.
        if self.p.sources[file].lang.packages == Packages::CratePath
            && let Some(path) = path_before(text, t.head, "::")
            && let Some(pkg) = self.rust_package(file, path)
        {
            let types: Vec<DefIx> =
                self.look.in_package(&pkg, t.head).iter().copied().filter(|&d| self.p.kind(d).is_type()).collect();
            if let [one] = types[..] {
                return self.unalias(one, depth);
            }
        }
        // A type written by its package's full name (Scala's
        // `cats.kernel.Semigroup[A]`, Java's `java.util.List`): that
        // package's, where the project has it.
        if let Some(path) = path_before(text, t.head, ".")
            && self.look.packages.contains_key(path)
        {
            let types: Vec<DefIx> =
                self.look.in_package(path, t.head).iter().copied().filter(|&d| self.p.kind(d).is_type()).collect();
            if let [one] = types[..] {
                return self.unalias(one, depth);
            }
        }
        // A Rust or C++ path's module (`crate::builder::Arg`) is no package
        // alias: the name alone, then.
        let found = self.ty(file, from, &name(t.qualifier)).or_else(|| {
            let module = t.qualifier.is_some_and(|q| self.package_alias(file, q).is_none());
            if module { self.ty(file, from, &name(None)) } else { None }
        });
        found.map_or_else(external, |d| self.unalias(d, depth))
    }

    /// The package a Rust module path names, dotted as [`Lookup`] keys it:
    /// `crate::hir`, `super::ast`, `self::parse`, or a path from a module
    /// the file imports or has beside it (`ast::parse` with `use
    /// crate::ast;`).
    pub(super) fn rust_package(&self, fi: usize, path: &str) -> Option<String> {
        let mut segments = path.split("::");
        let own = &self.p.sources[fi].package;
        let mut at: Vec<String> = match segments.next()? {
            "crate" => Vec::new(),
            "self" => own.clone(),
            "super" => own[..own.len().checked_sub(1)?].to_vec(),
            first => {
                let pkg = self.package_alias(fi, first).or_else(|| self.module_path(fi, first))?;
                pkg.split('.').map(str::to_owned).collect()
            }
        };
        for s in segments {
            if s == "super" {
                at.pop()?;
            } else {
                at.push(s.to_owned());
            }
        }
        let key = at.join(".");
        self.look.packages.contains_key(&key).then_some(key)
    }

    /// A type of the project, read through an alias (`type Error =
    /// error::Error<DefaultFormatter>`) to what it stands for.
    pub(super) fn unalias(&self, t: DefIx, depth: u8) -> Val {
        let _there = elsewhere(self.p.defs[t].file());
        let f = self.p.fact(t);
        match (f.kind, f.returns()) {
            (Kind::Type, Some(target)) if depth > 0 => {
                let self_ty = self.enclosing_type(self.p.defs[t].parent());
                match self.written(self.p.defs[t].file(), self.p.defs[t].parent(), self_ty, target, depth - 1) {
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
    pub(super) fn module_path(&self, fi: usize, name: &str) -> Option<String> {
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

    /// Of overloads that all take `args` arguments and that a call's
    /// arguments cannot tell apart, one that stands for them all where they
    /// all return the same type as written (Kotlin's `adapter(type)`,
    /// `adapter(kType)`: a `JsonAdapter<T?>` whichever is called): what
    /// the call gives is known though which is called is not. For values
    /// only, never for an edge.
    pub(super) fn agreeing(&self, level: &[DefIx], args: Option<u32>) -> Option<DefIx> {
        let mut fit =
            level.iter().copied().filter(|&d| args.is_none_or(|n| self.p.fact(d).arity.is_none_or(|a| a.fits(n))));
        let first = fit.next()?;
        let head = |d: DefIx| Some(TypeText::parse(self.p.fact(d).returns()?)?.head);
        let want = head(first)?;
        fit.all(|d| head(d) == Some(want) && self.p.defs[d].parent() == self.p.defs[first].parent()).then_some(first)
    }

    /// What a callable `m` returns.
    pub(super) fn returns(&self, m: DefIx, depth: u8) -> Val {
        let _there = elsewhere(self.p.defs[m].file());
        let self_ty = self.enclosing_type(Some(m));
        if self.p.kind(m) == Kind::Constructor {
            return self_ty.map_or(Val::Unknown, Val::Type);
        }
        match self.p.fact(m).returns() {
            Some(text) => self.written(self.p.defs[m].file(), Some(m), self_ty, text, depth),
            None => Val::Unknown,
        }
    }

    /// What a decorated definition's name is bound to (Python's
    /// `@click.group()` over `def cli()`: a `Group`): what its outermost
    /// decorator gives applied to the function, read from the return type
    /// written for the decorator: `Callable[[F], Group]` for a decorator
    /// called first, the type itself for one named bare, and of a union
    /// (an overloaded decorator's implementation, `Group | Callable[[F],
    /// Group]`), the members that apply. Unknown unless they name one type.
    pub(super) fn decorated(&self, d: DefIx, depth: u8) -> Val {
        let Some(depth) = depth.checked_sub(1) else { return Val::Unknown };
        let Some(text) = self.p.fact(d).rare().decorated.as_deref() else { return Val::Unknown };
        let (fi, scope) = (self.p.defs[d].file(), self.p.defs[d].parent());
        let _there = elsewhere(fi);
        let Some(steps) = expr::steps(text) else { return Val::Unknown };
        // `click.group()`: called, and what it gives called on the
        // function; `click.group`: called on the function.
        let (name, args, called) = match steps.last() {
            Some(Step::Call { name, args, .. }) => (*name, *args, true),
            Some(Step::Member { name, .. } | Step::Name(name)) => (*name, 1, false),
            _ => return Val::Unknown,
        };
        let callee = match &steps[..steps.len() - 1] {
            [] => {
                self.ladder_taking(fi, scope, name, Want::Callable, Some(args), |level| self.fitting(level, Some(args)))
            }
            [head, rest @ ..] => {
                let mut val = self.head(fi, scope, *head, false, depth);
                for step in rest {
                    val = self.step(fi, scope, val, *step, depth);
                }
                match val {
                    Val::Type(t) => self.member_call(t, name, Some(args)),
                    Val::Package(pkg) => {
                        let level: Vec<DefIx> = self
                            .exported(&pkg, name, REEXPORTS)
                            .into_iter()
                            .filter(|&f| self.p.kind(f).is_callable())
                            .collect();
                        self.fitting(&level, Some(args))
                    }
                    _ => None,
                }
            }
        };
        let Some(m) = callee else { return Val::Unknown };
        let Some(returns) = self.p.fact(m).returns() else { return Val::Unknown };
        let mut applied: Vec<&str> = Vec::new();
        for member in expr::split_top(returns, b'|') {
            let gives = TypeText::parse(member).filter(|t| t.head == "Callable").and_then(|t| t.args.last().copied());
            match (gives, called) {
                (Some(gives), true) => applied.extend(expr::split_top(gives, b'|')),
                (None, false) => applied.push(member),
                _ => {}
            }
        }
        let (file, self_ty) = (self.p.defs[m].file(), self.enclosing_type(Some(m)));
        let mut types = applied.iter().filter_map(|t| match self.written(file, Some(m), self_ty, t.trim(), depth) {
            Val::Type(t) => Some(t),
            _ => None,
        });
        match types.next() {
            Some(t) if types.all(|u| u == t) => Val::Type(t),
            _ => Val::Unknown,
        }
    }

    /// What an expression's value is, read in file `fi` from `scope`:
    /// `scoped` when the expression is written before `::` (a scope, never
    /// a value).
    pub(super) fn eval(&self, fi: usize, scope: Option<DefIx>, text: &str, scoped: bool, depth: u8) -> Val {
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
        // A cast (`x as? T`, Go's `x.(T)`) gives a value of its type,
        // whatever came before it.
        let (mut val, mut rest) = match steps.iter().rposition(|s| matches!(s, Step::Cast(_))) {
            Some(k) => (self.step(fi, scope, Val::Unknown, steps[k], depth), &steps[k + 1..]),
            None => (self.head(fi, scope, steps[0], head_scoped, depth), &steps[1..]),
        };
        // A static member of a standard type (`Enum.GetName(v)`,
        // `string.Join(…)`): what the standard library says it gives.
        if let (Val::Unknown, Step::Name(ty), [Step::Call { name, .. }, after @ ..]) = (&val, steps[0], rest)
            && let Some((_, _, r)) = written::STANDARD_RESULTS.iter().find(|(t, m, _)| *t == ty && m == name)
        {
            val = Val::Written(Written { text: (*r).to_owned(), file: fi, scope, self_ty: None });
            rest = after;
        }
        for step in rest {
            if matches!(val, Val::Unknown) {
                break;
            }
            val = self.step(fi, scope, val, *step, depth);
        }
        val
    }

    /// The value of an expression's first step.
    pub(super) fn head(&self, fi: usize, scope: Option<DefIx>, step: Step<'_>, scoped: bool, depth: u8) -> Val {
        let type_named = |name: &str| {
            let named = Name { name: name.to_owned(), qualifier: None, span: Span::default(), generics: 0 };
            self.ty(fi, scope.unwrap_or(usize::MAX), &named)
        };
        match step {
            // A Rust impl for a type the project does not define.
            // PHP's `$this`, `static::`.
            // Where `this` is no keyword (Rust, Python, Go), a parameter
            // may be called so (anyhow's `this: Ref<Self>`).
            Step::Name("this") if !scoped && let Some(b) = self.var(fi, scope, "this") => self.bound(b, depth),
            Step::Name("self") if let Some(text) = self.self_type(fi, scope) => {
                Val::Written(Written { text: text.to_owned(), file: fi, scope, self_ty: None })
            }
            Step::Name("this" | "self" | "Self" | "$this" | "static") => {
                self.enclosing_type(scope).map_or(Val::Foreign, Val::Type)
            }
            Step::Name("super" | "parent") => {
                let sup = self.enclosing_type(scope).and_then(|t| self.held.supers.get(&t)?.first().copied());
                sup.map_or(Val::Unknown, Val::Type)
            }
            Step::Name(name) => {
                let scala = self.p.sources[fi].lang.rules.companion_objects;
                // A scope written before a name (`ns::f`) is never a value.
                if !scoped && let Some(b) = self.var(fi, scope, name) {
                    return self.bound(b, depth);
                }
                if let Some(t) = type_named(name) {
                    // Scala's terms and types are apart: a name read as a
                    // value (`NonEmptyMap.fromMapUnsafe(…)`, where a package
                    // object has `val NonEmptyMap = NonEmptyMapImpl` beside
                    // `type NonEmptyMap[K, A] = …`) is the val.
                    if !scoped
                        && scala
                        && self.p.kind(t) == Kind::Type
                        && let Some(b) = self.val_beside(t)
                    {
                        return self.bound(b, depth);
                    }
                    return self.unalias(t, depth);
                }
                if !scoped && let Some(pkg) = self.package_alias(fi, name) {
                    return Val::Package(pkg);
                }
                // Scala's package written in full in an expression (`val
                // Monoid = cats.kernel.Monoid`).
                if !scoped && scala && self.look.packages.contains_key(name) {
                    return Val::Package(name.to_owned());
                }
                // Scala's method without parentheses (`toChain.iterator`):
                // what calling it gives.
                if !scoped
                    && scala
                    && let Some(f) = self
                        .ladder_taking(fi, scope, name, Want::Callable, Some(0), |level| self.fitting(level, Some(0)))
                {
                    return self.returns(f, depth);
                }
                // A namespace of the project (`shapes::total`).
                if self.is_namespace(name) {
                    return Val::Namespace(name.to_owned());
                }
                // A decorated function (`@click.group()` over `def cli()`).
                if !scoped
                    && self.p.sources[fi].lang.rules.decorators_inside
                    && let Some(f) = self.ladder(fi, scope, name, Want::Callable, |_| None)
                    && self.p.fact(f).rare().decorated.is_some()
                {
                    return self.decorated(f, depth);
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
            // A type the project does not define is kept by name: the
            // project's extension methods of it may be called on the value
            // (`((long)number).ToWords()`).
            Step::New(name) => type_named(name).map_or_else(
                || Val::Written(Written { text: name.to_owned(), file: fi, scope, self_ty: None }),
                Val::Type,
            ),
            // Python's `super()`: the class the enclosing one extends.
            Step::Call { name: "super", args: 0, .. } => {
                let sup = self.enclosing_type(scope).and_then(|t| self.held.supers.get(&t)?.first().copied());
                sup.map_or(Val::Unknown, Val::Type)
            }
            Step::Call { name, args, .. } => {
                match self.ladder_taking(fi, scope, name, Want::Callable, Some(args), |level| {
                    self.fitting(level, Some(args)).or_else(|| self.agreeing(level, Some(args)))
                }) {
                    Some(f) => self.returns(f, depth),
                    // `Order(…)`: a construction, where no `new` is written;
                    // else a function the project does not define.
                    None => type_named(name).map_or(Val::Foreign, Val::Type),
                }
            }
            Step::Member { .. }
            | Step::Unwrap
            | Step::Index
            | Step::Slice
            | Step::Literal
            | Step::Cast(_)
            | Step::Apply { .. } => Val::Unknown,
        }
    }

    /// The type called `name` that type `t` (or a type it extends) declares,
    /// or the module (Ruby's `Thor::Util` in a class `Thor`, a Scala
    /// object in a class).
    fn nested_type(&self, t: DefIx, name: &str) -> Option<DefIx> {
        self.lineage(t).into_iter().find_map(|o| {
            self.look
                .owned(o, name)
                .iter()
                .copied()
                .find(|&d| self.p.kind(d).is_type() || self.p.kind(d) == Kind::Module)
        })
    }

    /// The value after one more step.
    pub(super) fn step(&self, fi: usize, scope: Option<DefIx>, val: Val, step: Step<'_>, depth: u8) -> Val {
        // A type assertion gives a value of that type, whatever was asserted.
        if let Step::Cast(t) = step {
            let named = Name { name: t.to_owned(), qualifier: None, span: Span::default(), generics: 0 };
            return self.ty(fi, scope.unwrap_or(usize::MAX), &named).map_or(Val::Foreign, Val::Type);
        }
        match (val, step) {
            (val, Step::Literal | Step::Slice) => val,
            (Val::Type(t), Step::Unwrap) => Val::Type(t),
            (Val::Type(t), Step::Member { name, scoped: true }) => {
                self.nested_type(t, name).map_or(Val::Unknown, Val::Type)
            }
            (Val::Type(t), Step::Member { name, .. }) => {
                match self.lineage(t).into_iter().find_map(|o| self.declared_in(o, name)) {
                    Some(b) => self.bound(b, depth),
                    None => match self.nested_type(t, name) {
                        // A type named through the one around it
                        // (`JsonReader.Options.of(…)`).
                        Some(nested) => Val::Type(nested),
                        // A method called without parentheses (Ruby's
                        // `Cart.new`, Scala's `cart.total`) or a property's
                        // getter.
                        None => self.step(fi, scope, Val::Type(t), Step::Call { name, args: 0, scoped: false }, depth),
                    },
                }
            }
            (Val::Type(t), Step::Call { name, args, .. }) => match self
                .member_call(t, name, Some(args))
                .or_else(|| self.agreeing(&self.member_level(t, name, Some(&Taking::args(Some(args)))), Some(args)))
            {
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
    pub(super) fn through(&self, fi: usize, scope: Option<DefIx>, w: Written, step: Step<'_>, depth: u8) -> Val {
        // A function's type called: what it returns.
        if let (Step::Apply { .. }, Some(r)) = (step, returned_by(&w.text)) {
            return match depth.checked_sub(1) {
                Some(depth) => self.written(w.file, w.scope, w.self_ty, r, depth),
                None => Val::Unknown,
            };
        }
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
            (Some(Wrapper::Deref | Wrapper::Holds), Step::Unwrap) if !t.args.is_empty() => inner(0),
            // `name!` on a value of a nullable type (C#'s, TypeScript's,
            // Swift's): the same value; a plain `Task` too (awaited, it
            // gives nothing to call on).
            (_, Step::Unwrap) => Val::Written(w),
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
            // `s.Split(' ')`, `v.ToString()`: what the standard library says.
            (_, Step::Call { name, .. } | Step::Member { name, .. })
                if let Some(r) = written::standard_result(&crate::extract::simple_type(t.head), name)
                    && self.foreign_members(&crate::extract::simple_type(t.head), name).is_empty() =>
            {
                Val::Written(Written { text: r.to_owned(), ..w })
            }
            // A member that the project's extension of the type declares
            // (Swift's `extension URLRequest { var headers: HTTPHeaders }`,
            // Kotlin's `fun Type.canonicalize(): Type`): what it is
            // declared to give.
            (_, Step::Member { name, scoped: false } | Step::Call { name, scoped: false, .. }) => {
                self.foreign_member(&crate::extract::simple_type(t.head), name, step, depth)
            }
            _ => Val::Foreign,
        }
    }

    /// What member `name` of a type the project does not define gives,
    /// where one of the project's extensions of it declares one: a
    /// property's declared type, or what the one function of that name
    /// taking the arguments returns.
    fn foreign_member(&self, ty: &str, name: &str, step: Step<'_>, depth: u8) -> Val {
        let named = self.foreign_members(ty, name);
        let Some(depth) = depth.checked_sub(1) else { return Val::Unknown };
        match step {
            Step::Call { args, .. } => {
                let level: Vec<DefIx> = named.into_iter().filter(|&d| self.p.kind(d).is_callable()).collect();
                self.fitting(&level, Some(args)).map_or(Val::Foreign, |f| self.returns(f, depth))
            }
            _ => {
                let Some(d) = named.into_iter().find(|&d| !self.p.kind(d).is_callable()) else { return Val::Foreign };
                let file = self.p.defs[d].file();
                let scope = self.p.defs[d].parent();
                match self.vars.get(self.p, (file, scope)).and_then(|vars| nearest(file, vars, name)) {
                    Some(b) => self.bound((file, scope, b), depth),
                    None => Val::Foreign,
                }
            }
        }
    }

    /// What a receiver expression names: a type whose members are called,
    /// or a package (Go) whose functions are.
    pub(super) fn receiver(&self, fi: usize, scope: Option<DefIx>, text: &str, scoped: bool) -> Receiver {
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
            Val::Written(w) => {
                Receiver::External(TypeText::parse(&w.text).map(|t| crate::extract::simple_type(t.head)))
            }
            Val::Foreign => Receiver::External(None),
            Val::Unknown => Receiver::Unknown,
        }
    }
}

/// What a call's receiver turned out to be.
pub(super) enum Receiver {
    /// A type of the project.
    Type(DefIx),
    /// A package (Go) of the project, dotted as [`Lookup`] keys it.
    Package(String),
    /// A namespace of the project (C++), by name.
    Namespace(String),
    /// A value of a type written down but defined elsewhere, with that
    /// type's last name where it is known.
    External(Option<String>),
    /// An expression whose type is not written down.
    Unknown,
}

/// How many re-exports (`pub use a::B;` in a module) a name is followed
/// through.
pub(super) const REEXPORTS: u8 = 4;

/// How deep an expression is followed through the bindings and returns it
/// names (`let a = b.c(); a.d()` is two).
pub(super) const DEPTH: u8 = 8;

/// What an expression's value is, as far as the resolver can tell.
#[derive(Debug, Clone)]
pub(super) enum Val {
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
pub(super) struct Written {
    pub(super) text: String,
    pub(super) file: usize,
    pub(super) scope: Option<DefIx>,
    pub(super) self_ty: Option<DefIx>,
}

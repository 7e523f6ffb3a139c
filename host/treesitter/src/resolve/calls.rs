//! What a call means: a member of a receiver's type, a constructor, a
//! name in scope (overloads are told apart in `overloads.rs`).

use super::*;

/// What a call is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bound {
    /// One definition of the project.
    One(DefIx),
    /// Several definitions it could mean that name resolution cannot tell
    /// apart (overloads of one owner with the arguments' types unknown):
    /// each gets an edge marked ambiguous.
    Several(Vec<DefIx>),
    /// The project has definitions of that name and the call was not bound
    /// to one (a receiver of unknown type, namesakes across the project):
    /// no edge, counted by name, so that "nobody calls it" is never said
    /// of those definitions without a word.
    Unbound,
    /// Nothing of the project (a receiver whose type is defined elsewhere,
    /// a name the project does not define).
    Outside,
}

impl Resolver<'_> {
    /// The callable members of type `t` (or of the types it extends,
    /// nearest first, then of its companion: Scala's `object Item` beside
    /// `class Item`) called `name`: those of the nearest that has any.
    /// Where the language resolves among the candidates that can take the
    /// call (Kotlin, C#, Java), a level none of which can is passed over: a
    /// member `readUtf8Line()` leaves `buffer.readUtf8Line(newline)` to the
    /// extension function that takes one.
    pub(super) fn member_level(&self, t: DefIx, name: &str, taking: Option<&Taking<'_>>) -> Vec<DefIx> {
        let taking = taking.filter(|_| self.p.sources[self.p.defs[t].file()].lang.rules.applicable_levels);
        let applicable =
            |level: &[DefIx]| !level.is_empty() && taking.is_none_or(|t| level.iter().any(|&d| self.can_take(d, t)));
        for t in self.lineage(t).into_iter().chain(self.companion(t)) {
            let level = self.own_callables(t, name);
            if applicable(&level) {
                return level;
            }
        }
        // Extension functions of the type or of a supertype, nearest first.
        for t in self.lineage(t) {
            let level: Vec<DefIx> = self
                .held
                .extensions
                .get(&t)
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .copied()
                .filter(|&d| self.p.fact(d).name() == name)
                .collect();
            if applicable(&level) {
                return level;
            }
        }
        Vec::new()
    }

    /// The callables called `name` that `t` itself declares. A namespace's
    /// (or an object's) members are looked up by their place, not kept by
    /// owner.
    fn own_callables(&self, t: DefIx, name: &str) -> Vec<DefIx> {
        if self.p.kind(t) == Kind::Module {
            self.look
                .named(name)
                .iter()
                .copied()
                .filter(|&d| self.p.defs[d].parent() == Some(t) && self.p.kind(d).is_callable())
                .collect()
        } else {
            self.look.owned(t, name).iter().copied().filter(|&d| self.p.kind(d).is_callable()).collect()
        }
    }

    /// Scala's companion object of class `t` (`object Item` beside `class
    /// Item`, in its file).
    fn companion(&self, t: DefIx) -> Option<DefIx> {
        self.look.named(self.p.fact(t).name()).iter().copied().find(|&c| {
            c != t
                && self.p.kind(c) == Kind::Module
                && self.p.fact(c).term
                && self.p.defs[c].parent() == self.p.defs[t].parent()
                && self.p.defs[c].file() == self.p.defs[t].file()
        })
    }

    /// Whether any of `level` takes `args` arguments (any, when not known).
    fn fitting_any(&self, level: &[DefIx], args: Option<u32>) -> bool {
        level.iter().any(|&d| args.is_none_or(|n| self.p.fact(d).arity.is_none_or(|a| a.fits(n))))
    }

    /// Scala's `apply` methods a call of type or object `t`'s name means:
    /// the object's own, or the companion object's of a class.
    fn applies(&self, t: DefIx) -> Option<Vec<DefIx>> {
        let object = if self.p.kind(t) == Kind::Module { Some(t) } else { self.companion(t) }?;
        let applies = self.own_callables(object, "apply");
        (!applies.is_empty()).then_some(applies)
    }

    /// The callables named `name` of a call on the class's own name
    /// (`Coupon.take(…)`): its companion's, which such a call means, else
    /// the class's own.
    fn static_level(&self, t: DefIx, name: &str) -> Vec<DefIx> {
        match self.companion(t).map(|c| self.own_callables(c, name)) {
            Some(level) if !level.is_empty() => level,
            _ => self.member_level(t, name, None),
        }
    }

    /// The member of type `t` called `name` that takes `args` arguments,
    /// when one is (what a chain of calls is read through).
    pub(super) fn member_call(&self, t: DefIx, name: &str, args: Option<u32>) -> Option<DefIx> {
        match self.member_level(t, name, Some(&Taking::args(args)))[..] {
            [] => None,
            [one] => Some(one),
            ref level => self.fitting(level, args),
        }
    }

    /// The definition a call means.
    pub(super) fn call(&self, fi: usize, scope: Option<DefIx>, c: &crate::extract::Call) -> Bound {
        let one = |d: Option<DefIx>| d.map_or(Bound::Outside, Bound::One);
        let callables =
            |defs: &[DefIx]| -> Vec<DefIx> { defs.iter().copied().filter(|&d| self.p.kind(d).is_callable()).collect() };
        // `new T(…)`: T's constructor that takes the arguments, or T itself
        // when it declares none.
        let construct = || {
            let t = match c.name.as_str() {
                // PHP's `new self(…)`, `new static(…)`; Ruby's `new(…)` in
                // a class method; Java's `this(…)` in a constructor.
                "self" | "static" | "new" | "this" => self.enclosing_type(scope),
                // Java's `super(…)`: the class it extends.
                "super" => self
                    .enclosing_type(scope)
                    .and_then(|t| self.held.supers.get(&t)?.iter().copied().find(|&s| self.p.kind(s) == Kind::Class)),
                _ => self.ty(
                    fi,
                    scope.unwrap_or(usize::MAX),
                    &Name {
                        name: c.name.clone(),
                        qualifier: c.receiver.clone().filter(|_| c.construct),
                        span: c.span,
                        generics: c.generics,
                    },
                ),
            };
            // Scala's object called by its name (`makeDir(p)`): its `apply`.
            let companions = self.p.sources[fi].lang.rules.companion_objects;
            if t.is_none()
                && companions
                && !c.construct
                && let Some(o) = self.ladder(fi, scope, &c.name, Want::Mixin, |_| None)
                && let Some(applies) = self.applies(o).filter(|a| self.fitting_any(a, c.args))
            {
                return self.choose(fi, scope, &applies, c);
            }
            let Some(t) = t else {
                // A type the project does not define, with initializers a
                // Swift extension of it declares (`URLRequest(url:method:)`).
                let inits: Vec<DefIx> = self
                    .held
                    .foreign_extensions
                    .get(&c.name)
                    .map_or(&[][..], Vec::as_slice)
                    .iter()
                    .copied()
                    .filter(|&d| self.p.kind(d) == Kind::Constructor)
                    .collect();
                return if inits.is_empty() { Bound::Outside } else { self.choose(fi, scope, &inits, c) };
            };
            // Scala's `Path(x)` without `new` is its companion's `apply`
            // where it has one (an object's own `apply`, called by the
            // object's name, likewise).
            if !c.construct
                && self.p.sources[fi].lang.rules.companion_objects
                && let Some(applies) = self.applies(t)
                && self.fitting_any(&applies, c.args)
            {
                return self.choose(fi, scope, &applies, c);
            }
            // Its constructors are its members: read by its name.
            lookup::read(self.p.fact(t).name());
            let ctors: Vec<DefIx> = self
                .members
                .get(&t)
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .copied()
                .filter(|&m| self.p.kind(m) == Kind::Constructor)
                .collect();
            if ctors.is_empty() { Bound::One(t) } else { self.choose(fi, scope, &ctors, c) }
        };
        if c.construct {
            return construct();
        }
        if c.read {
            return one(match c.receiver.as_deref().map(|r| self.receiver(fi, scope, r, false)) {
                // A property or a method read off a value of a known type.
                Some(Receiver::Type(t)) => self.member_call(t, &c.name, None),
                // A package's function passed as a value (`middleware.Logger`).
                Some(Receiver::Package(pkg)) => match callables(&self.exported(&pkg, &c.name, REEXPORTS))[..] {
                    [one] => Some(one),
                    _ => None,
                },
                // A decorator, a function passed or stored as a value: a
                // callable or a value in scope, unless a variable of that
                // name is declared nearer (`f(error)` with a parameter
                // `error`).
                // Across the whole project, a bare name is never another
                // type's member (a Ruby `items` is no other class's
                // `items`).
                None => self
                    .rung(fi, scope, &c.name, Want::Value, None)
                    .and_then(|(level, whole)| {
                        let member = |d: &DefIx| self.p.defs[*d].parent().is_some_and(|t| self.p.kind(t).is_type());
                        match level.iter().filter(|d| !(whole && member(d))).collect::<Vec<_>>()[..] {
                            [&one] => Some(one),
                            _ => None,
                        }
                    })
                    .filter(|&d| {
                        let Some((_, declared, _)) = self.var(fi, scope, &c.name) else { return true };
                        let depth = |s: Option<DefIx>| {
                            s.map_or(usize::MAX, |s| self.chain(scope).position(|x| x == s).unwrap_or(usize::MAX))
                        };
                        depth(self.p.defs[d].parent()) <= depth(declared)
                    }),
                _ => None,
            });
        }
        let name = c.name.as_str();
        // Swift's implicit member (`.value(arg, index: i)`; only Swift's
        // calls have labels): a static member,
        // case or initializer of the type the context expects, which is not
        // written. The one of the project's types whose member of that
        // name takes these labels and arguments, if only one does.
        if c.receiver.as_deref() == Some(".") && c.labels.is_some() {
            let member = |d: DefIx| {
                let parent = self.p.defs[d].parent().map(|t| self.p.kind(t));
                parent.is_some_and(Kind::is_type) && (self.p.kind(d).is_callable() || parent == Some(Kind::Enum))
            };
            let level: Vec<DefIx> = self.look.named(name).iter().copied().filter(|&d| member(d)).collect();
            return match self.choose(fi, scope, &level, c) {
                Bound::One(d) => Bound::One(d),
                _ if level.is_empty() => Bound::Outside,
                _ => Bound::Unbound,
            };
        }
        // A string literal (`"/".encodeUtf8()`): a `String`.
        if c.receiver.as_deref().is_some_and(is_string_literal) {
            return self.foreign_extension(fi, scope, "String", c);
        }
        // Ruby's `self.class.settings`: a method of the class around (in a
        // module's method, of whichever class includes it: not known).
        let nesting = self.p.sources[fi].lang.rules.nested_modules;
        let class_of_self = |r: &str| {
            nesting
                && r == "self.class"
                && self
                    .chain(scope)
                    .find(|&d| self.p.kind(d).is_type() || self.p.kind(d) == Kind::Module)
                    .is_some_and(|d| self.p.kind(d) != Kind::Module)
        };
        match c
            .receiver
            .as_deref()
            .map(|r| (r, self.receiver(fi, scope, if class_of_self(r) { "self" } else { r }, c.scoped)))
        {
            None => match self.rung(fi, scope, name, Want::Callable, Some(&Taking::call(fi, scope, c))) {
                // Across the whole project, a bare Ruby call never means
                // another class's or module's method (`autoload` in a module
                // that does not extend the one that defines it is
                // `Module#autoload`): not bound, counted by name. (C++'s
                // whole project is its global namespace, where a method
                // defined apart may be found only so.)
                Some((level, true))
                    if self.p.sources[fi].lang.rules.nested_modules && level.iter().all(|&d| self.is_member(d)) =>
                {
                    Bound::Unbound
                }
                // Namesakes across the whole project are no overloads: the
                // nearest to the caller (the project's own before a
                // vendored copy under `deps/`), if one is.
                Some((level, true)) if level.len() > 1 => match self.choose(fi, scope, &self.nearest(fi, &level), c) {
                    Bound::One(d) => Bound::One(d),
                    _ => Bound::Unbound,
                },
                Some((level, _)) => self.choose(fi, scope, &level, c),
                None => {
                    // `Order(…)` where nothing callable has that name: a
                    // construction, in languages that need no `new` (Kotlin).
                    let callable = self.look.named(name).iter().any(|&d| self.p.kind(d).is_callable());
                    if callable { Bound::Outside } else { construct() }
                }
            },
            Some((r, Receiver::Type(t))) => {
                // Scala's `Coupon.take(…)` on the class's name is the
                // companion object's `take`.
                let companions = self.p.sources[fi].lang.rules.companion_objects;
                let mut level = if companions && r == self.p.fact(t).name() {
                    self.static_level(t, name)
                } else {
                    self.member_level(t, name, Some(&Taking::call(fi, scope, c)))
                };
                // Ruby's class methods and instance methods of one name:
                // the class's own on the class (`Base.settings`,
                // `self.class.settings`, `self` in a class method or the
                // class body), else the instance's.
                if nesting && level.len() > 1 {
                    let on_class = class_of_self(r)
                        || (r == "self" && self.in_class_context(scope))
                        || r.rsplit("::").next() == Some(self.p.fact(t).name());
                    if level.iter().any(|&d| self.p.fact(d).singleton == on_class) {
                        level.retain(|&d| self.p.fact(d).singleton == on_class);
                    }
                }
                // Scala's `makeDir.all(p)`: a nested object called is its
                // `apply`.
                let nested = || {
                    let objects = self.look.named(name).iter().copied().filter(|&o| {
                        self.p.kind(o) == Kind::Module
                            && self.p.defs[o].parent().is_some_and(|p| p == t || Some(p) == self.companion(t))
                    });
                    objects.filter_map(|o| self.applies(o)).find(|a| self.fitting_any(a, c.args))
                };
                match level.is_empty() {
                    false => self.choose(fi, scope, &level, c),
                    true if companions => nested().map_or(Bound::Outside, |a| self.choose(fi, scope, &a, c)),
                    true => Bound::Outside,
                }
            }
            Some((_, Receiver::Package(pkg))) => match callables(&self.exported(&pkg, name, REEXPORTS)) {
                level if level.is_empty() => Bound::Outside,
                level => self.choose(fi, scope, &level, c),
            },
            Some((_, Receiver::Namespace(ns))) => match self.in_namespace(&ns, name, Kind::is_callable) {
                // Scala's `makeDir.all(p)`: an object nested in an object,
                // called: its `apply`.
                level if level.is_empty() && self.p.sources[fi].lang.rules.companion_objects => self
                    .in_namespace(&ns, name, |k| k == Kind::Module)
                    .into_iter()
                    .filter_map(|o| self.applies(o))
                    .find(|a| self.fitting_any(a, c.args))
                    .map_or(Bound::Outside, |a| self.choose(fi, scope, &a, c)),
                level if level.is_empty() => Bound::Outside,
                level => self.choose(fi, scope, &level, c),
            },
            // A value of a type the project does not define: an
            // extension function the project declares for that type
            // (`type.canonicalize()` with `fun Type.canonicalize()`), else
            // nothing of the project.
            Some((_, Receiver::External(Some(ty)))) => self.foreign_extension(fi, scope, &ty, c),
            // A value of a foreign type not known (what `s.replacing(…)`
            // gives): where the labels name methods (Swift), the one
            // extension of a foreign type of that full name taking these
            // arguments (`.shellEscapeForSingleQuotedString()` after a
            // Foundation call), if only one is.
            Some((_, Receiver::External(None))) if c.labels.is_some() => {
                lookup::read(name);
                let named = self.held.foreign_named.get(name).map_or(&[][..], Vec::as_slice);
                let fit: Vec<DefIx> = named
                    .iter()
                    .copied()
                    .filter(|&d| {
                        self.labels_fit(d, c) && c.args.is_none_or(|n| self.p.fact(d).arity.is_none_or(|a| a.fits(n)))
                    })
                    .collect();
                if let [one] = fit[..] { Bound::One(one) } else { Bound::Outside }
            }
            Some((_, Receiver::External(None))) => Bound::Outside,
            // A scope written before the name that is neither a type nor a
            // namespace of the project (`std::sort`): not the project's.
            Some((_, Receiver::Unknown)) if c.scoped => Bound::Outside,
            // A name that is no variable in scope and names a type or a
            // module the project does not define (`Character.isWhitespace`,
            // `JSON.parse`, an imported `json.loads`): not the project's.
            Some((text, Receiver::Unknown)) if self.names_outside(fi, text) => Bound::Outside,
            // An expression whose type is not known: never bound by the name
            // alone (the one project method of that name is a guess that is
            // wrong as often as not), but counted when the project has a
            // method of that name, so that its callers are not said to be
            // none without a word. A method of a trait's impl (Rust's `impl
            // Read for X`) answers to a name every implementor has, the
            // project's or not; a name every standard collection has says
            // nothing either: neither is counted.
            Some((_, Receiver::Unknown)) => {
                // A member of a type, or of an extension of a type the
                // project does not define (Swift's `extension Error`).
                let members: Vec<DefIx> = self
                    .look
                    .named(name)
                    .iter()
                    .copied()
                    .filter(|&d| {
                        self.p.kind(d).is_callable()
                            && self.p.defs[d].parent().is_some_and(|t| self.p.kind(t).is_type())
                            && !self.p.fact(d).rare().impl_of.as_ref().is_some_and(|(_, t)| t.is_some())
                    })
                    .chain(self.held.foreign_named.get(name).into_iter().flatten().copied())
                    .collect();
                // Swift's labels make a full name of a common one
                // (`set(_:forKey:inputOrigin:)` is no collection's `set`).
                let labelled = c.labels.as_ref().is_some_and(|l| l.iter().filter(|l| *l != "_").count() >= 2);
                // Kotlin's scope functions, given their lambda (`x.apply {
                // … }`, `stream.use { … }`): every value has them.
                let scope_function = KOTLIN_SCOPE_FUNCTIONS.contains(&name)
                    && c.args == Some(1)
                    && self.p.sources[fi].lang.name == "kotlin";
                match members[..] {
                    _ if (EVERYWHERE.contains(&name) && !labelled) || scope_function => Bound::Outside,
                    [] => Bound::Outside,
                    // Where a value's type is all but always written (Java,
                    // Go, C#, Kotlin, Scala, Swift), a receiver not read is
                    // a gap of this reading, not a value from elsewhere:
                    // the one method of that name is most probably it, if
                    // it takes as many arguments as the call gives.
                    [one]
                        if self.p.sources[fi].lang.unknown_receiver_is_ours
                            && c.args.is_none_or(|n| self.p.fact(one).arity.is_none_or(|a| a.fits(n)))
                            && self.labels_fit(one, c) =>
                    {
                        Bound::One(one)
                    }
                    // Swift's labels tell namesakes apart: the one method
                    // of that full name (`asAFError(or:)`), as above.
                    _ if c.labels.is_some() && self.p.sources[fi].lang.unknown_receiver_is_ours => {
                        let named: Vec<DefIx> = members
                            .iter()
                            .copied()
                            .filter(|&d| {
                                self.p.fact(d).rare().labels.is_some()
                                    && self.labels_fit(d, c)
                                    && c.args.is_none_or(|n| self.p.fact(d).arity.is_none_or(|a| a.fits(n)))
                            })
                            .collect();
                        match named[..] {
                            [one] => Bound::One(one),
                            [] => Bound::Outside,
                            _ => Bound::Unbound,
                        }
                    }
                    _ => Bound::Unbound,
                }
            }
        }
    }

    /// Whether `d` is a member of a type or of a Ruby module (not a
    /// function of a file, a package or a namespace).
    fn is_member(&self, d: DefIx) -> bool {
        self.p.defs[d].parent().is_some_and(|t| {
            let k = self.p.kind(t);
            k.is_type() || k == Kind::Module && self.p.sources[self.p.defs[t].file()].lang.rules.nested_modules
        })
    }

    /// A call of `c`'s name on a value of type `ty`, which the project does
    /// not define: its extension functions of that name, if any.
    fn foreign_extension(&self, fi: usize, scope: Option<DefIx>, ty: &str, c: &crate::extract::Call) -> Bound {
        let level = self.foreign_members(ty, &c.name);
        if level.is_empty() { Bound::Outside } else { self.choose(fi, scope, &level, c) }
    }

    /// The members called `name` that the project's extensions of type
    /// `ty`, which it does not define, declare; else those of its
    /// extensions of the standard protocols `ty` conforms to (Swift's
    /// `extension StringProtocol` for a `String`).
    pub(super) fn foreign_members(&self, ty: &str, name: &str) -> Vec<DefIx> {
        // What a use means changes with the extensions of that name.
        lookup::read(name);
        let of = |ty: &str| -> Vec<DefIx> {
            self.held
                .foreign_extensions
                .get(ty)
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .copied()
                .filter(|&d| self.p.fact(d).name() == name)
                .collect()
        };
        let own = of(ty);
        if !own.is_empty() {
            return own;
        }
        let supers = written::STANDARD_SUPERTYPES.iter().find(|(t, _)| *t == ty).map_or(&[][..], |(_, s)| *s);
        supers.iter().map(|s| of(s)).find(|found| !found.is_empty()).unwrap_or_default()
    }

    /// Of namesakes across the project, those nearest to file `fi`: sharing
    /// the most directories with it, a vendored one (`deps/`, `external/`,
    /// a `bundled` directory) only for a caller in the same vendored tree.
    pub(super) fn nearest(&self, fi: usize, level: &[DefIx]) -> Vec<DefIx> {
        let caller = self.p.sources[fi].path.as_str();
        fn dirs(path: &str) -> Vec<&str> {
            let mut d: Vec<&str> = path.split('/').collect();
            d.pop();
            d
        }
        let mine = dirs(caller);
        let shared = |d: DefIx| {
            let theirs = dirs(&self.p.sources[self.p.defs[d].file()].path);
            let common = mine.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
            // A vendored copy the caller is not inside of is never nearer.
            let vendored = theirs.iter().position(|d| is_vendored(d));
            match vendored {
                Some(v) if common <= v => None,
                _ => Some(common),
            }
        };
        let scored: Vec<(DefIx, Option<usize>)> = level.iter().map(|&d| (d, shared(d))).collect();
        let Some(best) = scored.iter().filter_map(|(_, s)| *s).max() else { return level.to_vec() };
        scored.into_iter().filter(|(_, s)| *s == Some(best)).map(|(d, _)| d).collect()
    }

    /// Whether a receiver written as a bare name (or a dotted path of
    /// names) that is no variable in scope names something of elsewhere: a
    /// type by its capital (`Character`, `JSON`, `Math`), or a module the
    /// file imports that is not one of the project's (`json`, `os.path`).
    fn names_outside(&self, fi: usize, text: &str) -> bool {
        let head = text.split('.').next().unwrap_or(text);
        if head.is_empty() || !head.chars().all(|ch| ch.is_alphanumeric() || ch == '_') {
            return false;
        }
        head.starts_with(|ch: char| ch.is_uppercase()) || self.package_alias(fi, head).is_some()
    }
}

/// A directory of vendored code: copies of other projects, whose
/// namesakes of the project's own functions are not what its calls mean.
fn is_vendored(dir: &str) -> bool {
    matches!(dir, "deps" | "external" | "externals" | "extern" | "bundled" | "3rdparty" | "thirdparty" | "contrib")
}

/// Kotlin's standard functions every value has that take a lambda.
const KOTLIN_SCOPE_FUNCTIONS: &[&str] = &["apply", "also", "let", "run", "takeIf", "takeUnless", "use", "with"];

/// Methods the standard libraries' collections, strings and streams have
/// in every language: called on a value whose type cannot be told, such a
/// name is not taken to mean the one project method that has it.
pub(super) const EVERYWHERE: &[&str] = &[
    "get",
    "set",
    "put",
    "add",
    "append",
    "extend",
    "insert",
    "remove",
    "pop",
    "push",
    "clear",
    "update",
    "keys",
    "values",
    "items",
    "entries",
    "contains",
    "has",
    "len",
    "size",
    "length",
    "count",
    "copy",
    "clone",
    "map",
    "filter",
    "find",
    "reduce",
    "join",
    "split",
    "replace",
    "format",
    "read",
    "write",
    "close",
    "open",
    "next",
    "iter",
    "toString",
    "to_string",
    "equals",
    "hashCode",
    "sort",
    "index",
    "indexOf",
    "slice",
    "lower",
    "upper",
    "strip",
    "trim",
    "startswith",
    "endswith",
    "encode",
    "decode",
    "then",
    "catch",
    "forEach",
    "includes",
    "push_str",
    "as_str",
    "is_empty",
    "unwrap",
    "expect",
    "sum",
    "min",
    "max",
    "any",
    "all",
    "first",
    "last",
];

/// Whether a receiver is one string literal (`"/"`, `'a'` is a character).
fn is_string_literal(text: &str) -> bool {
    let t = text.trim();
    t.len() >= 2 && t.starts_with('"') && t.ends_with('"') && !t[1..t.len() - 1].contains('"')
}

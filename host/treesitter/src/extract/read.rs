//! Reading one file: parse under a deadline (again, without conditional
//! directives, where a C or C++ file's errors sit in a conditional), run
//! the language's query, and gather what it captures into [`Facts`].

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use tree_sitter::{Node, ParseOptions, Parser, Query, QueryCursor, StreamingIterator};

use super::doctypes;
use super::rules::{
    bounded_types, drop_cfg_alternatives, fold_overloads, let_bindings, node_of, placed_back, tuple_bindings,
    tuple_fields, type_path,
};
use super::syntax::{
    args_given, arity, calls_in_text, compact, count_args, doc_above, each_closures, generics, labels_given,
    memchr_nul, param_labels, param_types, signature, unqualified,
};
use super::*;
use crate::languages::Lang;

/// A language's parser and compiled query, made once per thread.
pub struct Reader {
    lang: &'static Lang,
    parser: Parser,
    query: &'static Query,
    names: Vec<String>,
    timeout: Duration,
}

impl Reader {
    /// A reader of `lang`'s files that gives up on one after `timeout`.
    pub fn new(lang: &'static Lang, timeout: Duration) -> Result<Reader, Skip> {
        let grammar = (lang.grammar)();
        let mut parser = Parser::new();
        parser.set_language(&grammar).map_err(|e| Skip::Query(lang.name, e.to_string()))?;
        let query = query_of(lang, &grammar)?;
        let names = query.capture_names().iter().map(|s| (*s).to_owned()).collect();
        Ok(Reader { lang, parser, query, names, timeout })
    }

    /// `text`'s syntax tree, or a skip once `started` is past the deadline.
    fn parse(&mut self, text: &[u8], started: Instant) -> Result<tree_sitter::Tree, Skip> {
        self.parse_from(text, None, started)
    }

    /// `text`'s syntax tree, reusing what `old` (edited to match) has.
    fn parse_again(
        &mut self,
        text: &[u8],
        old: &tree_sitter::Tree,
        started: Instant,
    ) -> Result<tree_sitter::Tree, Skip> {
        self.parse_from(text, Some(old), started)
    }

    fn parse_from(
        &mut self,
        text: &[u8],
        old: Option<&tree_sitter::Tree>,
        started: Instant,
    ) -> Result<tree_sitter::Tree, Skip> {
        let timeout = self.timeout;
        let mut give_up = |_: &tree_sitter::ParseState| {
            if started.elapsed() > timeout { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        };
        let len = text.len();
        self.parser
            .parse_with_options(
                &mut |at, _| if at < len { &text[at..] } else { &[] },
                old,
                Some(ParseOptions::new().progress_callback(&mut give_up)),
            )
            .ok_or(Skip::ParseTimeout(timeout))
    }

    /// The facts of one file's text. Parsing and the query share one
    /// deadline: a parse past it skips the file; a query past it stops
    /// where it is, and what it had matched before is kept ([`Facts::cut`]).
    pub fn read(&mut self, text: &[u8]) -> Result<Facts, Skip> {
        if memchr_nul(&text[..text.len().min(8192)]) {
            return Err(Skip::Binary);
        }
        // Same length, every position kept: lone CRs made LFs, C and C++
        // export macros made spaces ([`crate::prepass`]).
        let mut prepared = crate::prepass::prepare(self.lang, text);
        let lines = prepared.iter().filter(|&&b| b == b'\n').count()
            + usize::from(!prepared.ends_with(b"\n") && !prepared.is_empty());
        // Rust's `macro_rules!` of the file expanded where they are invoked
        // ([`crate::macros`]); positions are mapped back at the end.
        let mut unexpanded = 0u32;
        let mut expanded = if self.lang.rules.macro_rules { crate::macros::expand(&prepared) } else { None };
        // The spliced text is parsed; the map back stays in `expanded`.
        if let Some(x) = &mut expanded {
            prepared = std::borrow::Cow::Owned(std::mem::take(&mut x.text));
        }
        let started = Instant::now();
        let timeout = self.timeout;
        let mut tree = self.parse(&prepared, started)?;
        // An expansion the grammar reads worse than the file as written (a
        // macro matched in a way `rustc` would not): the file as written.
        if let Some(x) = &expanded
            && tree.root_node().has_error()
        {
            let written = crate::prepass::prepare(self.lang, text);
            let plain = self.parse(&written, started)?;
            if errors(plain.root_node()).0 < errors(tree.root_node()).0 {
                tracing::debug!(expanded = x.expanded, "macro expansion read worse than the text; not used");
                (tree, prepared) = (plain, written);
                // Every invocation of the file's macros stays as written.
                unexpanded = (x.expanded + x.unread) as u32;
                expanded = None;
            }
        }
        // A C, C++ or C# file the grammar could not read whole, read again
        // without its conditional directives; the reading with fewer errors
        // is kept.
        if matches!(self.lang.name, "cpp" | "csharp") && tree.root_node().has_error() {
            let (before, in_conditional) = errors(tree.root_node());
            // In C and C++, only where the errors are in a conditional: a
            // misread macro elsewhere is no matter of directives. C#'s
            // grammar reads a directive between a member's attributes and
            // the member (`[Attr]` `#endif` `static void F()`) as an error
            // around the whole type, outside any conditional.
            if (in_conditional > 0 || self.lang.name == "csharp")
                && let Some((one, blanked)) = crate::prepass::unconditional(&prepared)
            {
                // Incrementally: what the directives were not part of is
                // reused, not parsed again.
                let mut edited = tree.clone();
                let mut points = Points::new(&one);
                for (a, b) in blanked {
                    let (start, end) = (points.at(a), points.at(b));
                    edited.edit(&tree_sitter::InputEdit {
                        start_byte: a,
                        old_end_byte: b,
                        new_end_byte: b,
                        start_position: start,
                        old_end_position: end,
                        new_end_position: end,
                    });
                }
                let again = self.parse_again(&one, &edited, started)?;
                if errors(again.root_node()).0 < before {
                    (tree, prepared) = (again, std::borrow::Cow::Owned(one));
                }
            }
        }
        // A Kotlin file the grammar could not read whole, read again laid
        // out as it reads it (a one-line body, a constructor on the line
        // after its header); the reading with fewer errors is kept.
        if self.lang.name == "kotlin"
            && tree.root_node().has_error()
            && let Some(laid_out) = crate::prepass::kotlin_layout(&prepared)
        {
            let again = self.parse(&laid_out, started)?;
            if errors(again.root_node()).0 < errors(tree.root_node()).0 {
                (tree, prepared) = (again, std::borrow::Cow::Owned(laid_out));
            }
        }
        let text = &prepared[..];
        let root = tree.root_node();
        let mut facts = Facts {
            package: None,
            imports: Vec::new(),
            defs: Vec::new(),
            texts: Vec::new(),
            supers: Vec::new(),
            vars: Vec::new(),
            calls: Vec::new(),
            types: Vec::new(),
            anonymous: Vec::new(),
            self_types: Vec::new(),
            lines,
            syntax_errors: None,
            macros: expanded.as_ref().map_or((0, unexpanded), |x| (x.expanded as u32, x.unread as u32)),
            cut: None,
            expects: self.lang.rules.expect_actual && declares_expect(text),
        };
        let mut cursor = QueryCursor::new();
        // The query is bounded by the same deadline, checked inside
        // tree-sitter's matching (one step over a pathological tree can
        // take minutes, so a check between matches is not enough): past
        // it, the cursor halts and only finished matches come out.
        let halted_at = std::cell::Cell::new(None);
        let mut stop = |state: &tree_sitter::QueryCursorState| {
            if started.elapsed() > timeout {
                halted_at.set(Some(state.current_byte_offset()));
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let options = tree_sitter::QueryCursorOptions::new().progress_callback(&mut stop);
        let mut matches = cursor.matches_with_options(self.query, root, text, options);
        let mut typed: std::collections::HashMap<(usize, usize), usize> = std::collections::HashMap::new();
        let mut defined: std::collections::HashMap<(usize, usize), usize> = std::collections::HashMap::new();
        // Each variable's one binding, by its name's place: a written type
        // wins over a value.
        let mut bound: std::collections::HashMap<(usize, usize, bool), usize> = std::collections::HashMap::new();
        // The function literals of the file (`@literal`).
        let mut literals: Vec<(usize, usize)> = Vec::new();
        let mut var_blocks: Vec<(usize, usize)> = Vec::new();
        // What parses as a definition but is a macro call's block
        // (`@macro.block`).
        let mut blocks: Vec<(usize, usize)> = Vec::new();
        while let Some(m) = matches.next() {
            let get = |name: &str| m.captures().iter().find(|c| self.names[c.index as usize] == name).map(|c| c.node);
            let txt = |n: Node<'_>| String::from_utf8_lossy(&text[n.byte_range()]).into_owned();
            for c in m.captures() {
                let cap = self.names[c.index as usize].as_str();
                let n = c.node;
                match cap {
                    // PHP's `Acme\Shop` is dotted like the others.
                    "package" => {
                        let name = txt(n).split_whitespace().collect::<String>().replace('\\', ".");
                        facts.package = match facts.package.take() {
                            // Scala's clauses chain: `package a` then
                            // `package b` (or `b` inside `a`'s block) is `a.b`.
                            Some(outer) if self.lang.rules.chained_packages => Some(format!("{outer}.{name}")),
                            _ => Some(name),
                        };
                    }
                    "import" => {
                        let mut path: String =
                            txt(n).trim_matches(['"', '`']).split_whitespace().collect::<String>().replace('\\', ".");
                        // `from a.b import C`: the module, then the name.
                        // `from . import x`: `.x`, one dot a level.
                        if let Some(from) = get("import.from") {
                            let from = txt(from);
                            let from = from.trim();
                            path = if from.ends_with('.') { format!("{from}{path}") } else { format!("{from}.{path}") };
                        }
                        // A grammar that leaves a wildcard out of the name
                        // (Kotlin's `import a.b.*`): the import says it.
                        // C++'s `using namespace a::b;`: every name of `a.b`.
                        if get("import.namespace").is_some() {
                            path = path.replace("::", ".") + ".*";
                        }
                        let wild = n.parent().is_some_and(|p| txt(p).trim_end().trim_end_matches(';').ends_with('*'));
                        if wild && !path.ends_with('*') {
                            path.push_str(".*");
                        }
                        // A Rust `use` inside an inline module (`mod tests {
                        // use super::*; }`) is relative to that module.
                        if path.split(['.', ':']).next() != Some("crate") {
                            let mut inline = Vec::new();
                            let mut at = n.parent();
                            while let Some(a) = at {
                                if a.kind() == "mod_item"
                                    && let Some(name) = a.child_by_field_name("name")
                                {
                                    inline.push(txt(name));
                                }
                                at = a.parent();
                            }
                            if !inline.is_empty() {
                                inline.reverse();
                                path = format!("{}.{path}", inline.join("."));
                            }
                        }
                        facts.imports.push(Import { path, alias: get("import.alias").map(txt) });
                    }
                    "extends" => facts.supers.push(Name {
                        name: txt(n),
                        qualifier: get("ref.qualifier").map(txt),
                        span: Span::of(n),
                        generics: generics(get("ref.generics")),
                    }),
                    // `import ky from "./core/Ky"`: the module's `default`, as `ky`.
                    "import.default" => facts.imports.push(Import {
                        path: format!("{}.default", txt(n).trim_matches(['"', '`'])),
                        alias: get("import.alias").map(txt),
                    }),
                    // `export default class Ky`: the file's own `Ky`, re-exported
                    // as `default` (the file's package is known when resolving:
                    // `@self.` stands for it until then).
                    "export.default" => {
                        facts.imports.push(Import { path: format!("@self.{}", txt(n)), alias: Some("default".into()) })
                    }
                    "literal" => literals.push((n.start_byte(), n.end_byte())),
                    // A block whose names are seen only inside it (Swift's
                    // `catch { … }`): a scope of variables, as a literal is.
                    "var.block" => var_blocks.push((n.start_byte(), n.end_byte())),
                    // Swift's extension of an array type: in its body, `self`
                    // is an array of that element.
                    "self.type" => {
                        if let Some(body) = n.parent() {
                            facts.self_types.push(((body.start_byte(), body.end_byte()), compact(&txt(n))));
                        }
                    }
                    // Swift's `catch` without a pattern binds `error`, of a
                    // type the project does not define.
                    "catch.error" => facts.vars.push(Var {
                        name: "error".into(),
                        ty: Name { name: "Error".into(), qualifier: None, span: Span::of(n), generics: 0 },
                        typed: Typed::Is,
                        written: Some("Error".into()),
                        within: Some((n.start_byte(), n.start_byte())),
                        member: false,
                        at: (n.start_byte(), n.start_byte()),
                    }),
                    "tuple.fields" => facts.vars.extend(tuple_fields(n, text)),
                    "tuple.pattern" => facts.vars.extend(tuple_bindings(n, text)),
                    "let.bindings" => facts.vars.extend(let_bindings(n, text)),
                    "macro.block" => blocks.push((n.start_byte(), n.end_byte())),
                    "anonymous" => {
                        if let Some(t) = get("anonymous.type") {
                            let name = Name {
                                name: txt(t),
                                qualifier: get("ref.qualifier").map(txt),
                                span: Span::of(t),
                                generics: generics(get("ref.generics")),
                            };
                            facts.anonymous.push(((n.start_byte(), n.end_byte()), name));
                        }
                    }
                    "var.name" => {
                        let typed = [
                            ("var.type", Typed::Is),
                            ("var.elem", Typed::Holds),
                            ("var.like", Typed::Like),
                            ("var.value", Typed::Value),
                            ("var.of", Typed::Element),
                            ("var.written", Typed::Is),
                            // A parameter of no written type: a name that
                            // shadows others, bound to nothing known.
                            ("var.unknown", Typed::Value),
                        ];
                        // Kotlin's written type (`@var.path`: `Segment?`,
                        // `JsonAdapter.Factory<T>`): its last name, qualified
                        // by the one before it.
                        let path = get("var.path").and_then(type_path);
                        let found = match path {
                            Some((last, _)) => Some((last, Typed::Is)),
                            None => typed.iter().find_map(|(c, t)| get(c).map(|n| (n, *t))),
                        };
                        // PHP's `array $handlers` with `/** @var Handler[] */`
                        // above it: the docblock's type.
                        let doc = if self.lang.rules.doc_types
                            && found.is_none_or(|(ty, typed)| typed != Typed::Is || doctypes::vague(&txt(ty)))
                        {
                            doctypes::of_var(n, text)
                        } else {
                            None
                        };
                        let var = match (doc, found) {
                            (Some(doc), _) => Some(Var {
                                name: txt(n),
                                ty: Name { name: doc.clone(), qualifier: None, span: Span::of(n), generics: 0 },
                                typed: Typed::Is,
                                written: Some(doc),
                                within: Some((n.start_byte(), n.start_byte())),
                                member: get("var.member").is_some(),
                                at: (n.start_byte(), n.start_byte()),
                            }),
                            (None, Some((ty, typed))) => Some(Var {
                                name: txt(n),
                                ty: Name {
                                    name: match typed {
                                        // `if let Some(x) = v`: what `v` holds.
                                        Typed::Value if get("var.unwrap").is_some() => compact(&txt(ty)) + "?",
                                        Typed::Value if get("var.unknown").is_some() => String::new(),
                                        Typed::Value | Typed::Element => compact(&txt(ty)),
                                        _ => txt(ty),
                                    },
                                    qualifier: get("var.qualifier").or(path.and_then(|(_, q)| q)).map(txt),
                                    span: Span::of(n),
                                    generics: generics(get("ref.generics")),
                                },
                                typed,
                                // Kotlin's generic type (`List<Item>`) whole: what
                                // a collection holds, for its lambdas' `it`.
                                written: get("var.written")
                                    .or(get("var.path").filter(|p| txt(*p).contains('<')))
                                    .map(|w| compact(&txt(w))),
                                // Set once every function literal is known.
                                within: Some((n.start_byte(), n.start_byte())),
                                member: get("var.member").is_some(),
                                at: (ty.start_byte(), ty.end_byte()),
                            }),
                            (None, None) => None,
                        };
                        if let Some(var) = var {
                            let typed = var.typed;
                            // What a collection holds is said beside its own type.
                            match bound.entry((n.start_byte(), n.end_byte(), typed == Typed::Holds)) {
                                std::collections::hash_map::Entry::Occupied(e) => {
                                    let had = &mut facts.vars[*e.get()];
                                    if had.typed.inferred() && !typed.inferred() {
                                        *had = var;
                                    } else if had.written.is_none() && had.typed == typed {
                                        had.written = var.written;
                                    }
                                }
                                std::collections::hash_map::Entry::Vacant(e) => {
                                    e.insert(facts.vars.len());
                                    facts.vars.push(var);
                                }
                            }
                        }
                    }
                    "call" => {
                        // Kotlin's grammar reads a class header it does not
                        // know (`@OptIn(…) actual class A { … }`) as a call
                        // of `A` given a lambda: no call.
                        if get("call.args").is_some_and(|a| a.kind() == "annotated_lambda")
                            && n.parent()
                                .and_then(|c| c.prev_named_sibling())
                                .is_some_and(|k| matches!(k.utf8_text(text), Ok("class" | "interface" | "object")))
                        {
                            continue;
                        }
                        if let Some(of) = get("call.receiver") {
                            for (at, var) in each_closures(n, of, text) {
                                // Before the parameter's own capture (of no type).
                                if let Some(at) = at {
                                    bound.insert(at, facts.vars.len());
                                }
                                facts.vars.push(var);
                            }
                        }
                        facts.calls.push(Call {
                            name: txt(n),
                            // An implicit member's receiver is the type the
                            // context expects, which is not written: `.`.
                            receiver: match get("call.implicit") {
                                Some(_) => Some(".".to_owned()),
                                None => get("call.receiver").or(get("call.scope")).map(txt),
                            },
                            args: get("call.args").map(count_args),
                            given: get("call.args").map(|a| args_given(a, text)).unwrap_or_default(),
                            span: Span::of(n),
                            construct: false,
                            scoped: get("call.scope").is_some(),
                            read: false,
                            generics: generics(get("ref.generics")),
                            labels: get("call.args").and_then(|a| labels_given(a, text)),
                        });
                    }
                    "read" => facts.calls.push(Call {
                        name: txt(n),
                        receiver: get("call.receiver").map(txt),
                        args: None,
                        given: Vec::new(),
                        span: Span::of(n),
                        construct: false,
                        scoped: false,
                        read: true,
                        generics: generics(get("ref.generics")),
                        labels: None,
                    }),
                    "new" => facts.calls.push(Call {
                        name: txt(n),
                        // `new shapes::Square(…)`: the type's qualifier.
                        receiver: get("ref.qualifier").map(txt),
                        args: get("call.args").map(count_args),
                        given: get("call.args").map(|a| args_given(a, text)).unwrap_or_default(),
                        span: Span::of(n),
                        construct: true,
                        scoped: false,
                        read: false,
                        generics: generics(get("ref.generics")),
                        labels: get("call.args").and_then(|a| labels_given(a, text)),
                    }),
                    "ref.type" => {
                        let key = (n.start_byte(), n.end_byte());
                        let name = Name {
                            name: txt(n),
                            qualifier: get("ref.qualifier").map(txt),
                            span: Span::of(n),
                            generics: generics(get("ref.generics")),
                        };
                        // The same name met by a plain and a qualified pattern: keep the qualifier.
                        match typed.get(&key) {
                            Some(&i) => {
                                if name.qualifier.is_some() {
                                    facts.types[i] = name;
                                }
                            }
                            None => {
                                typed.insert(key, facts.types.len());
                                facts.types.push(name);
                            }
                        }
                    }
                    _ => {
                        let Some(kind) = Kind::of_capture(cap) else { continue };
                        let Some(name) = get("name") else { continue };
                        // Two patterns naming one definition: the more
                        // precise kind wins (a constructor over a function).
                        match defined.entry((name.start_byte(), name.end_byte())) {
                            std::collections::hash_map::Entry::Occupied(e) => {
                                let d: &mut Def = &mut facts.defs[*e.get()];
                                if kind.precision() > d.kind.precision() {
                                    d.kind = kind;
                                }
                                // What only one of them says (a Rust impl's
                                // type) is kept.
                                if d.owner().is_none()
                                    && let Some(owner) = get("owner")
                                {
                                    d.change_words(|w| w.owner = Some(txt(owner)));
                                }
                                d.term |= get("term").is_some();
                                d.meta |= get("meta").is_some();
                                if d.rare().extension.is_none() {
                                    extend(d, get("extension").map(txt), get("extension.this").is_some());
                                }
                                if d.returns().is_none()
                                    && let Some(r) = get("returns")
                                {
                                    d.change_words(|w| w.returns = Some(compact(&txt(r))));
                                }
                                if d.rare().impl_of.is_none()
                                    && let Some(t) = get("impl.type")
                                {
                                    d.rare_mut().impl_of =
                                        Some((unqualified(&txt(t)), get("impl.trait").map(|t| unqualified(&txt(t)))));
                                }
                                continue;
                            }
                            std::collections::hash_map::Entry::Vacant(e) => {
                                e.insert(facts.defs.len());
                            }
                        }
                        // Scala's grammar names a generic method's type
                        // parameters `parameters` too, which the query's
                        // `parameters: (parameters)` then misses: its first
                        // list of parameters.
                        let params = get("params").or_else(|| {
                            let mut c = n.walk();
                            n.children_by_field_name("parameters", &mut c).find(|p| p.kind() == "parameters")
                        });
                        let mut def = Def {
                            kind,
                            words: Words::new(Parts {
                                name: txt(name),
                                owner: get("owner").map(txt),
                                returns: get("returns").or_else(|| after_arrow(n)).map(|r| compact(&txt(r))),
                                params: params.map(|p| param_types(p, text)).unwrap_or_default(),
                            }),
                            span: Span::of(n),
                            name_span: Span::of(name),
                            this_param: false,
                            term: get("term").is_some(),
                            meta: get("meta").is_some(),
                            arity: params.map(|p| arity(p, text)),
                            generics: generics(get("generics")),
                            expands: n.kind() == "preproc_function_def",
                            singleton: n.kind() == "singleton_method"
                                || std::iter::successors(n.parent(), |a| a.parent())
                                    .take_while(|a| !matches!(a.kind(), "class" | "module"))
                                    .any(|a| a.kind() == "singleton_class"),
                            declared_static: false,
                            annotated: false,
                            rare: None,
                        };
                        let written = Text::of(&mut def, signature(n, text), doc_above(n, text));
                        let impl_of = get("impl.type")
                            .map(|t| (unqualified(&txt(t)), get("impl.trait").map(|t| unqualified(&txt(t)))));
                        let labels = params.and_then(|p| param_labels(p, text));
                        if impl_of.is_some() || labels.is_some() {
                            *def.rare_mut() = Rare { impl_of, labels, ..Rare::default() };
                        }
                        extend(&mut def, get("extension").map(txt), get("extension.this").is_some());
                        // PHP's `function all(): array` with `@return Item[]`.
                        if self.lang.rules.doc_types
                            && def.kind.is_callable()
                            && def.returns().is_none_or(doctypes::vague)
                            && let Some(doc) = doctypes::returned(&written.doc)
                        {
                            def.change_words(|w| w.returns = Some(doc));
                        }
                        facts.defs.push(def);
                        facts.texts.push(written);
                    }
                }
            }
        }
        if !blocks.is_empty() {
            facts.retain_defs(|d| !blocks.contains(&d.span.offsets()));
        }
        if self.lang.rules.cfg_alternatives {
            drop_cfg_alternatives(&mut facts, root, text);
        }
        if self.lang.rules.generic_bounds {
            bounded_types(&mut facts, root, text);
        }
        if self.lang.rules.decorators_inside {
            for d in &mut facts.defs {
                if let Some(p) =
                    node_of(root, &d.span).and_then(|n| n.parent()).filter(|p| p.kind() == "decorated_definition")
                {
                    d.span.bytes.0 = offset(p.start_byte());
                    d.span.start = (p.start_position().row as u32, p.start_position().column as u32);
                    let mut c = p.walk();
                    let outermost = p.children(&mut c).find(|k| k.kind() == "decorator");
                    // Past the length an expression is read to, it is not kept.
                    let decorated = outermost
                        .filter(|k| k.byte_range().len() <= crate::expr::MAX_LEN)
                        .and_then(|k| k.utf8_text(text).ok())
                        .map(|t| t.trim_start_matches('@').split_whitespace().collect::<Vec<_>>().join(" "));
                    if decorated.is_some() {
                        d.rare_mut().decorated = decorated;
                    }
                }
            }
        }
        // Each name declared in a function literal is seen only inside it.
        literals.sort_unstable();
        if self.lang.rules.module_objects_only {
            let functions: Vec<(usize, usize)> = facts
                .defs
                .iter()
                .filter(|d| d.kind.is_callable() && !d.meta)
                .map(|d| d.span.offsets())
                .chain(literals.iter().copied())
                .collect();
            let inside = |d: &Def| {
                let (s, e) = d.span.offsets();
                functions.iter().any(|&(a, b)| a <= s && e <= b && (a, b) != (s, e))
            };
            // A method of an object literal inside a function (`get
            // headers() { … }`, `clone() { … }`) is a local of that function,
            // as scip-typescript has it: no definition, and what it calls,
            // the function calls.
            let object_method = |d: &Def| {
                d.kind == Kind::Method
                    && node_of(root, &d.span).and_then(|n| n.parent()).is_some_and(|p| p.kind() == "object")
            };
            facts.retain_defs(|d| !(object_method(d) && inside(d)));
            let local = |d: &Def| d.meta && inside(d);
            // Still found by name, as scip-typescript finds it; no scope,
            // not even of its own name (a shorthand `{ replacer }` reads
            // `replacer` for the function around it).
            for d in facts.defs.iter_mut().filter(|d| local(d)) {
                let at = d.name_span;
                d.span = Span { start: at.start, end: at.start, bytes: (at.bytes.0, at.bytes.0) };
            }
        }
        let mut scopes = literals;
        if !var_blocks.is_empty() {
            scopes.extend(var_blocks);
            scopes.sort_unstable();
        }
        for v in &mut facts.vars {
            v.within = v.within.and_then(|(at, _)| innermost_range(&scopes, at));
        }
        // A function-like macro's body is no syntax tree: the calls in it
        // are read off its text, where they are written.
        let macros: Vec<(usize, usize)> = facts.defs.iter().filter(|d| d.expands).map(|d| d.span.offsets()).collect();
        for (start, end) in macros {
            if let Some(def) = root.descendant_for_byte_range(start, end).filter(|n| n.kind() == "preproc_function_def")
                && let Some(value) = def.child_by_field_name("value")
            {
                facts.calls.extend(calls_in_text(text, value));
            }
        }
        // One call met by two patterns (a plain name, and the same name after
        // a receiver or scope; a call's name, and the attribute it reads):
        // the one that knows more is kept.
        facts.calls.sort_by_key(|c| (c.span.bytes, c.read, c.receiver.is_none()));
        facts.calls.dedup_by_key(|c| c.span.bytes);
        // A definition's own name is not a use of it.
        facts.types.retain(|t| !defined.contains_key(&t.span.offsets()));
        facts.sort_defs_by_key(|d| (d.span.bytes.0, std::cmp::Reverse(d.span.bytes.1)));
        if self.lang.rules.overload_stubs {
            fold_overloads(&mut facts, root, text);
        }
        drop(matches);
        // The 1-based line in the file of a byte of the text parsed.
        let line_of = |at: usize| match &expanded {
            Some(x) => x.point(at.min(text.len()), false).0 + 1,
            None => text[..at.min(text.len())].iter().filter(|&&b| b == b'\n').count() as u32 + 1,
        };
        facts.cut = halted_at.get().map(|at| Cut { line: line_of(at) as usize, after: timeout });
        facts.syntax_errors = first_error(root).map(line_of);
        if let Some(x) = &expanded {
            placed_back(&mut facts, x);
        }
        // Facts are held until the whole project is resolved: without the
        // room their vectors grew into.
        facts.calls.shrink_to_fit();
        facts.defs.shrink_to_fit();
        facts.vars.shrink_to_fit();
        facts.types.shrink_to_fit();
        facts.supers.shrink_to_fit();
        Ok(facts)
    }
}

/// Each language's compiled query, made once per process and shared by
/// every reader: a large grammar's query takes half a second to compile
/// (Swift's), which no edit should wait for again.
fn query_of(lang: &'static Lang, grammar: &tree_sitter::Language) -> Result<&'static Query, Skip> {
    use std::sync::{Mutex, OnceLock};
    type Compiled = Result<&'static Query, String>;
    static QUERIES: OnceLock<Mutex<Vec<(usize, Compiled)>>> = OnceLock::new();
    let key = std::ptr::from_ref(lang) as usize;
    let mut all = QUERIES.get_or_init(Mutex::default).lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let compiled = match all.iter().find(|(k, _)| *k == key) {
        Some((_, c)) => c.clone(),
        None => {
            // Compiled once per language for the process's life.
            let c: Compiled =
                Query::new(grammar, lang.query).map(|q| &*Box::leak(Box::new(q))).map_err(|e| e.to_string());
            all.push((key, c.clone()));
            c
        }
    };
    compiled.map_err(|e| Skip::Query(lang.name, e))
}

/// The type a callable declares after its arrow where no `@returns` gives
/// it (Swift's `func f() throws -> URLRequest`): the node after `->`.
fn after_arrow(n: Node<'_>) -> Option<Node<'_>> {
    let mut c = n.walk();
    let mut children = n.children(&mut c);
    children.find(|k| k.kind() == "->")?;
    children.find(|k| k.is_named())
}

/// Rows and columns of bytes of a text, asked in increasing order.
struct Points<'t> {
    text: &'t [u8],
    /// The last byte asked, its row, and where its line starts.
    at: usize,
    row: usize,
    line: usize,
}

impl<'t> Points<'t> {
    fn new(text: &'t [u8]) -> Self {
        Points { text, at: 0, row: 0, line: 0 }
    }

    /// The row and column of byte `to` (at or after the last asked).
    fn at(&mut self, to: usize) -> tree_sitter::Point {
        let to = to.min(self.text.len()).max(self.at);
        for i in memchr::memchr_iter(b'\n', &self.text[self.at..to]) {
            self.row += 1;
            self.line = self.at + i + 1;
        }
        self.at = to;
        tree_sitter::Point { row: self.row, column: to - self.line }
    }
}

/// Whether Kotlin text declares something `expect` (`expect class`,
/// `public expect fun`): a line whose leading modifiers hold the word.
fn declares_expect(text: &[u8]) -> bool {
    memchr::memmem::find(text, b"expect").is_some()
        && text.split(|&b| b == b'\n').any(|line| {
            line.split(u8::is_ascii_whitespace)
                .filter(|w| !w.is_empty())
                .take_while(|w| crate::prepass::KOTLIN_MODIFIERS.contains(w))
                .any(|w| w == b"expect")
        })
}

/// The byte where the first error or missing node of a tree starts.
fn first_error(root: Node<'_>) -> Option<usize> {
    let mut node = root;
    'down: while node.has_error() {
        if node.is_error() || node.is_missing() {
            return Some(node.start_byte());
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if child.has_error() || child.is_error() || child.is_missing() {
                node = child;
                continue 'down;
            }
        }
        return Some(node.start_byte());
    }
    None
}

/// How many nodes of a tree are errors or missing (how much of it the
/// grammar could not read), and how many of them are in a conditional
/// (`#if`, `#ifdef`, an `#else` branch).
fn errors(root: Node<'_>) -> (usize, usize) {
    let mut cursor = root.walk();
    let (mut n, mut in_conditional) = (0, 0);
    let mut conditionals = 0usize;
    let conditional = |k: &str| k.starts_with("preproc_if") || k.starts_with("preproc_el");
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            n += 1;
            in_conditional += usize::from(conditionals > 0);
        }
        // Only a subtree with an error has one to count.
        if node.has_error() && cursor.goto_first_child() {
            conditionals += usize::from(conditional(node.kind()));
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return (n, in_conditional);
            }
            conditionals -= usize::from(conditional(cursor.node().kind()));
        }
    }
}

/// Marks `def` an extension of type `of` (`@extension`); `this_param`
/// (`@extension.this`, C#'s `this Reader r`): its first parameter is the
/// receiver, which calls do not pass.
fn extend(def: &mut Def, of: Option<String>, this_param: bool) {
    let Some(of) = of else { return };
    def.rare_mut().extension = Some(of);
    def.this_param = this_param;
    if this_param {
        if def.params().next().is_some() {
            def.change_words(|w| {
                w.params.remove(0);
            });
        }
        if let Some(a) = &mut def.arity {
            a.min = a.min.saturating_sub(1);
            a.max = a.max.map(|m| m.saturating_sub(1));
        }
    }
}

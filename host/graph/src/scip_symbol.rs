//! SCIP symbol strings: parsing and the canonical form ids are made from.
//!
//! The grammar is SCIP's (`scip.proto`, "Symbol"): `local <id>`, or
//! `<scheme> <manager> <name> <version> <descriptor>+`, where a space inside
//! the first four fields is written twice, `.` stands for an empty field,
//! and a descriptor name is a simple identifier (`[\w+$-]+`) or one in
//! backticks (a backtick inside is written twice).
//!
//! The `scip` crate has a parser, but it formats its whole state into a
//! string for every descriptor it reads (about 17 µs a symbol): at a
//! million symbols that alone took seconds. This one is a single pass
//! without allocation beyond the result. Its output is the crate's
//! `Symbol` type, and [`canonical`] formats exactly as the crate's
//! `format_symbol_with` (without the version), so ids are the same.

use scip::types::descriptor::Suffix;
use scip::types::{Descriptor, Package, Symbol};

/// Parses a symbol string; the error says what is wrong and where.
pub fn parse(s: &str) -> Result<Symbol, String> {
    let mut sym = Symbol::new();
    if let Some(local) = s.strip_prefix("local ") {
        // Indexers write more than the grammar's simple ids for locals
        // (scip-python's `local 269(x)`): a local is only ever matched
        // within its document, so any id but an empty one will do.
        if local.is_empty() || local.contains(char::is_whitespace) {
            return Err(format!("`{local}` is not a local id"));
        }
        sym.scheme = "local".into();
        sym.descriptors.push(descriptor(local.to_owned(), String::new(), Suffix::Local));
        return Ok(sym);
    }
    let mut p = Parser { s, at: 0 };
    sym.scheme = p.field("scheme")?;
    let mut package = Package::new();
    package.manager = dot(p.field("package manager")?);
    package.name = dot(p.field("package name")?);
    package.version = dot(p.field("package version")?);
    sym.package = Some(package).into();
    while p.at < s.len() {
        sym.descriptors.push(p.descriptor()?);
    }
    if sym.descriptors.is_empty() {
        return Err("no descriptors".into());
    }
    Ok(sym)
}

fn dot(s: String) -> String {
    if s == "." { String::new() } else { s }
}

fn simple(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '+' | '-' | '$')
}

fn descriptor(name: String, disambiguator: String, suffix: Suffix) -> Descriptor {
    let mut d = Descriptor::new();
    d.name = name;
    d.disambiguator = disambiguator;
    d.suffix = suffix.into();
    d
}

struct Parser<'a> {
    s: &'a str,
    at: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.s[self.at..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn expect(&mut self, c: char, what: &str) -> Result<(), String> {
        match self.peek() {
            Some(x) if x == c => {
                self.at += c.len_utf8();
                Ok(())
            }
            other => Err(format!("expected `{c}` ({what}) at byte {}, found {other:?}", self.at)),
        }
    }

    /// A space-terminated field; two spaces are one space inside it.
    fn field(&mut self, what: &str) -> Result<String, String> {
        let mut out = String::new();
        loop {
            let rest = self.rest();
            let Some(i) = rest.find(' ') else { return Err(format!("the {what} is not followed by a space")) };
            out.push_str(&rest[..i]);
            if rest[i + 1..].starts_with(' ') {
                out.push(' ');
                self.at += i + 2;
            } else {
                self.at += i + 1;
                return Ok(out);
            }
        }
    }

    fn identifier(&mut self, what: &str) -> Result<String, String> {
        if self.peek() == Some('`') {
            self.at += 1;
            let mut out = String::new();
            loop {
                let rest = self.rest();
                let Some(i) = rest.find('`') else { return Err(format!("unterminated `…` in the {what}")) };
                out.push_str(&rest[..i]);
                if rest[i + 1..].starts_with('`') {
                    out.push('`');
                    self.at += i + 2;
                } else {
                    self.at += i + 1;
                    return Ok(out);
                }
            }
        }
        let len: usize = self.rest().chars().take_while(|&c| simple(c)).map(char::len_utf8).sum();
        if len == 0 {
            return Err(format!("expected the {what} at byte {}", self.at));
        }
        let name = self.rest()[..len].to_owned();
        self.at += len;
        Ok(name)
    }

    fn descriptor(&mut self) -> Result<Descriptor, String> {
        match self.peek() {
            Some('(') => {
                self.at += 1;
                let name = self.identifier("parameter name")?;
                self.expect(')', "closing a parameter")?;
                Ok(descriptor(name, String::new(), Suffix::Parameter))
            }
            Some('[') => {
                self.at += 1;
                let name = self.identifier("type parameter name")?;
                self.expect(']', "closing a type parameter")?;
                Ok(descriptor(name, String::new(), Suffix::TypeParameter))
            }
            _ => {
                let name = self.identifier("descriptor name")?;
                let suffix = match self.peek() {
                    Some('/') => Suffix::Namespace,
                    Some('#') => Suffix::Type,
                    Some('.') => Suffix::Term,
                    Some(':') => Suffix::Meta,
                    Some('!') => Suffix::Macro,
                    Some('(') => {
                        self.at += 1;
                        let disambiguator = if self.peek() == Some(')') {
                            String::new()
                        } else {
                            self.identifier("method disambiguator")?
                        };
                        self.expect(')', "closing a method")?;
                        self.expect('.', "ending a method")?;
                        return Ok(descriptor(name, disambiguator, Suffix::Method));
                    }
                    other => return Err(format!("`{name}` has no descriptor suffix (found {other:?})")),
                };
                self.at += 1;
                Ok(descriptor(name, String::new(), suffix))
            }
        }
    }
}

/// The canonical form of `sym` with `path` as its descriptors and without
/// the package version: what ids hash. Formats as the `scip` crate does.
pub fn canonical<D: std::borrow::Borrow<Descriptor>>(sym: &Symbol, path: &[D]) -> String {
    if sym.scheme == "local"
        && let Some(d) = path.iter().map(|d| d.borrow()).find(|d| d.suffix.enum_value() == Ok(Suffix::Local))
    {
        return format!("local {}", d.name);
    }
    let mut out = String::with_capacity(64);
    out.push_str(&sym.scheme);
    let package = sym.package.as_ref();
    for field in [package.map(|p| p.manager.as_str()), package.map(|p| p.name.as_str())] {
        out.push(' ');
        out.push_str(field.filter(|f| !f.is_empty()).unwrap_or("."));
    }
    if !path.is_empty() {
        out.push(' ');
    }
    for d in path.iter().map(|d| d.borrow()) {
        let Ok(suffix) = d.suffix.enum_value() else { continue };
        let name = escape(&d.name);
        match suffix {
            Suffix::Package | Suffix::Namespace => {
                out.push_str(&name);
                out.push('/');
            }
            Suffix::Type => {
                out.push_str(&name);
                out.push('#');
            }
            Suffix::Term => {
                out.push_str(&name);
                out.push('.');
            }
            Suffix::Method => {
                out.push_str(&name);
                out.push('(');
                out.push_str(&d.disambiguator);
                out.push_str(").");
            }
            Suffix::TypeParameter => {
                out.push('[');
                out.push_str(&name);
                out.push(']');
            }
            Suffix::Parameter => {
                out.push('(');
                out.push_str(&name);
                out.push(')');
            }
            Suffix::Macro => {
                out.push_str(&name);
                out.push('!');
            }
            Suffix::Meta => {
                out.push_str(&name);
                out.push(':');
            }
            Suffix::Local => out.push_str(&name),
            Suffix::UnspecifiedSuffix => {}
        }
    }
    out
}

fn escape(name: &str) -> std::borrow::Cow<'_, str> {
    if name.chars().all(|c| c == '_' || c == '+' || c == '-' || c == '$' || c.is_ascii_alphanumeric()) {
        name.into()
    } else {
        format!("`{}`", name.replace('`', "``")).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scip::symbol::{SymbolFormatOptions, format_symbol_with, parse_symbol};

    #[test]
    fn parses_and_formats_as_the_scip_crate_does() {
        let symbols = [
            "rust-analyzer cargo shapes 0.1.0 geometry/impl#[Circle][Shape]area().",
            "rust-analyzer cargo core https://github.com/rust-lang/rust/library/core ops/arith/impl#[f64][`Mul<Self>`]mul().",
            "scip-typescript npm shapes 0.1.0 src/`shapes.ts`/Circle#`<constructor>`().(radius)",
            "scip-python python shapes 0.1.0 `shapes.geometry`/__init__:",
            "scip-python python python-stdlib 3.11 builtins/str#join().",
            "rust-analyzer cargo shapes 0.1.0 geometry/square!",
            "scip-java maven . . com/acme/A#m(+1).",
            "a  b mgr name  with  spaces 1 x/`we``ird`#",
            "local 42",
        ];
        let opts = || SymbolFormatOptions {
            include_scheme: true,
            include_package_manager: true,
            include_package_name: true,
            include_package_version: false,
            include_descriptor: true,
        };
        for s in symbols {
            let mine = parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            let theirs = parse_symbol(s).unwrap_or_else(|e| panic!("{s}: {e:?}"));
            assert_eq!(mine.descriptors, theirs.descriptors, "{s}");
            assert_eq!(canonical(&mine, &mine.descriptors), format_symbol_with(theirs, opts()), "{s}");
        }
    }

    #[test]
    fn malformed_symbols_say_what_is_wrong() {
        for (s, needle) in [
            ("rust-analyzer cargo", "not followed by a space"),
            ("a b c d ", "no descriptors"),
            ("a b c d x", "no descriptor suffix"),
            ("a b c d `open", "unterminated"),
            ("a b c d m(x", "closing a method"),
            ("local ", "not a local id"),
            ("a b c d [T", "closing a type parameter"),
        ] {
            let e = parse(s).map(|_| ()).unwrap_err();
            assert!(e.contains(needle), "{s}: {e}");
        }
    }
}

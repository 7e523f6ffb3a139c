//! The expander's own cases, and every Rust file of this repository.

use super::*;

mod cases {
    use super::*;

    fn expanded(src: &str) -> String {
        String::from_utf8(expand(src.as_bytes()).expect("expanded").text).unwrap()
    }

    #[test]
    fn fragments_repetitions_and_nesting() {
        let src = "macro_rules! define_bool {\n    ($bit:expr, $is:ident, $set:ident) => {\n        fn $is(&self) -> bool { self.b & (1 << $bit) > 0 }\n        fn $set(&mut self) {}\n    };\n}\nimpl Info {\n    define_bool!(0, is_utf8, set_utf8);\n}\n";
        let out = expanded(src);
        assert!(out.contains("fn is_utf8(&self)") || out.contains("fn is_utf8 (&self)"), "{out}");
        assert!(out.contains("fn set_utf8"), "{out}");
        let x = expand(src.as_bytes()).unwrap();
        // The generated name is where the caller wrote it.
        let at = out.find("is_utf8").unwrap();
        assert_eq!(x.point(at, false), (7, 20));
        // A token of the macro's body is at the invocation.
        let body = out.rfind("self.b").unwrap();
        assert_eq!(x.point(body, false), (7, 4));
        assert_eq!(x.expanded, 1);
    }

    #[test]
    fn nested_and_repeated() {
        let src = r#"macro_rules! t {
    ($name:ident, $which:ident, $re:expr) => { t!($name, $which, $re,); };
    ($name:ident, $which:ident, $re:expr, $($lit:expr),*) => {
        #[test] fn $name() { let v = vec![$($lit),*]; check($which(&parse($re)), v); }
    };
}
t!(one, prefixes, "a", M("a"), C("b"));
t!(two, suffixes, "b");
"#;
        let out = expanded(src);
        assert!(out.contains("fn one"), "{out}");
        assert!(out.contains("prefixes (&parse") || out.contains("prefixes(&parse"), "{out}");
        assert!(out.contains("let v = { vec! ( ) ;") && out.contains("[ M(\"a\"), C(\"b\") ]"), "{out}");
        assert!(out.contains("fn two"), "{out}");
    }

    #[test]
    fn hostile_macros_stop_at_their_bounds() {
        // Itself without end, and doubling at each level.
        let src =
            "macro_rules! a { () => { a!(); } }\nmacro_rules! b { () => { b!(); b!(); } }\nfn f() { a!(); b!(); }\n";
        let x = expand(src.as_bytes()).unwrap();
        assert_eq!(x.unread, 2);
        assert_eq!(x.expanded, 0);
        // Unbalanced groups, a lone `$`, no rules: nothing panics.
        for s in [
            "macro_rules! m { ($($x:tt)*) => { $($x)* } } m!(]);",
            "macro_rules! m { ($x:ident) => { $ } } m!(a);",
            "macro_rules! m {} m!();",
            "macro_rules! m { ($x:expr) => { $x }",
            "macro_rules! m { ($($x:ident),+) => { $y } } m!(a, b);",
        ] {
            let _ = expand(s.as_bytes());
        }
    }
}
mod corpus {
    /// Every Rust file of this repository (macros of its own and `std`'s
    /// by the hundred): an expansion never leaves the grammar more to
    /// misread than the file as written.
    #[test]
    fn no_expansion_of_this_repository_reads_worse() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&tree_sitter_rust::LANGUAGE.into()).unwrap();
        let (mut files, mut expanded) = (0, 0);
        let mut worse = Vec::new();
        let mut stack = vec![root.join("host"), root.join("hints-component"), root.join("tests")];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for e in entries.flatten() {
                let path = e.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read(&path).unwrap();
                    files += 1;
                    let Some(x) = super::expand(&text) else { continue };
                    expanded += 1;
                    let before = parser.parse(&text, None).unwrap().root_node().has_error();
                    if !before && parser.parse(&x.text, None).unwrap().root_node().has_error() {
                        worse.push(path.display().to_string());
                    }
                }
            }
        }
        assert!(files > 100 && expanded > 50, "{files} files, {expanded} expanded");
        assert!(worse.is_empty(), "expanded, these read worse: {worse:?}");
    }
}

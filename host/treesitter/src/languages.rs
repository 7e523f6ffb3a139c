//! The languages the built-in indexer reads: one row each. A row names the
//! grammar, the query file that says what the language's definitions,
//! headers and references look like (`queries/<name>.scm`, vocabulary in
//! `docs/tree-sitter.md`), and how its symbols are spelled in SCIP so that
//! ids match the language's own SCIP indexer where the symbol is the same.
//!
//! Adding a language is a grammar crate, a query file and a row here; no
//! other code reads a language's syntax.

use tree_sitter::Language;

/// How a file's package becomes the first descriptors of its symbols.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packages {
    /// A dotted package declaration, one namespace per part
    /// (`package com.example;` → `com/example/`), as scip-java writes it.
    Dotted,
    /// The directory's import path under the module root, one namespace
    /// (`` `example.com/shop/orders`/ ``), as scip-go writes it.
    ModulePath,
    /// The file is the module, one dotted namespace from its path under the
    /// project root (`shapes/geometry.py` → `` `shapes.geometry`/ ``;
    /// `__init__.py` is its package), as scip-python writes it.
    ModuleFile,
    /// The file is the module, one namespace per directory of its path
    /// under its package (the nearest `package.json`) and one for the file
    /// (`src/shapes.ts` → ``src/`shapes.ts`/``), the package's name in the
    /// module field, as scip-typescript writes it.
    FilePath,
    /// The module path from the file's path under its crate's `src/`
    /// (`src/geometry.rs` → `geometry/`; `main.rs`, `lib.rs` the crate root;
    /// `a/mod.rs` → `a/`), the crate's package name in the module field, as
    /// rust-analyzer writes it.
    CratePath,
}

/// One language.
#[derive(Debug)]
pub struct Lang {
    /// Lower-case name, used in file names (`index.java.scip`) and notes.
    pub name: &'static str,
    /// File extensions, without the dot.
    pub extensions: &'static [&'static str],
    /// The grammar.
    pub grammar: fn() -> Language,
    /// The query file's text.
    pub query: &'static str,
    /// SCIP scheme and package manager of the language's own indexer.
    pub scheme: &'static str,
    /// SCIP package manager.
    pub manager: &'static str,
    /// Package descriptors.
    pub packages: Packages,
    /// The descriptor name of constructors (scip-java: `<init>`); empty
    /// when constructors are named like their class.
    pub constructor: &'static str,
    /// Whether the language's indexer relates a type to every supertype
    /// (and a method to every method it overrides), not only the direct
    /// ones: scip-typescript does.
    pub all_supertypes: bool,
    /// Whether methods defined in an `impl` block apart from their type are
    /// spelled as rust-analyzer spells them, in the impl's descriptor
    /// (`impl#[Circle]new().`, `impl#[Circle][Shape]area().`), which the
    /// importer folds into the type.
    pub impl_blocks: bool,
    /// Whether an item defined in a function's body belongs to the
    /// function's module, as rust-analyzer spells it, rather than to the
    /// function.
    pub items_in_bodies_are_the_modules: bool,
    /// Whether a plain name called in a type's body may mean one of the
    /// type's members (Java, C#, C++, Kotlin), rather than only what is
    /// defined outside any type (Rust, Python, Go and TypeScript ask for
    /// `self.`, `Self::` or `this.`).
    pub members_in_scope: bool,
    /// The SCIP indexer that knows the language's types, for the output's
    /// advice.
    pub better: &'static str,
    /// How `signpost index` runs that indexer when it is on PATH: a command
    /// line, `{out}` standing for the index to write (run in the project
    /// directory); empty when projects of the language are indexed apart.
    /// `signpost index --indexer LANG=COMMAND` replaces it.
    pub scip_command: &'static str,
    /// A call on a receiver whose type was not read goes to the one project
    /// method of its name, when there is one: true where values' types are
    /// all but always written (a receiver not read is a gap of this
    /// reading, and such a guess was right 99 % of the time on real code),
    /// false where they are often not (a parameter without annotation, a
    /// value of the standard library: the guess was wrong as often as not),
    /// and the call is counted as unbound instead.
    pub unknown_receiver_is_ours: bool,
    /// A plain call of a name found nowhere in scope may still mean the one
    /// function of that name in the project (C and C++'s global namespace,
    /// Ruby's and PHP's autoloading, a Swift module, and where this
    /// reading of imports falls short: Python, TypeScript, the JVM
    /// languages, C#). Not in Rust, whose prelude names what is in scope
    /// nowhere else (`Ok(…)` is the prelude's, whatever function the crate
    /// calls `Ok`), nor in Go, where another package's name is qualified.
    pub global_names: bool,
    /// Names the language's runtime defines in every module (Python's
    /// `open`, `len`; JavaScript's `setTimeout`, `fetch`): where
    /// `global_names` would bind a name in scope nowhere to the project's
    /// one function of that name, these are the runtime's, never bound.
    pub builtins: &'static [&'static str],
    /// The language's own ways of naming and relating things.
    pub rules: Rules,
}

/// Rules a few languages have, each read where the resolver or the symbol
/// spelling needs it.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// Modules are lexical namespaces reopened anywhere (Ruby): a module
    /// written in several files is one, names are looked up through the
    /// modules around their use (`Module.nesting`), and a class header
    /// names modules too (`include Sortable`).
    pub nested_modules: bool,
    /// Package clauses chain (Scala: `package a` then `package b` is
    /// `a.b`).
    pub chained_packages: bool,
    /// A class has a companion object (Scala): a call on the class's own
    /// name (`Coupon.take(…)`) is the companion's.
    pub companion_objects: bool,
    /// A member declared `expect` in one file and `actual` in another
    /// (Kotlin) is one symbol.
    pub expect_actual: bool,
    /// An extension of a type the project does not define keeps its
    /// methods that type's (Swift's `extension String`).
    pub foreign_extensions: bool,
    /// `macro_rules!` macros (Rust): an invocation of one the file defines
    /// is read as its expansion ([`crate::macros`]).
    pub macro_rules: bool,
    /// A definition under `#[cfg(not(feature = …))]` with a namesake in its
    /// scope is the build without that feature's: left out (Rust).
    pub cfg_alternatives: bool,
    /// An object literal's properties (`@meta`) are scopes only outside
    /// any function: inside one, the object is a value of that function's,
    /// and what its methods call, the function calls (TypeScript, as
    /// scip-typescript credits it). They stay definitions, found by name.
    pub module_objects_only: bool,
    /// Overload signatures (TypeScript's bodiless `function f(a: A): R;`,
    /// Python's `@overload` stubs) and the implementation after them are
    /// one definition, at the first of them, as their indexers have it.
    pub overload_stubs: bool,
    /// A value whose type is a type parameter bounded by a trait (Rust's
    /// `fn visit<V: Visitor>(v: V)`, `where V: Visitor`) is read as of that
    /// trait: its methods are the bound's.
    pub generic_bounds: bool,
    /// A definition's decorators are part of it (Python's
    /// `decorated_definition`): what they call and name, it does (`@cli.
    /// command()` over `def push()` is a use of `cli` by `push`), as
    /// scip-python credits them.
    pub decorators_inside: bool,
    /// An enum's variants are named through it (Rust's `HirKind::Class`):
    /// a bare type name never means one (`Class(Class)` holds the type
    /// `Class`, not itself).
    pub scoped_variants: bool,
    /// In an extension function, the extended type's members are in scope
    /// and `this` is the value extended (Kotlin's `fun Buffer.flush() {
    /// head!!.push(…) }`).
    pub receiver_in_scope: bool,
    /// A called name is looked up level by level among the candidates that
    /// can take the call (as many arguments, of types their parameters
    /// take): a level with none that can is passed over (Kotlin's
    /// extension after a member that cannot; C#'s and Java's base class's
    /// overload after a subclass's that cannot).
    pub applicable_levels: bool,
    /// Types written in doc comments count where the code writes none or
    /// only `array` (PHP's `/** @var Handler[] */` above a property, `@param
    /// list<Item> $items` and `@return` above a function, `/** @var Item $x
    /// */` above an assignment), as PHPStan and Psalm read them.
    pub doc_types: bool,
    /// A type admits `null` only where it is written nullable (C#'s `E?`,
    /// Kotlin's `T?`, Swift's `T?`): a `null` argument is no value of a
    /// plain enum parameter.
    pub nullable_marked: bool,
    /// A module's imports are names of the module to its importers
    /// (Python's `from .x import y` in a package's `__init__`, Rust's `pub
    /// use`, TypeScript's `export … from`, C++'s `using namespace` inside
    /// a namespace): a name a package does not define is followed through
    /// what its files import. Elsewhere (Java, Kotlin, C#, Go…) an import
    /// is the importing file's alone.
    pub reexports: bool,
}

impl Rules {
    /// None of them.
    pub const NONE: Rules = Rules {
        nested_modules: false,
        chained_packages: false,
        companion_objects: false,
        expect_actual: false,
        foreign_extensions: false,
        macro_rules: false,
        cfg_alternatives: false,
        module_objects_only: false,
        overload_stubs: false,
        generic_bounds: false,
        decorators_inside: false,
        scoped_variants: false,
        receiver_in_scope: false,
        applicable_levels: false,
        doc_types: false,
        nullable_marked: false,
        reexports: false,
    };
}

/// Python's built-in functions and types (`builtins`), in scope in every
/// module.
const PYTHON_BUILTINS: &[&str] = &[
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "exit",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "quit",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
];

/// Kotlin's standard top-level functions, called bare everywhere
/// (`require(cond) { … }`, `check(…)`, `listOf(…)`): a call of one that is
/// in scope nowhere is not another package's function of that name.
const KOTLIN_STANDARD: &[&str] = &[
    "require",
    "requireNotNull",
    "check",
    "checkNotNull",
    "error",
    "TODO",
    "assert",
    "repeat",
    "run",
    "with",
    "synchronized",
    "lazy",
    "buildString",
    "buildList",
    "buildMap",
    "buildSet",
    "listOf",
    "listOfNotNull",
    "mutableListOf",
    "arrayListOf",
    "setOf",
    "mutableSetOf",
    "mapOf",
    "mutableMapOf",
    "emptyList",
    "emptySet",
    "emptyMap",
    "arrayOf",
    "println",
    "print",
    "maxOf",
    "minOf",
];

/// The globals of JavaScript's runtimes (the language's, browsers' and
/// Node's) that code calls without importing them.
const SCRIPT_GLOBALS: &[&str] = &[
    "Array",
    "BigInt",
    "Boolean",
    "Date",
    "Error",
    "Number",
    "Object",
    "Promise",
    "RegExp",
    "String",
    "Symbol",
    "atob",
    "btoa",
    "clearInterval",
    "clearTimeout",
    "decodeURI",
    "decodeURIComponent",
    "encodeURI",
    "encodeURIComponent",
    "fetch",
    "isFinite",
    "isNaN",
    "parseFloat",
    "parseInt",
    "queueMicrotask",
    "require",
    "setImmediate",
    "setInterval",
    "setTimeout",
    "structuredClone",
];

/// Every language, in the order files are matched.
pub static LANGUAGES: &[Lang] = &[
    Lang {
        name: "java",
        extensions: &["java"],
        grammar: || tree_sitter_java::LANGUAGE.into(),
        query: include_str!("../queries/java.scm"),
        scheme: "semanticdb",
        manager: "maven",
        packages: Packages::Dotted,
        constructor: "<init>",
        all_supertypes: false,
        impl_blocks: false,
        items_in_bodies_are_the_modules: false,
        members_in_scope: true,
        better: "scip-java (https://sourcegraph.github.io/scip-java/)",
        scip_command: "scip-java index --output {out}",
        unknown_receiver_is_ours: true,
        global_names: true,
        builtins: &[],
        rules: Rules { applicable_levels: true, ..Rules::NONE },
    },
    Lang {
        name: "go",
        extensions: &["go"],
        grammar: || tree_sitter_go::LANGUAGE.into(),
        query: include_str!("../queries/go.scm"),
        scheme: "scip-go",
        manager: "gomod",
        packages: Packages::ModulePath,
        constructor: "",
        all_supertypes: false,
        impl_blocks: false,
        items_in_bodies_are_the_modules: false,
        members_in_scope: false,
        better: "scip-go (`go install github.com/sourcegraph/scip-go/cmd/scip-go@latest`)",
        scip_command: "scip-go --output {out}",
        unknown_receiver_is_ours: true,
        global_names: false,
        builtins: &[],
        rules: Rules::NONE,
    },
    Lang {
        name: "csharp",
        extensions: &["cs"],
        grammar: || tree_sitter_c_sharp::LANGUAGE.into(),
        query: include_str!("../queries/csharp.scm"),
        scheme: "scip-dotnet",
        manager: "nuget",
        packages: Packages::Dotted,
        constructor: ".ctor",
        all_supertypes: false,
        impl_blocks: false,
        items_in_bodies_are_the_modules: false,
        members_in_scope: true,
        better: "scip-dotnet (`dotnet tool install --global scip-dotnet`)",
        scip_command: "scip-dotnet index --output {out}",
        unknown_receiver_is_ours: true,
        global_names: true,
        builtins: &[],
        rules: Rules { applicable_levels: true, nullable_marked: true, generic_bounds: true, ..Rules::NONE },
    },
    Lang {
        name: "kotlin",
        extensions: &["kt", "kts"],
        grammar: || tree_sitter_kotlin_ng::LANGUAGE.into(),
        query: include_str!("../queries/kotlin.scm"),
        scheme: "semanticdb",
        manager: "maven",
        packages: Packages::Dotted,
        constructor: "<init>",
        all_supertypes: false,
        impl_blocks: false,
        items_in_bodies_are_the_modules: false,
        members_in_scope: true,
        better: "scip-java, which reads Kotlin too (https://sourcegraph.github.io/scip-java/)",
        scip_command: "scip-java index --output {out}",
        unknown_receiver_is_ours: true,
        global_names: true,
        builtins: KOTLIN_STANDARD,
        rules: Rules {
            expect_actual: true,
            receiver_in_scope: true,
            applicable_levels: true,
            nullable_marked: true,
            ..Rules::NONE
        },
    },
    Lang {
        name: "python",
        extensions: &["py", "pyi"],
        grammar: || tree_sitter_python::LANGUAGE.into(),
        query: include_str!("../queries/python.scm"),
        scheme: "scip-python",
        manager: "python",
        packages: Packages::ModuleFile,
        constructor: "",
        all_supertypes: false,
        impl_blocks: false,
        items_in_bodies_are_the_modules: false,
        members_in_scope: false,
        better: "scip-python (installed by signpost index when npm is at hand)",
        // scip-python is run per Python project (`signpost_graph::indexer`);
        // the built-in indexer reads the files outside any, and a project
        // whose indexer failed.
        scip_command: "",
        unknown_receiver_is_ours: false,
        global_names: true,
        builtins: PYTHON_BUILTINS,
        rules: Rules { overload_stubs: true, decorators_inside: true, reexports: true, ..Rules::NONE },
    },
    Lang {
        name: "cpp",
        // C and C++ in one row: the C++ grammar reads C too, and a project
        // that mixes them (a `.h` included by both) resolves as one.
        extensions: &["c", "h", "cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "h++", "ipp", "inl", "tpp"],
        grammar: || tree_sitter_cpp::LANGUAGE.into(),
        query: include_str!("../queries/cpp.scm"),
        scheme: "cxx",
        manager: ".",
        packages: Packages::Dotted,
        constructor: "",
        all_supertypes: false,
        impl_blocks: false,
        items_in_bodies_are_the_modules: false,
        members_in_scope: true,
        better: "scip-clang, with a compile_commands.json (https://github.com/sourcegraph/scip-clang)",
        scip_command: "scip-clang --compdb-path=compile_commands.json --index-output-path={out}",
        unknown_receiver_is_ours: false,
        global_names: true,
        builtins: &[],
        rules: Rules { reexports: true, ..Rules::NONE },
    },
    Lang {
        name: "typescript",
        // TypeScript and JavaScript in one row, read with the TSX grammar
        // (TypeScript with JSX, a superset of JavaScript): a project that
        // mixes them resolves as one. Its one loss: the old `<T>value`
        // cast, which `.tsx` files cannot have either, is read as JSX.
        extensions: &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"],
        grammar: || tree_sitter_typescript::LANGUAGE_TSX.into(),
        query: include_str!("../queries/typescript.scm"),
        scheme: "scip-typescript",
        manager: "npm",
        packages: Packages::FilePath,
        constructor: "<constructor>",
        all_supertypes: true,
        impl_blocks: false,
        items_in_bodies_are_the_modules: false,
        members_in_scope: false,
        better: "scip-typescript (installed by signpost index when npm is at hand)",
        // scip-typescript is run per TypeScript project
        // (`signpost_graph::indexer`); the built-in indexer reads the files
        // outside any, and a project whose indexer failed.
        scip_command: "",
        unknown_receiver_is_ours: false,
        global_names: true,
        builtins: SCRIPT_GLOBALS,
        rules: Rules { module_objects_only: true, overload_stubs: true, reexports: true, ..Rules::NONE },
    },
    Lang {
        name: "rust",
        extensions: &["rs"],
        grammar: || tree_sitter_rust::LANGUAGE.into(),
        query: include_str!("../queries/rust.scm"),
        scheme: "rust-analyzer",
        manager: "cargo",
        packages: Packages::CratePath,
        constructor: "",
        all_supertypes: false,
        impl_blocks: true,
        items_in_bodies_are_the_modules: true,
        members_in_scope: false,
        better: "rust-analyzer (`rustup component add rust-analyzer`)",
        // rust-analyzer is run per Cargo project (`signpost_graph::indexer`);
        // the built-in indexer reads the files outside any, and a project
        // whose indexer failed.
        scip_command: "",
        unknown_receiver_is_ours: false,
        global_names: false,
        builtins: &[],
        rules: Rules {
            macro_rules: true,
            cfg_alternatives: true,
            generic_bounds: true,
            scoped_variants: true,
            reexports: true,
            ..Rules::NONE
        },
    },
    Lang {
        name: "ruby",
        extensions: &["rb", "rake", "gemspec"],
        grammar: || tree_sitter_ruby::LANGUAGE.into(),
        query: include_str!("../queries/ruby.scm"),
        scheme: "scip-ruby",
        manager: "gem",
        packages: Packages::Dotted,
        constructor: "",
        all_supertypes: false,
        impl_blocks: false,
        items_in_bodies_are_the_modules: false,
        // A method's plain `helper(x)` is `self.helper(x)`.
        members_in_scope: true,
        better: "scip-ruby (https://github.com/sourcegraph/scip-ruby)",
        scip_command: "scip-ruby --index-file {out}",
        unknown_receiver_is_ours: false,
        global_names: true,
        builtins: &[],
        rules: Rules { nested_modules: true, ..Rules::NONE },
    },
    Lang {
        name: "php",
        extensions: &["php"],
        grammar: || tree_sitter_php::LANGUAGE_PHP.into(),
        query: include_str!("../queries/php.scm"),
        scheme: "scip-php",
        manager: "composer",
        packages: Packages::Dotted,
        constructor: "",
        all_supertypes: false,
        impl_blocks: false,
        items_in_bodies_are_the_modules: false,
        // A member is always `$this->m()` or `self::m()`.
        members_in_scope: false,
        better: "scip-php (https://github.com/davidrjenni/scip-php)",
        scip_command: "",
        unknown_receiver_is_ours: false,
        global_names: true,
        builtins: &[],
        rules: Rules { doc_types: true, ..Rules::NONE },
    },
    Lang {
        name: "swift",
        extensions: &["swift"],
        grammar: || tree_sitter_swift::LANGUAGE.into(),
        query: include_str!("../queries/swift.scm"),
        scheme: "scip-swift",
        manager: "swiftpm",
        packages: Packages::Dotted,
        constructor: "",
        all_supertypes: false,
        impl_blocks: false,
        items_in_bodies_are_the_modules: false,
        // Inside a type, `area()` is `self.area()`.
        members_in_scope: true,
        better: "an index from Xcode's or SourceKit-LSP's index store",
        scip_command: "",
        unknown_receiver_is_ours: true,
        global_names: true,
        builtins: &[],
        rules: Rules { foreign_extensions: true, nullable_marked: true, generic_bounds: true, ..Rules::NONE },
    },
    Lang {
        name: "scala",
        extensions: &["scala", "sc"],
        grammar: || tree_sitter_scala::LANGUAGE.into(),
        query: include_str!("../queries/scala.scm"),
        scheme: "semanticdb",
        manager: "maven",
        packages: Packages::Dotted,
        constructor: "<init>",
        all_supertypes: false,
        impl_blocks: false,
        items_in_bodies_are_the_modules: false,
        members_in_scope: true,
        better: "scip-java, which reads Scala through SemanticDB (https://sourcegraph.github.io/scip-java/)",
        scip_command: "scip-java index --output {out}",
        unknown_receiver_is_ours: true,
        global_names: true,
        builtins: &[],
        rules: Rules { chained_packages: true, companion_objects: true, ..Rules::NONE },
    },
];

/// The language of a file, by its extension.
pub fn of_path(path: &std::path::Path) -> Option<&'static Lang> {
    let ext = path.extension()?.to_str()?;
    LANGUAGES.iter().find(|l| l.extensions.contains(&ext))
}

/// The language called `name`.
pub fn by_name(name: &str) -> Option<&'static Lang> {
    LANGUAGES.iter().find(|l| l.name == name)
}

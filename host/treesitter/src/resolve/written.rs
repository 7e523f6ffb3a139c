//! What a type as written says without the project's definitions: the
//! wrappers of the standard libraries and the methods that read through
//! them (`Option<T>`'s `unwrap`, a `Vec<T>`'s elements), what a function
//! type returns (`unsafe fn(A) -> R`, `(a: A) => R`), and the module path
//! written before a type's name.

/// What a function type returns, as written: Rust's `unsafe fn(A) -> R`,
/// `extern "C" fn(A) -> R`, `dyn Fn(A) -> R` (behind a `&` or a `Box`),
/// TypeScript's `(a: A) => R`; none for any other type, and `()` for a
/// Rust function type that returns nothing.
pub(super) fn returned_by(text: &str) -> Option<&str> {
    let mut t = text.trim();
    if let Some(inner) = t.strip_prefix("Box<").and_then(|r| r.strip_suffix('>')) {
        t = inner.trim();
    }
    t = t.trim_start_matches('&').trim_start();
    for prefix in ["dyn ", "impl ", "unsafe ", "extern \"C\" ", "extern "] {
        t = t.strip_prefix(prefix).map_or(t, str::trim_start);
    }
    let rust = ["fn(", "Fn(", "FnMut(", "FnOnce("].iter().find_map(|p| t.strip_prefix(p).map(|r| (p.len(), r)));
    let params_from = match rust {
        Some((n, _)) => n - 1,
        None if t.starts_with('(') => 0,
        None => return None,
    };
    // Past the parameters' parentheses.
    let mut depth = 0i32;
    let mut end = None;
    let mut prev = ' ';
    for (i, c) in t[params_from..].char_indices() {
        let arrow = c == '>' && matches!(prev, '-' | '=');
        prev = c;
        match c {
            _ if arrow => {}
            '(' | '<' | '[' | '{' => depth += 1,
            ')' | '>' | ']' | '}' => {
                depth -= 1;
                if depth == 0 && c == ')' {
                    end = Some(params_from + i + 1);
                    break;
                }
            }
            _ => {}
        }
    }
    let rest = t[end?..].trim_start();
    match (rust.is_some(), rest.strip_prefix("->"), rest.strip_prefix("=>")) {
        (true, Some(r), _) => Some(r.trim()),
        (true, None, _) if rest.is_empty() => Some("()"),
        (false, _, Some(r)) => Some(r.trim()),
        _ => None,
    }
}

#[cfg(test)]
#[test]
fn what_a_function_type_returns() {
    assert_eq!(returned_by("unsafe fn(Ref<ErrorImpl>) -> Ref<dyn StdError + Send>"), Some("Ref<dyn StdError + Send>"));
    assert_eq!(returned_by("fn(fn(A) -> B) -> C"), Some("C"));
    assert_eq!(returned_by("unsafe fn(Own<ErrorImpl>)"), Some("()"));
    assert_eq!(returned_by("Box<dyn Fn(&str) -> Shape>"), Some("Shape"));
    assert_eq!(returned_by("(input: Input) => Thenable<Result>"), Some("Thenable<Result>"));
    assert_eq!(returned_by("Vec<fn() -> u8>"), None);
    assert_eq!(returned_by("(A, B)"), None);
    assert_eq!(returned_by("fn(unclosed"), None);
}

/// The path written before `head` in the type `text`, its segments joined
/// by `sep` (`ast::parse` of `&'a ast::parse::ParserBuilder` with `::`,
/// `cats.kernel` of `cats.kernel.Semigroup[A]` with `.`), `head` being a
/// part of `text`.
pub(super) fn path_before<'t>(text: &'t str, head: &str, sep: &str) -> Option<&'t str> {
    let at = (head.as_ptr() as usize).checked_sub(text.as_ptr() as usize).filter(|&at| at <= text.len())?;
    let before = text.get(..at)?.strip_suffix(sep)?;
    let start = before.rfind(|c: char| !(c.is_alphanumeric() || c == '_' || sep.contains(c))).map_or(0, |i| i + 1);
    Some(&before[start..]).filter(|p| !p.is_empty())
}

/// What a wrapper of the standard libraries does with what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wrapper {
    /// Its members are what it points to (`Box<T>`, `Arc<T>`, a guard).
    Deref,
    /// It holds one value, given by an unwrap (`Option<T>`, `Promise<T>`,
    /// `Mutex<T>`).
    Holds,
    /// It holds many, given by index or a getter (the last argument: a
    /// map's value).
    Collection,
    /// It gives many, one at a time (the first argument, `Item = T`).
    Iterates,
}

/// The wrappers of Rust, TypeScript, Python, Java, Go and C#'s standard
/// libraries the resolver reads through.
pub(super) fn wrapper(head: &str) -> Option<Wrapper> {
    Some(match head {
        // Python's `Optional[T]` is a T once checked; Java's `Optional<T>`'s
        // own methods (`get`, `orElseThrow`) are unwraps.
        "Box" | "Rc" | "Arc" | "MutexGuard" | "RwLockReadGuard" | "RwLockWriteGuard" | "Ref" | "RefMut" | "Cow"
        | "Pin" | "ManuallyDrop" | "MappedMutexGuard" | "Optional" => Wrapper::Deref,
        "Option" | "Result" | "LockResult" | "TryLockResult" | "Mutex" | "RwLock" | "RefCell" | "Cell" | "OnceCell"
        | "OnceLock" | "Weak" | "Promise" | "PromiseLike" | "Awaitable" | "Future" | "CompletableFuture" | "Task"
        | "ValueTask" | "AtomicReference" | "Readonly" => Wrapper::Holds,
        "[]" | "Vec" | "VecDeque" | "HashMap" | "BTreeMap" | "IndexMap" | "Array" | "ArraySlice"
        | "ContiguousArray" | "ReadonlyArray" | "Map" | "Record" | "List" | "list" | "Sequence" | "Dict" | "dict"
        | "Mapping" | "ArrayList" | "LinkedList" | "Deque" | "map" | "IList" | "IReadOnlyList" | "Dictionary"
        | "IDictionary" | "array" => Wrapper::Collection,
        "Iterator"
        | "IntoIterator"
        | "DoubleEndedIterator"
        | "ExactSizeIterator"
        | "Iter"
        | "IterMut"
        | "IntoIter"
        | "Iterable"
        | "IterableIterator"
        | "Generator"
        | "AsyncIterator"
        | "AsyncIterable"
        | "Set"
        | "HashSet"
        | "BTreeSet"
        | "ReadonlySet"
        | "Collection"
        | "Stream"
        | "IEnumerable"
        | "ICollection"
        | "set"
        | "frozenset"
        | "Values"
        | "Keys"
        | "iterable" => Wrapper::Iterates,
        _ => return None,
    })
}

/// Methods that give what a wrapper holds.
pub(super) const UNWRAPS: &[&str] = &[
    "unwrap",
    "expect",
    "unwrap_or",
    "unwrap_or_else",
    "unwrap_or_default",
    "unwrap_unchecked",
    "lock",
    "read",
    "write",
    "try_lock",
    "borrow",
    "borrow_mut",
    "get_mut",
    "get",
    "upgrade",
    "as_deref",
    "as_deref_mut",
    "into_inner",
    "orElseThrow",
];

/// Methods that give one element of a collection.
pub(super) const ELEMENT: &[&str] = &[
    "get",
    "get_mut",
    "first",
    "last",
    "pop",
    "pop_front",
    "pop_back",
    "front",
    "back",
    "find",
    "at",
    "peek",
    "next",
    "next_back",
    "nth",
    "min",
    "max",
    "min_by_key",
    "max_by_key",
    "min_by",
    "max_by",
];

/// Methods of collections and iterators that give the same elements.
pub(super) const ADAPTERS: &[&str] = &[
    "iter",
    "iter_mut",
    "into_iter",
    "values",
    "values_mut",
    "into_values",
    "filter",
    "rev",
    "skip",
    "take",
    "skip_while",
    "take_while",
    "peekable",
    "chain",
    "cloned",
    "copied",
    "by_ref",
    "step_by",
    "fuse",
    "inspect",
    "slice",
    "concat",
    "reverse",
    "sort",
    "toSorted",
    "toReversed",
    "sorted",
];

/// Methods of every type that give a value of the same type.
pub(super) const SAME_VALUE: &[&str] = &["clone", "to_owned", "as_ref", "as_mut", "default", "copy", "deepcopy"];

/// What the standard libraries' members of a few types give, where a
/// project's extensions of the result are called on it (C#'s
/// `caseName.Split(' ')[0].Humanize()`, `Enum.GetName(v)!.Humanize()`):
/// (type, member, result). `*` is any type. Static members are called on
/// the type's name.
pub(super) const STANDARD_RESULTS: &[(&str, &str, &str)] = &[
    ("*", "ToString", "string"),
    ("*", "toString", "String"),
    ("*", "description", "String"),
    ("string", "Split", "string[]"),
    ("string", "Trim", "string"),
    ("string", "TrimStart", "string"),
    ("string", "TrimEnd", "string"),
    ("string", "ToLower", "string"),
    ("string", "ToUpper", "string"),
    ("string", "ToLowerInvariant", "string"),
    ("string", "ToUpperInvariant", "string"),
    ("string", "Substring", "string"),
    ("string", "Replace", "string"),
    ("string", "Insert", "string"),
    ("string", "Remove", "string"),
    ("string", "PadLeft", "string"),
    ("string", "PadRight", "string"),
    ("string", "Normalize", "string"),
    ("string", "Join", "string"),
    ("string", "Concat", "string"),
    ("string", "Format", "string"),
    ("String", "Join", "string"),
    ("String", "Concat", "string"),
    ("String", "Format", "string"),
    ("Enum", "GetName", "string"),
    ("Enum", "GetNames", "string[]"),
    ("String", "lowercased", "String"),
    ("String", "uppercased", "String"),
    ("String", "trimmingCharacters", "String"),
    ("String", "replacingOccurrences", "String"),
    ("String", "components", "[String]"),
    ("String", "appending", "String"),
    ("String", "trim", "String"),
    ("String", "lowercase", "String"),
    ("String", "uppercase", "String"),
    ("String", "substring", "String"),
];

/// What member `name` of the standard type `ty` gives, if [`STANDARD_RESULTS`] says.
pub(super) fn standard_result(ty: &str, name: &str) -> Option<&'static str> {
    STANDARD_RESULTS.iter().find(|(t, m, _)| (*t == ty || *t == "*") && *m == name).map(|(_, _, r)| *r)
}

/// The standard libraries' types and the protocols or interfaces they
/// conform to, nearest first: a project's extension of one of those is a
/// member of the type (Swift's `extension StringProtocol { func
/// indentingEachLine(by:) }` called on a `String`, Kotlin's `fun
/// CharSequence.words()` on a `String`).
pub(super) const STANDARD_SUPERTYPES: &[(&str, &[&str])] = &[
    ("String", &["StringProtocol", "BidirectionalCollection", "Collection", "Sequence", "CharSequence", "Comparable"]),
    ("Substring", &["StringProtocol", "BidirectionalCollection", "Collection", "Sequence"]),
    ("Array", SWIFT_ARRAY),
    ("ArraySlice", SWIFT_ARRAY),
    ("ContiguousArray", SWIFT_ARRAY),
    ("Data", SWIFT_DATA),
    ("Dictionary", &["Collection", "Sequence"]),
    ("Set", &["SetAlgebra", "Collection", "Sequence", "Iterable"]),
    ("Int", &["FixedWidthInteger", "SignedInteger", "BinaryInteger", "SignedNumeric", "Numeric", "Comparable"]),
    ("UInt", &["FixedWidthInteger", "UnsignedInteger", "BinaryInteger", "Numeric", "Comparable"]),
    ("Double", &["BinaryFloatingPoint", "FloatingPoint", "SignedNumeric", "Numeric", "Comparable"]),
    ("Float", &["BinaryFloatingPoint", "FloatingPoint", "SignedNumeric", "Numeric", "Comparable"]),
    ("List", &["Collection", "Iterable"]),
    ("MutableList", &["List", "MutableCollection", "Collection", "Iterable"]),
    ("ArrayList", &["MutableList", "List", "MutableCollection", "Collection", "Iterable"]),
];

/// What Swift's `Data` conforms to: a `DataProtocol`, and what an array
/// conforms to.
const SWIFT_DATA: &[&str] = &[
    "DataProtocol",
    "RandomAccessCollection",
    "MutableCollection",
    "RangeReplaceableCollection",
    "BidirectionalCollection",
    "Collection",
    "Sequence",
];

/// What Swift's arrays conform to.
const SWIFT_ARRAY: &[&str] = SWIFT_DATA.split_at(1).1;

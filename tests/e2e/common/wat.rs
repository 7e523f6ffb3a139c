//! Hostile policy components written as WAT: whole `signpost:policy` worlds
//! in a few dozen lines each, for the attacks a Rust guest cannot express
//! (growing tables, extra memories, function names that carry line breaks
//! and escape sequences in the name section, answers fixed in data).
//!
//! [`policy`] builds one component from a [`Spec`]; every export answers
//! with constants laid out in linear memory by hand (the canonical ABI), and
//! each hostile behaviour is a snippet of WAT run inside `advise`.

/// What a WAT policy does besides answering with constants.
#[derive(Debug, Clone, Default)]
pub struct Spec {
    /// Name it reports from `identity`.
    pub name: &'static str,
    /// Core WAT run at the start of `advise` (may use `$t`, the table, and
    /// memory 1, `$extra`, and call `$evil`).
    pub advise: &'static str,
    /// The name-section name of `$evil`, the function advise may call.
    pub evil_name: &'static str,
    /// Text `render` returns.
    pub render: &'static str,
    /// When set, `coerce-ids` answers with this one id; otherwise it refuses.
    pub coerce_to: Option<&'static str>,
    /// Pages of the second memory, `$extra` (0: none).
    pub extra_memory_pages: u32,
}

/// WAT string escapes for arbitrary UTF-8.
fn escape(s: &str) -> String {
    s.bytes().map(|b| format!("\\{b:02x}")).collect()
}

/// Little-endian i32s as WAT data.
fn words(values: &[u32]) -> String {
    values.iter().flat_map(|v| v.to_le_bytes()).map(|b| format!("\\{b:02x}")).collect()
}

/// The component's bytes.
pub fn policy(spec: &Spec) -> Vec<u8> {
    let name = if spec.name.is_empty() { "wat" } else { spec.name };
    let render = if spec.render.is_empty() { "[ok] wat policy" } else { spec.render };
    let evil_name = if spec.evil_name.is_empty() { "evil" } else { spec.evil_name };
    let (coerce_msg, coerce_example) = ("wat reads no ids", r#"{"ids":["<40-hex id>"]}"#);
    // Fixed addresses of constants and return areas.
    let coerce_area = match spec.coerce_to {
        // ok(list<string> of one): discriminant 0, list at 0x7c0, one string at 0x800.
        Some(id) => format!(
            "(data (i32.const 0x780) \"{}\") (data (i32.const 0x7c0) \"{}\") (data (i32.const 0x800) \"{}\")",
            words(&[0, 0x7c0, 1]),
            words(&[0x800, id.len() as u32]),
            escape(id)
        ),
        None => format!(
            "(data (i32.const 0x780) \"{}\") (data (i32.const 0x700) \"{}\") (data (i32.const 0x740) \"{}\")",
            words(&[1, 0x700, coerce_msg.len() as u32, 0x740, coerce_example.len() as u32]),
            escape(coerce_msg),
            escape(coerce_example)
        ),
    };
    let extra = if spec.extra_memory_pages > 0 {
        format!("(memory $extra {})", spec.extra_memory_pages)
    } else {
        String::new()
    };
    let i32s = |n: usize| vec!["i32"; n].join(" ");
    let wat = format!(
        r#"(component
  (type $policy-info (record (field "name" string) (field "version" string)))
  (type $call (record (field "tool" string) (field "args" string)))
  (type $hint (record (field "tool" string) (field "args" string) (field "actionable" bool) (field "reason" string)))
  (type $error-kind (enum "invalid-id" "unknown-id" "bad-argument" "internal"))
  (type $tool-error (record (field "kind" $error-kind) (field "message" string) (field "example" (option string))))
  (type $outcome (variant (case "success" string) (case "failure" $tool-error)))
  (type $past-call (record (field "tool" string) (field "ok" bool) (field "ids" (list string))))
  (type $session (record (field "call-count" u32) (field "recent" (list $past-call)) (field "seen-ids" (list string))))
  (type $advice (record (field "state-tag" string) (field "summary" string) (field "details" (list string))
    (field "hints" (list $hint)) (field "ask-user" (option string))))
  (type $coercion-error (record (field "message" string) (field "example" string)))
  (core module $m
    (memory (export "memory") 17)
    {extra}
    (table $t 1 funcref)
    (global $bump (mut i32) (i32.const 0x1000))
    (data (i32.const 0x100) "{name}")
    (data (i32.const 0x180) "6.6.6")
    (data (i32.const 0x200) "{identity}")
    (data (i32.const 0x300) "ok")
    (data (i32.const 0x310) "wat policy")
    (data (i32.const 0x400) "{advice}")
    (data (i32.const 0x500) "{render}")
    (data (i32.const 0x4c0) "{render_area}")
    {coerce_area}
    (func $evil (@name "{evil_name}") unreachable)
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32)
      (if (i32.gt_u (local.get 3) (i32.const 0xf0000)) (then unreachable))
      (local.set $p (i32.and (i32.add (global.get $bump) (i32.const 7)) (i32.const -8)))
      (if (i32.gt_u (i32.add (local.get $p) (local.get 3)) (i32.const 0x110000))
        (then (local.set $p (i32.const 0x1000))))
      (global.set $bump (i32.add (local.get $p) (local.get 3)))
      (local.get $p))
    (func (export "identity") (result i32) (i32.const 0x200))
    (func (export "coerce-ids") (param {p6}) (result i32) (i32.const 0x780))
    (func (export "prerequisites") (param {p9}) (result i32) (i32.const 0x600))
    (func (export "advise") (param {p16}) (result i32) {advise} (i32.const 0x400))
    (func (export "render") (param {p15}) (result i32) (i32.const 0x4c0))
  )
  (core instance $i (instantiate $m))
  (alias core export $i "memory" (core memory $mem))
  (alias core export $i "realloc" (core func $realloc))
  (func $identity (result $policy-info) (canon lift (core func $i "identity") (memory $mem) (realloc $realloc)))
  (func $coerce-ids (param "call" $call) (param "param" string) (result (result (list string) (error $coercion-error)))
    (canon lift (core func $i "coerce-ids") (memory $mem) (realloc $realloc)))
  (func $prerequisites (param "call" $call) (param "session" $session) (result (list $hint))
    (canon lift (core func $i "prerequisites") (memory $mem) (realloc $realloc)))
  (func $advise (param "call" $call) (param "outcome" $outcome) (param "session" $session) (result $advice)
    (canon lift (core func $i "advise") (memory $mem) (realloc $realloc)))
  (func $render (param "call" $call) (param "advice" $advice) (result string)
    (canon lift (core func $i "render") (memory $mem) (realloc $realloc)))
  (instance $policy
    (export "policy-info" (type $policy-info))
    (export "call" (type $call))
    (export "hint" (type $hint))
    (export "error-kind" (type $error-kind))
    (export "tool-error" (type $tool-error))
    (export "outcome" (type $outcome))
    (export "past-call" (type $past-call))
    (export "session" (type $session))
    (export "advice" (type $advice))
    (export "coercion-error" (type $coercion-error))
    (export "identity" (func $identity))
    (export "coerce-ids" (func $coerce-ids))
    (export "prerequisites" (func $prerequisites))
    (export "advise" (func $advise))
    (export "render" (func $render)))
  (export "signpost:policy/policy@0.1.0" (instance $policy))
)"#,
        name = escape(name),
        identity = words(&[0x100, name.len() as u32, 0x180, 5]),
        advice = words(&[0x300, 2, 0x310, 10, 0, 0, 0, 0, 0, 0, 0]),
        render = escape(render),
        render_area = words(&[0x500, render.len() as u32]),
        evil_name = escape(evil_name),
        advise = spec.advise,
        p6 = i32s(6),
        p9 = i32s(9),
        p15 = i32s(15),
        p16 = i32s(16),
    );
    wat::parse_str(&wat).unwrap_or_else(|e| panic!("WAT policy {name}: {e}\n{wat}"))
}

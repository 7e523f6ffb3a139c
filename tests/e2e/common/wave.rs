//! WAVE, the text form of component values the wasmtime CLI reads and
//! prints: enough of it to write the probe calls of `other_hosts`.

use serde_json::Value;

/// The shapes of the world's values, enough to write probes in WAVE, the
/// text form of component values the wasmtime CLI reads and prints.
pub enum Ty {
    Str,
    Bool,
    Enum,
    List(&'static Ty),
    Option(&'static Ty),
    Record(&'static [(&'static str, Ty)]),
    /// Variants and results alike: `case(payload)`.
    Variant,
}

const CALL: Ty = Ty::Record(&[("tool", Ty::Str), ("args", Ty::Str)]);
const STRINGS: Ty = Ty::List(&Ty::Str);
const HINT: Ty = Ty::Record(&[("tool", Ty::Str), ("args", Ty::Str), ("actionable", Ty::Bool), ("reason", Ty::Str)]);
const HINTS: Ty = Ty::List(&HINT);
const ADVICE: Ty = Ty::Record(&[
    ("state-tag", Ty::Str),
    ("summary", Ty::Str),
    ("details", STRINGS),
    ("hints", HINTS),
    ("ask-user", Ty::Option(&Ty::Str)),
]);
const TOOL_ERROR: Ty = Ty::Record(&[("kind", Ty::Enum), ("message", Ty::Str), ("example", Ty::Option(&Ty::Str))]);
const COERCION_ERROR: Ty = Ty::Record(&[("message", Ty::Str), ("example", Ty::Str)]);

/// Parameter and result types of each export.
pub fn signature(function: &str) -> (Vec<&'static Ty>, Ty) {
    const INFO: Ty = Ty::Record(&[("name", Ty::Str), ("version", Ty::Str)]);
    match function {
        "identity" => (vec![], INFO),
        "coerce-ids" => (vec![&CALL, &Ty::Str], Ty::Variant),
        "render" => (vec![&CALL, &ADVICE], Ty::Str),
        other => panic!("no export {other}"),
    }
}

/// A value in the JSON form, written in WAVE as wasmtime prints it (absent
/// optional record fields left out).
pub fn wave(ty: &Ty, v: &Value) -> String {
    let payload_ty = |case: &str| match case {
        "success" => &Ty::Str,
        "failure" => &TOOL_ERROR,
        "ok" => &STRINGS,
        "err" => &COERCION_ERROR,
        other => panic!("no case {other}"),
    };
    match ty {
        Ty::Str => {
            let mut out = String::from("\"");
            for c in v.as_str().unwrap_or_default().chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
                    c => out.push(c),
                }
            }
            out + "\""
        }
        Ty::Bool => v.to_string(),
        Ty::Enum => v.as_str().unwrap_or_default().to_owned(),
        Ty::List(item) => {
            let items: Vec<String> = v.as_array().into_iter().flatten().map(|i| wave(item, i)).collect();
            format!("[{}]", items.join(", "))
        }
        Ty::Option(_) if v.is_null() => "none".into(),
        Ty::Option(inner) => format!("some({})", wave(inner, v)),
        Ty::Record(fields) => {
            let parts: Vec<String> = fields
                .iter()
                .filter(|(name, ty)| !(matches!(ty, Ty::Option(_)) && v[name].is_null()))
                .map(|(name, ty)| format!("{name}: {}", wave(ty, &v[name])))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Ty::Variant => {
            let (case, payload) = v.as_object().and_then(|o| o.iter().next()).unwrap_or_else(|| panic!("{v}"));
            format!("{case}({})", wave(payload_ty(case), payload))
        }
    }
}

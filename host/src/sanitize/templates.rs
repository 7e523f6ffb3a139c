//! Templates: calls with a whole `<placeholder>` for some argument, which
//! cannot be sent as they are ([`is_template`]), and when a response may
//! show one ([`template_allowed`]).

use serde_json::{Map, Value};

use super::scope::Scope;

/// Whether a call with `args` may be shown as a template: it is one
/// ([`is_template`]), and, for tools that may change state (the
/// vocabulary's [`Vocabulary::strict_templates`]), every other value in it
/// stands in what the agent sent or the result holds. A template with one
/// placeholder can still be sent as it is; then it must not act on
/// anything the policy made up (`delete_entities {"entityNames": ["Alice",
/// "<x>"]}` after a result that never named Alice); and each placeholder
/// must describe a value, not be one ([`describes`]: `<Alice>` is Alice).
///
/// [`Vocabulary::strict_templates`]: super::Vocabulary::strict_templates
pub fn template_allowed(args: &Map<String, Value>, scope: &Scope<'_>) -> bool {
    fn known(v: &Value, scope: &Scope<'_>) -> bool {
        match v {
            Value::String(s) if let Some(inner) = placeholder(s) => describes(inner),
            Value::String(s) => s.is_empty() || scope.known.quotes(s),
            Value::Number(n) => scope.known.quotes(&n.to_string()),
            Value::Array(items) => items.iter().all(|i| known(i, scope)),
            Value::Object(fields) => fields.values().all(|f| known(f, scope)),
            Value::Bool(_) | Value::Null => true,
        }
    }
    is_template(args) && (!scope.vocab.strict_templates() || args.values().all(|v| known(v, scope)))
}

/// Whether a placeholder's text describes a value (`<name>`, `<new fact>`,
/// `<40-hex id>`, `<entityName>`, `<file whose conflict you resolved>`):
/// some word of it starts with a lower-case letter and has two or more
/// (or is all of it: `<x>`), and none starts with a capital. A placeholder
/// that names something is the value itself (`<Alice>`, `<Ada Lovelace>`,
/// `<the Alice entity>`, `<name: Alice>`, `<42>`).
fn describes(inner: &str) -> bool {
    let mut words = inner.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty());
    words.clone().all(|w| !w.starts_with(char::is_uppercase))
        && words.any(|w| (w.len() >= 2 || w.len() == inner.len()) && w.starts_with(|c: char| c.is_lowercase()))
}

/// Some argument string, at any depth, is a whole `<placeholder>`: a call
/// to adapt, not to send (`{"observations": [{"entityName": "<name>"}]}`
/// too).
pub fn is_template(args: &Map<String, Value>) -> bool {
    fn holds_one(v: &Value) -> bool {
        match v {
            Value::String(s) => placeholder(s).is_some(),
            Value::Array(items) => items.iter().any(holds_one),
            Value::Object(fields) => fields.values().any(holds_one),
            _ => false,
        }
    }
    args.values().any(holds_one)
}

/// What a whole `<placeholder>` string holds between its brackets.
fn placeholder(s: &str) -> Option<&str> {
    s.strip_prefix('<').and_then(|s| s.strip_suffix('>')).filter(|inner| !inner.is_empty())
}

//! The edits `signpost setup` makes to an agent's configuration, text in and
//! text out: one MCP server entry set or removed in a JSON file (comments
//! and trailing commas allowed, as VS Code's and Cursor's are) or in a TOML
//! file (Codex's), and everything else in the file kept as it was written:
//! the other servers, the comments, the indentation, the order of keys.
//!
//! An entry is set field by field: the fields Signpost writes (`command`,
//! `args`, and `type` where the client wants it) take their new values, and
//! a field the user added to the entry (`env`, a timeout) stays. A field
//! that already holds its value is not touched, so setting an entry twice
//! changes nothing the second time.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstObjectProp, CstRootNode};
use serde_json::Value;
use toml_edit::{DocumentMut, Item, TableLike};

/// The fields of a server entry Signpost writes, in the order written.
pub type Fields = [(&'static str, Value)];

/// `text` (a JSON document, or empty for a file not yet there) with the
/// entry `name` of the object at `path` (keys from the top, each created
/// when missing) set to `fields`.
pub fn json_set(text: &str, path: &[&str], name: &str, fields: &Fields) -> Result<String, String> {
    let root = json_parse(text)?;
    let mut servers = match root.value() {
        None => root.object_value_or_set(),
        Some(top) => top.as_object().ok_or("its top level is not a JSON object")?,
    };
    for key in path {
        servers = match only(&servers, key)? {
            Some(prop) => prop.object_value().ok_or_else(|| format!("`{key}` is not a JSON object"))?,
            None => servers.object_value_or_set(key),
        };
    }
    match only(&servers, name)?.map(|prop| (prop.object_value(), prop)) {
        Some((Some(entry), _)) => {
            for (key, value) in fields {
                match only(&entry, key)? {
                    Some(field) if field.value().and_then(|v| v.to_serde_value()).as_ref() == Some(value) => {}
                    Some(field) => field.set_value(cst_value(value)),
                    None => {
                        entry.append(key, cst_value(value));
                    }
                }
            }
        }
        // An entry of that name that is not an object is no server:
        // replaced whole.
        Some((None, prop)) => prop.set_value(cst_object(fields)),
        None => {
            servers.append(name, cst_object(fields));
        }
    }
    Ok(with_final_newline(text, root.to_string()))
}

/// `text` without the entry `name` of the object at `path`; the object
/// itself goes too when that leaves it empty. `None` when there is no such
/// entry.
pub fn json_remove(text: &str, path: &[&str], name: &str) -> Result<Option<String>, String> {
    let root = json_parse(text)?;
    let Some(top) = root.value() else { return Ok(None) };
    let top = top.as_object().ok_or("its top level is not a JSON object")?;
    // Each object down the path, with the key it is under.
    let mut chain: Vec<(CstObject, &str)> = Vec::new();
    let mut at = top;
    for key in path {
        let Some(next) = only(&at, key)?.and_then(|p| p.object_value()) else { return Ok(None) };
        chain.push((at, key));
        at = next;
    }
    let Some(entry) = only(&at, name)? else { return Ok(None) };
    entry.remove();
    while let Some((parent, key)) = chain.pop() {
        let emptied = parent.object_value(key).is_some_and(|o| o.properties().is_empty());
        if !emptied {
            break;
        }
        if let Some(prop) = parent.get(key) {
            prop.remove();
        }
    }
    Ok(Some(with_final_newline(text, root.to_string())))
}

/// `text` (a TOML document, or empty) with `[TABLE.NAME]` set to `fields`
/// (strings and arrays of strings). A table written inline or with dotted
/// keys is edited as it is written.
pub fn toml_set(text: &str, table: &str, name: &str, fields: &Fields) -> Result<String, String> {
    let mut doc = toml_parse(text)?;
    let servers = doc.entry(table).or_insert_with(implicit_table);
    let servers = servers.as_table_like_mut().ok_or_else(|| format!("`{table}` is not a table"))?;
    let entry = servers.entry(name).or_insert(toml_edit::table());
    if entry.as_table_like().is_none() {
        // Not a server: replaced whole, as in JSON.
        *entry = toml_edit::table();
    }
    let entry = entry.as_table_like_mut().expect("a table, set above");
    for (key, value) in fields {
        let new = toml_value(value)?;
        let same = entry.get(key).and_then(Item::as_value).is_some_and(|old| same_toml(old, &new));
        if !same {
            entry.insert(key, Item::Value(new));
        }
    }
    Ok(doc.to_string())
}

/// `text` without `[TABLE.NAME]`; `TABLE` goes too when that leaves it
/// empty. `None` when there is no such entry.
pub fn toml_remove(text: &str, table: &str, name: &str) -> Result<Option<String>, String> {
    let mut doc = toml_parse(text)?;
    let Some(servers) = doc.get_mut(table).and_then(Item::as_table_like_mut) else { return Ok(None) };
    if servers.remove(name).is_none() {
        return Ok(None);
    }
    if servers.is_empty() {
        doc.remove(table);
    }
    Ok(Some(doc.to_string()))
}

/// The property `key` of `object`. A key written twice is refused: readers
/// differ on which one counts (JavaScript's `JSON.parse` takes the last),
/// so an edit of either could be the one not read.
fn only(object: &CstObject, key: &str) -> Result<Option<CstObjectProp>, String> {
    let mut found = object.properties().into_iter().filter(|p| p.decoded_name().as_deref() == Some(key));
    let first = found.next();
    if found.next().is_some() {
        return Err(format!("`{key}` is written twice in one object: keep one, then run setup again"));
    }
    Ok(first)
}

fn json_parse(text: &str) -> Result<CstRootNode, String> {
    CstRootNode::parse(text, &ParseOptions::default()).map_err(|e| format!("it is not JSON that can be read: {e}"))
}

fn toml_parse(text: &str) -> Result<DocumentMut, String> {
    text.parse::<DocumentMut>().map_err(|e| format!("it is not TOML that can be read: {}", e.to_string().trim_end()))
}

/// A file that ended with a newline (or a new one) ends with one.
fn with_final_newline(before: &str, mut after: String) -> String {
    if (before.trim().is_empty() || before.ends_with('\n')) && !after.ends_with('\n') {
        after.push('\n');
    }
    after
}

fn cst_object(fields: &Fields) -> CstInputValue {
    CstInputValue::Object(fields.iter().map(|(k, v)| ((*k).to_owned(), cst_value(v))).collect())
}

fn cst_value(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(cst_value).collect()),
        Value::Object(map) => CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), cst_value(v))).collect()),
    }
}

/// `[TABLE]` with no header of its own unless a key is written in it.
fn implicit_table() -> Item {
    let mut table = toml_edit::Table::new();
    table.set_implicit(true);
    Item::Table(table)
}

fn toml_value(value: &Value) -> Result<toml_edit::Value, String> {
    match value {
        Value::String(s) => Ok(s.as_str().into()),
        Value::Array(items) => {
            let strings: Option<toml_edit::Array> = items.iter().map(|i| i.as_str()).collect();
            strings.map(toml_edit::Value::Array).ok_or_else(|| "only strings in an array".to_owned())
        }
        other => Err(format!("no TOML for {other}")),
    }
}

/// Whether two TOML values say the same, whatever their layout.
fn same_toml(a: &toml_edit::Value, b: &toml_edit::Value) -> bool {
    toml_json(&Item::Value(a.clone())) == toml_json(&Item::Value(b.clone()))
}

fn toml_json(item: &Item) -> Value {
    match item {
        Item::Value(toml_edit::Value::String(s)) => Value::String(s.value().clone()),
        Item::Value(toml_edit::Value::Integer(i)) => Value::from(*i.value()),
        Item::Value(toml_edit::Value::Float(f)) => Value::from(*f.value()),
        Item::Value(toml_edit::Value::Boolean(b)) => Value::Bool(*b.value()),
        Item::Value(toml_edit::Value::Datetime(d)) => Value::String(d.value().to_string()),
        Item::Value(toml_edit::Value::Array(a)) => {
            Value::Array(a.iter().map(|v| toml_json(&Item::Value(v.clone()))).collect())
        }
        other => other
            .as_table_like()
            .map(|t: &dyn TableLike| Value::Object(t.iter().map(|(k, v)| (k.to_owned(), toml_json(v))).collect()))
            .unwrap_or(Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn fields() -> Vec<(&'static str, Value)> {
        vec![("command", json!("/opt/signpost")), ("args", json!(["--project", "/src/shop"]))]
    }

    #[test]
    fn a_json_entry_is_added_beside_the_others_with_the_comments_kept() {
        let text = "{\n  // mine\n  \"mcpServers\": {\n    \"git\": { \"command\": \"uvx\" }, // trailing\n  },\n}\n";
        let after = json_set(text, &["mcpServers"], "signpost", &fields()).unwrap();
        assert_eq!(
            after,
            "{\n  // mine\n  \"mcpServers\": {\n    \"git\": { \"command\": \"uvx\" }, // trailing\n    \"signpost\": {\n      \
             \"command\": \"/opt/signpost\",\n      \"args\": [\"--project\", \"/src/shop\"],\n    },\n  },\n}\n",
            "the file's trailing commas are kept in the entry added"
        );
        assert_eq!(json_set(&after, &["mcpServers"], "signpost", &fields()).unwrap(), after, "idempotent");
        assert_eq!(json_remove(&after, &["mcpServers"], "signpost").unwrap().as_deref(), Some(text));
    }

    #[test]
    fn an_empty_json_file_gets_the_path_and_loses_it_on_removal() {
        let after = json_set("", &["projects", "/src/shop", "mcpServers"], "signpost", &fields()).unwrap();
        let value: Value = serde_json::from_str(&after).unwrap();
        assert_eq!(value["projects"]["/src/shop"]["mcpServers"]["signpost"]["args"][1], "/src/shop");
        assert!(after.ends_with("}\n"), "{after}");
        let removed = json_remove(&after, &["projects", "/src/shop", "mcpServers"], "signpost").unwrap().unwrap();
        assert_eq!(serde_json::from_str::<Value>(&removed).unwrap(), json!({}));
    }

    #[test]
    fn a_json_entry_keeps_the_fields_the_user_added() {
        let text = r#"{"mcpServers": {"signpost": {"command": "/old", "env": {"RUST_LOG": "debug"}}}}"#;
        let after = json_set(text, &["mcpServers"], "signpost", &fields()).unwrap();
        let value: Value = serde_json::from_str(&after).unwrap();
        assert_eq!(value["mcpServers"]["signpost"]["command"], "/opt/signpost");
        assert_eq!(value["mcpServers"]["signpost"]["env"]["RUST_LOG"], "debug");
    }

    #[test]
    fn json_that_does_not_parse_or_is_not_an_object_is_refused() {
        let twice = [
            r#"{"mcpServers": {}, "mcpServers": {}}"#,
            r#"{"mcpServers": {"signpost": {}, "signpost": {"command": "x"}}}"#,
            r#"{"mcpServers": {"signpost": {"args": [], "args": ["--project", "/x"]}}}"#,
        ];
        for text in twice {
            let e = json_set(text, &["mcpServers"], "signpost", &fields()).unwrap_err();
            assert!(e.contains("written twice"), "{text}: {e}");
        }
        assert!(json_remove(twice[1], &["mcpServers"], "signpost").is_err());
        for text in ["{\"mcpServers\": {", "[1, 2]", "{\"mcpServers\": 3}", "nul"] {
            assert!(json_set(text, &["mcpServers"], "signpost", &fields()).is_err(), "{text}");
        }
        assert_eq!(json_remove("{}", &["mcpServers"], "signpost").unwrap(), None);
    }

    #[test]
    fn a_toml_entry_is_added_with_comments_kept_and_removed_whole() {
        let text = "# mine\nmodel = \"o3\"\n\n[mcp_servers.git]\ncommand = \"uvx\" # the git server\n";
        let after = toml_set(text, "mcp_servers", "signpost", &fields()).unwrap();
        assert_eq!(
            after,
            "# mine\nmodel = \"o3\"\n\n[mcp_servers.git]\ncommand = \"uvx\" # the git server\n\n\
             [mcp_servers.signpost]\ncommand = \"/opt/signpost\"\nargs = [\"--project\", \"/src/shop\"]\n"
        );
        assert_eq!(toml_set(&after, "mcp_servers", "signpost", &fields()).unwrap(), after, "idempotent");
        assert_eq!(toml_remove(&after, "mcp_servers", "signpost").unwrap().as_deref(), Some(text));
        let alone = toml_set("", "mcp_servers", "signpost", &fields()).unwrap();
        assert_eq!(toml_remove(&alone, "mcp_servers", "signpost").unwrap().as_deref(), Some(""));
    }

    #[test]
    fn toml_that_does_not_parse_is_refused() {
        for text in ["[mcp_servers\n", "mcp_servers = 3\n", "a = \n"] {
            assert!(toml_set(text, "mcp_servers", "signpost", &fields()).is_err(), "{text}");
        }
    }
}

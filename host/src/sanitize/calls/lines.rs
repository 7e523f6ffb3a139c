//! Calls over two lines: a tool ending one line and arguments opening the
//! next ([`dangling_tool`], [`leading_args`]), a tool named in prose and
//! an object of its arguments a few lines on ([`named_alone`],
//! [`keyed_object`]). The caller ([`super::super::agent_text`]) pairs the
//! lines.

use super::notations::{argument_list, names_a_value, param_element};
use super::*;

/// A tool name that ends its line (nothing but a gap, a closing quote or
/// `:` after it): its span, to pair with arguments on the next line.
pub fn dangling_tool(folded: &str, vocab: &Vocabulary) -> Option<Range<usize>> {
    // (a comment after it: `describe   # the record`)
    let body = match folded.find(" #") {
        Some(at) if !folded[..at].trim().is_empty() => &folded[..at],
        _ => folded,
    };
    // (`[describe]`: a TOML or INI section named after it; `describe \`,
    // continued on the next line; `Use describe.`)
    let end = body
        .trim_end_matches(|c: char| is_gap(c) || matches!(c, '"' | '\'' | '(' | ',' | ']' | ')' | '.' | '\\' | ';'))
        .len();
    let start = folded[..end]
        .char_indices()
        .rfind(|(_, c)| !(c.is_ascii() && vocab.word_byte(*c as u8)))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let word = &folded[start..end];
    let named = vocab.named(word).is_some();
    // A tool name as a word of its own (`mcp__signpost__describe` too).
    let glued = folded[..start].ends_with(|c: char| c.is_alphanumeric());
    (named && !glued).then_some(start..end)
}

/// After `word`, a tool that may change state ending its line (as
/// [`dangling_tool`] finds it), a list item that is a bare value (`- Alice`,
/// `2. Bob`, `> Alice`, `- [ ] "Alice"`: a list of its arguments), or a
/// line that is one (`Alice, Bob`): the value's span. A line or an item
/// that is a sentence (`- Confirm with the user`, `Duplicates cost money.`)
/// is none.
pub fn leading_value(word: &str, folded: &str, vocab: &Vocabulary) -> Option<Range<usize>> {
    let (name, _) = vocab.named(word)?;
    if !vocab.acts(name) {
        return None;
    }
    let body = folded.trim_start();
    let marker = body.chars().next().filter(|c| {
        matches!(c, '-' | '*' | '•' | '+' | '–' | '—' | '·' | '▪' | '▸' | '◦' | '>' | '|' | '→' | '⁃' | '‣')
            || ('\u{2460}'..='\u{24FF}').contains(c)
    });
    let item = match marker {
        Some(c) => &body[c.len_utf8()..],
        None => {
            // `1.`, `2)`, `a)`
            let label = body.bytes().take_while(u8::is_ascii_alphanumeric).count();
            let digits = body.bytes().take_while(u8::is_ascii_digit).count();
            match body[label..].strip_prefix(['.', ')']) {
                Some(item) if (1..=3).contains(&label) && item.starts_with(' ') => item,
                // (`1 Alice`)
                _ if (1..=3).contains(&digits) && body[digits..].starts_with(' ') => &body[digits..],
                _ => body,
            }
        }
    };
    let item = item.trim_start();
    // (a task list's box: `[ ]`, `[x]`)
    let item = ["[ ]", "[x]", "[X]"].iter().find_map(|b| item.strip_prefix(b)).map_or(item, str::trim_start);
    names_a_value(item, vocab, true).then(|| folded.len() - item.len()..folded.len())
}

/// A tool that may change state named in a line that ends with `:` a few
/// words after it (`delete_entities:`, `Run delete_entities on these:`): the
/// name's span, to pair with a list of values on the next lines.
pub fn acting_before_colon(folded: &str, vocab: &Vocabulary) -> Option<Range<usize>> {
    if vocab.acting.is_empty() {
        return None;
    }
    let body = folded.trim_end();
    let body = body.strip_suffix(':')?;
    let lower = body.to_ascii_lowercase();
    let name = tool_words(&lower, vocab).into_iter().rfind(|w| vocab.acts(&lower[w.clone()]))?;
    (body.len() - name.end <= MAX_CALL_GAP).then_some(name)
}

/// A tool named as a word in a line, not by a call of that line (prose
/// that names it: `Use delete_entities.`, `<summary>find</summary>`), and
/// not inside a word the result or the agent's arguments hold (a symbol
/// `Repository.find`): where the name starts. Its arguments may follow on
/// a later line.
/// `calls` gives the line's calls ([`calls_in`]), asked for only when a
/// tool is named in it.
pub fn named_alone<'v, 'c>(
    folded: &str,
    vocab: &'v Vocabulary,
    quoted: Quoted<'_>,
    calls: impl FnOnce() -> Option<&'c [Found]>,
) -> Option<(&'v str, usize)> {
    let lower = folded.to_ascii_lowercase();
    let words = tool_words(&lower, vocab);
    if words.is_empty() {
        return None;
    }
    let calls = calls()?;
    let token = |w: &Range<usize>| {
        let start = folded[..w.start].rfind(char::is_whitespace).map_or(0, |s| s + 1);
        let end = folded[w.end..].find(char::is_whitespace).map_or(folded.len(), |e| w.end + e);
        &folded[start..end]
    };
    let w = words.into_iter().find(|w| !within_a_call(calls, w) && !quoted(token(w)))?;
    Some((vocab.find(&lower[w.clone()])?, w.start))
}

/// Whether `r` lies inside the span of one of `calls`.
pub(super) fn within_a_call(calls: &[Found], r: &Range<usize>) -> bool {
    calls.iter().any(|c| c.span.as_ref().is_some_and(|s| s.start <= r.start && r.end <= s.end))
}

/// Whether a record reads as arguments of `tool`: every key of it one of
/// its parameters or the trail, or it holds every parameter the tool
/// requires (an agent sends the extra keys along). Data such as a symbol's
/// record has other keys, and not all a tool requires.
pub fn is_arguments(map: &Map<String, Value>, tool: &str, vocab: &Vocabulary) -> bool {
    are_arguments(map.keys().map(String::as_str), tool, vocab)
}

/// [`is_arguments`] of a record's keys.
pub(super) fn are_arguments<'k>(keys: impl Iterator<Item = &'k str> + Clone, tool: &str, vocab: &Vocabulary) -> bool {
    let Some(own) = vocab.params_of.get(tool) else { return false };
    let param = |k: &str| k.eq_ignore_ascii_case(TRAIL_ARG) || own.iter().any(|p| p.eq_ignore_ascii_case(k));
    let required = vocab.required_of.get(tool).map_or(&[][..], Vec::as_slice);
    let holds = |r: &String| keys.clone().any(|k| k.eq_ignore_ascii_case(r));
    keys.clone().next().is_some() && (keys.clone().all(param) || (!required.is_empty() && required.iter().all(holds)))
}

/// A JSON object on a line that reads as arguments of `tool`
/// ([`is_arguments`]), not part of a call of the line and not text the
/// result holds: where it starts (the arguments of a tool named on a line
/// before).
pub fn keyed_object(
    folded: &str,
    tool: &str,
    vocab: &Vocabulary,
    quoted: Quoted<'_>,
    calls: Option<&[Found]>,
) -> Option<usize> {
    if !folded.contains('{') {
        return None;
    }
    let calls = calls?;
    let (mut tried, mut from) = (0, 0);
    while let Some(off) = folded[from..].find('{') {
        let at = from + off;
        tried += 1;
        if tried > MAX_FAILED_PARSES {
            return Some(at);
        }
        let mut stream = serde_json::Deserializer::from_str(&folded[at..]).into_iter::<Value>();
        let Some(Ok(Value::Object(map))) = stream.next() else {
            from = at + 1;
            continue;
        };
        // (objects inside it are its values, not arguments of their own)
        let end = at + stream.byte_offset();
        if is_arguments(&map, tool, vocab) && !within_a_call(calls, &(at..end)) && !quoted(&folded[at..end]) {
            return Some(at);
        }
        from = end;
    }
    None
}

/// An argument list opening a line (an object, bracketed arguments,
/// `key=value`): its span, for a tool named at the end of the line before.
pub fn leading_args(folded: &str, vocab: &Vocabulary) -> Option<Range<usize>> {
    let lower = folded.to_ascii_lowercase();
    let decoration = |c: char| c.is_whitespace() || matches!(c, '`' | '>' | '-' | '*' | '•' | '?' | ':') || is_arrow(c);
    let mut args = lower.trim_start_matches(decoration);
    // A parameter's name as a key (`entityNames:` of YAML, `kind = "class"`
    // of TOML): the arguments, one a line.
    // (an element named after one, `<entityNames>`, of XML)
    let quoted_key = args.trim_start_matches(['"', '\'']);
    let key = quoted_key.bytes().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-')).count();
    let name = &quoted_key[..key];
    let after = quoted_key[key..].trim_start_matches(['"', '\'']).trim_start();
    let keyed = key > 0 && vocab.is_argument_key(name) && after.starts_with([':', '=']);
    if keyed || param_element(args, vocab) {
        return Some(lower.len() - args.len()..lower.len());
    }
    // Up to two short labels before them (`Send:`, `1.`, `next:`, `Action Input:`).
    for _ in 0..2 {
        let label = args.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b' ').count();
        match args[label..].strip_prefix([':', '.']) {
            Some(rest) if (1..=20).contains(&label) && args[..label].split(' ').count() <= 3 => {
                args = rest.trim_start_matches(decoration);
            }
            _ => break,
        }
    }
    let start = lower.len() - args.len();
    if args.starts_with('{') {
        return Some(start..lower.len());
    }
    if args.starts_with('<') {
        return None;
    }
    argument_list(args, vocab, false, false, true, true).map(|end| start..start + end)
}

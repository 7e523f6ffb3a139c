//! Calls in the other notations: a tool's name standing as a word, then an
//! argument list (brackets, quotes, `key=value`, flags, a bare value after
//! a parameter's name, XML elements); the program's shell form; a name
//! spelled otherwise (`deleteEntities`, `f-i-n-d`).

use super::*;

/// Most tool names spelled otherwise in one line; past them the line
/// cannot be analysed within bounds.
pub(super) const MAX_SPELLED: usize = 8;

/// Calls to a tool whose name is spelled otherwise: `delete-entities`,
/// `deleteEntities`, `Delete Entities`, `f-i-n-d`, `delete\_entities`,
/// `de<b>lete</b>_entities` (its letters and digits in order, any case,
/// split by what may split a name: [`name_gap`]), followed by
/// arguments as they follow the name itself; each cut to the end of the
/// line.
pub(super) fn spelled_calls(folded: &str, vocab: &Vocabulary, quoted: Quoted<'_>) -> Option<Vec<Found>> {
    let mut found = Vec::new();
    let bytes = folded.as_bytes();
    let mut seen = 0;
    for at in 0..bytes.len() {
        // A word's start: an ASCII letter or digit after anything else,
        // the first of some name's.
        let first = bytes[at].to_ascii_lowercase();
        if !first.is_ascii_alphanumeric()
            || !vocab.skeleton_starts[usize::from(first & 0x7f)]
            || at.checked_sub(1).is_some_and(|b| bytes[b].is_ascii_alphanumeric())
        {
            continue;
        }
        for (_, skeleton, i) in vocab.skeletons.iter().filter(|(f, _, _)| *f == first) {
            let name = &vocab.names[*i];
            let Some(end) = spelled_at(folded, at, skeleton, name) else { continue };
            seen += 1;
            if seen > MAX_SPELLED {
                return None;
            }
            // The line again with the name as the vocabulary spells it.
            let respelled = format!("{name}{}", &folded[end..]);
            let calls = calls_as_spelled(&respelled, vocab, quoted)?;
            if let Some(call) = calls.into_iter().find(|f| f.span.as_ref().is_some_and(|s| s.start == 0)) {
                found.push(Found { call: call.call, span: Some(at..folded.len()) });
            }
        }
    }
    Some(found)
}

/// Where `name` (its letters and digits `skeleton`) ends when it is spelled
/// otherwise from `at` on: those in order (any case), split by what may
/// split a name ([`name_gap`]), ending a word; `None` where it is not, or
/// is spelled as it is (read as a word of its own already).
pub(super) fn spelled_at(folded: &str, at: usize, skeleton: &[u8], name: &str) -> Option<usize> {
    let bytes = folded.as_bytes();
    let mut i = at;
    for (n, want) in skeleton.iter().enumerate() {
        if n > 0 {
            i += name_gap(&folded[i..]);
        }
        if !bytes.get(i)?.eq_ignore_ascii_case(want) {
            return None;
        }
        i += 1;
    }
    let as_named = bytes[at..i].eq_ignore_ascii_case(name.as_bytes());
    (!as_named && !bytes.get(i).is_some_and(u8::is_ascii_alphanumeric)).then_some(i)
}

/// Longest markup tag read inside a name (`<b>`, `</span>`), in bytes.
const MAX_TAG_IN_NAME: usize = 12;

/// How much of `s`'s start may split the letters of a name a reader still
/// reads as one: `-`, `_`, spaces, `.`, `/`, `\` (Markdown's `\_`), `*` and
/// backticks (emphasis, code spans), `~`, `+`, the middle dot, Unicode's
/// dashes and connectors (`‐`, `–`, `‿`, `﹏`), and markup tags (`<b>`).
fn name_gap(s: &str) -> usize {
    let mut len = 0;
    while let Some(c) = s[len..].chars().next() {
        let splits = matches!(c,
            '-' | '_' | ' ' | '.' | '/' | '\\' | '*' | '`' | '~' | '+' | '·'
            | '\u{2010}'..='\u{2015}' | '\u{2027}' | '\u{203F}' | '\u{2040}' | '\u{2054}' | '\u{2212}'
            | '\u{2E0F}' | '\u{30FB}' | '\u{FE33}' | '\u{FE34}' | '\u{FE4D}'..='\u{FE4F}' | '\u{FE58}'
            | '\u{FE63}');
        let tag = || {
            let rest = &s[len..];
            let end = rest.bytes().take(MAX_TAG_IN_NAME).position(|b| b == b'>')?;
            let inside = rest[1..end].trim_start_matches('/');
            (!inside.is_empty() && inside.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(end + 1)
        };
        match (splits, c == '<') {
            (true, _) => len += c.len_utf8(),
            (false, true) => match tag() {
                Some(n) => len += n,
                None => break,
            },
            _ => break,
        }
    }
    len
}

/// The end of an argument list that starts `rest` (right after the gap),
/// relative to `rest`; `None` when what follows is no argument list.
/// `with_quote` allows a quoted string (the gap had a space or `:`/`=`);
/// `with_id` allows a bare id; `with_colon` allows `key: value` (right
/// after the name only: `describe failed: trail: …` is prose), and
/// `with_bare` a parameter's name followed by a bare word (on the name's
/// line only).
pub(super) fn argument_list(
    rest: &str,
    vocab: &Vocabulary,
    with_quote: bool,
    with_id: bool,
    with_colon: bool,
    with_bare: bool,
) -> Option<usize> {
    let first = rest.chars().next()?;
    match first {
        // An element named after a parameter (`<kind>class</kind>`): the
        // arguments as XML, to the end of the line.
        '<' if param_element(rest, vocab) => Some(rest.len()),
        '(' | '[' | '<' => {
            let close = matching(rest)?;
            // Between the brackets (to the end of the line when unclosed),
            // read as far as brackets are looked into.
            let inner = rest[1..close].strip_suffix([')', ']', '>', '}']).unwrap_or(&rest[1..close]);
            let inner = &inner[..inner.floor_char_boundary(MAX_BRACKETED)];
            if first == '<' && !arglike(inner, vocab) {
                // `describe <id>`: a placeholder to adapt, not a call.
                return None;
            }
            ((close == 2 && first == '(') || arglike(inner, vocab)).then_some(close)
        }
        // Lisp's quoted list: `'("Alice" "Bob")`.
        '\'' if rest[1..].starts_with(['(', '[']) => {
            argument_list(&rest[1..], vocab, false, false, false, false).map(|e| e + 1)
        }
        '"' | '\'' | '“' | '‘' | '`' if with_quote => {
            let close = match first {
                '“' => '”',
                '‘' => '’',
                c => c,
            };
            let body = &rest[first.len_utf8()..];
            let end = body.find(close)?;
            (end > 0).then_some(first.len_utf8() + end + close.len_utf8())
        }
        _ => {
            if let Some(end) = key_value(rest, vocab, with_colon, with_bare) {
                return Some(end);
            }
            let hex = rest.bytes().take_while(u8::is_ascii_hexdigit).count();
            (with_id && hex >= 40).then_some(rest.len())
        }
    }
}

/// Whether `s` opens an element named after a parameter or an argument
/// key: `<kind>`, `<entityNames attr="…">`, `<arguments>`.
pub(super) fn param_element(s: &str, vocab: &Vocabulary) -> bool {
    let Some(tag) = s.strip_prefix('<') else { return false };
    let len = tag.bytes().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-')).count();
    let name = &tag[..len];
    len > 0 && tag[len..].starts_with(['>', ' ', '/']) && vocab.is_argument_key(name)
}

/// `key=value`, `key: value` or `--key value` with a parameter name, and
/// with `bare` `key value` too, the value a bare word (`find kind class`,
/// `x, key value`, `x | key | value`): the arguments run to the end of
/// the line.
pub(super) fn key_value(rest: &str, vocab: &Vocabulary, with_colon: bool, bare_ok: bool) -> Option<usize> {
    // `--key`, PowerShell's `-key`, Lisp's `:key`.
    // (and a URL's `#`, `&`, `?`, a member's `.`: `#entityNames=Alice`)
    let flag = rest.strip_prefix("--").or_else(|| rest.strip_prefix(['-', ':', '/', '#', '&', '?', '.']));
    let body = flag.unwrap_or(rest);
    let key: String = body.chars().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-')).collect();
    if !vocab.is_param(&key) {
        return None;
    }
    let after = &body[key.len()..];
    // A value plainly a value: quoted, bracketed or a number.
    let plain_value = |v: &&str| {
        v.trim_start().starts_with(|c: char| matches!(c, '"' | '\'' | '[' | '{' | '(') || c.is_ascii_digit())
    };
    let value = match flag {
        Some(_) => after.strip_prefix([' ', '=', ':'])?,
        None => after
            .trim_start_matches(' ')
            .strip_prefix('=')
            .or_else(|| after.strip_prefix(':').filter(|v| with_colon || plain_value(v)))
            .or_else(|| after.strip_prefix(' ').filter(plain_value))
            .or_else(|| {
                let bare = after.trim_start_matches(is_gap);
                (bare_ok && bare.len() < after.len() && bare.starts_with(|c: char| c.is_alphanumeric())).then_some(bare)
            })?,
    };
    let value = value.trim_start_matches(' ');
    value.chars().next().filter(|c| !c.is_whitespace()).map(|_| rest.len())
}

/// Whether bracketed text holds arguments rather than prose: quotes,
/// `=`, nested brackets or objects, a comma-separated list, `key:`, an id,
/// or a single name (`describe(OrderService)`).
pub(super) fn arglike(inner: &str, vocab: &Vocabulary) -> bool {
    let inner = inner.trim();
    if inner.is_empty() {
        return false;
    }
    if inner.contains(['"', '\'', '=', '{', '[', '(', '`', ',', '“', '‘']) {
        return true;
    }
    if inner.bytes().filter(u8::is_ascii_hexdigit).count() >= 40 {
        return true;
    }
    let lower = inner.to_ascii_lowercase();
    if vocab
        .params
        .iter()
        .any(|p| lower.match_indices(p.as_str()).any(|(at, _)| lower[at + p.len()..].starts_with(':')))
    {
        return true;
    }
    // `(kind class)`: a parameter's name, then its value.
    let mut pair = lower.split_whitespace();
    if pair.next().is_some_and(|k| vocab.is_param(k.trim_end_matches(':'))) && pair.next().is_some() {
        return true;
    }
    let mut words = inner.split_whitespace();
    words.next().is_some_and(|w| {
        w.starts_with(|c: char| c.is_alphabetic()) && w.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '.'))
    }) && words.next().is_none()
}

/// The quote that closes `open`, a quote of another script (`«`, `「`).
fn closing_quote(open: char) -> Option<char> {
    Some(match open {
        '«' => '»',
        '‹' => '›',
        '「' => '」',
        '『' => '』',
        '〈' => '〉',
        '《' => '》',
        '⟨' => '⟩',
        _ => return None,
    })
}

/// Most bytes read for the bracket that closes an argument list, and of
/// what it holds.
const MAX_BRACKETED: usize = 1024;

/// The byte just past the bracket that closes the one `s` starts with
/// (quote-aware, nested); the end of `s` when it does not close.
pub(super) fn matching(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    // (a bracket left open that far runs to the end of the line: each
    // name's look stays short, however many a line holds)
    for (i, c) in s.char_indices().take_while(|(i, _)| *i < MAX_BRACKETED) {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '(' | '[' | '<' | '{' => depth += 1,
            ')' | ']' | '>' | '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    Some(s.len())
}

/// Calls of the other notations: a tool name standing as a word, then
/// (after a gap and up to two short words) an argument list.
pub(super) fn named_calls(folded: &str, lower: &str, vocab: &Vocabulary, found: &mut Vec<Found>) {
    for name in tool_words(lower, vocab) {
        let mut at = name.end;
        // A name in quotes (`"describe": …`) ends with its closing quote.
        if let (Some(open), Some(close)) = (lower[..name.start].chars().next_back(), lower[at..].chars().next())
            && open == close
            && matches!(open, '"' | '\'' | '`')
        {
            at += close.len_utf8();
        }
        // Whether every word skipped so far is a label of the arguments
        // (`find Arguments kind: class`): they still follow the name.
        let mut labels = true;
        // A tool that may change state, then a value in the same clause
        // (`delete_entities Alice`, `run delete_entities on both Alice and
        // Bob`): to the end of the line.
        if vocab.acts(&lower[name.clone()]) && names_a_value(&folded[name.end..], vocab, false) {
            found.push(Found { call: None, span: Some(name.start..folded.len()) });
            continue;
        }
        for word_index in 0..=MAX_CALL_WORDS {
            let rest = &lower[at..];
            // (an ellipsis is a gap, a lone `.` is not: `find . -name x`)
            let mut after = rest.trim_start_matches(is_gap);
            while let Some(dots) = after.strip_prefix("..") {
                after = dots.trim_start_matches(|c: char| c == '.' || is_gap(c));
            }
            let mut gap = &rest[..rest.len() - after.len()];
            // A shell flag (`--direction out`, `-kind class`) starts the arguments.
            if let Some(before_flag) = gap.strip_suffix("--") {
                gap = before_flag;
            } else if gap.ends_with(" -") {
                gap = &gap[..gap.len() - 1];
            }
            // A backtick after a space opens a code span: a quoted argument.
            if let Some(before_tick) = gap.strip_suffix('`').filter(|g| g.ends_with([' ', ':', '='])) {
                gap = before_tick;
            }
            let args = &rest[gap.len()..];
            if gap.len() > MAX_CALL_GAP || args.starts_with('{') {
                break;
            }
            let spaced = !gap.is_empty() && gap.contains([' ', ':', '=', '\t']);
            // A quoted string is an argument right after the name only
            // (`describe or `find``: prose naming two tools).
            let first = word_index == 0 || labels;
            // A quote of another script opened in the gap (`search «x»`).
            let fancy = gap.chars().next_back().and_then(closing_quote);
            if let Some(close) = fancy.filter(|_| first)
                && let Some(end) = args.find(close).filter(|e| *e > 0)
            {
                let end = at + gap.len() + end + close.len_utf8();
                found.push(Found { call: None, span: Some(name.start..end.min(folded.len())) });
                break;
            }
            if let Some(end) = argument_list(args, vocab, spaced && first, spaced, first, first) {
                let end = at + gap.len() + end;
                found.push(Found { call: None, span: Some(name.start..end.min(folded.len())) });
                break;
            }
            // Up to two short words between (`describe with id=…`).
            let word = args.bytes().take_while(|b| b.is_ascii_alphabetic() || *b == b'_').count();
            if gap.is_empty() || word == 0 || word > 10 {
                break;
            }
            labels &= ARG_KEYS.contains(&&args[..word]) || &args[..word] == "with";
            at += gap.len() + word;
        }
    }
}

/// Words that end the clause a tool's name opens: what follows is
/// another clause (`delete_entities only after search_nodes finds…`).
const CLAUSE_ENDS: [&str; 14] = [
    "after", "although", "because", "before", "but", "if", "instead", "once", "rather", "since", "than", "unless",
    "until", "while",
];

/// Most words of a clause read for a value after a tool's name.
const MAX_CLAUSE_WORDS: usize = 16;

/// Whether the clause that starts `rest` (right after a tool's name) names
/// a value ([`bare_value`]): its words up to `.`, `;`, `!`, `?`, the end of
/// the line, another tool's name or a word that opens another clause
/// ([`CLAUSE_ENDS`]), past a closing tag (`</code>`) and brackets. Right
/// after the name, a verb in the past (`failed: …`, `created`) or one before
/// a lower-case word (`removes entities`) ends it too: the tool is its
/// subject. With `opens`, a sentence may open at the first word (a list's
/// item).
pub(crate) fn names_a_value(rest: &str, vocab: &Vocabulary, mut opens: bool) -> bool {
    let rest =
        rest.strip_prefix("</").and_then(|t| t.find('>').filter(|e| *e <= 12).map(|e| &t[e + 1..])).unwrap_or(rest);
    let mut at = 0;
    for n in 0..MAX_CLAUSE_WORDS {
        let s = &rest[at..];
        let word_at = s
            .char_indices()
            .find(|&(i, c)| {
                c.is_alphanumeric()
                    || closing_of(c).is_some()
                        && (!matches!(c, '\'' | '`') || !s[..i].ends_with(|b: char| b.is_alphanumeric()))
            })
            .map_or(s.len(), |(i, _)| i);
        let gap = &s[..word_at];
        // (an ellipsis is no sentence's end; an object is read as JSON)
        if gap.matches('.').count() == 1 || gap.contains([';', '!', '?', '{']) {
            return false;
        }
        opens |= gap.contains([':', '—', '–', '―']) || gap.split_whitespace().any(|g| g == "-");
        let word = &s[word_at..];
        if word.is_empty() {
            return false;
        }
        let end = word
            .find(|c: char| {
                c.is_whitespace()
                    || matches!(c, ',' | ';' | ':' | '!' | '?' | '(' | ')' | '[' | ']' | '{' | '<' | '"' | '”')
            })
            .map_or(word.len(), |e| e.max(1));
        let token = &word[..end];
        let core = token.trim_matches(|c: char| !c.is_alphanumeric());
        let lower = core.to_ascii_lowercase();
        // A verb right after the name, the tool its subject (`… failed: x`,
        // `… removes entities`; not `… duplicates: Alice`, `… nodes Alice`).
        let plain = core.bytes().all(|b| b.is_ascii_lowercase());
        let after = word[end..].trim_start_matches([' ', '\t']);
        let reports = plain && core.len() > 4 && core.ends_with("ed") && !matches!(core, "named" | "called");
        let verb = plain
            && core.len() > 3
            && core.ends_with('s')
            && !core.ends_with("ss")
            && after.starts_with(|c: char| c.is_lowercase());
        if vocab.named(core).is_some() || CLAUSE_ENDS.contains(&lower.as_str()) || n == 0 && (reports || verb) {
            return false;
        }
        if bare_value(word, vocab, opens) {
            return true;
        }
        opens = false;
        at += word_at + end;
        // A `.` after a word ends the clause, but for `e.g.`, `etc.`
        if token.ends_with('.') && !matches!(lower.as_str(), "e.g" | "i.e" | "etc" | "vs" | "cf") {
            return false;
        }
    }
    false
}

/// Words of prose that may follow a tool's name (`create_entities only
/// after…`, `delete_entities is final`, `the delete_entities result`):
/// never a value, capitalised too (`If`, `OK`). Function words, the words
/// the host and the example policies write after a tool's name, status and
/// label words (`Success`, `Denied`, `Note`, `Irreversible`), and the
/// field's acronyms (`JSON`, `MCP`).
#[rustfmt::skip]
const PROSE: [&str; 180] = [
    "a", "about", "after", "again", "all", "already", "also", "although", "always", "an", "and", "answer",
    "answered", "any", "anyway", "api", "are", "as", "at", "be", "because", "been", "before", "being", "blocked",
    "both", "but", "by", "call", "calls", "can", "cannot", "cli", "confirm", "confirmed", "could", "csv", "denied",
    "deprecated", "destructive", "did", "do", "does", "done", "each", "either", "else", "error", "errors", "even",
    "ever", "every", "example", "failed", "first", "for", "from", "had", "has", "have", "he", "here", "how", "http",
    "i", "id", "ids", "if", "in", "input", "instead", "into", "irreversible", "is", "it", "its", "json", "just",
    "last", "later", "less", "like", "limit", "llm", "may", "mcp", "might", "more", "most", "must", "never", "next",
    "no", "nor", "not", "note", "nothing", "now", "of", "ok", "on", "once", "one", "only", "optional", "or",
    "other", "our", "out", "output", "over", "pending", "per", "read", "recommended", "required", "result",
    "results", "same", "she", "should", "since", "skipped", "so", "some", "sql", "step", "still", "success",
    "successful", "such", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "though", "timeout", "tip", "to", "todo", "too", "tools", "ui", "under", "unless", "until", "up", "url", "use",
    "very", "via", "warning", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whose", "why",
    "will", "with", "without", "would", "write", "yaml", "yes", "yet", "you", "your",
];

/// Whether `s` starts with a bare value, as a name stands after a verb:
/// a quoted string (`"Ada Lovelace"`), a capitalised word that is no word
/// of prose (`Alice`, `*Alice*`, `Zoë`; [`PROSE`]: `If`, `OK`), a name in
/// a script without case. Not a value: a lower-case word (`only`, `twice`,
/// `can't`, `works_at`: prose, and `alice` with it), a number (`2
/// created`), symbols, a tool's or a parameter's name (`delete_entities,
/// delete_relations and …`). With
/// `sentence` (after `:`, a dash or a question: a sentence may start
/// there), a capitalised word that a lower-case one follows opens a
/// sentence (`delete_entities: Irreversible, confirm first`), while a
/// list goes on with `and`, `or` or a comma (`: Alice, Bob`).
pub(crate) fn bare_value(s: &str, vocab: &Vocabulary, sentence: bool) -> bool {
    if let Some((open, close)) = s.chars().next().and_then(|c| Some((c, closing_of(c)?))) {
        // (a tool's or a parameter's name in a code span is prose about it)
        let body = &s[open.len_utf8()..];
        return body.find(close).is_some_and(|end| {
            let inner = body[..end].trim();
            inner.chars().any(char::is_alphanumeric) && vocab.named(inner).is_none() && !vocab.is_param(inner)
        });
    }
    let end = s
        .find(|c: char| {
            c.is_whitespace() || matches!(c, ',' | ';' | '!' | '?' | '(' | ')' | '[' | ']' | '"' | '{' | '<')
        })
        .unwrap_or(s.len());
    let word = s[..end].trim_end_matches(['.', ':', '…']);
    // (markup around it: `*Alice*`, `` `Alice` ``)
    let core = word.trim_matches(|c: char| !c.is_alphanumeric());
    let Some(first) = core.chars().next() else { return false };
    if vocab.named(core).is_some() || vocab.is_param(core) {
        return false;
    }
    if first.is_lowercase() {
        return false;
    }
    if first.is_ascii_digit() {
        // (an id's digits: ids are read as ids already)
        return false;
    }
    if !first.is_uppercase() {
        // A script without case.
        return true;
    }
    let letters = core.bytes().all(|b| b.is_ascii_alphabetic());
    if letters && PROSE.contains(&core.to_ascii_lowercase().as_str()) {
        return false;
    }
    if sentence {
        // The next word, past a comma: lower-case and no `and` or `or`, the
        // capitalised word opened a sentence.
        let next = s[end..].trim_start();
        let next = next.strip_prefix(',').unwrap_or(next).trim_start();
        let next = &next[..next.find(|c: char| !c.is_alphabetic()).unwrap_or(next.len())];
        return !next.starts_with(char::is_lowercase) || ["and", "or", "nor"].contains(&next);
    }
    true
}

/// The quote that closes one a value may open with: `"…"`, `'…'`, `` `…` ``,
/// `“…”`, `‘…’`, `‚…‘`, `«…»`, `‹…›`, `「…」`.
fn closing_of(open: char) -> Option<char> {
    Some(match open {
        '"' | '\'' | '`' => open,
        '“' => '”',
        '‘' => '’',
        '‚' => '‘',
        '«' => '»',
        '‹' => '›',
        '「' => '」',
        _ => return None,
    })
}

/// `signpost <subcommand> …` (any path to the program, `.exe`): a shell
/// command, to the end of the line.
pub(super) fn shell_calls(lower: &str, found: &mut Vec<Found>) {
    for word in words(lower, Vocabulary::signpost()).filter(|w| lower[w.clone()] == *"signpost") {
        let (at, end) = (word.start, word.end);
        let before = lower[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '-') {
            continue;
        }
        let rest = lower[end..].strip_prefix(".exe").unwrap_or(&lower[end..]);
        let Some(rest) = rest.strip_prefix([' ', '\t']) else { continue };
        let word: String = rest.trim_start().chars().take_while(|c| c.is_ascii_alphabetic() || *c == '-').collect();
        if is_subcommand(&word) {
            // The path before the program name is part of the command.
            let start = lower[..at]
                .rfind(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '$'))
                .map_or(0, |s| s + 1);
            found.push(Found { call: None, span: Some(start..lower.len()) });
        }
    }
}

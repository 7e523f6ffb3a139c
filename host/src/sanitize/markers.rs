//! What one line reads as, for fields and faces that must not show it:
//! any call at all ([`has_call`]), a hint line (`→ next:` in any disguise,
//! [`is_hint_line`]) or a hint marker anywhere in it ([`has_hint_marker`]),
//! a shell command ([`is_shell_line`]).

use super::calls::{self, Vocabulary};
use super::fold;

/// Whether `s` (one line) shows any call at all, allowed or not, or cannot
/// be analysed. For fields that must hold no call, such as hint reasons.
pub fn has_call(s: &str) -> bool {
    has_call_to(s, Vocabulary::signpost())
}

/// [`has_call`] for the tools of `vocab`.
pub fn has_call_to(s: &str, vocab: &Vocabulary) -> bool {
    calls::calls_in(&fold::fold(s), vocab, &|_| false).is_none_or(|calls| !calls.is_empty())
}

/// Whether a line of an agent's text reads as a hint line (`→ next: …`
/// in any disguise): the terminal shows the response's hints in their place.
pub fn is_hint_line(l: &str) -> bool {
    looks_like_hint_line(&fold::fold(l))
}

/// Whether a line reads as a shell command: anything after a `$ ` prompt,
/// or `program` (its name or any path to it; `signpost` always) followed by
/// a word, by a line continuation (`signpost \`), or as an argument vector
/// (`["signpost", "find", …]`) by one of its subcommands. Only the host
/// writes commands on a terminal.
pub fn is_shell_line(l: &str, program: &str) -> bool {
    let folded = fold::fold(l);
    let trimmed = folded.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '`' | '>' | '-' | '*' | '•'));
    if trimmed.starts_with("$ ") || trimmed.starts_with("% ") || folded.contains(" $ ") || folded.contains(":$ ") {
        return true;
    }
    let name = std::path::Path::new(program).file_name().and_then(|n| n.to_str()).unwrap_or("signpost");
    let lower = folded.to_ascii_lowercase();
    ["signpost", &name.to_ascii_lowercase()].iter().any(|p| {
        lower.match_indices(p).any(|(at, _)| {
            let before = lower[..at].chars().next_back();
            let after = lower[at + p.len()..].strip_prefix(".exe").unwrap_or(&lower[at + p.len()..]);
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-') {
                return false;
            }
            let word = after.trim_start();
            let spaced = after.starts_with([' ', '\t']);
            // An argument vector: quotes and a comma, then a subcommand.
            let listed = after.trim_start_matches(['"', '\'', '`']).trim_start().strip_prefix(',').map(|rest| {
                let sub = rest.trim_start().trim_start_matches(['"', '\'', '`']);
                let end = sub.find(|c: char| !(c.is_ascii_alphabetic() || c == '-')).unwrap_or(sub.len());
                calls::is_subcommand(&sub[..end])
            });
            let flag = word.strip_prefix("--").is_some_and(|f| f.starts_with(|c: char| c.is_ascii_alphabetic()));
            let continued = word.strip_prefix('\\').is_some_and(|w| w.is_empty() || w.starts_with(char::is_whitespace));
            (spaced && (word.starts_with(|c: char| c.is_ascii_alphabetic()) || flag || continued))
                || listed == Some(true)
        })
    })
}

/// `next` as the first word, whatever precedes it (arrows, bullets, quotes,
/// spaces), followed by a marker (`:`, a dash, an arrow, `>` or `=`): the
/// documented hint marker, `→ next:`, in any disguise. (`Next steps` is a
/// heading, not a hint line.)
pub(super) fn looks_like_hint_line(folded: &str) -> bool {
    // Combining marks count as letters to Rust (`Other_Alphabetic`), yet
    // show nothing of their own before `next`.
    let word =
        folded.trim_start_matches(|c: char| !c.is_alphanumeric() || unicode_normalization::char::is_combining_mark(c));
    let Some(rest) = word.get(..4).filter(|w| w.eq_ignore_ascii_case("next")).map(|_| &word[4..]) else {
        return false;
    };
    rest.trim_start().chars().next().is_some_and(is_hint_marker)
}

/// What follows `next` in the hint marker: `:`, a dash, an arrow, `>` or `=`.
fn is_hint_marker(c: char) -> bool {
    matches!(c, ':' | '-' | '—' | '–' | '>' | '=') || calls::is_arrow(c)
}

/// Where the hint marker stands in `folded`: the word `next` followed by
/// `:`, a dash, an arrow, `>` or `=` (after spaces), anywhere in it.
fn hint_marker_ends(folded: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let bytes = folded.as_bytes();
    (0..folded.len().saturating_sub(3)).filter_map(move |at| {
        if bytes[at] | 0x20 != b'n' {
            return None;
        }
        let word = bytes.get(at..at + 4)?;
        if !word.eq_ignore_ascii_case(b"next") || at.checked_sub(1).is_some_and(|b| bytes[b].is_ascii_alphanumeric()) {
            return None;
        }
        let rest = folded.get(at + 4..)?;
        let after = rest.trim_start();
        let marker = after.chars().next().filter(|c| is_hint_marker(*c))?;
        Some((at, folded.len() - after.len() + marker.len_utf8()))
    })
}

/// How many hint markers a line shows.
pub(super) fn hint_markers(folded: &str) -> usize {
    hint_marker_ends(folded).count()
}

/// Where a hint marker followed by a tool's name starts, anywhere in the
/// line (`[tag] → next: resolve PaymentService`): a hint, wherever the
/// marker stands.
pub(super) fn marks_a_tool(folded: &str, vocab: &Vocabulary) -> Option<usize> {
    // (where the last tool's name starts, read once for every marker)
    let last = calls::tool_words(&folded.to_ascii_lowercase(), vocab).last()?.start;
    hint_marker_ends(folded).find(|(_, end)| *end <= last).map(|(start, _)| start)
}

/// Whether a field shows the hint marker anywhere (a hint's reason must
/// not start a hint line of its own inside the line it ends).
pub fn has_hint_marker(s: &str) -> bool {
    hint_markers(&fold::fold(s)) > 0
}

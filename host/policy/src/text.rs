//! One line of text that a guest (or an agent) chose, made safe to show:
//! the character classes a reader cannot see, and the two ways of writing
//! such text on one line — for an agent ([`line`]) and for a log or a
//! terminal ([`escape`]). The host's sanitiser builds on these.

/// Characters that show nothing or reorder what follows: zero-width
/// characters and joiners, bidi controls and isolates, the byte-order mark,
/// soft hyphens, variation selectors, tag characters, invisible fillers and
/// the other format (Cf) characters.
pub fn is_invisible(c: char) -> bool {
    // Everything below the soft hyphen is visible or a control character.
    c >= '\u{AD}'
        && matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{0600}'..='\u{0605}' | '\u{06DD}' | '\u{070F}'
        | '\u{0890}'..='\u{0891}' | '\u{08E2}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}'
        | '\u{2800}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}' | '\u{FFF0}'..='\u{FFFB}'
        | '\u{110BD}' | '\u{110CD}' | '\u{13430}'..='\u{1343F}' | '\u{1BCA0}'..='\u{1BCA3}'
        | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E0FFF}')
}

/// Characters a reader's terminal or client may show as a line break.
pub fn is_line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// Whitespace other than a line break (tabs, no-break and typographic spaces).
pub fn is_space(c: char) -> bool {
    c.is_whitespace() && !is_line_break(c)
}

/// A byte that reads as itself in any text for an agent: printable ASCII
/// or a space (every cleaning leaves a run of these as it is).
pub fn is_plain(b: u8) -> bool {
    b == b' ' || b.is_ascii_graphic()
}

/// One line for an agent: line breaks, spaces and control characters
/// become spaces, invisible characters go, at most `max` characters (cut
/// with `…`).
pub fn line(s: &str, max: usize) -> String {
    // Printable ASCII within bounds is its own line (most lines are).
    if s.len() <= max && s.bytes().all(is_plain) {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len().min(max * 4));
    let mut count = 0;
    let mut cut = false;
    for c in s.chars() {
        let c = if is_line_break(c) || is_space(c) || c.is_control() { ' ' } else { c };
        if is_invisible(c) {
            continue;
        }
        if count == max {
            cut = true;
            break;
        }
        out.push(c);
        count += 1;
    }
    if cut {
        out.pop();
        out.push('…');
    }
    out
}

/// Text for the log or a terminal: printable characters as they are,
/// everything else (line breaks, tabs, escapes, bidi and zero-width
/// characters) as `\u{…}`; at most `max` characters of input.
pub fn escape(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max) + 8);
    for (i, c) in s.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        if c.is_control() || is_invisible(c) || is_line_break(c) || (is_space(c) && c != ' ') {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

//! Tables that call a tool: a row with a cell naming one and a value under
//! a header that is a parameter's name (Markdown, grid, comma-separated,
//! aligned by spaces, an HTML row), also flattened onto one line.

use super::*;

/// A table without pipes flattened onto one line (a single-line field's
/// line breaks gone): a key naming a tool (`tool`), parameters' names, then
/// a tool's name and its values (`tool kind role find class service`,
/// `tool,entityNames delete_entities,Alice`, `;` too). From the key on.
pub(super) fn header_then_tool(lower: &str, vocab: &Vocabulary) -> Option<Found> {
    let mut words = lower
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';'))
        .filter(|w| !w.is_empty())
        .map(|w| (w.as_ptr() as usize - lower.as_ptr() as usize, w.trim_matches(['"', '\'', '`', '*'])));
    let (start, _) = words.find(|(_, w)| TOOL_KEYS.contains(w))?;
    let mut params = 0;
    for (_, w) in words {
        if vocab.is_key(w) {
            params += usize::from(vocab.is_param(w));
        } else {
            return (params > 0 && vocab.find(w).is_some())
                .then_some(Found { call: None, span: Some(start..lower.len()) });
        }
    }
    None
}

/// An HTML table's cells on one line (`<tr><td>find</td><td>kind</td>…`):
/// one naming a tool and one naming a parameter make it a call, from its
/// first cell on.
pub(super) fn html_cells(lower: &str, vocab: &Vocabulary) -> Option<Found> {
    let mut cells = Vec::new();
    let mut first = None;
    for (at, _) in lower.match_indices('<').filter(|(at, _)| lower[at + 1..].starts_with(['t'])) {
        let tag = &lower[at + 1..];
        if !(tag.starts_with("td") || tag.starts_with("th")) || !tag[2..].starts_with(['>', ' ']) {
            continue;
        }
        let Some(open) = tag.find('>') else { continue };
        let body = &tag[open + 1..];
        cells.push(body[..body.find('<').unwrap_or(body.len())].trim());
        first.get_or_insert(at);
    }
    let named = cells.iter().any(|c| tool_named(c, vocab).is_some());
    let keyed = cells.iter().any(|c| vocab.is_argument_key(c));
    (named && keyed).then(|| Found { call: None, span: Some(first.unwrap_or(0)..lower.len()) })
}

/// A Markdown table written on one line (its line breaks gone, as in a
/// single-line field): a delimiter cell (`---`), a cell naming a tool and
/// one naming a parameter make it a call, from its first `|` on.
pub(super) fn flattened_table(folded: &str, vocab: &Vocabulary) -> Option<Found> {
    let cells: Vec<&str> = cell_iter(folded, Cells::Pipes).collect();
    // (`---` of Markdown, `+----+` and `+====+` of grid tables)
    let delimiter = cells.iter().any(|c| {
        (c.contains("---") || c.contains("===")) && c.chars().all(|c| matches!(c, '-' | ':' | '+' | '=' | ' '))
    });
    let named = cells.iter().any(|c| tool_named(c, vocab).is_some());
    let keyed = cells.iter().any(|c| vocab.is_argument_key(c));
    let start = folded.find('|')?;
    (delimiter && named && keyed).then_some(Found { call: None, span: Some(start..folded.len()) })
}

/// The rows of Markdown tables that call a tool: a cell naming one, and a
/// value in a column whose header is a parameter's name or an argument
/// key (`| tool | query |`, `|---|---|`, `| search | x |`), unless every
/// cell of the row stands in the result or the agent's arguments.
pub fn table_calls(lines: &[std::borrow::Cow<'_, str>], vocab: &Vocabulary, quoted: Quoted<'_>) -> Vec<usize> {
    // (`|---|---|` of Markdown; `+----+` and `+====+` of grid tables)
    let delimiter = |l: &str| {
        let t = l.trim();
        t.contains(['|', '+'])
            && t.contains(['-', '='])
            && t.chars().all(|c| matches!(c, '|' | '+' | '-' | '=' | ':' | ' ' | '\t'))
    };
    let mut rows = Vec::new();
    for d in (1..lines.len()).filter(|&d| delimiter(&lines[d]) && lines[d - 1].contains('|')) {
        let header = cells(&lines[d - 1], Cells::Pipes);
        let body = lines.iter().enumerate().skip(d + 1).take_while(|(_, l)| l.contains('|') || delimiter(l));
        let body = body.filter(|(_, l)| !delimiter(l)).map(|(r, l)| (r, cells(l, Cells::Pipes)));
        rows.extend(calling_rows(&header, body, vocab, quoted));
    }
    // Tables without pipes: comma-separated, columns aligned by spaces, or
    // one space apart (a tab reads as one once the text is clean), a
    // header naming a parameter and rows of as many cells.
    for kind in [Cells::Commas, Cells::Semicolons, Cells::Spaces, Cells::Words] {
        let mut h = 0;
        while h < lines.len() {
            let separated = match kind {
                Cells::Commas => lines[h].contains(','),
                Cells::Semicolons => lines[h].contains(';'),
                Cells::Spaces => lines[h].trim().contains("  "),
                _ => lines[h].contains(' '),
            };
            // (one space apart, as a tab reads once the text is clean, a
            // header is nothing but keys: `tool entityNames`)
            let keyed = separated
                && !lines[h].contains('|')
                && (!matches!(kind, Cells::Words) || cell_iter(&lines[h], kind).all(|c| vocab.is_key(c)))
                && cell_iter(&lines[h], kind).any(|c| vocab.is_param(c));
            let header = if keyed { cells(&lines[h], kind) } else { Vec::new() };
            if header.len() < 2 {
                h += 1;
                continue;
            }
            let same = lines.iter().enumerate().skip(h + 1).map(|(r, l)| (r, cells(l, kind)));
            let body: Vec<(usize, Vec<&str>)> = same.take_while(|(_, c)| c.len() == header.len()).collect();
            h += body.len() + 1;
            rows.extend(calling_rows(&header, body.into_iter(), vocab, quoted));
        }
    }
    rows.sort_unstable();
    rows.dedup();
    rows
}

/// Whether a line is only a label of arguments to come (`Arguments:`).
pub fn is_label(folded: &str) -> bool {
    let t = folded.trim().trim_end_matches(':').trim();
    // (`with:` of a CI step: `uses: srv/delete_entities`, `with:`, then them)
    ARG_KEYS.iter().any(|k| k.eq_ignore_ascii_case(t)) || t.eq_ignore_ascii_case("with")
}

/// How a table's cells are separated.
#[derive(Debug, Clone, Copy)]
pub(super) enum Cells {
    Pipes,
    Commas,
    Semicolons,
    /// Two spaces or more.
    Spaces,
    /// One space or more.
    Words,
}

/// A table line's cells, trimmed of spaces and inline markup.
pub(super) fn cells(line: &str, kind: Cells) -> Vec<&str> {
    cell_iter(line, kind).collect()
}

/// [`cells`], one at a time.
pub(super) fn cell_iter(line: &str, kind: Cells) -> impl Iterator<Item = &str> {
    let t = line.trim();
    let raw: Box<dyn Iterator<Item = &str>> = match kind {
        Cells::Pipes => {
            let t = t.strip_prefix('|').unwrap_or(t);
            Box::new(t.strip_suffix('|').unwrap_or(t).split('|'))
        }
        Cells::Commas => Box::new(t.split(',')),
        Cells::Semicolons => Box::new(t.split(';')),
        Cells::Spaces => Box::new(t.split("  ").filter(|c| !c.trim().is_empty())),
        Cells::Words => Box::new(t.split_whitespace()),
    };
    raw.map(|c| c.trim().trim_matches(|c: char| matches!(c, '`' | '*' | '_' | '"' | '\'')).trim())
}

/// The rows (of `body`, under `header`) with a cell naming a tool and a
/// value in a column whose header is a parameter's name or an argument
/// key, unless every cell of the row stands in the result or the agent's
/// arguments (a row of the result's own values: a symbol named `find`).
pub(super) fn calling_rows<'l>(
    header: &[&str],
    body: impl Iterator<Item = (usize, Vec<&'l str>)>,
    vocab: &Vocabulary,
    quoted: Quoted<'_>,
) -> Vec<usize> {
    let argument_columns: Vec<usize> =
        header.iter().enumerate().filter(|(_, h)| vocab.is_argument_key(h)).map(|(i, _)| i).collect();
    if argument_columns.is_empty() {
        return Vec::new();
    }
    body.filter(|(_, cells)| {
        let named: Vec<usize> = (0..cells.len()).filter(|&i| tool_named(cells[i], vocab).is_some()).collect();
        let valued =
            argument_columns.iter().any(|&a| cells.get(a).is_some_and(|v| !v.is_empty()) && !named.contains(&a));
        let all_quoted = cells.iter().filter(|c| !c.is_empty()).all(|c| quoted(c));
        !named.is_empty() && valued && !all_quoted
    })
    .map(|(r, _)| r)
    .collect()
}

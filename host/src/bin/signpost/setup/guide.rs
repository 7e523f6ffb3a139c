//! What `signpost setup --guide` tells an agent about when to reach for
//! Signpost instead of reading files: the questions it answers better than
//! text search, each with the call that answers it, and the tools it serves
//! as `tools/list` describes them ([`Tool::ALL`], the list the server
//! itself serves). Written as a Claude Code skill or as a marked section of
//! the project's `AGENTS.md`; `--remove` takes out what it wrote and nothing
//! else.

use signpost::tools::Tool;

/// The first line of the section in `AGENTS.md`.
const BEGIN: &str =
    "<!-- signpost:begin (written by `signpost setup --guide`; `signpost setup --remove` takes it out) -->";
/// Its last line.
const END: &str = "<!-- signpost:end -->";
/// The line that marks a skill file as written by `setup`.
const SKILL_MARK: &str = "<!-- written by `signpost setup --guide`; `signpost setup --remove` deletes this file -->";

/// The questions, each with the call that answers it.
const QUESTIONS: [(&str, &str); 9] = [
    ("Where is `X` defined, and what is it?", r#"`resolve` {"identifier": "X"}, then `describe` {"id": ID}"#),
    ("Who calls `X`?", r#"`neighbors` {"ids": [ID], "direction": "in", "edge_types": ["CALLS"]}"#),
    ("What does `X` call?", r#"`neighbors` {"ids": [ID], "direction": "out", "edge_types": ["CALLS"]}"#),
    (
        "What implements or extends `X`?",
        r#"`neighbors` {"ids": [ID], "direction": "in", "edge_types": ["IMPLEMENTS", "EXTENDS"]}"#,
    ),
    ("What overrides this method?", r#"`neighbors` {"ids": [ID], "direction": "in", "edge_types": ["OVERRIDES"]}"#),
    ("Where is `X` used at all?", r#"`neighbors` {"ids": [ID], "direction": "in", "edge_types": ["REFERENCES"]}"#),
    ("What does this type declare?", r#"`neighbors` {"ids": [ID], "direction": "out", "edge_types": ["DECLARES"]}"#),
    ("Which classes are controllers?", r#"`find` {"kind": "class", "role": "controller"}"#),
    ("Where is the code about a topic (words, not a name)?", r#"`search` {"query": "refund payment"}"#),
];

/// The guidance itself, in Markdown, under a heading of `level`.
fn body(level: &str, server: &str) -> String {
    let mut out = format!(
        "{level} Code questions: ask the `{server}` MCP server first\n\n\
         This repository is served by Signpost (the `{server}` MCP server): a graph of its symbols and of \
         the edges between them (calls, references, declarations, inheritance, overrides), kept up to date \
         as files change. When the question is about the code's structure, one call answers what would \
         take several searches and reads of files:\n\n\
         | question | call |\n|---|---|\n"
    );
    for (question, call) in QUESTIONS {
        out.push_str(&format!("| {question} | {call} |\n"));
    }
    out.push_str(
        "\n`resolve` and `search` give the 40-hex ids (`ID`) the other tools take. Every answer carries \
         hints: its `→ next:` lines are complete calls to send as they are. An edge marked inferred, or \
         an answer that says it is partial, means what it says: check those in the source. Text search \
         is still the tool for strings, comments, configuration and files the graph does not index.\n\n\
         The tools, as the server describes them:\n\n",
    );
    for tool in Tool::ALL {
        out.push_str(&format!("- `{}`: {}\n", tool.name(), tool.description()));
    }
    out
}

/// The Claude Code skill, whole.
pub fn skill(server: &str) -> String {
    format!(
        "---\nname: {server}\ndescription: Answers questions about this repository's code structure (where a \
         symbol is defined, who calls it, what it calls, what implements, extends or overrides it, where it \
         is used) from the {server} MCP server's code graph. Use it before grep or reading files when the \
         question is about symbols and their relations.\n---\n{SKILL_MARK}\n\n{}",
        body("#", server)
    )
}

/// Whether a skill file is one `setup` wrote.
pub fn is_our_skill(text: &str) -> bool {
    text.lines().any(|l| l == SKILL_MARK)
}

/// `AGENTS.md` (`text`, empty when there is none) with the section set:
/// replaced where it is, else added at the end.
pub fn agents_set(text: &str, server: &str) -> String {
    let section = format!("{BEGIN}\n{}{END}\n", body("##", server));
    match section_span(text) {
        Some((start, end)) => format!("{}{section}{}", &text[..start], &text[end..]),
        None if text.trim().is_empty() => section,
        None => {
            let sep = if text.ends_with("\n\n") {
                ""
            } else if text.ends_with('\n') {
                "\n"
            } else {
                "\n\n"
            };
            format!("{text}{sep}{section}")
        }
    }
}

/// `AGENTS.md` without the section (and the blank line set before it);
/// `None` when it has none.
pub fn agents_remove(text: &str) -> Option<String> {
    let (start, end) = section_span(text)?;
    let before = &text[..start];
    let before = if start > 0 && before.ends_with("\n\n") { &before[..before.len() - 1] } else { before };
    Some(format!("{before}{}", &text[end..]))
}

/// The byte span of the section, its lines whole.
fn section_span(text: &str) -> Option<(usize, usize)> {
    let start = text.match_indices(BEGIN).map(|(i, _)| i).find(|&i| i == 0 || text[..i].ends_with('\n'))?;
    let end = start + text[start..].find(END)? + END.len();
    let end = if text[end..].starts_with('\n') { end + 1 } else { end };
    Some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_is_added_replaced_and_removed_leaving_the_rest() {
        let text = "# Agents\n\nRun `make test`.\n";
        let once = agents_set(text, "signpost");
        assert!(once.starts_with("# Agents\n\nRun `make test`.\n\n<!-- signpost:begin"), "{once}");
        assert_eq!(agents_set(&once, "signpost"), once, "idempotent");
        let edited = once.replace("Run `make test`.", "Run `make check`.");
        assert_eq!(agents_set(&edited, "signpost"), edited, "the section is found where it is");
        assert_eq!(agents_remove(&once).as_deref(), Some(text));
        assert_eq!(agents_remove(text), None);
        assert_eq!(agents_remove(&agents_set("", "signpost")).as_deref(), Some(""));
    }

    #[test]
    fn the_guidance_names_every_tool_served() {
        let skill = skill("signpost");
        assert!(is_our_skill(&skill));
        for tool in Tool::ALL {
            assert!(skill.contains(&format!("- `{}`: {}", tool.name(), tool.description())), "{}", tool.name());
        }
        for (_, call) in QUESTIONS {
            let name = call.trim_start_matches('`').split('`').next().unwrap();
            assert!(Tool::from_name(name).is_some(), "a question answered by `{name}`, which is not served");
        }
    }
}

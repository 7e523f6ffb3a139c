//! The terminal face: the five tools as commands (`signpost describe ID`),
//! for people and for agents that prefer a shell.
//!
//! A command runs the same pipeline as an MCP call (same graph, same
//! policy, same validation and sanitising) and prints the same answer:
//! the policy's text, with its hint lines replaced by the response's
//! actionable hints, each as `→ next: <command>` ([`Shell::command`]) on a
//! line that holds nothing else, so it can be pasted into a shell as it
//! is; or, with `--format json`, the structured result with its hints, each
//! actionable one with its `command`. Nothing the policy or the graph wrote
//! reaches the terminal unescaped, or into a command unquoted. [`Query`] is the command line, [`Shell`] the way
//! back from a call to a command line; the two agree (a unit test parses
//! every rendering back).
//!
//! On the command line a name is accepted where an id belongs when it
//! names exactly one symbol ([`resolve_names`]); the MCP tools keep their
//! contract (a name there is a teaching error).

mod command;
mod names;
mod print;
mod shell;
#[cfg(test)]
mod tests;

pub use command::{Color, Format, Page, Query, QueryOptions, has_credentials};
pub use names::{Ambiguous, Named, resolve_names};
pub use print::{ambiguous_json, ambiguous_text, json, note, text};
pub use shell::{Shell, json_text};

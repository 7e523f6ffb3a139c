//! The catalogue a 0.2.0 or later policy is told (`catalogue`), and the rules it
//! declares for it, read within bounds: which arguments name things (a
//! hint may only carry values the agent was shown there), which tools
//! change state (only their calls can be held).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::bindings::types::{Tool, ToolRules};
use crate::text;

/// Most reference paths kept per tool.
pub const MAX_REFERENCES: usize = 32;
/// Most steps in a reference path.
pub const MAX_STEPS: usize = 8;
/// Longest reference path, in bytes.
pub const MAX_PATH_BYTES: usize = 256;
/// Longest tool description a policy is told, in bytes.
pub const MAX_DESCRIPTION_BYTES: usize = 4096;
/// Most sets of rules read from a policy's `catalogue` answer: one for each
/// tool a proxy serves (at most 1,024) and some.
pub const MAX_RULE_SETS: usize = 1024 + 64;

/// The tools a policy is told of, numbered: an instance is told a list
/// once, and again only when the list changes (a new `ToolSet`).
#[derive(Debug)]
pub struct ToolSet {
    generation: u64,
    tools: Vec<Tool>,
}

impl ToolSet {
    /// A list never told before (descriptions cut to
    /// [`MAX_DESCRIPTION_BYTES`]).
    pub fn new(mut tools: Vec<Tool>) -> Arc<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        for tool in &mut tools {
            tool.description.truncate(tool.description.floor_char_boundary(MAX_DESCRIPTION_BYTES));
        }
        Arc::new(ToolSet { generation: NEXT.fetch_add(1, Ordering::Relaxed), tools })
    }

    /// The tools, as the policy is told them.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }
}

/// One step of a reference path: an argument or member name, or `*`
/// (any array element or object member).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A member named so.
    Key(String),
    /// Any element or member.
    Any,
}

/// A reference path, read from `relations/*/from`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path(pub Vec<Step>);

impl Path {
    /// Reads a path: `/`-separated, non-empty steps, within the bounds.
    pub fn parse(text: &str) -> Option<Path> {
        if text.is_empty() || text.len() > MAX_PATH_BYTES {
            return None;
        }
        let steps: Vec<Step> = text
            .split('/')
            .map(|s| match s {
                "" => None,
                "*" => Some(Step::Any),
                key => Some(Step::Key(key.to_owned())),
            })
            .collect::<Option<_>>()?;
        (steps.len() <= MAX_STEPS && matches!(steps.first(), Some(Step::Key(_)))).then_some(Path(steps))
    }
}

impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("/")?;
            }
            match step {
                Step::Key(k) => f.write_str(k)?,
                Step::Any => f.write_str("*")?,
            }
        }
        Ok(())
    }
}

/// What a policy declared about one tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolRule {
    /// Arguments whose values name things.
    pub references: Vec<Path>,
    /// Whether a call changes state, as the policy says (over the
    /// annotations).
    pub changes_state: Option<bool>,
}

/// The rules a policy declared for one catalogue (none for a 0.1.0 policy,
/// or one whose `catalogue` faulted).
#[derive(Debug, Clone, Default)]
pub struct Rules {
    tools: HashMap<String, ToolRule>,
    skipped: Vec<String>,
}

impl Rules {
    /// The policy's answer, kept where it holds: rules for tools of `set`,
    /// at most [`MAX_REFERENCES`] well-formed paths each. What was left out
    /// is in [`Rules::skipped`].
    pub fn read(set: &ToolSet, answer: Vec<ToolRules>) -> Rules {
        let mut rules = Rules::default();
        // A set of rules for each tool a catalogue can hold, and some: the
        // rest is not read (rules for tools the catalogue lacks are
        // ignored, but each costs a look).
        if answer.len() > MAX_RULE_SETS {
            rules.skip(format!("{} sets of rules: the first {MAX_RULE_SETS} read", answer.len()));
        }
        for declared in answer.into_iter().take(MAX_RULE_SETS) {
            let name = || text::escape(&declared.tool, 80);
            if set.tool(&declared.tool).is_none() {
                rules.skip(format!("rules for `{}`, which the catalogue does not hold", name()));
                continue;
            }
            if rules.tools.contains_key(&declared.tool) {
                rules.skip(format!("a second set of rules for `{}` (the first stands)", name()));
                continue;
            }
            let mut rule = ToolRule { references: Vec::new(), changes_state: declared.changes_state };
            // (paths said twice included, a bounded number read)
            for path in declared.references.iter().take(4 * MAX_REFERENCES) {
                match Path::parse(path) {
                    // (a path said twice is one reference)
                    Some(path) if rule.references.contains(&path) => {}
                    Some(_) if rule.references.len() == MAX_REFERENCES => {
                        rules.skip(format!("`{}`: more than {MAX_REFERENCES} references", name()));
                        break;
                    }
                    Some(path) => rule.references.push(path),
                    None => rules.skip(format!("`{}`: the reference `{}` is no path", name(), text::escape(path, 60))),
                }
            }
            rules.tools.insert(declared.tool, rule);
        }
        rules
    }

    fn skip(&mut self, why: String) {
        if self.skipped.len() < 16 {
            self.skipped.push(why);
        }
    }

    /// The rule for `tool`, if the policy declared one.
    pub fn tool(&self, tool: &str) -> Option<&ToolRule> {
        self.tools.get(tool)
    }

    /// The reference paths of `tool` (none when undeclared).
    pub fn references(&self, tool: &str) -> &[Path] {
        self.tool(tool).map_or(&[], |r| &r.references)
    }

    /// Every declared rule, by tool name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ToolRule)> {
        self.tools.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// What of the policy's answer was left out, and why (escaped lines).
    pub fn skipped(&self) -> &[String] {
        &self.skipped
    }

    /// Whether a call to `tool` changes state: as the policy declared, else
    /// as the catalogue's annotations say (a tool changes state unless it
    /// is marked read-only); a tool outside the catalogue does not.
    pub fn changes_state(&self, set: &ToolSet, tool: &str) -> bool {
        if let Some(declared) = self.tool(tool).and_then(|r| r.changes_state) {
            return declared;
        }
        set.tool(tool).is_some_and(|t| t.read_only != Some(true))
    }

    /// Whether the host may call `tool` on the policy's behalf (a lookup):
    /// only when its server marks it read-only and the policy does not say
    /// it changes state. A policy's word narrows what it may reach and
    /// never widens it: declaring that a tool changes nothing (which spares
    /// it holds) does not let a policy call it.
    pub fn may_look_up(&self, set: &ToolSet, tool: &str) -> bool {
        set.tool(tool).is_some_and(|t| t.read_only == Some(true))
            && self.tool(tool).and_then(|r| r.changes_state) != Some(true)
    }
}

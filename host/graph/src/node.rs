//! A node: the record the JSON format stores and tools return ([`Node`]),
//! its fixed-size form in the graph ([`Rec`], spans into the string arena),
//! and a borrowed view of one ([`NodeRef`]).

use serde::{Deserialize, Serialize};

use crate::{Graph, NodeIx, RawId, format_id};

/// A symbol, as the JSON format stores it and as tools return it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema, PartialEq, Default)]
pub struct Node {
    /// 40 lowercase hex characters.
    pub id: String,
    /// `class`, `interface`, `struct`, `trait`, `function`, `method`, `field`, `module`, `route`, …
    pub kind: String,
    /// Short name.
    pub name: String,
    /// Fully qualified name.
    #[serde(default)]
    pub fqn: String,
    /// Source file, relative to the repository root.
    #[serde(default)]
    pub file: String,
    /// 1-based line of the declaration (0 when unknown).
    #[serde(default)]
    pub line: u32,
    /// Roles such as `controller`, `service`, `test`, `external`.
    #[serde(default)]
    pub roles: Vec<String>,
    /// Documentation text.
    #[serde(default)]
    pub doc: String,
    /// Declaration signature, when the source gives one (SCIP indexes do).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub signature: String,
}

/// A byte range of the string arena.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: u32,
    pub len: u32,
}

/// The string arena nodes' spans point into: a part shared between a graph
/// and the graphs patched from it (no copy per patch), and the strings
/// patches appended after it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Text {
    shared: std::sync::Arc<String>,
    more: String,
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text { shared: std::sync::Arc::new(s), more: String::new() }
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.len() == other.len() && self.to_one() == other.to_one()
    }
}

impl Text {
    /// The string at `s`; an empty one when `s` does not fit (checked
    /// when a snapshot is read, see [`Text::fits`]).
    pub fn get(&self, s: Span) -> &str {
        let (start, n) = (s.start as usize, self.shared.len());
        let (arena, at) =
            if start < n || s.len == 0 { (self.shared.as_str(), start) } else { (&*self.more, start - n) };
        arena.get(at..at + s.len as usize).unwrap_or("")
    }

    /// Whether `s` is a whole string of the arena (in range, on character
    /// boundaries, within one part).
    pub fn fits(&self, s: Span) -> bool {
        let (start, end, n) = (s.start as usize, s.start as usize + s.len as usize, self.shared.len());
        if s.len == 0 {
            return true;
        }
        if start < n {
            end <= n && self.shared.is_char_boundary(start) && self.shared.is_char_boundary(end)
        } else {
            end - n <= self.more.len() && self.more.is_char_boundary(start - n) && self.more.is_char_boundary(end - n)
        }
    }

    /// Bytes in both parts.
    pub fn len(&self) -> usize {
        self.shared.len() + self.more.len()
    }

    /// Bytes held (the shared part counted whole, as each graph keeps it alive).
    pub fn capacity(&self) -> usize {
        self.shared.capacity() + self.more.capacity()
    }

    /// Appends `s`: its span.
    pub fn push(&mut self, s: &str) -> Span {
        if s.is_empty() {
            return Span::default();
        }
        let start = self.len() as u32;
        self.more.push_str(s);
        Span { start, len: s.len() as u32 }
    }

    /// Both parts as one string (a snapshot stores it so).
    pub fn to_one(&self) -> std::borrow::Cow<'_, str> {
        if self.more.is_empty() {
            std::borrow::Cow::Borrowed(self.shared.as_str())
        } else {
            std::borrow::Cow::Owned(format!("{}{}", self.shared, self.more))
        }
    }
}

/// One node's fixed-size record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Rec {
    pub name: Span,
    pub fqn: Span,
    pub doc: Span,
    pub signature: Span,
    pub file: u32,
    pub line: u32,
    pub roles_start: u32,
    pub kind: u16,
    pub roles_len: u16,
}

impl Rec {
    pub const WORDS: usize = 13;

    pub fn to_words(self) -> [u32; Rec::WORDS] {
        [
            self.name.start,
            self.name.len,
            self.fqn.start,
            self.fqn.len,
            self.doc.start,
            self.doc.len,
            self.signature.start,
            self.signature.len,
            self.file,
            self.line,
            self.roles_start,
            self.kind as u32,
            self.roles_len as u32,
        ]
    }

    pub fn from_words(w: &[u32]) -> Rec {
        Rec {
            name: Span { start: w[0], len: w[1] },
            fqn: Span { start: w[2], len: w[3] },
            doc: Span { start: w[4], len: w[5] },
            signature: Span { start: w[6], len: w[7] },
            file: w[8],
            line: w[9],
            roles_start: w[10],
            kind: w[11] as u16,
            roles_len: w[12] as u16,
        }
    }
}

/// A node of a [`Graph`]: its fields, borrowed.
#[derive(Clone, Copy)]
pub struct NodeRef<'g> {
    pub(crate) graph: &'g Graph,
    pub(crate) ix: NodeIx,
    pub(crate) rec: &'g Rec,
}

impl<'g> NodeRef<'g> {
    fn span(&self, s: Span) -> &'g str {
        self.graph.text.get(s)
    }
    /// Its index.
    pub fn ix(&self) -> NodeIx {
        self.ix
    }
    /// Its id in binary form.
    pub fn raw_id(&self) -> &'g RawId {
        &self.graph.ids[self.ix as usize]
    }
    /// Its id: 40 lowercase hex characters.
    pub fn id(&self) -> String {
        format_id(self.raw_id())
    }
    /// Kind.
    pub fn kind(&self) -> &'g str {
        &self.graph.kinds[self.rec.kind as usize]
    }
    /// Short name.
    pub fn name(&self) -> &'g str {
        self.span(self.rec.name)
    }
    /// Qualified name (may be empty).
    pub fn fqn(&self) -> &'g str {
        self.span(self.rec.fqn)
    }
    /// Documentation (may be empty).
    pub fn doc(&self) -> &'g str {
        self.span(self.rec.doc)
    }
    /// Signature (may be empty).
    pub fn signature(&self) -> &'g str {
        self.span(self.rec.signature)
    }
    /// Source file (may be empty).
    pub fn file(&self) -> &'g str {
        &self.graph.files[self.rec.file as usize]
    }
    /// 1-based line, 0 when unknown.
    pub fn line(&self) -> u32 {
        self.rec.line
    }
    /// Roles.
    pub fn roles(&self) -> impl Iterator<Item = &'g str> + 'g {
        let (g, start, len) = (self.graph, self.rec.roles_start as usize, self.rec.roles_len as usize);
        g.role_lists[start..start + len].iter().map(move |&r| g.roles[r as usize].as_str())
    }
    /// Whether it has role `role` (case-insensitive).
    pub fn has_role(&self, role: &str) -> bool {
        self.roles().any(|r| r.eq_ignore_ascii_case(role))
    }
    /// Adds this node to `b` as it is, or joins it with the node of the
    /// same id there ([`crate::GraphBuilder::merge_node`]).
    pub(crate) fn merge_into(&self, b: &mut crate::GraphBuilder) -> Result<NodeIx, crate::GraphError> {
        let roles: Vec<&str> = self.roles().collect();
        b.merge_node(crate::NodeSpec {
            id: *self.raw_id(),
            kind: self.kind(),
            name: self.name(),
            fqn: self.fqn(),
            file: self.file(),
            line: self.line(),
            roles: &roles,
            doc: self.doc(),
            signature: self.signature(),
        })
    }

    /// An owned copy of the whole record.
    pub fn to_node(&self) -> Node {
        Node {
            id: self.id(),
            kind: self.kind().to_owned(),
            name: self.name().to_owned(),
            fqn: self.fqn().to_owned(),
            file: self.file().to_owned(),
            line: self.line(),
            roles: self.roles().map(str::to_owned).collect(),
            doc: self.doc().to_owned(),
            signature: self.signature().to_owned(),
        }
    }
}

impl std::fmt::Debug for NodeRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeRef").field("id", &self.id()).field("kind", &self.kind()).field("fqn", &self.fqn()).finish()
    }
}

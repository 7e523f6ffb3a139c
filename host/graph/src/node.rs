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

/// The string arena nodes' spans point into: arenas shared with other
/// graphs (the graph this one was patched from, which shares its own; the
/// parts a merged graph was made from), one after the other, then the
/// strings this graph appended. Cloning it copies no shared string.
#[derive(Debug, Clone, Default)]
pub(crate) struct Text {
    /// The shared arenas, each with the offset it starts at.
    shared: Vec<(u32, std::sync::Arc<String>)>,
    /// Bytes in the shared arenas.
    shared_len: usize,
    more: String,
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text { more: s, ..Text::default() }.frozen()
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.len() == other.len() && self.to_one() == other.to_one()
    }
}

impl Text {
    /// Appends `arena` as a shared one (its strings start at the offset
    /// this text had).
    fn share(&mut self, arena: std::sync::Arc<String>) {
        if arena.is_empty() {
            return;
        }
        if !self.more.is_empty() {
            let more = std::mem::take(&mut self.more);
            self.share(std::sync::Arc::new(more));
        }
        let len = arena.len();
        self.shared.push((self.shared_len as u32, arena));
        self.shared_len += len;
    }

    /// Appends every string of `other`, sharing its arenas rather than
    /// copying them (but for the strings `other` appended itself): where
    /// they start here, to add to `other`'s spans. `None` when the text
    /// would pass 4 GiB.
    pub fn adopt(&mut self, other: &Text) -> Option<u32> {
        let at = self.len();
        if at + other.len() > u32::MAX as usize {
            return None;
        }
        for (_, arena) in &other.shared {
            self.share(arena.clone());
        }
        if !other.more.is_empty() {
            self.share(std::sync::Arc::new(other.more.clone()));
        }
        Some(at as u32)
    }

    /// This text with the strings it appended made a shared arena too
    /// (moved, not copied): a graph built whole shares all of its text
    /// with the graphs patched or merged from it.
    pub fn frozen(mut self) -> Text {
        let more = crate::tight::tight_text(std::mem::take(&mut self.more));
        self.share(std::sync::Arc::new(more));
        self
    }

    /// Where the string at `start` is: the arena and the offset in it.
    fn locate(&self, start: usize) -> (&str, usize) {
        if start >= self.shared_len {
            return (&self.more, start - self.shared_len);
        }
        if let [(_, one)] = &self.shared[..] {
            return (one.as_str(), start);
        }
        let k = self.shared.partition_point(|(from, _)| *from as usize <= start) - 1;
        let (from, arena) = &self.shared[k];
        (arena.as_str(), start - *from as usize)
    }

    /// The string at `s`; an empty one when `s` does not fit (checked
    /// when a snapshot is read, see [`Text::fits`]).
    pub fn get(&self, s: Span) -> &str {
        if s.len == 0 {
            return "";
        }
        let (arena, at) = self.locate(s.start as usize);
        arena.get(at..at + s.len as usize).unwrap_or("")
    }

    /// Whether `s` is a whole string of the arena (in range, on character
    /// boundaries, within one arena).
    pub fn fits(&self, s: Span) -> bool {
        if s.len == 0 {
            return true;
        }
        if s.start as usize + s.len as usize > self.len() {
            return false;
        }
        let (arena, at) = self.locate(s.start as usize);
        let end = at + s.len as usize;
        end <= arena.len() && arena.is_char_boundary(at) && arena.is_char_boundary(end)
    }

    /// The shared arenas (a test sees which are shared).
    #[cfg(test)]
    pub fn arenas(&self) -> Vec<*const String> {
        self.shared.iter().map(|(_, a)| std::sync::Arc::as_ptr(a)).collect()
    }

    /// Bytes in all arenas.
    pub fn len(&self) -> usize {
        self.shared_len + self.more.len()
    }

    /// Bytes held (the shared arenas counted whole, as each graph keeps
    /// them alive).
    pub fn capacity(&self) -> usize {
        self.shared.iter().map(|(_, a)| a.capacity()).sum::<usize>() + self.more.capacity()
    }

    /// [`Text::capacity`] with the shared arenas in `seen` left out, and
    /// the others added to it: texts that share arenas counted together,
    /// each arena once.
    pub fn capacity_unseen(&self, seen: &mut std::collections::HashSet<*const String>) -> usize {
        let shared = self.shared.iter().filter(|(_, a)| seen.insert(std::sync::Arc::as_ptr(a)));
        shared.map(|(_, a)| a.capacity()).sum::<usize>() + self.more.capacity()
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

    /// The arenas' strings, in order: together, [`Text::to_one`].
    pub fn pieces(&self) -> impl Iterator<Item = &str> {
        self.shared.iter().map(|(_, a)| a.as_str()).chain(std::iter::once(self.more.as_str()))
    }

    /// Every arena as one string (a snapshot stores it so).
    pub fn to_one(&self) -> std::borrow::Cow<'_, str> {
        match &self.shared[..] {
            [] => std::borrow::Cow::Borrowed(self.more.as_str()),
            [(_, one)] if self.more.is_empty() => std::borrow::Cow::Borrowed(one.as_str()),
            all => {
                let mut one = String::with_capacity(self.len());
                for (_, arena) in all {
                    one.push_str(arena);
                }
                one.push_str(&self.more);
                std::borrow::Cow::Owned(one)
            }
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
        self.merge_into_at(b, None)
    }

    /// [`NodeRef::merge_into`], this graph's text adopted by the builder at
    /// `at` ([`crate::GraphBuilder::adopt_text`]): the record points into
    /// it, no string copied.
    pub(crate) fn merge_into_at(
        &self,
        b: &mut crate::GraphBuilder,
        at: Option<u32>,
    ) -> Result<NodeIx, crate::GraphError> {
        let roles: Vec<&str> = self.roles().collect();
        let r = &self.rec;
        let spans = at.map(|at| {
            let moved = |s: Span| if s.len == 0 { Span::default() } else { Span { start: s.start + at, len: s.len } };
            [moved(r.name), moved(r.fqn), moved(r.doc), moved(r.signature)]
        });
        b.merge_node_in(
            crate::NodeSpec {
                id: *self.raw_id(),
                kind: self.kind(),
                name: self.name(),
                fqn: self.fqn(),
                file: self.file(),
                line: self.line(),
                roles: &roles,
                doc: self.doc(),
                signature: self.signature(),
            },
            spans,
        )
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Strings appended after a shared arena, and arenas one after the
    /// other: each span reads within its own, and one across two does not
    /// fit.
    #[test]
    fn a_text_reads_each_span_in_its_own_arena() {
        let mut t = Text::from("abc".to_owned());
        let tail = t.push("déf");
        let mut u = Text::default();
        let own = u.push("zz");
        let at = u.adopt(&t).unwrap_or_default();
        let after = u.push("ω");
        let moved = |s: Span| Span { start: s.start + at, len: s.len };
        assert_eq!(at, 2);
        assert_eq!((u.get(own), u.get(moved(Span { start: 0, len: 3 }))), ("zz", "abc"));
        assert_eq!((u.get(moved(tail)), u.get(after)), ("déf", "ω"));
        assert_eq!(u.len(), 2 + 3 + 4 + 2);
        assert!(u.fits(moved(tail)) && u.fits(after));
        assert!(!u.fits(Span { start: 1, len: 2 }), "across two arenas");
        assert!(!u.fits(Span { start: moved(tail).start + 2, len: 1 }), "inside a character");
        assert!(!u.fits(Span { start: 10, len: 2 }), "past the end");
        assert_eq!(u.to_one(), "zzabcdéfω");
    }
}

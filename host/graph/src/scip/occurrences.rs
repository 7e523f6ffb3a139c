//! Reading occurrences: their roles and ranges (typed, or the deprecated
//! packed form), and the definitions they make.

use scip::types::{MultiLineRange, Occurrence, SingleLineRange, occurrence};

use super::symbols::SymId;

pub(super) const DEFINITION: i32 = 1;
pub(super) const IMPORT: i32 = 2;
pub(super) const TEST: i32 = 32;

/// A source range: (line, character) start and end, 0-based, end exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Range {
    pub(super) start: (i32, i32),
    pub(super) end: (i32, i32),
}

impl Range {
    pub(super) fn contains(&self, other: &Range) -> bool {
        self.start <= other.start && other.end <= self.end
    }
}

pub(super) fn packed(v: &[i32]) -> Result<Option<Range>, String> {
    match *v {
        [] => Ok(None),
        [l, s, e] => Ok(Some(Range { start: (l, s), end: (l, e) })),
        [l, s, el, e] => Ok(Some(Range { start: (l, s), end: (el, e) })),
        _ => Err(format!("a range has {} elements (3 or 4 expected)", v.len())),
    }
}

impl From<&SingleLineRange> for Range {
    fn from(r: &SingleLineRange) -> Range {
        Range { start: (r.line, r.start_character), end: (r.line, r.end_character) }
    }
}

impl From<&MultiLineRange> for Range {
    fn from(r: &MultiLineRange) -> Range {
        Range { start: (r.start_line, r.start_character), end: (r.end_line, r.end_character) }
    }
}

/// The occurrence's range: the typed fields when present, else the
/// deprecated packed `range`.
pub(super) fn range_of(o: &Occurrence) -> Result<Option<Range>, String> {
    use occurrence::Typed_range as T;
    match &o.typed_range {
        Some(T::SingleLineRange(r)) => Ok(Some(r.into())),
        Some(T::MultiLineRange(r)) => Ok(Some(r.into())),
        _ => packed(&o.range),
    }
}

/// The same for the enclosing range.
pub(super) fn enclosing_of(o: &Occurrence) -> Result<Option<Range>, String> {
    use occurrence::Typed_enclosing_range as T;
    match &o.typed_enclosing_range {
        Some(T::SingleLineEnclosingRange(r)) => Ok(Some(r.into())),
        Some(T::MultiLineEnclosingRange(r)) => Ok(Some(r.into())),
        _ => packed(&o.enclosing_range),
    }
}

/// One definition: where, and what it encloses.
pub(super) struct Def {
    /// The symbol defined.
    pub(super) sym: SymId,
    /// The document, by its position in the index.
    pub(super) doc: usize,
    pub(super) range: Range,
    pub(super) enclosing: Option<Range>,
    pub(super) test_bit: bool,
}

//! A tool's result as the policy reads it: typed, and borrowed from the JSON
//! text the host sends (`outcome.success`), with no JSON tree built.
//!
//! Only the fields the road signs need are read; every other field is
//! skipped as the parser passes it. Strings are borrowed from the text unless
//! they hold an escape. Every field is optional: a result of another shape
//! (a proxied server's tool that shares a name with one of Signpost's) reads
//! as what it has, and a result that does not parse at all as an empty one.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// A string of the result: borrowed unless it held an escape; anything
/// other than a string reads as absent.
type Text<'a> = Scalar<'a>;

/// One value where a string or a number belongs, read loosely: a value of
/// another type (an object, an array, `true`) is skipped and reads as
/// absent, so one odd field never costs the rest of the result.
#[derive(Debug, Default)]
pub enum Scalar<'a> {
    /// Absent, null, or of another type.
    #[default]
    None,
    /// A string.
    Str(Cow<'a, str>),
    /// A non-negative integer.
    Count(u64),
    /// Any other number.
    Number(f64),
}

impl<'a> Scalar<'a> {
    fn as_deref(&self) -> Option<&str> {
        match self {
            Scalar::Str(s) => Some(s),
            _ => None,
        }
    }
    fn count(&self) -> Option<u64> {
        match self {
            Scalar::Count(n) => Some(*n),
            _ => None,
        }
    }
    fn number(&self) -> Option<f64> {
        match self {
            Scalar::Count(n) => Some(*n as f64),
            Scalar::Number(n) => Some(*n),
            _ => None,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Scalar<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Loose;
        impl<'de> Visitor<'de> for Loose {
            type Value = Scalar<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Scalar::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Scalar::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Scalar::Str(Cow::Owned(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Scalar::Count(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(u64::try_from(v).map_or(Scalar::Number(v as f64), Scalar::Count))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Scalar::Number(v))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Scalar::None)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Scalar::None)
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Scalar::None)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Scalar::None)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Scalar::None)
            }
        }
        d.deserialize_any(Loose)
    }
}

/// A count: a non-negative integer, 0 for anything else.
fn count<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    Ok(Scalar::deserialize(d)?.count().unwrap_or(0))
}

/// The fields of Signpost's tool results the default policy reads (see each
/// tool's output schema).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Reply<'a> {
    /// `resolve`: `one`, `many` or `none`.
    #[serde(borrow)]
    pub status: Text<'a>,
    /// `resolve`'s candidates.
    #[serde(borrow)]
    pub candidates: Vec<Rec<'a>>,
    /// `find`, `search` and `neighbors`' page of results.
    #[serde(borrow)]
    pub results: Vec<Rec<'a>>,
    /// `describe`'s record.
    #[serde(borrow)]
    pub record: Rec<'a>,
    /// `describe`'s edge counts.
    #[serde(borrow)]
    pub edge_summary: Sides<'a>,
    /// An empty `neighbors` result: the edges the nodes do have.
    #[serde(borrow)]
    pub available: Option<Sides<'a>>,
    /// Results in all pages.
    #[serde(deserialize_with = "count")]
    pub total: u64,
    /// The page size the call ran with.
    #[serde(deserialize_with = "count")]
    pub limit: u64,
    /// Where the page starts.
    #[serde(deserialize_with = "count")]
    pub offset: u64,
    /// `neighbors`: the ids it read, canonical.
    #[serde(borrow)]
    pub ids: Option<Vec<Text<'a>>>,
    /// `neighbors`: the edge types asked for that the graph has none of.
    #[serde(borrow)]
    pub absent_edge_types: Option<Vec<Text<'a>>>,
}

impl<'a> Reply<'a> {
    /// The result in `json`, or an empty one when it is not a JSON object
    /// of this shape.
    pub fn read(json: &'a str) -> Self {
        serde_json::from_str(json).unwrap_or_default()
    }

    /// `resolve`'s status.
    pub fn status(&self) -> Option<&str> {
        self.status.as_deref()
    }

    /// `neighbors`' canonical ids.
    pub fn ids(&self) -> Vec<&str> {
        self.ids.iter().flatten().filter_map(Scalar::as_deref).collect()
    }

    /// `neighbors`' edge types the graph has none of.
    pub fn absent_edge_types(&self) -> Vec<&str> {
        self.absent_edge_types.iter().flatten().filter_map(Scalar::as_deref).collect()
    }
}

/// Edge counts by direction, then by edge key (`DECLARES.CALLS`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Sides<'a> {
    /// Outgoing edges.
    #[serde(borrow)]
    pub out: BTreeMap<Cow<'a, str>, Count>,
    /// Incoming edges.
    #[serde(borrow, rename = "in")]
    pub inn: BTreeMap<Cow<'a, str>, Count>,
}

impl Sides<'_> {
    /// One direction's counts (`out`, anything else is `in`), sorted by key.
    pub fn side(&self, dir: &str) -> Vec<(&str, u64)> {
        let side = if dir == "out" { &self.out } else { &self.inn };
        side.iter().filter_map(|(k, n)| Some((&**k, n.0?))).collect()
    }
}

/// A count in an edge summary, when it is one.
#[derive(Debug, Default)]
pub struct Count(Option<u64>);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Count(Scalar::deserialize(d)?.count()))
    }
}

/// A symbol record as tools return it, and a `neighbors` result (its edge,
/// and the record at its other end).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Rec<'a> {
    #[serde(borrow)]
    id: Text<'a>,
    #[serde(borrow)]
    kind: Text<'a>,
    #[serde(borrow)]
    name: Text<'a>,
    #[serde(borrow)]
    fqn: Text<'a>,
    #[serde(borrow)]
    file: Text<'a>,
    #[serde(borrow)]
    line: Scalar<'a>,
    #[serde(borrow)]
    score: Scalar<'a>,
    #[serde(borrow)]
    roles: Option<Vec<Text<'a>>>,
    #[serde(borrow)]
    signature: Text<'a>,
    #[serde(borrow)]
    doc: Text<'a>,
    #[serde(borrow)]
    edge: Text<'a>,
    #[serde(borrow)]
    derived: Text<'a>,
    #[serde(borrow)]
    other: Option<Box<Rec<'a>>>,
}

fn text<'s>(t: &'s Text<'_>) -> &'s str {
    t.as_deref().unwrap_or("")
}

impl Rec<'_> {
    /// The symbol's id (`""` when absent).
    pub fn id(&self) -> &str {
        text(&self.id)
    }
    /// Its kind.
    pub fn kind(&self) -> &str {
        text(&self.kind)
    }
    /// Its qualified name, else its name.
    pub fn fqn(&self) -> &str {
        match text(&self.fqn) {
            "" => text(&self.name),
            fqn => fqn,
        }
    }
    /// Its file.
    pub fn file(&self) -> &str {
        text(&self.file)
    }
    /// Its signature.
    pub fn signature(&self) -> &str {
        text(&self.signature)
    }
    /// Its doc comment.
    pub fn doc(&self) -> &str {
        text(&self.doc)
    }
    /// Its roles (string ones).
    pub fn roles(&self) -> Vec<&str> {
        self.roles.iter().flatten().filter_map(|r| r.as_deref()).collect()
    }
    /// A search result's score.
    pub fn score(&self) -> Option<f64> {
        self.score.number()
    }
    /// A `neighbors` result's edge key.
    pub fn edge(&self) -> &str {
        text(&self.edge)
    }
    /// How a `neighbors` result's edge was derived when not by a compiler:
    /// `inferred` (resolved by name) or `ambiguous` (one of several
    /// definitions the call could mean); `""` when exact.
    pub fn derived(&self) -> &str {
        text(&self.derived)
    }
    /// The record at a `neighbors` result's other end.
    pub fn other(&self) -> Option<&Self> {
        self.other.as_deref()
    }
    /// One detail line: id, kind, name and score.
    pub fn line(&self) -> String {
        let (id, kind, fqn) = (self.id(), self.kind(), self.fqn());
        let mut line = String::with_capacity(id.len() + kind.len() + fqn.len() + 10);
        for (i, part) in [id, kind, fqn].into_iter().enumerate() {
            if i > 0 {
                line.push(' ');
            }
            line.push_str(part);
        }
        if let Some(score) = self.score() {
            use std::fmt::Write;
            let _ = write!(line, " ({score:.2})");
        }
        line
    }
    /// `file:line`, or the file alone.
    pub fn location(&self) -> Option<String> {
        let file = self.file();
        if file.is_empty() {
            return None;
        }
        Some(match self.line.count() {
            Some(line) => format!("{file}:{line}"),
            None => file.to_owned(),
        })
    }
}

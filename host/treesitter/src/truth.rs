//! What a compiler (or a SCIP indexer) says some code means, and how the
//! built-in indexer's graph of the same code compares: per edge type
//! (precision and recall), and per question an agent asks ("who calls
//! this?", "who implements this?"): for each definition the truth gives
//! callers (implementors, subtypes), is our answer complete and clean, or
//! empty?
//!
//! The truth comes from `bench/truth/` (javac's attribution, go/types,
//! libclang) as JSON:
//!
//! ```json
//! {"tool": "...", "language": "java", "root": "/repo",
//!  "defs": [{"id": 0, "kind": "method", "name": "toJson", "container": "Gson",
//!            "file": "src/Gson.java", "line": 12, "alt": [["h.h", 3]], "vendored": false}],
//!  "edges": [{"type": "CALLS", "from": 1, "to": 0}]}
//! ```
//!
//! or from a SCIP indexer's graph ([`Truth::from_graph`]). Definitions are
//! matched by place (file and 1-based line of the name), so a symbol the
//! two spell differently still counts.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use signpost_graph::{Direction, EXTERNAL, Graph};

/// One definition of the truth.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Def {
    /// What it is (`method`, `class`, …).
    #[serde(default)]
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Where it is declared (qualified name of the enclosing type or package).
    #[serde(default)]
    pub container: String,
    /// Its file, relative to the root.
    pub file: String,
    /// The 1-based line of its name.
    pub line: u32,
    /// Other places it is declared (a prototype in a header).
    #[serde(default)]
    pub alt: Vec<(String, u32)>,
    /// In vendored code (`deps/`, `vendor/`, …).
    #[serde(default)]
    pub vendored: bool,
}

#[derive(serde::Deserialize)]
struct Edge {
    #[serde(rename = "type")]
    ty: String,
    from: usize,
    to: usize,
}

#[derive(serde::Deserialize)]
struct File {
    #[serde(default)]
    tool: String,
    defs: Vec<IdDef>,
    edges: Vec<Edge>,
}

#[derive(serde::Deserialize)]
struct IdDef {
    id: usize,
    #[serde(flatten)]
    def: Def,
}

/// The truth about some code.
#[derive(Debug, Default)]
pub struct Truth {
    /// Who said it.
    pub tool: String,
    /// Its definitions.
    pub defs: Vec<Def>,
    /// Its edges: (type, from, to), indexes into `defs`.
    pub edges: BTreeSet<(String, usize, usize)>,
}

/// The edge types compared.
pub const COMPARED: &[&str] = &["CALLS", "EXTENDS", "IMPLEMENTS", "OVERRIDES"];

impl Truth {
    /// Reads a truth file (`bench/truth/`'s format).
    pub fn from_json(text: &str) -> Result<Truth, serde_json::Error> {
        let file: File = serde_json::from_str(text)?;
        let mut at: HashMap<usize, usize> = HashMap::new();
        let mut defs = Vec::with_capacity(file.defs.len());
        for d in file.defs {
            at.insert(d.id, defs.len());
            defs.push(d.def);
        }
        // go/types' methods that implement an interface's are what the
        // graph calls OVERRIDES.
        let edges = file
            .edges
            .into_iter()
            .map(|mut e| {
                if e.ty == "IMPLEMENTS_METHOD" {
                    e.ty = "OVERRIDES".into();
                }
                e
            })
            .filter(|e| COMPARED.contains(&e.ty.as_str()))
            .filter_map(|e| Some((e.ty, *at.get(&e.from)?, *at.get(&e.to)?)))
            .collect();
        Ok(Truth { tool: file.tool, defs, edges })
    }

    /// The truth a SCIP indexer's graph tells about the files under `under`.
    pub fn from_graph(g: &Graph, under: &str) -> Truth {
        let mut index: HashMap<u32, usize> = HashMap::new();
        let mut defs = Vec::new();
        for n in g.iter() {
            // A local (`local 100`: a closure bound inside a function) is
            // no definition the built-in indexer makes or is asked about.
            let local = n.name().bytes().all(|b| b.is_ascii_digit());
            if n.file().is_empty() || n.has_role(EXTERNAL) || n.line() == 0 || !n.file().starts_with(under) || local {
                continue;
            }
            index.insert(n.ix(), defs.len());
            defs.push(Def {
                kind: n.kind().to_owned(),
                name: n.name().to_owned(),
                container: String::new(),
                file: n.file().to_owned(),
                line: n.line(),
                alt: Vec::new(),
                vendored: false,
            });
        }
        // scip-python resolves a test's `import click` to the installed
        // package when the project is not installed from its tree: the
        // test's calls reach an external twin (`click.testing.Result.output`)
        // of the project's definition (`src.click.testing.Result.output`).
        // The twin is that definition, where exactly one definition's
        // qualified name ends so after a source root.
        let mut by_fqn: HashMap<&str, Vec<usize>> = HashMap::new();
        for (&ix, &d) in &index {
            by_fqn.entry(g.node(ix).fqn()).or_default().push(d);
        }
        let mut twins = Vec::new();
        for n in g.iter().filter(|n| n.has_role(EXTERNAL) && !n.fqn().is_empty()) {
            let found: Vec<usize> = ["src.", "lib.", "source."]
                .iter()
                .flat_map(|root| by_fqn.get(format!("{root}{}", n.fqn()).as_str()).into_iter().flatten().copied())
                .collect();
            if let [d] = found[..] {
                twins.push((n.ix(), d));
            }
        }
        index.extend(twins);
        let mut edges = BTreeSet::new();
        for (&ix, &a) in &index {
            for t in COMPARED {
                let Ok(Some(key)) = g.parse_edge_key(t) else { continue };
                for m in g.walk(ix, Direction::Out, &key) {
                    if let Some(&b) = index.get(&m) {
                        edges.insert(((*t).to_owned(), a, b));
                    }
                }
            }
        }
        Truth { tool: "scip".into(), defs, edges }
    }

    /// The files it read.
    fn files(&self) -> BTreeSet<&str> {
        self.defs
            .iter()
            .flat_map(|d| std::iter::once(d.file.as_str()).chain(d.alt.iter().map(|(f, _)| f.as_str())))
            .collect()
    }
}

/// One edge type's figures.
#[derive(Debug, Clone, Default)]
pub struct Edges {
    /// The edge type.
    pub edge: String,
    /// Our edges between places the truth read.
    pub ours: usize,
    /// The truth's.
    pub truth: usize,
    /// Both.
    pub both: usize,
    /// Of ours, those marked ambiguous (one of several a call could mean).
    pub ambiguous: usize,
    /// Of those, the ones the truth has.
    pub ambiguous_true: usize,
    /// A few of ours the truth does not have, and of the truth's we miss.
    pub examples: Vec<String>,
}

impl Edges {
    /// Of ours, how many are true (1 when we have none).
    pub fn precision(&self) -> f64 {
        if self.ours == 0 { 1.0 } else { self.both as f64 / self.ours as f64 }
    }
    /// Of the truth's, how many we have (1 when it has none).
    pub fn recall(&self) -> f64 {
        if self.truth == 0 { 1.0 } else { self.both as f64 / self.truth as f64 }
    }
}

/// "Who calls (implements, extends, overrides) this?", asked of every
/// definition the truth gives at least one: how our answers fare.
#[derive(Debug, Clone, Default)]
pub struct Questions {
    /// The edge type (asked inward).
    pub edge: String,
    /// Definitions with at least one, per the truth.
    pub asked: usize,
    /// Our answer complete and clean: recall ≥ 80 % and precision ≥ 90 %.
    pub complete_clean: usize,
    /// Complete, and clean but for wrong edges it marks ambiguous itself:
    /// recall ≥ 80 %, precision of its unmarked edges ≥ 90 %.
    pub complete_labelled: usize,
    /// Our answer empty.
    pub empty: usize,
    /// Of the empty ones, those whose definition we do not have at its place.
    pub no_definition: usize,
    /// A few answers that were not complete and clean, as `name (file:line): missing …; wrong …`.
    pub examples: Vec<String>,
}

/// The whole comparison.
#[derive(Debug, Default)]
pub struct Comparison {
    /// Per edge type.
    pub edges: Vec<Edges>,
    /// Per question.
    pub questions: Vec<Questions>,
    /// Definitions of the truth we have at the same place, of all.
    pub placed: (usize, usize),
    /// A few of the truth's definitions we have none at the place of.
    pub unplaced: Vec<String>,
}

/// Our node → the truth's definition at its place (same file and line; on
/// a line with several, the one of the same name).
fn mapping(truth: &Truth, ours: &Graph) -> HashMap<u32, usize> {
    let mut at: HashMap<(&str, u32), Vec<usize>> = HashMap::new();
    for (i, d) in truth.defs.iter().enumerate() {
        at.entry((d.file.as_str(), d.line)).or_default().push(i);
        for (f, l) in &d.alt {
            at.entry((f.as_str(), *l)).or_default().push(i);
        }
    }
    let mut out = HashMap::new();
    for n in ours.iter() {
        if n.has_role(EXTERNAL) || n.line() == 0 {
            continue;
        }
        let Some(cands) = at.get(&(n.file(), n.line())) else { continue };
        let pick = cands.iter().find(|&&i| truth.defs[i].name == n.name()).or(cands.first());
        if let Some(&i) = pick {
            out.insert(n.ix(), i);
        }
    }
    out
}

/// A place none of the truth's definitions is at: what an edge of ours to
/// it is judged as (wrong).
const NOWHERE: usize = usize::MAX;

/// Compares `ours` with `truth`, with up to `examples` examples each.
pub fn compare(truth: &Truth, ours: &Graph, examples: usize) -> Comparison {
    let map = mapping(truth, ours);
    // Files both read: the truth's, of those the built-in indexer read (it
    // leaves `vendor/`, `third_party/`, build outputs out by design).
    let indexed: BTreeSet<&str> = ours.iter().map(|n| n.file()).filter(|f| !f.is_empty()).collect();
    let files: BTreeSet<&str> = truth.files().into_iter().filter(|f| indexed.contains(f)).collect();
    let read = |d: usize| files.contains(truth.defs[d].file.as_str());
    // A compiler sees a macro's expansion, never a call to the macro: an
    // edge to a macro is not judged.
    let judged = |b: usize| b == NOWHERE || truth.defs[b].kind != "macro";
    let truth_edges: BTreeSet<(String, usize, usize)> =
        truth.edges.iter().filter(|(_, a, b)| read(*a) && read(*b) && judged(*b)).cloned().collect();
    // javac credits a field initializer's calls to the class; the graph, to
    // the field: ours are read the truth's way.
    let by_qualified: HashMap<String, usize> = truth
        .defs
        .iter()
        .enumerate()
        .filter(|(_, d)| matches!(d.kind.as_str(), "class" | "interface" | "enum"))
        .map(|(i, d)| (if d.container.is_empty() { d.name.clone() } else { format!("{}.{}", d.container, d.name) }, i))
        .collect();
    let caller = |a: usize| -> usize {
        let d = &truth.defs[a];
        if truth.tool.starts_with("javac") && d.kind == "field" {
            by_qualified.get(&d.container).copied().unwrap_or(a)
        } else {
            a
        }
    };
    // Our edges in the truth's terms: both ends placed in files it read; an
    // end at no place of its is NOWHERE (a wrong edge, unless it is the
    // caller: then the edge cannot be judged).
    let mut ourset: BTreeSet<(String, usize, usize)> = BTreeSet::new();
    // Of ours, those marked ambiguous (one of several a call could mean).
    let mut marked: BTreeSet<(String, usize, usize)> = BTreeSet::new();
    for n in ours.iter() {
        let Some(&a) = map.get(&n.ix()) else { continue };
        for t in COMPARED {
            let Ok(Some(key)) = ours.parse_edge_key(t) else { continue };
            for m in ours.walk(n.ix(), Direction::Out, &key) {
                let target = ours.node(m);
                if target.has_role(EXTERNAL) || !files.contains(target.file()) {
                    continue;
                }
                let b = map.get(&m).copied().unwrap_or(NOWHERE);
                if !judged(b) {
                    continue;
                }
                let a = caller(a);
                if ours.step_derivation(n.ix(), Direction::Out, &key, m) == Some(signpost_graph::Derivation::Ambiguous)
                {
                    marked.insert(((*t).to_owned(), a, b));
                }
                ourset.insert(((*t).to_owned(), a, b));
            }
        }
    }
    let show = |i: usize| {
        if i == NOWHERE {
            return "(no definition there)".to_owned();
        }
        let d = &truth.defs[i];
        format!("{}.{} ({}:{})", d.container, d.name, d.file, d.line)
    };
    let in_files = (0..truth.defs.len()).filter(|&d| read(d)).count();
    let placed: BTreeSet<usize> = map.values().copied().collect();
    let unplaced =
        (0..truth.defs.len()).filter(|&d| read(d) && !placed.contains(&d)).take(examples).map(show).collect();
    let mut out = Comparison { placed: (placed.len(), in_files), unplaced, ..Default::default() };
    for t in COMPARED {
        let of = |s: &BTreeSet<(String, usize, usize)>| -> BTreeSet<(usize, usize)> {
            s.iter().filter(|e| e.0 == *t).map(|e| (e.1, e.2)).collect()
        };
        let (a, b) = (of(&ourset), of(&truth_edges));
        if a.is_empty() && b.is_empty() {
            continue;
        }
        let amb = of(&marked);
        let mut shown: Vec<String> =
            a.difference(&b).take(examples).map(|(x, y)| format!("ours only: {} -> {}", show(*x), show(*y))).collect();
        shown.extend(b.difference(&a).take(examples).map(|(x, y)| format!("missed: {} -> {}", show(*x), show(*y))));
        out.edges.push(Edges {
            edge: (*t).to_owned(),
            ours: a.len(),
            truth: b.len(),
            both: a.intersection(&b).count(),
            ambiguous: amb.len(),
            ambiguous_true: amb.intersection(&b).count(),
            examples: shown,
        });
        // Questions, asked inward of every definition the truth gives one.
        let mut want: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
        for (x, y) in &b {
            want.entry(*y).or_default().insert(*x);
        }
        let mut have: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
        for (x, y) in &a {
            have.entry(*y).or_default().insert(*x);
        }
        let defined: BTreeSet<usize> = map.values().copied().collect();
        let mut q = Questions { edge: (*t).to_owned(), ..Default::default() };
        for (callee, callers) in &want {
            q.asked += 1;
            let got = have.get(callee).cloned().unwrap_or_default();
            let hit = got.intersection(callers).count();
            let recall = hit as f64 / callers.len() as f64;
            let precision = if got.is_empty() { 0.0 } else { hit as f64 / got.len() as f64 };
            // Wrong edges the answer itself marks ambiguous, set apart.
            let sure: BTreeSet<usize> = got.iter().copied().filter(|c| !amb.contains(&(*c, *callee))).collect();
            let sure_hit = sure.intersection(callers).count();
            let labelled = sure.is_empty() && hit > 0 || !sure.is_empty() && sure_hit as f64 / sure.len() as f64 >= 0.9;
            if recall >= 0.8 && labelled {
                q.complete_labelled += 1;
            }
            if recall >= 0.8 && precision >= 0.9 {
                q.complete_clean += 1;
                continue;
            }
            if got.is_empty() {
                q.empty += 1;
                if !defined.contains(callee) {
                    q.no_definition += 1;
                }
            }
            if q.examples.len() < examples {
                let missing: Vec<String> = callers.difference(&got).take(3).map(|c| show(*c)).collect();
                let wrong: Vec<String> = got.difference(callers).take(3).map(|c| show(*c)).collect();
                q.examples.push(format!(
                    "{}: {} of {} found; missing {}; wrong {}",
                    show(*callee),
                    hit,
                    callers.len(),
                    if missing.is_empty() { "none".into() } else { missing.join(", ") },
                    if wrong.is_empty() { "none".into() } else { wrong.join(", ") }
                ));
            }
        }
        out.questions.push(q);
    }
    out
}

//! The JSON graph format (`docs/graph-format.md`): read and write.

use serde::{Deserialize, Serialize};

use super::{Derivation, Graph, GraphBuilder, GraphError, Node, NodeSpec, parse_id};

#[derive(Serialize, Deserialize)]
struct EdgeDoc {
    src: String,
    dst: String,
    #[serde(rename = "type")]
    ty: String,
    /// `inferred` when the edge was resolved by name, `ambiguous` when it is
    /// one of several a call could mean; absent when exact.
    #[serde(default, skip_serializing_if = "is_exact")]
    derived: Derivation,
}

fn is_exact(d: &Derivation) -> bool {
    *d == Derivation::Exact
}

#[derive(Deserialize)]
struct GraphDoc {
    #[serde(default)]
    name: Option<String>,
    nodes: Vec<Node>,
    #[serde(default)]
    edges: Vec<EdgeDoc>,
    /// Call sites not bound to one definition, by called name.
    #[serde(default)]
    unresolved: std::collections::BTreeMap<String, u32>,
    /// Files read only in part, by path: the line the reading stopped at.
    #[serde(default)]
    unread: std::collections::BTreeMap<String, u32>,
}

/// Parses and validates a graph document; errors name the place
/// (`nodes[3].id`, `edges[9].dst`).
pub fn parse(text: &str) -> Result<Graph, GraphError> {
    let doc: GraphDoc = serde_json::from_str(text)?;
    let invalid = |at: String, problem: String| GraphError::Invalid { at, problem };
    let mut b = GraphBuilder::new(doc.name.as_deref().unwrap_or("graph"));
    for (i, node) in doc.nodes.iter().enumerate() {
        let id = parse_id(&node.id)
            .ok_or_else(|| invalid(format!("nodes[{i}].id"), format!("`{}` is not 40 hex characters", node.id)))?;
        let roles: Vec<&str> = node.roles.iter().map(String::as_str).collect();
        b.add_node(NodeSpec {
            id,
            kind: &node.kind,
            name: &node.name,
            fqn: &node.fqn,
            file: &node.file,
            line: node.line,
            roles: &roles,
            doc: &node.doc,
            signature: &node.signature,
        })
        .map_err(|e| match e {
            GraphError::Invalid { problem, .. } => invalid(format!("nodes[{i}]"), problem),
            other => other,
        })?;
    }
    for (i, e) in doc.edges.iter().enumerate() {
        let end = |id: &str, field: &str| {
            parse_id(id)
                .and_then(|raw| b.node_ix(&raw))
                .ok_or_else(|| invalid(format!("edges[{i}].{field}"), format!("no node has id `{id}`")))
        };
        let (src, dst) = (end(&e.src, "src")?, end(&e.dst, "dst")?);
        b.add_edge_as(src, &e.ty, dst, e.derived).map_err(|e| match e {
            GraphError::Invalid { problem, .. } => invalid(format!("edges[{i}].type"), problem),
            other => other,
        })?;
    }
    for (file, line) in &doc.unread {
        b.add_unread(file, *line);
    }
    for (name, n) in &doc.unresolved {
        b.add_unresolved(name, *n);
    }
    b.build()
}

/// Writes `graph` as a JSON document of the same format.
pub fn write(graph: &Graph, out: &mut impl std::io::Write) -> Result<(), GraphError> {
    #[derive(Serialize)]
    struct Doc<'a> {
        format: &'static str,
        version: u32,
        name: &'a str,
        nodes: Vec<Node>,
        edges: Vec<EdgeDoc>,
        #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        unresolved: std::collections::BTreeMap<&'a str, u32>,
        #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        unread: std::collections::BTreeMap<&'a str, u32>,
    }
    let mut edges = Vec::with_capacity(graph.edge_count());
    for n in graph.iter() {
        for (t, m, how) in graph.out_edges(n.ix()) {
            edges.push(EdgeDoc {
                src: n.id(),
                dst: graph.node(m).id(),
                ty: graph.types[t as usize].clone(),
                derived: how,
            });
        }
    }
    let doc = Doc {
        format: "signpost-graph",
        version: 1,
        name: graph.name(),
        nodes: graph.iter().map(|n| n.to_node()).collect(),
        edges,
        unresolved: graph.unresolved.iter().map(|(n, c)| (n.as_str(), *c)).collect(),
        unread: graph.unread.iter().map(|(f, l)| (f.as_str(), *l)).collect(),
    };
    serde_json::to_writer(out, &doc)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> String {
        format!("{n:040x}")
    }

    #[test]
    fn bad_documents_say_where() {
        let cases = [
            (r#"{"nodes":[{"id":"xyz","kind":"class","name":"A"}]}"#, "nodes[0].id"),
            (r#"{"nodes":[],"edges":[{"src":"a","dst":"b","type":"CALLS"}]}"#, "edges[0].src"),
            (r#"{"nodes":[]}x"#, "not valid"),
        ];
        for (doc, needle) in cases {
            let err = parse(doc).map(|_| ()).unwrap_err().to_string();
            assert!(err.contains(needle), "{err}");
        }
        let dup = format!(
            r#"{{"nodes":[{{"id":"{0}","kind":"a","name":"a"}},{{"id":"{0}","kind":"a","name":"b"}}]}}"#,
            id(1)
        );
        let err = parse(&dup).map(|_| ()).unwrap_err().to_string();
        assert!(err.contains("nodes[1]") && err.contains("duplicate"), "{err}");
        let bad_type = format!(
            r#"{{"nodes":[{{"id":"{0}","kind":"a","name":"a"}}],"edges":[{{"src":"{0}","dst":"{0}","type":"A.B"}}]}}"#,
            id(1)
        );
        assert!(parse(&bad_type).map(|_| ()).unwrap_err().to_string().contains("edges[0].type"));
    }

    #[test]
    fn the_sample_round_trips() {
        let g = Graph::sample();
        let mut out = Vec::new();
        write(&g, &mut out).unwrap_or_else(|e| panic!("{e}"));
        let back = parse(std::str::from_utf8(&out).unwrap_or_default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.node_count(), g.node_count());
        assert_eq!(back.edge_count(), g.edge_count());
        for (a, b) in g.iter().zip(back.iter()) {
            assert_eq!(a.to_node(), b.to_node());
        }
    }
}

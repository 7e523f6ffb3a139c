//! Descriptor paths, interned as a trie: each path is its parent's with
//! one descriptor more, kept once however many symbols share it. A
//! package's members share its namespaces and a type's members share the
//! type, so a million symbols of seven descriptors each hold about a
//! million descriptors here, not seven million (on a Java tree of 571,000
//! symbols, 4.3M parsed descriptors took about 440 MB as one vector per
//! symbol).

use std::hash::{BuildHasher, Hash, Hasher};

use scip::types::Descriptor;

use crate::GraphError;

/// A descriptor path of [`Paths`]; [`Paths::EMPTY`] has no descriptor.
pub(super) type PathId = u32;

/// Every descriptor path met, each once.
#[derive(Default)]
pub(super) struct Paths {
    /// Each path but the empty one, at its id less one: its parent and its
    /// last descriptor.
    nodes: Vec<(PathId, Descriptor)>,
    /// The ids, by the hash of (parent, last descriptor).
    index: hashbrown::HashTable<PathId>,
    state: foldhash::fast::RandomState,
}

/// The hash of the path `parent` followed by `d`.
fn hash_of(state: &foldhash::fast::RandomState, parent: PathId, d: &Descriptor) -> u64 {
    let mut h = state.build_hasher();
    parent.hash(&mut h);
    d.name.hash(&mut h);
    d.disambiguator.hash(&mut h);
    d.suffix.value().hash(&mut h);
    h.finish()
}

impl Paths {
    /// The path of no descriptor.
    pub(super) const EMPTY: PathId = 0;

    /// The path of `descriptors`, outermost first.
    pub(super) fn intern(&mut self, descriptors: Vec<Descriptor>) -> Result<PathId, GraphError> {
        let mut id = Self::EMPTY;
        for d in descriptors {
            id = self.child(id, d)?;
        }
        Ok(id)
    }

    /// The path `parent` followed by `d`.
    pub(super) fn child(&mut self, parent: PathId, d: Descriptor) -> Result<PathId, GraphError> {
        if let Some(id) = self.find(parent, &d) {
            return Ok(id);
        }
        let hash = hash_of(&self.state, parent, &d);
        let id = PathId::try_from(self.nodes.len() + 1).map_err(|_| GraphError::Invalid {
            at: "SCIP symbols".into(),
            problem: "more than 4 billion distinct descriptor paths".into(),
        })?;
        self.nodes.push((parent, d));
        let (nodes, state) = (&self.nodes, &self.state);
        self.index.insert_unique(hash, id, |&i| {
            let (p, d) = &nodes[i as usize - 1];
            hash_of(state, *p, d)
        });
        Ok(id)
    }

    /// The path `parent` followed by `d`, if met.
    pub(super) fn find(&self, parent: PathId, d: &Descriptor) -> Option<PathId> {
        let same = |&id: &PathId| {
            let (p, e) = &self.nodes[id as usize - 1];
            *p == parent && e.name == d.name && e.disambiguator == d.disambiguator && e.suffix == d.suffix
        };
        self.index.find(hash_of(&self.state, parent, d), same).copied()
    }

    /// The path `id` without its last descriptor (the empty path's is
    /// itself).
    pub(super) fn parent(&self, id: PathId) -> PathId {
        if id == Self::EMPTY { id } else { self.nodes[id as usize - 1].0 }
    }

    /// The descriptors of `id`, outermost first.
    pub(super) fn get(&self, mut id: PathId) -> Vec<&Descriptor> {
        let mut out = Vec::new();
        while id != Self::EMPTY {
            let (parent, d) = &self.nodes[id as usize - 1];
            out.push(d);
            id = *parent;
        }
        out.reverse();
        out
    }

    /// The last descriptor of `id`.
    pub(super) fn last(&self, id: PathId) -> Option<&Descriptor> {
        (id != Self::EMPTY).then(|| &self.nodes[id as usize - 1].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scip::types::descriptor::Suffix;

    fn d(name: &str, suffix: Suffix) -> Descriptor {
        let mut d = Descriptor::new();
        d.name = name.into();
        d.suffix = suffix.into();
        d
    }

    #[test]
    fn a_path_is_kept_once_and_read_back_whole() {
        let mut paths = Paths::default();
        let method = vec![d("org", Suffix::Namespace), d("Shop", Suffix::Type), d("sell", Suffix::Method)];
        let field = vec![d("org", Suffix::Namespace), d("Shop", Suffix::Type), d("sell", Suffix::Term)];
        let a = paths.intern(method.clone()).unwrap();
        let b = paths.intern(field.clone()).unwrap();
        assert_ne!(a, b, "a method and a field of one name are two paths");
        assert_eq!(paths.intern(method.clone()).unwrap(), a);
        assert_eq!(paths.get(a), method.iter().collect::<Vec<_>>());
        assert_eq!(paths.get(b), field.iter().collect::<Vec<_>>());
        // org, org/Shop#, and the two members.
        assert_eq!(paths.nodes.len(), 4);
        assert_eq!(paths.last(a).map(|d| d.name.as_str()), Some("sell"));
        let shop = paths.parent(a);
        assert_eq!(paths.parent(b), shop);
        assert_eq!(paths.find(shop, &method[2]), Some(a));
        assert_eq!(paths.find(shop, &d("buy", Suffix::Method)), None, "found, not made");
        assert_eq!(paths.nodes.len(), 4);
        assert_eq!(paths.parent(paths.parent(shop)), Paths::EMPTY);
        assert_eq!(paths.parent(Paths::EMPTY), Paths::EMPTY);
        assert_eq!(paths.intern(Vec::new()).unwrap(), Paths::EMPTY);
        assert!(paths.get(Paths::EMPTY).is_empty() && paths.last(Paths::EMPTY).is_none());
        // The same name under another parent, or with another
        // disambiguator, is another path.
        let mut overload = method.clone();
        overload[2].disambiguator = "+1".into();
        let c = paths.intern(overload.clone()).unwrap();
        assert_ne!(c, a);
        assert_eq!(paths.get(c), overload.iter().collect::<Vec<_>>());
        let other = paths.intern(vec![d("com", Suffix::Namespace), d("Shop", Suffix::Type)]).unwrap();
        assert_ne!(paths.get(other)[0].name, "org");
    }
}

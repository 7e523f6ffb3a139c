//! Vectors held in allocations of their length.
//!
//! A builder grows its vectors by pushing, which leaves up to half of each
//! allocation unused; a graph keeps its vectors as long as it serves (a
//! large tree's merged graph: 35 MiB of records allocated for 21 used, 15
//! MiB of doc words, kinds and roles for 6; BENCHMARKS.md, issue 47,
//! twenty-ninth part). `shrink_to_fit` would not do: it asks the allocator
//! to shrink in place, and mimalloc keeps a block whose new size is at
//! least half of it. So a vector with more than an eighth unused is copied
//! into a new allocation of its length, and the old one freed.

/// `v` in an allocation of its length (or with at most an eighth unused).
pub(crate) fn tight<T>(v: Vec<T>) -> Vec<T> {
    if v.capacity() - v.len() <= v.len() / 8 {
        return v;
    }
    let mut out = Vec::with_capacity(v.len());
    out.extend(v);
    out
}

/// [`tight`] for text.
pub(crate) fn tight_text(s: String) -> String {
    if s.capacity() - s.len() <= s.len() / 8 { s } else { s.as_str().to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_with_more_than_an_eighth_unused_is_copied_into_one_of_its_length() {
        let mut v: Vec<u32> = Vec::with_capacity(1000);
        v.extend(0..100);
        let t = tight(v);
        assert_eq!(t, (0..100).collect::<Vec<_>>());
        assert_eq!(t.capacity(), 100);

        let mut few: Vec<u32> = Vec::with_capacity(110);
        few.extend(0..100);
        let at = few.as_ptr();
        let kept = tight(few);
        assert_eq!((kept.as_ptr(), kept.capacity()), (at, 110), "an eighth or less unused: kept as it is");

        let mut s = String::with_capacity(64);
        s.push_str("héllo");
        let s = tight_text(s);
        assert_eq!((s.as_str(), s.capacity()), ("héllo", 6));
        assert_eq!(tight(Vec::<String>::new()).capacity(), 0);
    }
}

//! Snapshots written and read back, and refused when damaged.

use super::*;
use crate::Graph;

#[test]
fn a_snapshot_reads_back_as_the_same_graph() {
    let mut g = Graph::sample();
    g.unresolved = vec![("save".into(), 3)];
    g.unread = vec![("src/A.kt".into(), 12), ("src/B.cs".into(), 1)];
    let bytes = write(&g);
    let back = read(&bytes).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((&back.unresolved, &back.unread), (&g.unresolved, &g.unread));
    assert_eq!(back.unread_from("src/B.cs"), Some(1));
    assert_eq!(back.name, g.name);
    assert_eq!(back.text, g.text);
    assert_eq!(back.recs, g.recs);
    assert_eq!(back.out, g.out);
    assert_eq!(back.inn, g.inn);
    assert!(!g.is_warm() && back.is_warm(), "written without keeping its query indexes, read with them");
    g.warm();
    assert_eq!(back.index, g.index);
}

/// A snapshot re-written with a valid checksum but tables that start
/// past 0 (a match before the first entry) is refused, not served.
#[test]
fn crafted_tables_with_a_valid_checksum_are_refused() {
    fn query(g: &mut Graph) -> &mut Index {
        g.warm();
        g.index.query.get_mut().expect("made")
    }
    let mut g = Graph::sample();
    query(&mut g).name_starts[0] = 1;
    let e = read(&write(&g)).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("names: malformed string table"), "{e}");
    let mut g = Graph::sample();
    query(&mut g).container_starts.clear();
    let e = read(&write(&g)).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("containers: malformed string table"), "{e}");
    // A name index out of order, or naming a node twice (two long
    // names alternating would make distinct names larger than all the
    // names together), is refused.
    for crafted in [
        |by_name: &mut Vec<u32>| by_name.swap(0, 1),
        |by_name: &mut Vec<u32>| by_name[1] = by_name[0],
        |by_name: &mut Vec<u32>| by_name.reverse(),
    ] {
        let mut g = Graph::sample();
        crafted(&mut query(&mut g).by_name);
        let e = read(&write(&g)).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains("the name index is not sorted"), "{e}");
    }
}

/// Written as it is made, after other bytes: the bytes `write` gives,
/// the header in its place, the writer left at the end; what it holds
/// is what a checksum of those bytes says, and `summary` says it with
/// nothing written. A graph whose strings lie in several arenas (a
/// merge's) writes them as one.
#[test]
fn a_snapshot_streamed_after_other_bytes_is_the_one_made_in_memory() {
    let merged = crate::merge("m", [&Graph::sample(), &Graph::sample()]).expect("merges");
    assert!(merged.text.pieces().count() > 2, "the merge's strings are in one arena: the test reads no pieces");
    for g in [Graph::sample(), merged] {
        let whole = write(&g);
        let mut out = std::io::Cursor::new(b"before".to_vec());
        out.set_position(6);
        let written = write_to(&g, &mut out).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out.position(), 6 + whole.len() as u64, "not left at the snapshot's end");
        assert_eq!(&out.get_ref()[..6], b"before");
        assert_eq!(&out.get_ref()[6..], &whole[..]);
        assert_eq!(written, Written { len: whole.len() as u64, crc: crc32fast::hash(&whole) });
        assert_eq!(summary(&g), written);
        let back = read(&whole).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((back.text.to_one(), &back.recs), (g.text.to_one(), &g.recs));
    }
}

/// A write that fails half-way (a full disk) says so; nothing panics.
#[test]
fn a_failed_write_is_an_error() {
    struct Full(std::io::Cursor<Vec<u8>>);
    impl std::io::Write for Full {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.0.position() + buf.len() as u64 > 100 {
                return Err(std::io::Error::new(std::io::ErrorKind::StorageFull, "disk full"));
            }
            self.0.write(buf)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    impl std::io::Seek for Full {
        fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
            self.0.seek(to)
        }
    }
    let e = write_to(&Graph::sample(), &mut Full(Default::default())).expect_err("a full disk written to");
    assert_eq!(e.kind(), std::io::ErrorKind::StorageFull);
}

#[test]
fn damaged_snapshots_are_refused_with_the_reason() {
    let bytes = write(&Graph::sample());
    let err = |b: &[u8]| read(b).map(|_| ()).unwrap_err().to_string();
    assert!(err(&bytes[..bytes.len() - 1]).contains("truncated"));
    assert!(err(&bytes[..20]).contains("truncated header"));
    let mut flipped = bytes.clone();
    let last = flipped.len() - 3;
    flipped[last] ^= 0x40;
    assert!(err(&flipped).contains("checksum"));
    let mut other = bytes.clone();
    other[15] = 9;
    let e = err(&other);
    assert!(e.contains("version 9") && e.contains("graph import"), "{e}");
}

//! What a file says that only its own resolve reads, held packed between
//! resolves.
//!
//! A file's calls, type names and typed names are most of its facts (a
//! call carries its name, its receiver's text and each argument's), yet
//! they are read only when that file's uses are resolved, or its typed
//! names first asked for. Held as Rust values, they cost four to five times
//! their postcard encoding; held packed, a served project keeps the
//! encoding, compressed (LZ4: the receivers' and arguments' texts repeat
//! within a file), and a resolve unpacks the files it reads, one at a time.
//!
//! Once a served part is quiet, its packed bodies move to a [`Shelf`]: a
//! file that no path names, read back with positioned reads. They are read
//! only by an edit's resolve (the files it reads again) and its documents,
//! so between edits they are the kernel's page cache, not the process's
//! memory.

use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{Call, Name, Text, Var};

/// A value held as its postcard encoding, LZ4-compressed: the encoding's
/// length (8 bytes, little-endian), then its LZ4 block; in memory, or on
/// a [`Shelf`].
pub struct Packed<T> {
    held: Held,
    of: PhantomData<fn() -> T>,
}

/// Where a [`Packed`] value's bytes are.
#[derive(Clone)]
enum Held {
    Memory(Box<[u8]>),
    /// `len` bytes at `at` on the shelf.
    Shelved {
        shelf: Arc<Shelf>,
        at: u64,
        len: u32,
    },
}

/// Packed bytes out of memory: a file that no path names (gone with the
/// last value on it, or with the process however it ends), appended to
/// and read with positioned reads, from any thread.
pub struct Shelf {
    file: std::fs::File,
    /// Bytes written or being written: where the next value goes.
    end: AtomicU64,
}

impl Shelf {
    /// An empty shelf in `dir`, where the system makes nameless files there
    /// ([`signpost_graph::scip::nameless_in`]).
    pub fn new(dir: &std::path::Path) -> std::io::Result<Arc<Shelf>> {
        let file = signpost_graph::scip::nameless_in(dir)?;
        Ok(Arc::new(Shelf { file, end: AtomicU64::new(0) }))
    }

    /// The bytes written to it, values gone since included.
    pub(crate) fn len(&self) -> u64 {
        self.end.load(Ordering::Relaxed)
    }

    /// Writes `bytes` at its end; where they start. A value's room is
    /// taken before it is written, so values written at once never meet.
    fn put(&self, bytes: &[u8]) -> std::io::Result<u64> {
        use std::os::unix::fs::FileExt;
        let at = self.end.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        self.file.write_all_at(bytes, at)?;
        Ok(at)
    }

    /// The `len` bytes at `at`, into `buf`.
    fn get(&self, at: u64, len: u32, buf: &mut Vec<u8>) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        buf.clear();
        buf.resize(len as usize, 0);
        self.file.read_exact_at(buf, at)
    }
}

impl std::fmt::Debug for Shelf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Shelf({} bytes)", self.len())
    }
}

thread_local! {
    /// Each thread's buffer for the encoding a value is packed from or
    /// unpacked to: the bytes held are copied out of it to their size.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    /// Each thread's buffer for a shelved value's bytes, read back.
    static SHELVED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A buffer no larger than this is kept for the thread's next value.
const SCRATCH_KEPT: usize = 1 << 20;

/// Values packed to no more bytes than this stay in memory when shelved:
/// no smaller than their place on the shelf would be.
const KEPT_IN_MEMORY: usize = 24;

type Buffer = std::thread::LocalKey<std::cell::RefCell<Vec<u8>>>;

/// With the thread's buffer `key`, given back past [`SCRATCH_KEPT`].
fn with_buffer<R>(key: &'static Buffer, f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    key.with_borrow_mut(|buf| {
        let r = f(buf);
        if buf.capacity() > SCRATCH_KEPT {
            *buf = Vec::new();
        }
        r
    })
}

/// Why packed bytes do not unpack (a saved reading gone bad).
#[derive(Debug, thiserror::Error)]
pub enum Unpack {
    /// The length or the compressed block is not whole.
    #[error("{0}")]
    Compressed(String),
    /// The encoding is not one of the value's.
    #[error("{0}")]
    Encoding(#[from] postcard::Error),
}

/// The encoding `bytes` holds, decompressed into `buf`. A length no LZ4
/// block of that size can give (it expands at most 255 times) is refused
/// before anything is allocated for it.
fn decompressed<'a>(bytes: &[u8], buf: &'a mut Vec<u8>) -> Result<&'a [u8], Unpack> {
    let (len, block) = bytes.split_first_chunk::<8>().ok_or_else(|| Unpack::Compressed("truncated".into()))?;
    let len = usize::try_from(u64::from_le_bytes(*len)).unwrap_or(usize::MAX);
    if len > block.len().saturating_mul(255) {
        return Err(Unpack::Compressed(format!("{len} bytes cannot come of a block of {}", block.len())));
    }
    buf.clear();
    buf.resize(len, 0);
    match lz4_flex::block::decompress_into(block, buf) {
        Ok(n) if n == len => Ok(&buf[..len]),
        Ok(n) => Err(Unpack::Compressed(format!("{n} bytes where {len} were written"))),
        Err(e) => Err(Unpack::Compressed(e.to_string())),
    }
}

impl<T: Serialize + DeserializeOwned> Packed<T> {
    /// `value`, packed.
    pub fn pack(value: &T) -> Packed<T> {
        // Encoding fails only for types postcard cannot write (maps of
        // unknown length, `serialize_any`): none of these. Made in the
        // thread's buffer and copied out, so that the bytes held are
        // allocated once, to their length: a project's files are packed
        // by the thousand, and the slack of each would stay held.
        let len = postcard::experimental::serialized_size(value).expect("facts encode");
        with_buffer(&SCRATCH, |buf| {
            buf.clear();
            buf.resize(len + 8 + lz4_flex::block::get_maximum_output_size(len), 0);
            let (raw, out) = buf.split_at_mut(len);
            postcard::to_slice(value, raw).expect("facts encode to their size");
            out[..8].copy_from_slice(&(len as u64).to_le_bytes());
            let n = lz4_flex::block::compress_into(raw, &mut out[8..]).expect("room for the worst case");
            Packed { held: Held::Memory(Box::from(&out[..8 + n])), of: PhantomData }
        })
    }

    /// The value packed. Its bytes were made by [`Packed::pack`] of this
    /// build, or checked by [`Packed::checked`] when read back.
    ///
    /// # Panics
    /// When its shelf cannot be read back: the file this process wrote and
    /// holds open, so only a failing disk does that.
    pub fn unpack(&self) -> T {
        let value = self.with_bytes(|bytes| {
            with_buffer(&SCRATCH, |buf| {
                let raw = decompressed(bytes, buf).expect("packed by this build, or checked when read back");
                postcard::from_bytes(raw).expect("packed by this build, or checked when read back")
            })
        });
        value.unwrap_or_else(|e| panic!("packed facts could not be read back from their shelf: {e}"))
    }

    /// Bytes read back from a saved reading, if they unpack.
    pub fn checked(bytes: Vec<u8>) -> Result<Packed<T>, Unpack> {
        with_buffer(&SCRATCH, |buf| -> Result<(), Unpack> {
            Ok(postcard::from_bytes::<T>(decompressed(&bytes, buf)?).map(drop)?)
        })?;
        Ok(Packed { held: Held::Memory(bytes.into_boxed_slice()), of: PhantomData })
    }
}

impl<T> Packed<T> {
    /// `f` of the bytes held (what a saved reading keeps), read back first
    /// when they are on a shelf.
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> std::io::Result<R> {
        match &self.held {
            Held::Memory(bytes) => Ok(f(bytes)),
            Held::Shelved { shelf, at, len } => with_buffer(&SHELVED, |buf| {
                shelf.get(*at, *len, buf)?;
                Ok(f(buf))
            }),
        }
    }

    /// How many bytes it is packed to.
    fn len(&self) -> usize {
        match &self.held {
            Held::Memory(bytes) => bytes.len(),
            Held::Shelved { len, .. } => *len as usize,
        }
    }

    /// Whether its bytes are on `shelf`.
    pub fn is_on(&self, shelf: &Arc<Shelf>) -> bool {
        matches!(&self.held, Held::Shelved { shelf: on, .. } if Arc::ptr_eq(on, shelf))
    }

    /// The same value with its bytes on `shelf`: written there unless they
    /// are already, or so few that they stay in memory. Where they cannot
    /// be written (a full disk), they stay where they are.
    pub fn shelved(&self, shelf: &Arc<Shelf>) -> Packed<T> {
        let len = self.len();
        if self.is_on(shelf) || len <= KEPT_IN_MEMORY || u32::try_from(len).is_err() {
            return self.clone();
        }
        match self.with_bytes(|bytes| shelf.put(bytes)) {
            Ok(Ok(at)) => Packed { held: Held::Shelved { shelf: shelf.clone(), at, len: len as u32 }, of: PhantomData },
            Ok(Err(e)) | Err(e) => {
                tracing::debug!(error = %e, "packed facts could not be shelved: kept where they were");
                self.clone()
            }
        }
    }
}

// By hand: a derive would ask `T: Clone` of the value the bytes encode.
impl<T> Clone for Packed<T> {
    fn clone(&self) -> Packed<T> {
        Packed { held: self.held.clone(), of: PhantomData }
    }
}

impl<T> std::fmt::Debug for Packed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.held {
            Held::Memory(bytes) => write!(f, "Packed({} bytes)", bytes.len()),
            Held::Shelved { at, len, .. } => write!(f, "Packed({len} bytes at {at} on a shelf)"),
        }
    }
}

/// A file's calls and type names: what its uses are resolved from.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Uses {
    /// Calls, in source order.
    pub calls: Vec<Call>,
    /// Type names used, in source order.
    pub types: Vec<Name>,
}

/// What [`super::Facts`] held of one file's calls, type names, typed
/// names and definitions' texts, packed, with the count the resolve
/// reports of its calls.
#[derive(Debug, Clone)]
pub struct Body {
    /// Its calls and type names.
    pub uses: Packed<Uses>,
    /// Its typed names (variables, fields, parameters).
    pub vars: Packed<Vec<Var>>,
    /// Its definitions' headers and comments, one per definition, in
    /// their order: read only when the file's document is written.
    pub texts: Packed<Vec<Text>>,
    /// Of its calls, those that run code by a call (not an `@read`).
    pub calls: usize,
}

impl Body {
    /// Moves `facts`' calls, type names, typed names and texts into a
    /// body, packed; what is left of `facts` is made no larger than it is.
    /// Facts made with no texts (by hand, in tests) are given empty ones.
    pub fn of(facts: &mut super::Facts) -> Body {
        let uses = Uses { calls: std::mem::take(&mut facts.calls), types: std::mem::take(&mut facts.types) };
        let vars = std::mem::take(&mut facts.vars);
        let mut texts = std::mem::take(&mut facts.texts);
        texts.resize_with(facts.defs.len(), Text::default);
        facts.shrink_to_fit();
        Body {
            calls: uses.calls.iter().filter(|c| !c.read).count(),
            uses: Packed::pack(&uses),
            vars: Packed::pack(&vars),
            texts: Packed::pack(&texts),
        }
    }

    /// The same body with its packed values on `shelf`
    /// ([`Packed::shelved`]).
    pub fn shelved(&self, shelf: &Arc<Shelf>) -> Body {
        Body {
            uses: self.uses.shelved(shelf),
            vars: self.vars.shelved(shelf),
            texts: self.texts.shelved(shelf),
            calls: self.calls,
        }
    }

    /// How many of its bytes are on `shelf`.
    pub fn bytes_on(&self, shelf: &Arc<Shelf>) -> u64 {
        let on = |p: usize, on: bool| if on { p as u64 } else { 0 };
        on(self.uses.len(), self.uses.is_on(shelf))
            + on(self.vars.len(), self.vars.is_on(shelf))
            + on(self.texts.len(), self.texts.is_on(shelf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::Span;

    fn call(name: &str, read: bool) -> Call {
        Call {
            name: name.to_owned(),
            receiver: Some("this.repo".to_owned()),
            args: Some(2),
            given: vec![super::super::Arg::Expr("order.id".to_owned()), super::super::Arg::Other],
            span: Span::default(),
            construct: false,
            scoped: false,
            read,
            generics: 0,
            labels: None,
        }
    }

    fn bytes_of<T>(p: &Packed<T>) -> Vec<u8> {
        p.with_bytes(<[u8]>::to_vec).expect("read back")
    }

    #[test]
    fn a_body_unpacks_to_what_was_packed_and_counts_the_calls_that_run_code() {
        let mut facts = crate::extract::Facts {
            calls: vec![call("save", false), call("total", true), call("find", false)],
            ..Default::default()
        };
        let body = Body::of(&mut facts);
        assert!(facts.calls.is_empty() && facts.types.is_empty() && facts.vars.is_empty());
        assert_eq!(body.calls, 2);
        assert!(body.texts.unpack().is_empty());
        let uses = body.uses.unpack();
        let names: Vec<&str> = uses.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["save", "total", "find"]);
        assert_eq!(uses.calls[0].given, call("save", false).given);
        assert_eq!(Packed::<Uses>::checked(bytes_of(&body.uses)).unwrap().unpack().calls.len(), 3);
    }

    #[test]
    fn bytes_that_do_not_unpack_are_refused_when_read_back() {
        let packed = Packed::pack(&Uses { calls: vec![call("save", false)], types: Vec::new() });
        let bytes = bytes_of(&packed);
        // Cut short, a length past the end, and garbage.
        assert!(Packed::<Uses>::checked(bytes[..bytes.len() - 3].to_vec()).is_err());
        assert!(Packed::<Uses>::checked(vec![0xff, 0xff, 0xff, 0xff, 0x0f]).is_err());
        assert!(Packed::<Vec<Var>>::checked(vec![3, 1, 2]).is_err());
        // A length no block of that size gives: refused before a byte is
        // allocated for it (a terabyte would abort the process).
        let mut huge = (1u64 << 40).to_le_bytes().to_vec();
        huge.extend_from_slice(&bytes[8..]);
        assert!(matches!(Packed::<Uses>::checked(huge), Err(Unpack::Compressed(_))));
        // A length that is not the block's.
        let mut longer = bytes.to_vec();
        longer[0] += 1;
        assert!(matches!(Packed::<Uses>::checked(longer), Err(Unpack::Compressed(_))));
        // A whole block of what is not a `Uses`'s encoding.
        let other = Packed::pack(&vec![u64::MAX; 3]);
        assert!(matches!(Packed::<Uses>::checked(bytes_of(&other)), Err(Unpack::Encoding(_))));
    }

    #[test]
    fn a_files_calls_are_held_in_less_than_their_encoding() {
        let calls: Vec<Call> = (0..300).map(|i| call(["save", "total", "find"][i % 3], i % 5 == 0)).collect();
        let uses = Uses { calls, types: Vec::new() };
        let encoding = postcard::experimental::serialized_size(&uses).unwrap();
        let packed = Packed::pack(&uses);
        assert!(packed.len() * 4 < encoding, "{} of {encoding} bytes", packed.len());
        assert_eq!(packed.unpack().calls.len(), 300);
        // Empty, too.
        assert!(Packed::pack(&Uses::default()).unpack().calls.is_empty());
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("signpost-shelf-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        dir
    }

    #[test]
    fn shelved_values_unpack_to_what_was_packed_and_leave_nothing_named() {
        let dir = scratch("values");
        let shelf = match Shelf::new(&dir) {
            Ok(shelf) => shelf,
            Err(e) if cfg!(target_os = "linux") => panic!("Linux makes nameless files in a temporary directory: {e}"),
            Err(_) => return,
        };
        let uses = |n: usize| Uses {
            calls: (0..n).map(|i| call(["save", "find"][i % 2], i % 3 == 0)).collect(),
            types: Vec::new(),
        };
        let packed: Vec<Packed<Uses>> = (1..40).map(|n| Packed::pack(&uses(n))).collect();
        // Shelved from several threads at once: no value meets another.
        let shelved: Vec<Packed<Uses>> = std::thread::scope(|s| {
            let handles: Vec<_> = packed
                .chunks(10)
                .map(|c| s.spawn(|| c.iter().map(|p| p.shelved(&shelf)).collect::<Vec<_>>()))
                .collect();
            handles.into_iter().flat_map(|h| h.join().expect("shelved")).collect()
        });
        let written = shelf.len();
        assert_eq!(written, packed.iter().map(|p| p.len() as u64).sum::<u64>());
        for (n, (p, s)) in packed.iter().zip(&shelved).enumerate() {
            assert!(s.is_on(&shelf) && !p.is_on(&shelf));
            assert_eq!(bytes_of(p), bytes_of(s));
            assert_eq!(s.unpack().calls.len(), n + 1);
            assert!(
                s.clone()
                    .unpack()
                    .calls
                    .iter()
                    .map(|c| c.name.as_str())
                    .eq(uses(n + 1).calls.iter().map(|c| c.name.as_str()))
            );
        }
        // Shelved again on the same shelf: nothing written.
        assert!(shelved[3].shelved(&shelf).is_on(&shelf));
        assert_eq!(shelf.len(), written);
        // Moved to another shelf: read from the first, written to the second.
        let other = Shelf::new(&dir).expect("a second shelf");
        let moved = shelved[5].shelved(&other);
        assert!(moved.is_on(&other) && !moved.is_on(&shelf));
        assert_eq!(moved.unpack().calls.len(), 6);
        // A value smaller than its place on a shelf stays in memory.
        let empty = Packed::pack(&Uses::default());
        assert!(!empty.shelved(&shelf).is_on(&shelf));
        assert!(empty.shelved(&shelf).unpack().calls.is_empty());
        let mut facts = crate::extract::Facts { calls: vec![call("save", false); 30], ..Default::default() };
        let body = Body::of(&mut facts).shelved(&shelf);
        assert_eq!(body.bytes_on(&shelf), body.uses.len() as u64, "its uses shelved, its empty vars and texts not");
        assert_eq!(body.uses.unpack().calls.len(), 30);
        drop((shelved, moved, body, shelf, other));
        let left: Vec<_> = std::fs::read_dir(&dir).expect("the directory").collect();
        assert!(left.is_empty(), "nothing named is left: {left:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn no_shelf_where_no_file_can_be_made() {
        let missing = std::env::temp_dir().join(format!("signpost-shelf-missing-{}", std::process::id()));
        assert!(Shelf::new(&missing).is_err());
    }
}

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

use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{Call, Name, Text, Var};

/// A value held as its postcard encoding, LZ4-compressed: the encoding's
/// length (8 bytes, little-endian), then its LZ4 block.
pub struct Packed<T> {
    bytes: Box<[u8]>,
    of: PhantomData<fn() -> T>,
}

thread_local! {
    /// Each thread's buffer for the encoding a value is packed from or
    /// unpacked to: the bytes held are copied out of it to their size.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A buffer no larger than this is kept for the thread's next value.
const SCRATCH_KEPT: usize = 1 << 20;

/// With the thread's scratch buffer, given back past [`SCRATCH_KEPT`].
fn with_scratch<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    SCRATCH.with_borrow_mut(|buf| {
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
        with_scratch(|buf| {
            buf.clear();
            buf.resize(len + 8 + lz4_flex::block::get_maximum_output_size(len), 0);
            let (raw, out) = buf.split_at_mut(len);
            postcard::to_slice(value, raw).expect("facts encode to their size");
            out[..8].copy_from_slice(&(len as u64).to_le_bytes());
            let n = lz4_flex::block::compress_into(raw, &mut out[8..]).expect("room for the worst case");
            Packed { bytes: Box::from(&out[..8 + n]), of: PhantomData }
        })
    }

    /// The value packed. Its bytes were made by [`Packed::pack`] of this
    /// build, or checked by [`Packed::checked`] when read back.
    pub fn unpack(&self) -> T {
        with_scratch(|buf| {
            let raw = decompressed(&self.bytes, buf).expect("packed by this build, or checked when read back");
            postcard::from_bytes(raw).expect("packed by this build, or checked when read back")
        })
    }

    /// Bytes read back from a saved reading, if they unpack.
    pub fn checked(bytes: Vec<u8>) -> Result<Packed<T>, Unpack> {
        with_scratch(|buf| -> Result<(), Unpack> {
            Ok(postcard::from_bytes::<T>(decompressed(&bytes, buf)?).map(drop)?)
        })?;
        Ok(Packed { bytes: bytes.into_boxed_slice(), of: PhantomData })
    }

    /// The bytes held: what a saved reading keeps.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

// By hand: a derive would ask `T: Clone` of the value the bytes encode.
impl<T> Clone for Packed<T> {
    fn clone(&self) -> Packed<T> {
        Packed { bytes: self.bytes.clone(), of: PhantomData }
    }
}

impl<T> std::fmt::Debug for Packed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Packed({} bytes)", self.bytes.len())
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
        assert_eq!(Packed::<Uses>::checked(body.uses.bytes().to_vec()).unwrap().unpack().calls.len(), 3);
    }

    #[test]
    fn bytes_that_do_not_unpack_are_refused_when_read_back() {
        let packed = Packed::pack(&Uses { calls: vec![call("save", false)], types: Vec::new() });
        let bytes = packed.bytes();
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
        assert!(matches!(Packed::<Uses>::checked(other.bytes().to_vec()), Err(Unpack::Encoding(_))));
    }

    #[test]
    fn a_files_calls_are_held_in_less_than_their_encoding() {
        let calls: Vec<Call> = (0..300).map(|i| call(["save", "total", "find"][i % 3], i % 5 == 0)).collect();
        let uses = Uses { calls, types: Vec::new() };
        let encoding = postcard::experimental::serialized_size(&uses).unwrap();
        let packed = Packed::pack(&uses);
        assert!(packed.bytes().len() * 4 < encoding, "{} of {encoding} bytes", packed.bytes().len());
        assert_eq!(packed.unpack().calls.len(), 300);
        // Empty, too.
        assert!(Packed::pack(&Uses::default()).unpack().calls.is_empty());
    }
}

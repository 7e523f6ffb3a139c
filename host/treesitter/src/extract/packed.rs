//! What a file says that only its own resolve reads, held packed between
//! resolves.
//!
//! A file's calls, type names and typed names are most of its facts (a
//! call carries its name, its receiver's text and each argument's), yet
//! they are read only when that file's uses are resolved, or its typed
//! names first asked for. Held as Rust values, they cost four to five times
//! their postcard encoding; held packed, a served project keeps the
//! encoding and a resolve unpacks the files it reads, one at a time.

use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{Call, Name, Var};

/// A value held as its postcard encoding.
pub struct Packed<T> {
    bytes: Box<[u8]>,
    of: PhantomData<fn() -> T>,
}

impl<T: Serialize + DeserializeOwned> Packed<T> {
    /// `value`, packed.
    pub fn pack(value: &T) -> Packed<T> {
        // Encoding fails only for types postcard cannot write (maps of
        // unknown length, `serialize_any`): none of these. Sized first, so
        // that the bytes are allocated once, to their length: a project's
        // files are packed by the thousand, and each grown buffer freed
        // would stay with the allocator.
        let len = postcard::experimental::serialized_size(value).expect("facts encode");
        let mut bytes = vec![0u8; len].into_boxed_slice();
        postcard::to_slice(value, &mut bytes).expect("facts encode to their size");
        Packed { bytes, of: PhantomData }
    }

    /// The value packed. Its bytes were made by [`Packed::pack`] of this
    /// build, or checked by [`Packed::checked`] when read back.
    pub fn unpack(&self) -> T {
        postcard::from_bytes(&self.bytes).expect("packed by this build, or checked when read back")
    }

    /// Bytes read back from a saved reading, if they unpack.
    pub fn checked(bytes: Vec<u8>) -> Result<Packed<T>, postcard::Error> {
        postcard::from_bytes::<T>(&bytes)?;
        Ok(Packed { bytes: bytes.into_boxed_slice(), of: PhantomData })
    }

    /// The encoding.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
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

/// What [`super::Facts`] held of one file's calls, type names and typed
/// names, packed, with the count the resolve reports of its calls.
#[derive(Debug)]
pub struct Body {
    /// Its calls and type names.
    pub uses: Packed<Uses>,
    /// Its typed names (variables, fields, parameters).
    pub vars: Packed<Vec<Var>>,
    /// Of its calls, those that run code by a call (not an `@read`).
    pub calls: usize,
}

impl Body {
    /// Moves `facts`' calls, type names and typed names into a body,
    /// packed; what is left of `facts` is made no larger than it is.
    pub fn of(facts: &mut super::Facts) -> Body {
        let uses = Uses { calls: std::mem::take(&mut facts.calls), types: std::mem::take(&mut facts.types) };
        let vars = std::mem::take(&mut facts.vars);
        facts.shrink_to_fit();
        Body {
            calls: uses.calls.iter().filter(|c| !c.read).count(),
            uses: Packed::pack(&uses),
            vars: Packed::pack(&vars),
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
    }
}

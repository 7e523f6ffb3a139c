//! Where an import reads its documents from, one at a time: a decoded
//! [`Index`] (an indexer in the same process), protobuf bytes, or a file
//! read as it goes. An import never holds more than one decoded document.
//!
//! A SCIP index is one protobuf message, `Index`: field 1 its metadata,
//! field 2 one document each time it appears, field 3 one external symbol
//! each time, in any order. [`walk`] reads those top-level fields one by
//! one and decodes each document alone, and refuses what decoding the
//! whole index refused, with the same errors: the decoder's messages,
//! unknown top-level fields, another protocol version, neither metadata
//! nor documents. A field whose length runs past the end of the index is
//! refused before anything is read into memory for it.

use std::fs::File;
use std::io::{BufReader, Read};
use std::os::unix::fs::FileExt;

use protobuf::{CodedInputStream, Message};
use scip::types::{Document, Index, Metadata, SymbolInformation};

use super::ScipError;
use crate::GraphError;

/// What a walk calls with each document: its position among the index's
/// documents (0, 1, …), and the document.
pub(super) type Visit<'v> = dyn FnMut(usize, &Document) -> Result<(), GraphError> + 'v;

/// An index to import, read one document at a time.
pub(super) trait Source {
    /// Calls `f` with every document, in index order, and stops at the
    /// first error. It can be called again: an import walks the documents
    /// twice. The first walk also reads the metadata and the external
    /// symbols, and refuses what is no SCIP index this signpost reads.
    fn documents(&mut self, f: &mut Visit<'_>) -> Result<(), GraphError>;

    /// The index's metadata (known after the first walk).
    fn metadata(&self) -> Option<&Metadata>;

    /// The index's external symbols (known after the first walk).
    fn external_symbols(&self) -> &[SymbolInformation];
}

/// A decoded index: its documents as they are.
pub(super) struct Decoded<'i>(pub(super) &'i Index);

impl Source for Decoded<'_> {
    fn documents(&mut self, f: &mut Visit<'_>) -> Result<(), GraphError> {
        for (i, d) in self.0.documents.iter().enumerate() {
            f(i, d)?;
        }
        Ok(())
    }

    fn metadata(&self) -> Option<&Metadata> {
        self.0.metadata.as_ref()
    }

    fn external_symbols(&self) -> &[SymbolInformation] {
        &self.0.external_symbols
    }
}

/// An index as protobuf bytes in memory.
pub(super) struct Bytes<'b> {
    bytes: &'b [u8],
    /// What the first walk read besides documents.
    header: Header,
    /// One field's bytes at a time.
    buf: Vec<u8>,
}

impl<'b> Bytes<'b> {
    /// The index in `bytes`.
    pub(super) fn new(bytes: &'b [u8]) -> Bytes<'b> {
        Bytes { bytes, header: Header::default(), buf: Vec::new() }
    }
}

impl Source for Bytes<'_> {
    fn documents(&mut self, f: &mut Visit<'_>) -> Result<(), GraphError> {
        let mut is = CodedInputStream::from_bytes(self.bytes);
        walk(&mut is, self.bytes.len() as u64, &mut self.buf, &mut self.header, f)
    }

    fn metadata(&self) -> Option<&Metadata> {
        self.header.metadata.as_ref()
    }

    fn external_symbols(&self) -> &[SymbolInformation] {
        &self.header.external
    }
}

/// Bytes read from a file at a time.
const READ_BUFFER: usize = 256 * 1024;

/// `file` read from a position on with positioned reads: the offset the
/// file shares with its clones is neither read nor moved.
pub(super) struct ReadAt<'f> {
    file: &'f File,
    pos: u64,
}

impl ReadAt<'_> {
    /// `file` from its first byte.
    pub(super) fn start(file: &File) -> ReadAt<'_> {
        ReadAt { file, pos: 0 }
    }
}

impl Read for ReadAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// An index in a file, read from the start on each walk.
pub(super) struct FileSource {
    file: File,
    /// The file's length when opened.
    size: u64,
    /// What the first walk read besides documents.
    header: Header,
    /// One field's bytes at a time (the largest document's, at most).
    buf: Vec<u8>,
}

impl FileSource {
    /// The index in `file` (wherever its position is: each walk starts at
    /// the beginning).
    pub(super) fn new(file: File) -> Result<FileSource, GraphError> {
        let size = file.metadata()?.len();
        Ok(FileSource { file, size, header: Header::default(), buf: Vec::new() })
    }
}

impl Source for FileSource {
    fn documents(&mut self, f: &mut Visit<'_>) -> Result<(), GraphError> {
        let mut reader = BufReader::with_capacity(READ_BUFFER, ReadAt::start(&self.file));
        let mut is = CodedInputStream::from_buf_read(&mut reader);
        walk(&mut is, self.size, &mut self.buf, &mut self.header, f)
    }

    fn metadata(&self) -> Option<&Metadata> {
        self.header.metadata.as_ref()
    }

    fn external_symbols(&self) -> &[SymbolInformation] {
        &self.header.external
    }
}

/// What the first walk over protobuf reads besides documents.
#[derive(Default)]
struct Header {
    /// Whether the first walk is done: later walks skip what it read.
    read: bool,
    /// The metadata (the last given, as the decoder does).
    metadata: Option<Metadata>,
    /// The external symbols, in order.
    external: Vec<SymbolInformation>,
}

/// The wire type (a tag's low three bits) of a length-delimited field.
const LENGTH_DELIMITED: u32 = 2;
/// The wire type of the start of a group.
const START_GROUP: u32 = 3;
/// The wire type of the end of a group.
const END_GROUP: u32 = 4;
/// The tag (field number, wire type) of `Index.metadata`.
const METADATA: u32 = (1 << 3) | LENGTH_DELIMITED;
/// The tag of one of `Index.documents`.
const DOCUMENT: u32 = (2 << 3) | LENGTH_DELIMITED;
/// The tag of one of `Index.external_symbols`.
const EXTERNAL_SYMBOL: u32 = (3 << 3) | LENGTH_DELIMITED;

/// One walk over the top-level fields of an index of `size` bytes read
/// from `is`, each field's bytes read into `buf`: `f` gets each document.
/// The first walk (`header` not yet read) also reads the metadata and the
/// external symbols, and checks the index as a whole at its end.
fn walk(
    is: &mut CodedInputStream<'_>,
    size: u64,
    buf: &mut Vec<u8>,
    header: &mut Header,
    f: &mut Visit<'_>,
) -> Result<(), GraphError> {
    let first = !header.read;
    let mut unknown = false;
    let mut documents = 0usize;
    while let Some(tag) = is.read_raw_tag_or_eof().map_err(protobuf_error)? {
        match tag {
            DOCUMENT => {
                read_field(is, size, buf)?;
                let doc = Document::parse_from_bytes(buf.as_slice()).map_err(protobuf_error)?;
                f(documents, &doc)?;
                documents += 1;
            }
            METADATA if first => {
                read_field(is, size, buf)?;
                // A second metadata field replaces the first, as in the
                // decoder of the whole index.
                header.metadata = Some(Metadata::parse_from_bytes(buf.as_slice()).map_err(protobuf_error)?);
            }
            EXTERNAL_SYMBOL if first => {
                read_field(is, size, buf)?;
                header.external.push(SymbolInformation::parse_from_bytes(buf.as_slice()).map_err(protobuf_error)?);
            }
            METADATA | EXTERNAL_SYMBOL => skip_field(is, size)?,
            _ => {
                // Any other field is unknown: skipped as the decoder skips
                // it (a malformed tag is its error), and the index refused
                // at the end. The decoder keeps no group, so neither does
                // this count one.
                match tag & 7 {
                    LENGTH_DELIMITED if tag >> 3 != 0 => skip_field(is, size)?,
                    START_GROUP if tag >> 3 != 0 => skip_group(is)?,
                    _ => protobuf::rt::skip_field_for_tag(tag, is).map_err(protobuf_error)?,
                }
                unknown |= (tag & 7) != START_GROUP;
            }
        }
    }
    if !first {
        return Ok(());
    }
    header.read = true;
    if unknown {
        return Err(ScipError::UnknownFields.into());
    }
    if let Some(m) = &header.metadata
        && let Err(v) = m.version.enum_value()
    {
        return Err(ScipError::Version(v).into());
    }
    if header.metadata.is_none() && documents == 0 {
        return Err(ScipError::Empty.into());
    }
    Ok(())
}

/// The length of the length-delimited field at `is`, refused when it runs
/// past the end of the index (`size` bytes): a corrupt length never makes
/// a large allocation.
fn field_len(is: &mut CodedInputStream<'_>, size: u64) -> Result<u32, GraphError> {
    let len = is.read_raw_varint32().map_err(protobuf_error)?;
    let at = is.pos();
    let left = size.saturating_sub(at);
    if u64::from(len) > left {
        let why = format!("a field of {len} bytes at byte {at} runs past the end of the index, {left} bytes on");
        return Err(ScipError::Protobuf(why).into());
    }
    Ok(len)
}

/// Reads the length-delimited field at `is` into `buf`.
fn read_field(is: &mut CodedInputStream<'_>, size: u64, buf: &mut Vec<u8>) -> Result<(), GraphError> {
    let len = field_len(is, size)?;
    is.read_raw_bytes_into(len, buf).map_err(protobuf_error)
}

/// Skips the length-delimited field at `is`.
fn skip_field(is: &mut CodedInputStream<'_>, size: u64) -> Result<(), GraphError> {
    let len = field_len(is, size)?;
    is.skip_raw_bytes(len).map_err(protobuf_error)
}

/// Skips a top-level group up to its end, which must come, as the decoder
/// does (a group nested in it ends where its own end tag or the index does,
/// as in the decoder too).
fn skip_group(is: &mut CodedInputStream<'_>) -> Result<(), GraphError> {
    loop {
        let tag = is.read_raw_varint32().map_err(protobuf_error)?;
        if (tag & 7) == END_GROUP && tag >> 3 != 0 {
            return Ok(());
        }
        protobuf::rt::skip_field_for_tag(tag, is).map_err(protobuf_error)?;
    }
}

/// The decoder's error, as the import reports it.
fn protobuf_error(e: protobuf::Error) -> GraphError {
    // A read that failed (a directory, a device error) is the file's
    // fault, not the encoding's: it keeps its own message.
    use std::io::ErrorKind as K;
    let text = e.to_string();
    let io: std::io::Error = e.into();
    match io.kind() {
        K::InvalidData | K::InvalidInput | K::UnexpectedEof | K::Other => ScipError::Protobuf(text).into(),
        _ => io.into(),
    }
}

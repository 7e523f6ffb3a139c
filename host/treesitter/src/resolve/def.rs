//! A definition's place in the project, as the resolve holds it between
//! edits, and the definitions' symbols.

use std::sync::Arc;

use super::DefIx;

/// A definition with its place in the project: four 32-bit indices, its
/// symbol in [`super::Project::symbol`] (a large tree keeps hundreds of thousands
/// of them between edits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Def {
    file: u32,
    at: u32,
    parent: u32,
    twin_of: u32,
}

/// An absent [`Def::parent`] or [`Def::twin_of`].
const NONE: u32 = u32::MAX;

/// `i` as a definition holds it: projects have far fewer than 2^32 - 1
/// files or definitions (memory runs out long before).
pub(super) fn index32(i: usize) -> u32 {
    u32::try_from(i).ok().filter(|&i| i != NONE).unwrap_or_else(|| panic!("index {i} past 32 bits"))
}

fn some(i: u32) -> Option<DefIx> {
    (i != NONE).then_some(i as DefIx)
}

impl Def {
    pub(super) fn new(file: usize, at: usize, parent: Option<DefIx>) -> Def {
        Def { file: index32(file), at: index32(at), parent: parent.map_or(NONE, index32), twin_of: NONE }
    }

    /// The file.
    pub fn file(&self) -> usize {
        self.file as usize
    }

    /// Index in the file's `facts.defs`.
    pub fn at(&self) -> usize {
        self.at as usize
    }

    /// The definition it belongs to (lexically, or by its `@owner`).
    pub fn parent(&self) -> Option<DefIx> {
        some(self.parent)
    }

    /// For a callable defined apart from its type (C++'s `double
    /// Circle::area() const { … }`): the member declaration in the type it
    /// defines, whose symbol it shares. The declaration stands for both in
    /// name lookups; the definition is written where its body is.
    pub fn twin_of(&self) -> Option<DefIx> {
        some(self.twin_of)
    }

    pub(super) fn set_parent(&mut self, parent: Option<DefIx>) {
        self.parent = parent.map_or(NONE, index32);
    }

    pub(super) fn set_twin_of(&mut self, twin_of: Option<DefIx>) {
        self.twin_of = twin_of.map_or(NONE, index32);
    }
}

/// The definitions' SCIP symbols, one text per file: a large tree's
/// hundreds of thousands held between edits without a string each, and an
/// unchanged file's shared by the resolve after an edit, not copied.
#[derive(Debug, Default, Clone)]
pub(crate) struct Symbols {
    files: Vec<Arc<FileSymbols>>,
}

/// One file's definitions' symbols, in source order.
#[derive(Debug, Default)]
pub(crate) struct FileSymbols {
    text: Box<str>,
    /// Where each definition's symbol ends in `text`.
    ends: Box<[u32]>,
}

impl FileSymbols {
    /// The symbols of one file's definitions, in order.
    pub(super) fn of<'a>(symbols: impl Iterator<Item = &'a str>) -> FileSymbols {
        let (mut text, mut ends) = (String::new(), Vec::new());
        for symbol in symbols {
            text.push_str(symbol);
            ends.push(u32::try_from(text.len()).unwrap_or_else(|_| panic!("a file's symbols past 4 GiB of text")));
        }
        FileSymbols { text: text.into_boxed_str(), ends: ends.into_boxed_slice() }
    }

    fn get(&self, at: usize) -> &str {
        let Some(&end) = self.ends.get(at) else { return "" };
        let start = if at == 0 { 0 } else { self.ends[at - 1] };
        &self.text[start as usize..end as usize]
    }
}

impl Symbols {
    /// Each file's symbols, in the files' order.
    pub(super) fn of(files: impl Iterator<Item = Arc<FileSymbols>>) -> Symbols {
        Symbols { files: files.collect() }
    }

    /// The symbol of the definition `at` of `file`, empty before they are
    /// spelled.
    pub(super) fn get(&self, file: usize, at: usize) -> &str {
        self.files.get(file).map_or("", |f| f.get(at))
    }

    /// File `file`'s symbols, to share with the next resolve.
    pub(super) fn file(&self, file: usize) -> Arc<FileSymbols> {
        self.files[file].clone()
    }

    /// A copy that shares nothing with this one (a compaction's).
    pub(super) fn copied(&self) -> Symbols {
        let copy = |f: &Arc<FileSymbols>| Arc::new(FileSymbols { text: f.text.clone(), ends: f.ends.clone() });
        Symbols { files: self.files.iter().map(copy).collect() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A large tree keeps hundreds of thousands of definitions between
    /// edits: four 32-bit indices each, their symbols one text per file.
    #[test]
    fn a_definition_is_four_indices_and_its_symbol_a_slice_of_its_files_text() {
        assert_eq!(std::mem::size_of::<Def>(), 16);
        let mut d = Def::new(3, 5, Some(7));
        assert_eq!((d.file(), d.at(), d.parent(), d.twin_of()), (3, 5, Some(7), None));
        d.set_twin_of(Some(0));
        d.set_parent(None);
        assert_eq!((d.parent(), d.twin_of()), (None, Some(0)));
        assert!(std::panic::catch_unwind(|| Def::new(0, 0, Some(u32::MAX as usize))).is_err());
        let one = Arc::new(FileSymbols::of(["a b c#", "", "é#f()."].into_iter()));
        let s = Symbols::of([one.clone(), Arc::default(), one].into_iter());
        assert_eq!((s.get(0, 0), s.get(0, 1), s.get(0, 2), s.get(0, 3)), ("a b c#", "", "é#f().", ""));
        assert_eq!((s.get(1, 0), s.get(2, 2), s.get(3, 0)), ("", "é#f().", ""));
        assert!(Arc::ptr_eq(&s.file(0), &s.file(2)), "a file's symbols shared, not copied");
        let copy = s.copied();
        assert!(!Arc::ptr_eq(&copy.file(0), &s.file(0)) && copy.get(2, 0) == "a b c#");
        assert_eq!(Symbols::default().get(0, 0), "");
    }
}

//! A definition's words in one allocation: its name, the type it belongs
//! to when declared outside it, the type it returns, and its parameters'
//! types.
//!
//! A large project keeps every definition's record between edits
//! (350,000 on the seven-repository benchmark tree): four strings and a
//! list of them took 96 bytes of each record and one allocation each;
//! [`Words`] takes 32 and one.

/// What [`Words`] are made of, owned: to make them, or to change one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parts {
    /// The name as written.
    pub name: String,
    /// The type it belongs to when declared outside it (Go's receivers).
    pub owner: Option<String>,
    /// The type a callable returns, as written, whitespace collapsed.
    pub returns: Option<String>,
    /// Each parameter's type as written (`""` where none is written).
    pub params: Vec<String>,
}

/// A definition's name, owner, return type and parameter types, one after
/// the other in one text, with where each ends; a parameter is its
/// length in decimal digits, a comma, then its type (a type as written
/// may hold any character, so no separator would do).
#[derive(Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Words {
    text: Box<str>,
    /// The ends of the name, the owner and the return type in `text`.
    ends: [u32; 3],
    /// Whether there is an owner (bit 0) and a return type (bit 1): an
    /// empty one is not none.
    has: u8,
}

const OWNER: u8 = 1;
const RETURNS: u8 = 2;

impl Words {
    /// `parts` in one text.
    pub fn new(parts: Parts) -> Words {
        let Parts { name, owner, returns, params } = parts;
        let mut text = name;
        let end = |t: &String| u32::try_from(t.len()).expect("a definition's words are far shorter than 4 GiB");
        let name_end = end(&text);
        text.push_str(owner.as_deref().unwrap_or(""));
        let owner_end = end(&text);
        text.push_str(returns.as_deref().unwrap_or(""));
        let returns_end = end(&text);
        for p in &params {
            use std::fmt::Write;
            let _ = write!(text, "{},{p}", p.len());
        }
        let has = if owner.is_some() { OWNER } else { 0 } | if returns.is_some() { RETURNS } else { 0 };
        Words { text: text.into_boxed_str(), ends: [name_end, owner_end, returns_end], has }
    }

    /// The words, each owned again.
    pub fn parts(&self) -> Parts {
        Parts {
            name: self.name().to_owned(),
            owner: self.owner().map(str::to_owned),
            returns: self.returns().map(str::to_owned),
            params: self.params().map(str::to_owned).collect(),
        }
    }

    /// These words with `change` made to them.
    pub fn changed(&self, change: impl FnOnce(&mut Parts)) -> Words {
        let mut parts = self.parts();
        change(&mut parts);
        Words::new(parts)
    }

    /// The `i`th word: from the end of the one before it to its own. Ends
    /// that do not fit the text (a saved reading damaged) give an empty
    /// word, never a panic.
    fn word(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        self.text.get(start..self.ends[i] as usize).unwrap_or("")
    }

    /// The name as written.
    pub fn name(&self) -> &str {
        self.word(0)
    }

    /// The type it belongs to when declared outside it.
    pub fn owner(&self) -> Option<&str> {
        (self.has & OWNER != 0).then(|| self.word(1))
    }

    /// The type it returns, as written.
    pub fn returns(&self) -> Option<&str> {
        (self.has & RETURNS != 0).then(|| self.word(2))
    }

    /// Each parameter's type as written, in order.
    pub fn params(&self) -> Params<'_> {
        Params { rest: self.text.get(self.ends[2] as usize..).unwrap_or("") }
    }
}

/// A definition's words, read and changed.
impl super::Def {
    /// Its name as written.
    pub fn name(&self) -> &str {
        self.words.name()
    }

    /// The type it belongs to when declared outside it (Go's receivers).
    pub fn owner(&self) -> Option<&str> {
        self.words.owner()
    }

    /// The type a callable returns, as written, whitespace collapsed.
    pub fn returns(&self) -> Option<&str> {
        self.words.returns()
    }

    /// Each parameter's type as written, for callables.
    pub fn params(&self) -> Params<'_> {
        self.words.params()
    }

    /// Its words with `change` made to them.
    pub fn change_words(&mut self, change: impl FnOnce(&mut Parts)) {
        self.words = self.words.changed(change);
    }
}

impl std::fmt::Debug for Words {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Words")
            .field("name", &self.name())
            .field("owner", &self.owner())
            .field("returns", &self.returns())
            .field("params", &self.params().collect::<Vec<_>>())
            .finish()
    }
}

/// A definition's parameter types ([`Words::params`]).
#[derive(Clone)]
pub struct Params<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Params<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        // What `Words::new` wrote: a length, a comma, that many bytes.
        // Anything else (a reading of another layout) ends the list.
        let (len, rest) = self.rest.split_once(',')?;
        let Some(p) = len.parse::<usize>().ok().and_then(|n| rest.get(..n)) else {
            self.rest = "";
            return None;
        };
        self.rest = &rest[p.len()..];
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(name: &str, owner: Option<&str>, returns: Option<&str>, params: &[&str]) -> Parts {
        Parts {
            name: name.into(),
            owner: owner.map(Into::into),
            returns: returns.map(Into::into),
            params: params.iter().map(|&p| p.into()).collect(),
        }
    }

    /// Every part comes back as it went in, whatever its characters (a
    /// comma, digits, a newline, none at all), and an empty owner or return
    /// type is told from none.
    #[test]
    fn words_give_back_what_they_were_made_of() {
        let cases = [
            parts("load", None, None, &[]),
            parts("", None, None, &[""]),
            parts("Read", Some("*Reader"), Some("(int, error)"), &["[]byte", "", "map[string,int]"]),
            parts("apply", Some(""), Some(""), &["12,3", ",", "\n\t", "Map<K,\nV>", "ünïcödé…"]),
            parts("x", None, Some("T"), &["a"; 40]),
        ];
        for case in cases {
            let words = Words::new(case.clone());
            assert_eq!(words.parts(), case);
            assert_eq!(words.params().count(), case.params.len());
            assert_eq!(Words::new(words.parts()), words, "made again, the same words");
        }
        assert_ne!(Words::new(parts("f", Some(""), None, &[])), Words::new(parts("f", None, None, &[])));
        assert_ne!(Words::new(parts("f", None, None, &[""])), Words::new(parts("f", None, None, &[])));
    }

    #[test]
    fn a_change_keeps_the_other_words() {
        let words = Words::new(parts("decode", Some("Reader"), Some("int"), &["[]byte", "int"]));
        let changed = words.changed(|p| {
            p.params.remove(0);
        });
        assert_eq!(changed.parts(), parts("decode", Some("Reader"), Some("int"), &["int"]));
    }

    /// A record of another layout never panics: its parameters end where
    /// they stop making sense.
    #[test]
    fn parameters_that_do_not_parse_end_the_list() {
        for rest in ["x", "3,ab", "99999999999999999999,a", "1,a2", "-1,a"] {
            let params = Params { rest };
            let got: Vec<&str> = params.collect();
            assert!(got.len() <= 1, "{rest:?} gave {got:?}");
        }
    }

    /// Ends past the text or inside a character (a damaged saved
    /// reading) give empty words, never a panic.
    #[test]
    fn ends_that_do_not_fit_give_empty_words() {
        for ends in [[9, 9, 9], [1, 0, 2], [u32::MAX; 3], [2, 2, 2]] {
            let words = Words { text: "éé".into(), ends, has: OWNER | RETURNS };
            let _ = (words.name(), words.owner(), words.returns(), words.params().count());
        }
        let words = Words { text: "éé".into(), ends: [1, 2, 4], has: OWNER | RETURNS };
        assert_eq!((words.name(), words.owner(), words.returns()), ("", Some(""), Some("é")));
    }

    #[test]
    fn words_take_32_bytes() {
        assert_eq!(std::mem::size_of::<Words>(), 32);
    }
}

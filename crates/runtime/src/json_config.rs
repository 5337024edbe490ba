//! Configuration text written as JSON, as a program that generates a policy
//! writes it. YAML reads JSON as the same values, but the YAML parsers read
//! it about five times slower than a JSON parser: a 10,000-rule policy took
//! longer to read than to load. This module tells the JSON that the YAML
//! reader (serde_norway) reads exactly as serde_json does, so that a reader
//! may take the JSON parser for it, and maps the line of each of its values
//! for [`SourceMap`](crate::source_map::SourceMap).
//!
//! It says yes only where the two are known to agree, and no at the first
//! doubt; the text is then read as YAML, as any other. The `config_json`
//! fuzz target checks the agreement. What it leaves to YAML, beyond text
//! that is not JSON: a text that is not an object; a tab outside the object;
//! the integer `-0` (YAML's 0, serde_json's -0.0); an integer of more than 18
//! digits (YAML reads wider integers than serde_json); an escaped surrogate
//! (serde_json pairs them, YAML refuses them); in a string, a character YAML
//! takes for a line break (U+0085, U+2028, U+2029) or does not print (U+007F
//! to U+009F, U+FEFF, U+FFFE, U+FFFF); a key over 1,000 bytes or with its `:`
//! on another line (YAML's implicit keys are one line of at most 1,024
//! characters); nesting deeper than 64.

use std::collections::HashMap;

/// How deep the text may nest: half of either parser's own limit (128).
const MAX_DEPTH: usize = 64;

/// How long a key may be, to its `:`: under YAML's 1,024 characters.
const MAX_KEY: usize = 1_000;

/// Whether `text` is a JSON object that serde_norway reads to the same
/// values as serde_json.
pub fn reads_alike(text: &str) -> bool {
    Walk::new(text, None).run().is_ok()
}

/// Records the line each value of `text` starts on, by JSON pointer (in the
/// first file), where [`reads_alike`] says yes.
pub(crate) fn lines(text: &str, lines: &mut HashMap<String, (u32, u32)>) -> Result<(), ()> {
    Walk::new(text, Some(lines)).run()
}

/// A single pass over the text: checks it and, where asked, maps it.
struct Walk<'t, 'm> {
    text: &'t str,
    at: usize,
    /// The line `at` is on, from 1.
    line: u32,
    /// The JSON pointer of the value being read.
    pointer: String,
    lines: Option<&'m mut HashMap<String, (u32, u32)>>,
}

impl<'t, 'm> Walk<'t, 'm> {
    fn new(text: &'t str, lines: Option<&'m mut HashMap<String, (u32, u32)>>) -> Self {
        Walk {
            text,
            at: 0,
            line: 1,
            pointer: String::new(),
            lines,
        }
    }

    fn run(mut self) -> Result<(), ()> {
        self.space(false);
        if self.peek() != Some(b'{') {
            return Err(());
        }
        self.value(0)?;
        self.space(false);
        if self.at == self.text.len() {
            Ok(())
        } else {
            Err(())
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Skips JSON's white space, a tab only inside the object (where YAML's
    /// flow context allows one).
    fn space(&mut self, inside: bool) {
        while let Some(byte) = self.peek() {
            match byte {
                b' ' => {}
                b'\t' if inside => {}
                b'\n' => self.line += 1,
                // A lone CR breaks a line in YAML; CRLF breaks it once.
                b'\r' if self.text.as_bytes().get(self.at + 1) != Some(&b'\n') => self.line += 1,
                b'\r' => {}
                _ => return,
            }
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), ()> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(())
        }
    }

    /// Reads the value at `at`, mapped under the current pointer.
    fn value(&mut self, depth: usize) -> Result<(), ()> {
        if let Some(lines) = self.lines.as_deref_mut() {
            lines.insert(self.pointer.clone(), (0, self.line));
        }
        match self.peek().ok_or(())? {
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => self.string(None),
            b'-' | b'0'..=b'9' => self.number(),
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            _ => Err(()),
        }
    }

    fn object(&mut self, depth: usize) -> Result<(), ()> {
        let mut key = String::new();
        self.members(depth, b'}', |walk, _| {
            let (start, line) = (walk.at, walk.line);
            key.clear();
            walk.string(Some(&mut key))?;
            walk.space(true);
            if walk.line != line || walk.at - start > MAX_KEY {
                return Err(());
            }
            walk.expect(b':')?;
            walk.space(true);
            walk.pointer.push('/');
            escape_into(&key, &mut walk.pointer);
            walk.value(depth)
        })
    }

    fn array(&mut self, depth: usize) -> Result<(), ()> {
        self.members(depth, b']', |walk, index| {
            walk.pointer.push('/');
            walk.pointer.push_str(&index.to_string());
            walk.value(depth)
        })
    }

    /// Reads an object or an array from its opening bracket to `close`:
    /// `member` reads the `n`th member under its pointer segment.
    fn members(
        &mut self,
        depth: usize,
        close: u8,
        mut member: impl FnMut(&mut Self, usize) -> Result<(), ()>,
    ) -> Result<(), ()> {
        if depth > MAX_DEPTH {
            return Err(());
        }
        self.at += 1;
        self.space(true);
        if self.peek() == Some(close) {
            self.at += 1;
            return Ok(());
        }
        let len = self.pointer.len();
        let mut n = 0;
        loop {
            member(self, n)?;
            self.pointer.truncate(len);
            self.space(true);
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.space(true);
                }
                Some(byte) if byte == close => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(()),
            }
            n += 1;
        }
    }

    /// Reads a string, decoding it into `key` where given.
    fn string(&mut self, mut key: Option<&mut String>) -> Result<(), ()> {
        self.expect(b'"')?;
        // The run of plain characters since the last escape.
        let mut run = self.at;
        loop {
            let byte = self.peek().ok_or(())?;
            match byte {
                b'"' => {
                    if let Some(key) = key.as_deref_mut() {
                        key.push_str(self.text(run, self.at)?);
                    }
                    self.at += 1;
                    return Ok(());
                }
                b'\\' => {
                    if let Some(key) = key.as_deref_mut() {
                        key.push_str(self.text(run, self.at)?);
                    }
                    let decoded = self.escape()?;
                    if let Some(key) = key.as_deref_mut() {
                        key.push(decoded);
                    }
                    run = self.at;
                }
                0x00..=0x1f | 0x7f => return Err(()),
                0x20..=0x7e => self.at += 1,
                _ => {
                    let c = self
                        .text(self.at, self.text.len())?
                        .chars()
                        .next()
                        .ok_or(())?;
                    if matches!(
                        c,
                        '\u{7f}'
                            ..='\u{9f}'
                                | '\u{2028}'
                                | '\u{2029}'
                                | '\u{feff}'
                                | '\u{fffe}'
                                | '\u{ffff}'
                    ) {
                        return Err(());
                    }
                    self.at += c.len_utf8();
                }
            }
        }
    }

    /// The text from `from` to `to`: the walk only ever stops on an ASCII
    /// byte or after a whole character, so both are boundaries.
    fn text(&self, from: usize, to: usize) -> Result<&'t str, ()> {
        self.text.get(from..to).ok_or(())
    }

    /// Reads an escape after its backslash and returns the character.
    fn escape(&mut self) -> Result<char, ()> {
        self.at += 1;
        let byte = self.peek().ok_or(())?;
        self.at += 1;
        Ok(match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hex = self.text.as_bytes().get(self.at..self.at + 4).ok_or(())?;
                let hex = std::str::from_utf8(hex).map_err(drop)?;
                if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(());
                }
                self.at += 4;
                // A surrogate is refused here: serde_json pairs them, YAML does not.
                char::from_u32(u32::from_str_radix(hex, 16).map_err(drop)?).ok_or(())?
            }
            _ => return Err(()),
        })
    }

    fn number(&mut self) -> Result<(), ()> {
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        let digits = self.digits();
        let integer = &self.text.as_bytes()[self.at - digits..self.at];
        if digits == 0 || (integer[0] == b'0' && digits > 1) {
            return Err(());
        }
        let mut whole = true;
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(());
            }
            whole = false;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(());
            }
            whole = false;
        }
        if whole && ((negative && integer == b"0") || digits > 18) {
            return Err(());
        }
        Ok(())
    }

    /// Skips a run of decimal digits and says how long it was.
    fn digits(&mut self) -> usize {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        self.at - start
    }

    fn word(&mut self, word: &[u8]) -> Result<(), ()> {
        if self.text.as_bytes()[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(())
        } else {
            Err(())
        }
    }
}

/// Appends `key` as a JSON pointer segment (RFC 6901): `~` is `~0`, `/` is `~1`.
fn escape_into(key: &str, out: &mut String) {
    for c in key.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            _ => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_of_every_kind_of_value_reads_alike() {
        assert!(reads_alike(
            " {\"a\": [1, -2, 3.5, -0.0, 1e5, true, false, null, \"x\\u00e9\\n\"],\r\n\t\"b\": {}}\n"
        ));
    }

    #[test]
    fn what_the_two_readers_could_read_apart_goes_to_yaml() {
        for text in [
            "[1]",
            "\t{}",
            "{} \t",
            "{\"a\": -0}",
            "{\"a\": 1234567890123456789}",
            "{\"a\": \"\\ud83d\\ude00\"}",
            "{\"a\": \"\u{85}\"}",
            "{\"a\": \"\u{2028}\"}",
            "{\"a\": \"\u{7f}\"}",
            "{\"a\"\n: 1}",
            "{\"a\": 1} # a comment",
            "{\"a\": 01}",
        ] {
            assert!(!reads_alike(text), "{text:?}");
        }
        let deep = format!("{{\"a\": {}1{}}}", "[".repeat(64), "]".repeat(64));
        assert!(!reads_alike(&deep));
        let long = format!("{{\"{}\": 1}}", "k".repeat(1_000));
        assert!(!reads_alike(&long));
    }

    #[test]
    fn each_value_is_mapped_to_the_line_it_starts_on() {
        let mut map = HashMap::new();
        lines("{\"a/b\": [\n 1,\r\n {\"~\": 2},\r 3]}", &mut map).unwrap();
        assert_eq!(map[""], (0, 1));
        assert_eq!(map["/a~1b"], (0, 1));
        assert_eq!(map["/a~1b/0"], (0, 2));
        assert_eq!(map["/a~1b/1/~0"], (0, 3));
        assert_eq!(map["/a~1b/2"], (0, 4));
    }
}

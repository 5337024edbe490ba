//! Brace expansion (`{a,b}`, `{1..3}`) of literal words, as bash does it
//! before anything else: `{rm,-rf,/}` is three words, and `r{m,}` two.

/// At most this many words come out of one word; a word that would expand to
/// more is reported as not expandable (callers treat it as computed).
pub const MAX_EXPANSION: usize = 64;

/// Expands `word`, given as characters with whether each is unquoted (active
/// syntax). Returns `None` when the expansion is too large.
pub fn expand(word: &[(char, bool)]) -> Option<Vec<String>> {
    let mut out = Vec::new();
    if expand_into(word, &mut out) {
        Some(out)
    } else {
        None
    }
}

/// Whether a word has brace-expansion syntax at all (cheap pre-check).
pub fn has_braces(word: &[(char, bool)]) -> bool {
    word.iter().any(|&(c, active)| active && c == '{')
        && word.iter().any(|&(c, active)| active && c == '}')
}

fn expand_into(word: &[(char, bool)], out: &mut Vec<String>) -> bool {
    let mut search = 0;
    while let Some(open) = (search..word.len()).find(|&i| word[i] == ('{', true)) {
        let Some((close, commas)) = group(word, open) else {
            search = open + 1;
            continue;
        };
        let (prefix, suffix) = (&word[..open], &word[close + 1..]);
        let alternatives: Vec<&[(char, bool)]> = if commas.is_empty() {
            match sequence(&word[open + 1..close]) {
                Some(items) => {
                    for item in items {
                        let mut next = prefix.to_vec();
                        next.extend(item.chars().map(|c| (c, false)));
                        next.extend_from_slice(suffix);
                        if !expand_into(&next, out) {
                            return false;
                        }
                    }
                    return true;
                }
                None => {
                    search = open + 1;
                    continue;
                }
            }
        } else {
            let mut parts = Vec::new();
            let mut from = open + 1;
            for &comma in &commas {
                parts.push(&word[from..comma]);
                from = comma + 1;
            }
            parts.push(&word[from..close]);
            parts
        };
        for alternative in alternatives {
            let mut next = prefix.to_vec();
            next.extend_from_slice(alternative);
            next.extend_from_slice(suffix);
            if !expand_into(&next, out) {
                return false;
            }
        }
        return true;
    }
    if out.len() >= MAX_EXPANSION {
        return false;
    }
    out.push(word.iter().map(|&(c, _)| c).collect());
    true
}

/// The matching `}` of the `{` at `open` and the commas at its top level.
fn group(word: &[(char, bool)], open: usize) -> Option<(usize, Vec<usize>)> {
    let mut depth = 0;
    let mut commas = Vec::new();
    for (i, &(c, active)) in word.iter().enumerate().skip(open) {
        if !active {
            continue;
        }
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((i, commas));
                }
            }
            ',' if depth == 1 => commas.push(i),
            _ => {}
        }
    }
    None
}

/// `a..e` or `1..5` (with an optional `..step`): its items, if small.
fn sequence(inner: &[(char, bool)]) -> Option<Vec<String>> {
    let text: String = inner.iter().map(|&(c, _)| c).collect();
    let mut bounds = text.split("..");
    let (from, to) = (bounds.next()?, bounds.next()?);
    let step: i64 = match bounds.next() {
        Some(s) => s.parse::<i64>().ok()?.abs().max(1),
        None => 1,
    };
    if bounds.next().is_some() {
        return None;
    }
    let (a, b, alpha) = match (from.parse::<i64>(), to.parse::<i64>()) {
        (Ok(a), Ok(b)) => (a, b, false),
        _ => {
            let (mut f, mut t) = (from.chars(), to.chars());
            match (f.next(), f.next(), t.next(), t.next()) {
                (Some(a), None, Some(b), None)
                    if a.is_ascii_alphabetic() && b.is_ascii_alphabetic() =>
                {
                    (a as i64, b as i64, true)
                }
                _ => return None,
            }
        }
    };
    let count = (a - b).unsigned_abs() / step as u64 + 1;
    if count > MAX_EXPANSION as u64 {
        return None;
    }
    let dir = if b >= a { step } else { -step };
    Some(
        (0..count as i64)
            .map(|k| a + k * dir)
            .map(|v| {
                if alpha {
                    char::from_u32(v as u32)
                        .map(String::from)
                        .unwrap_or_default()
                } else {
                    v.to_string()
                }
            })
            .collect(),
    )
}

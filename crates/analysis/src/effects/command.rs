//! What every family reads of a command: its name, an option's value, a flag.

use crate::shell::Command;

pub(super) fn name(c: &Command) -> &str {
    c.program.as_deref().unwrap_or(&c.written)
}

/// The value of the first of `options` (`-o VALUE`, `-oVALUE`, `-so VALUE`,
/// `--opt=VALUE`, `--opt VALUE`).
pub(super) fn value_of<'a>(c: &'a Command, options: &[&str]) -> Option<&'a str> {
    let args = &c.args;
    for (k, a) in args.iter().enumerate() {
        let v = a.value.as_str();
        if v == "--" {
            return None;
        }
        for o in options {
            if v == *o {
                return args.get(k + 1).map(|n| n.value.as_str());
            }
            if o.starts_with("--") {
                if let Some(rest) = v.strip_prefix(o).and_then(|r| r.strip_prefix('=')) {
                    return Some(rest);
                }
            } else if o.len() == 2 && v.len() > 2 && v.starts_with('-') && !v.starts_with("--") {
                // `-oFILE`, or a cluster of flags ending with it: `-so FILE`, `-qO-`.
                let letter = &o[1..];
                if let Some(at) = v[1..].find(letter).map(|p| p + 1)
                    && v[1..at].bytes().all(|b| b.is_ascii_alphabetic())
                {
                    return match &v[at + 1..] {
                        "" => args.get(k + 1).map(|n| n.value.as_str()),
                        rest => Some(rest),
                    };
                }
            }
        }
    }
    None
}

/// Whether any of `flags` is given, in any spelling (`-rf` has `-r`), or
/// written as one word (`-toc`).
pub(super) fn has_flag(c: &Command, flags: &[&str]) -> bool {
    if c.args.iter().any(|a| flags.contains(&a.value.as_str())) {
        return true;
    }
    let set = c.flags();
    flags.iter().any(|f| set.contains(f))
}

//! Commands that run another command: wrappers to see through (`env`, `sudo`,
//! `nice`, …) with the options each takes, and the programs whose arguments
//! hold a command line of their own (shells' `-c`, `su -c`, `xargs`).

use super::words::Arg;

/// A wrapper's option conventions.
struct Wrapper {
    names: &'static [&'static str],
    /// Short options that take a value (attached or as the next argument).
    with_value: &'static str,
    /// Long options that take the next argument as their value (without `=`).
    long_with_value: &'static [&'static str],
    /// Short options that mean the wrapper runs no command (`command -v`).
    not_running: &'static str,
    /// Positional arguments before the command (`timeout DURATION`).
    positionals: usize,
    /// `NAME=value` words before the command set its environment.
    assignments: bool,
}

const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        names: &["env"],
        with_value: "uCS",
        long_with_value: &["--unset", "--chdir", "--split-string"],
        not_running: "",
        positionals: 0,
        assignments: true,
    },
    Wrapper {
        names: &["sudo"],
        with_value: "ugphCDrtTUR",
        long_with_value: &[
            "--user",
            "--group",
            "--host",
            "--prompt",
            "--close-from",
            "--chdir",
            "--role",
            "--type",
            "--command-timeout",
            "--other-user",
            "--chroot",
        ],
        not_running: "elvVK",
        positionals: 0,
        assignments: true,
    },
    Wrapper {
        names: &["doas"],
        with_value: "uC",
        long_with_value: &[],
        not_running: "",
        positionals: 0,
        assignments: false,
    },
    Wrapper {
        names: &["pkexec"],
        with_value: "",
        long_with_value: &["--user"],
        not_running: "",
        positionals: 0,
        assignments: false,
    },
    Wrapper {
        names: &["command"],
        with_value: "",
        long_with_value: &[],
        not_running: "vV",
        positionals: 0,
        assignments: false,
    },
    Wrapper {
        names: &["builtin", "nohup", "setsid", "torsocks", "busybox"],
        with_value: "",
        long_with_value: &[],
        not_running: "",
        positionals: 0,
        assignments: false,
    },
    Wrapper {
        names: &["exec"],
        with_value: "a",
        long_with_value: &[],
        not_running: "",
        positionals: 0,
        assignments: false,
    },
    Wrapper {
        names: &["timeout"],
        with_value: "sk",
        long_with_value: &["--signal", "--kill-after"],
        not_running: "",
        positionals: 1,
        assignments: false,
    },
    Wrapper {
        names: &["nice"],
        with_value: "n",
        long_with_value: &["--adjustment"],
        not_running: "",
        positionals: 0,
        assignments: false,
    },
    Wrapper {
        names: &["ionice"],
        with_value: "cnpPu",
        long_with_value: &["--class", "--classdata"],
        not_running: "",
        positionals: 0,
        assignments: false,
    },
    Wrapper {
        names: &["stdbuf"],
        with_value: "ioe",
        long_with_value: &["--input", "--output", "--error"],
        not_running: "",
        positionals: 0,
        assignments: false,
    },
    Wrapper {
        names: &["time"],
        with_value: "fo",
        long_with_value: &["--format", "--output"],
        not_running: "",
        positionals: 0,
        assignments: false,
    },
    Wrapper {
        names: &["chroot"],
        with_value: "",
        long_with_value: &["--userspec", "--groups"],
        not_running: "",
        positionals: 1,
        assignments: false,
    },
];

/// What a wrapper consumed before the command it runs.
pub(crate) struct Unwrapped {
    /// Arguments after the wrapper's own word that belong to the wrapper.
    pub skip: usize,
    /// `NAME=value` set by the wrapper (`env A=1 cmd`).
    pub assignments: Vec<(String, String)>,
    /// `env -S STRING`: a command line split into words in place of the wrapper's options.
    pub split: Option<String>,
}

/// If `name` is a wrapper that runs a command here, what it consumes of `rest`.
pub(crate) fn unwrap(name: &str, rest: &[Arg]) -> Option<Unwrapped> {
    // Every command passes here: rule out most names by their first byte
    // before comparing them with the wrappers' names.
    if !matches!(
        name.as_bytes().first(),
        Some(b'e' | b's' | b'd' | b'p' | b'c' | b'b' | b'n' | b't' | b'i')
    ) {
        return None;
    }
    let wrapper = WRAPPERS.iter().find(|w| w.names.contains(&name))?;
    let mut out = Unwrapped {
        skip: 0,
        assignments: Vec::new(),
        split: None,
    };
    let mut i = 0;
    while let Some(arg) = rest.get(i) {
        if !arg.literal {
            break;
        }
        let v = arg.value.as_str();
        if v == "--" {
            i += 1;
            break;
        }
        if v == "-" && name == "env" {
            i += 1;
            continue;
        }
        if let Some(long) = v.strip_prefix("--").filter(|l| !l.is_empty()) {
            let (option, value) = match long.split_once('=') {
                Some((o, v)) => (format!("--{o}"), Some(v.to_string())),
                None => (v.to_string(), None),
            };
            let takes = wrapper.long_with_value.contains(&option.as_str());
            let value = match value {
                Some(v) => Some(v),
                None if takes => {
                    i += 1;
                    rest.get(i).map(|a| a.value.clone())
                }
                None => None,
            };
            if option == "--split-string" {
                out.split = value;
            }
            i += 1;
            continue;
        }
        let Some(cluster) = v.strip_prefix('-').filter(|c| !c.is_empty()) else {
            break;
        };
        let mut consumed_next = false;
        for (k, c) in cluster.char_indices() {
            if wrapper.not_running.contains(c) {
                return None;
            }
            if wrapper.with_value.contains(c) {
                let attached = &cluster[k + c.len_utf8()..];
                let value = if attached.is_empty() {
                    consumed_next = true;
                    rest.get(i + 1).map(|a| a.value.clone())
                } else {
                    Some(attached.to_string())
                };
                if name == "env" && c == 'S' {
                    out.split = value;
                }
                break;
            }
        }
        i += if consumed_next { 2 } else { 1 };
    }
    i = (i + wrapper.positionals).min(rest.len());
    if wrapper.assignments {
        while let Some(arg) = rest.get(i) {
            match arg.literal.then(|| assignment(&arg.value)).flatten() {
                Some(pair) => out.assignments.push(pair),
                None => break,
            }
            i += 1;
        }
    }
    out.skip = i.min(rest.len());
    Some(out)
}

/// `NAME=value` as a pair, when the word is an assignment.
pub(crate) fn assignment(word: &str) -> Option<(String, String)> {
    let (name, value) = word.split_once('=')?;
    let mut bytes = name.bytes();
    let valid = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_');
    valid.then(|| (name.to_string(), value.to_string()))
}

/// Shells whose `-c` string is a command line.
pub(crate) const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash", "fish",
];

/// Where a shell reads its commands from.
pub(crate) enum ShellInput {
    /// The `-c` string: the index of the argument.
    String(usize),
    /// `-c` without a string.
    MissingString,
    /// Standard input (no operand, or `-s`).
    Stdin,
    /// A script file.
    File,
}

/// How a shell invoked with `rest` gets its commands.
pub(crate) fn shell_input(rest: &[Arg]) -> ShellInput {
    let (mut command, mut stdin) = (false, false);
    let mut i = 0;
    while let Some(arg) = rest.get(i) {
        let v = arg.value.as_str();
        if !arg.literal {
            break;
        }
        if v == "--" || v == "-" {
            i += 1;
            break;
        }
        if v == "-o" || v == "+o" || v == "-O" || v == "+O" || v == "--rcfile" || v == "--init-file"
        {
            i += 2;
            continue;
        }
        if v.starts_with("--") {
            i += 1;
            continue;
        }
        if let Some(cluster) = v.strip_prefix('-').or_else(|| v.strip_prefix('+')) {
            if v.starts_with('-') {
                command |= cluster.contains('c');
                stdin |= cluster.contains('s');
            }
            i += 1;
            continue;
        }
        break;
    }
    match (command, rest.get(i)) {
        (true, Some(_)) => ShellInput::String(i),
        (true, None) => ShellInput::MissingString,
        (false, _) if stdin => ShellInput::Stdin,
        (false, None) => ShellInput::Stdin,
        (false, Some(_)) => ShellInput::File,
    }
}

/// The command string of `su … -c STRING`, as the index of its argument.
pub(crate) fn su_string(rest: &[Arg]) -> Option<usize> {
    let mut i = 0;
    while let Some(arg) = rest.get(i) {
        let v = arg.value.as_str();
        if v == "--command" || v == "-c" {
            return (i + 1 < rest.len()).then_some(i + 1);
        }
        if v.starts_with("--command=") {
            return Some(i);
        }
        if let Some(cluster) = v.strip_prefix('-').filter(|c| !c.starts_with('-')) {
            // `-lc STRING`: `c` takes the next argument (or the rest of the cluster).
            if let Some(k) = cluster.find('c') {
                return if k + 1 == cluster.len() {
                    (i + 1 < rest.len()).then_some(i + 1)
                } else {
                    Some(i)
                };
            }
        }
        i += 1;
    }
    None
}

/// Where the command of `xargs [options] [command…]` starts in `rest`.
pub(crate) fn xargs_command(rest: &[Arg]) -> usize {
    const WITH_VALUE: &str = "adEILnPs";
    const LONG_WITH_VALUE: &[&str] = &[
        "--arg-file",
        "--delimiter",
        "--max-args",
        "--max-procs",
        "--max-chars",
        "--process-slot-var",
    ];
    let mut i = 0;
    while let Some(arg) = rest.get(i) {
        let v = arg.value.as_str();
        if v == "--" {
            return i + 1;
        }
        if v.starts_with("--") {
            i += if LONG_WITH_VALUE.contains(&v) { 2 } else { 1 };
            continue;
        }
        let Some(cluster) = v.strip_prefix('-').filter(|c| !c.is_empty()) else {
            return i;
        };
        let mut step = 1;
        for (k, c) in cluster.char_indices() {
            if WITH_VALUE.contains(c) {
                if k + 1 == cluster.len() {
                    step = 2;
                }
                break;
            }
        }
        i += step;
    }
    rest.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_wrapper_passes_the_first_byte_filter() {
        for name in WRAPPERS.iter().flat_map(|w| w.names) {
            assert!(unwrap(name, &[]).is_some(), "{name}");
        }
    }
}

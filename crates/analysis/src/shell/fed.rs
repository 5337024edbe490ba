//! Code that reaches a shell by another road than `-c`: literal text printed
//! into a shell's input (`printf '…' | sh`, `bash < <(echo …)`,
//! `source <(echo …)`), `script -c`, `watch`, awk's `system()`, `parallel`.
//! Each gives the text the shell would run; the flattener parses it as the
//! commands it is. Text that is not literal stays opaque.

use super::words::Arg;

/// What `echo` or `printf` prints, when every word is literal and the format
/// is one Warden can evaluate (no conversions but `%s`, `%b`); `None` otherwise.
/// (The command's program and words; `redirected` when its output goes
/// elsewhere.)
pub(super) fn printed(program: Option<&str>, args: &[Arg], redirected: bool) -> Option<String> {
    if args.iter().any(|a| !a.literal) || redirected {
        return None;
    }
    match program? {
        "echo" => {
            let mut escapes = false;
            let mut words = args.iter().map(|a| a.value.as_str()).peekable();
            while let Some(flag) =
                words.next_if(|w| matches!(*w, "-n" | "-e" | "-E" | "-ne" | "-en"))
            {
                escapes |= flag.contains('e');
            }
            let text = words.collect::<Vec<_>>().join(" ");
            Some(if escapes { unescape(&text) } else { text })
        }
        "printf" => {
            let (format, rest) = args.split_first()?;
            let format = format.value.as_str();
            match format {
                "%s" | "%s\\n" | "%b" | "%b\\n" => Some(
                    rest.iter()
                        .map(|a| {
                            if format.starts_with("%b") {
                                unescape(&a.value)
                            } else {
                                a.value.clone()
                            }
                        })
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
                _ if !format.contains('%') && rest.is_empty() => Some(unescape(format)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The backslash escapes of `printf` and `echo -e` that matter to a shell.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// The command text of `script [-q…] -c TEXT` or `--command TEXT`.
pub(super) fn script_command(args: &[Arg]) -> Option<Arg> {
    for (k, a) in args.iter().enumerate() {
        let v = a.value.as_str();
        if v == "--command" || v == "-c" {
            return args.get(k + 1).cloned();
        }
        if let Some(rest) = v.strip_prefix("--command=") {
            return Some(Arg {
                value: rest.to_string(),
                ..a.clone()
            });
        }
        if let Some(cluster) = v.strip_prefix('-').filter(|c| !c.starts_with('-'))
            && let Some(at) = cluster.find('c')
            && cluster[..at].bytes().all(|b| b"aefqkr".contains(&b))
        {
            return match &cluster[at + 1..] {
                "" => args.get(k + 1).cloned(),
                rest => Some(Arg {
                    value: rest.to_string(),
                    ..a.clone()
                }),
            };
        }
    }
    None
}

/// The command of `watch [options] COMMAND…`: its words joined (watch runs
/// them through `sh -c`), or with `-x` the words as a command.
pub(super) fn watch_command(args: &[Arg]) -> Option<(Vec<Arg>, bool)> {
    let mut exec = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        if v == "--" {
            i += 1;
            break;
        }
        if !v.starts_with('-') || v.len() < 2 {
            break;
        }
        exec |= v == "-x" || v == "--exec" || (!v.starts_with("--") && v.contains('x'));
        // `-n SECS`, `-q N`, `--interval SECS`: the value is the next word.
        let takes = matches!(v, "--interval" | "--equexit" | "--chgexit")
            || (!v.starts_with("--") && v.ends_with(['n', 'q']));
        i += if takes { 2 } else { 1 };
    }
    let words = args.get(i..).filter(|w| !w.is_empty())?.to_vec();
    Some((words, exec))
}

/// The literal strings awk's program passes to `system()`.
pub(super) fn awk_system(args: &[Arg]) -> Vec<Arg> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.value.as_str() {
            "-f" | "--file" => return Vec::new(),
            "-v" | "-F" | "--assign" | "--field-separator" => i += 2,
            v if v.starts_with('-') && v.len() > 1 => i += 1,
            _ => break,
        }
    }
    let Some(program) = args.get(i) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut rest = program.value.as_str();
    while let Some(at) = rest.find("system(") {
        rest = rest[at + "system(".len()..].trim_start();
        let Some(body) = rest.strip_prefix('"') else {
            // A computed command: opaque.
            out.push(Arg {
                value: rest.split(')').next().unwrap_or("").to_string(),
                literal: false,
                glob: false,
            });
            continue;
        };
        let end = body.find('"').unwrap_or(body.len());
        out.push(Arg {
            value: body[..end].to_string(),
            literal: program.literal,
            glob: false,
        });
        rest = &body[end..];
    }
    out
}

/// What `parallel` runs: the command text for each argument after `:::`
/// (`{}` replaced, else the argument appended), or, without `:::`, the command
/// with its targets unknown (read from the input at run time).
pub(super) fn parallel(args: &[Arg]) -> (Vec<Arg>, bool) {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        if !v.starts_with('-') || v == "--" {
            i += usize::from(v == "--");
            break;
        }
        let takes = matches!(
            v,
            "-j" | "-N"
                | "-n"
                | "-S"
                | "-I"
                | "-E"
                | "-a"
                | "--jobs"
                | "--sshlogin"
                | "--arg-file"
                | "--delimiter"
                | "-d"
        );
        i += if takes { 2 } else { 1 };
    }
    let rest = args.get(i..).unwrap_or_default();
    let split = rest.iter().position(|a| a.value.starts_with(":::"));
    let (command, inputs) = match split {
        Some(k) => (&rest[..k], Some(&rest[k + 1..])),
        None => (rest, None),
    };
    let literal = command.iter().all(|a| a.literal);
    let text = command
        .iter()
        .map(|a| a.value.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    if text.is_empty() {
        return (Vec::new(), false);
    }
    let Some(inputs) =
        inputs.filter(|i| !i.is_empty() && !i.iter().any(|a| a.value.starts_with(":::")))
    else {
        return (
            vec![Arg {
                value: text.replace("{}", ""),
                literal,
                glob: false,
            }],
            true,
        );
    };
    let runs = inputs
        .iter()
        .map(|input| Arg {
            value: if text.contains("{}") {
                text.replace("{}", &quoted(&input.value))
            } else {
                format!("{text} {}", quoted(&input.value))
            },
            literal: literal && input.literal && !input.glob,
            glob: false,
        })
        .collect();
    (runs, false)
}

/// A word as parallel passes it to the shell: quoted unless plainly safe (a
/// `~` stays as the outer shell would have expanded it).
pub(super) fn quoted(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_~/.:=@%+,-".contains(&b))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// `xargs` with no option that changes how its input becomes arguments
/// (`-I`, `-0`, `-d`, `-L`, `-n`, `-E`, …): its input's words are appended.
pub(super) fn plain_xargs(args: &[Arg]) -> bool {
    let from = super::wrappers::xargs_command(args);
    args[..from].iter().all(|a| {
        matches!(
            a.value.as_str(),
            "-r" | "--no-run-if-empty" | "-t" | "--verbose" | "-x" | "--exit"
        )
    })
}

/// What `flock [options] FILE COMMAND…` or `flock [options] FILE -c TEXT`
/// runs: the command's words, or the shell text.
pub(super) enum Flock {
    Words(Vec<Arg>),
    Text(Arg),
}

pub(super) fn flock(args: &[Arg]) -> Option<Flock> {
    let mut i = 0;
    // Options, then the lock file.
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        if matches!(
            v,
            "-w" | "--wait" | "--timeout" | "-E" | "--conflict-exit-code"
        ) {
            i += 2;
        } else if v.starts_with('-') && v.len() > 1 && v != "-c" && v != "--command" {
            i += 1;
        } else {
            break;
        }
    }
    let rest = args.get(i + 1..)?;
    match rest.first().map(|a| a.value.as_str()) {
        Some("-c" | "--command") => rest.get(1).cloned().map(Flock::Text),
        Some(_) => Some(Flock::Words(rest.to_vec())),
        None => None,
    }
}

/// The shell text of sed's `e COMMAND` in a literal script (`sed 'e rm -rf ~'`).
pub(super) fn sed_execute(args: &[Arg]) -> Vec<Arg> {
    let mut scripts = Vec::new();
    let mut k = 0;
    let mut explicit = false;
    while let Some(a) = args.get(k) {
        match a.value.as_str() {
            "-e" | "--expression" => {
                explicit = true;
                scripts.extend(args.get(k + 1).cloned());
                k += 2;
            }
            "-f" | "--file" | "-l" | "--line-length" => k += 2,
            v if v.starts_with('-') && v.len() > 1 => k += 1,
            _ if explicit => break,
            _ => {
                scripts.push(a.clone());
                break;
            }
        }
    }
    scripts
        .iter()
        .flat_map(|script| {
            script
                .value
                .split([';', '\n'])
                .filter_map(|command| {
                    // An address may come first: `1e cmd`, `/x/e cmd`.
                    let command = command.trim_start();
                    let body = command.trim_start_matches(|c: char| {
                        c.is_ascii_digit() || matches!(c, '$' | ',' | '!')
                    });
                    body.strip_prefix("e ").map(|text| Arg {
                        value: text.trim().to_string(),
                        literal: script.literal,
                        glob: false,
                    })
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

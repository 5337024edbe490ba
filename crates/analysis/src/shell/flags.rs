//! Flag normalisation: a command's options as a set that compares equal for
//! every spelling of the same options. Combined short flags are split (`-rf` =
//! `-r -f`), long options lose their `=value` and unambiguous abbreviations are
//! completed (`--recur` = `--recursive`, as getopt does), and for the programs
//! where it matters short flags fold into their long names (for `rm`, `-r`,
//! `-R` and `--recursive` are all `--recursive`).

/// A program's option conventions.
struct Spec {
    programs: &'static [&'static str],
    /// Short flag → the long name it means.
    aliases: &'static [(char, &'static str)],
    /// Every long option (for completing abbreviations).
    longs: &'static [&'static str],
    /// Short flags that take a value: splitting `-xVALUE` stops at them.
    with_value: &'static str,
}

const SPECS: &[Spec] = &[
    Spec {
        programs: &["rm"],
        aliases: &[
            ('r', "--recursive"),
            ('R', "--recursive"),
            ('f', "--force"),
            ('i', "--interactive"),
            ('I', "--interactive"),
            ('d', "--dir"),
            ('v', "--verbose"),
        ],
        longs: &[
            "--recursive",
            "--force",
            "--interactive",
            "--dir",
            "--verbose",
            "--one-file-system",
            "--no-preserve-root",
            "--preserve-root",
            "--help",
            "--version",
        ],
        with_value: "",
    },
    Spec {
        programs: &["cp"],
        aliases: &[
            ('r', "--recursive"),
            ('R', "--recursive"),
            ('f', "--force"),
            ('a', "--archive"),
        ],
        longs: &["--recursive", "--force", "--archive"],
        with_value: "St",
    },
    Spec {
        programs: &["mv"],
        aliases: &[('f', "--force")],
        longs: &["--force"],
        with_value: "St",
    },
    Spec {
        programs: &["chmod", "chown", "chgrp"],
        aliases: &[('R', "--recursive")],
        longs: &["--recursive"],
        with_value: "",
    },
    Spec {
        programs: &["ln"],
        aliases: &[('s', "--symbolic"), ('f', "--force")],
        longs: &["--symbolic", "--force"],
        with_value: "St",
    },
    Spec {
        programs: &["git"],
        aliases: &[('f', "--force")],
        longs: &["--force"],
        with_value: "Cc",
    },
    Spec {
        programs: &["curl"],
        aliases: &[
            ('d', "--data"),
            ('X', "--request"),
            ('o', "--output"),
            ('O', "--remote-name"),
            ('F', "--form"),
            ('T', "--upload-file"),
            ('k', "--insecure"),
            ('L', "--location"),
            ('s', "--silent"),
        ],
        longs: &[
            "--data",
            "--data-binary",
            "--data-raw",
            "--data-urlencode",
            "--request",
            "--output",
            "--remote-name",
            "--form",
            "--upload-file",
            "--insecure",
            "--location",
            "--silent",
        ],
        with_value: "dXoFTHuAebcmxwrEKCyYz",
    },
    Spec {
        programs: &["wget"],
        aliases: &[('O', "--output-document"), ('q', "--quiet")],
        longs: &["--output-document", "--quiet", "--post-file", "--post-data"],
        with_value: "OoaPetTU",
    },
    Spec {
        programs: &["sed"],
        aliases: &[('i', "--in-place")],
        longs: &["--in-place"],
        with_value: "ef",
    },
    Spec {
        programs: &["grep", "egrep", "fgrep", "rg"],
        aliases: &[],
        longs: &[],
        with_value: "efABCm",
    },
    Spec {
        programs: &["tar"],
        aliases: &[],
        longs: &[],
        with_value: "fC",
    },
    Spec {
        programs: &["kill", "pkill", "killall"],
        aliases: &[('s', "--signal")],
        longs: &["--signal"],
        with_value: "s",
    },
];

/// Programs whose single-dash options are whole words (`find -delete`).
const WORD_OPTIONS: &[&str] = &[
    "find", "java", "javac", "go", "gcc", "g++", "clang", "ffmpeg",
];

/// A command's options, normalised: sorted, each once.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FlagSet(Vec<String>);

impl FlagSet {
    /// Normalises the options among `args` of `program` (a basename). Options
    /// end at `--`.
    pub fn of<'a>(program: &str, args: impl IntoIterator<Item = &'a str>) -> FlagSet {
        let spec = SPECS.iter().find(|s| s.programs.contains(&program));
        let word_options = WORD_OPTIONS.contains(&program);
        let mut flags = Vec::new();
        for arg in args {
            if arg == "--" {
                break;
            }
            if let Some(long) = arg.strip_prefix("--") {
                let name = long.split('=').next().unwrap_or(long);
                flags.push(complete(spec, &format!("--{name}")));
            } else if let Some(short) = arg.strip_prefix('-') {
                if short.is_empty() {
                    continue;
                }
                if word_options || short.bytes().all(|b| b.is_ascii_digit()) {
                    flags.push(arg.to_string());
                    continue;
                }
                for c in short.chars() {
                    flags.push(fold(spec, c));
                    if spec.is_some_and(|s| s.with_value.contains(c)) {
                        break;
                    }
                }
            }
        }
        flags.sort_unstable();
        flags.dedup();
        FlagSet(flags)
    }

    /// Whether `flag` is in the set, in its normalised spelling (`--recursive`, not `-r`).
    pub fn contains(&self, flag: &str) -> bool {
        self.0.binary_search_by(|f| f.as_str().cmp(flag)).is_ok()
    }

    /// Whether every flag of `other` is in this set.
    pub fn includes(&self, other: &FlagSet) -> bool {
        other.0.iter().all(|f| self.contains(f))
    }

    /// True when the command has no options.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The flags, sorted.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }
}

fn fold(spec: Option<&Spec>, c: char) -> String {
    spec.and_then(|s| s.aliases.iter().find(|(short, _)| *short == c))
        .map_or_else(|| format!("-{c}"), |(_, long)| (*long).to_string())
}

/// `--recur` → `--recursive` when the prefix names one known option only.
fn complete(spec: Option<&Spec>, long: &str) -> String {
    if let Some(spec) = spec {
        if spec.longs.contains(&long) {
            return long.to_string();
        }
        let mut candidates = spec.longs.iter().filter(|l| l.starts_with(long));
        if let (Some(only), None) = (candidates.next(), candidates.next())
            && long.len() > 2
        {
            return (*only).to_string();
        }
    }
    long.to_string()
}

//! Which options take a value, per program, so that [`super::Command::operands`]
//! (super::Command::operands) does not return an option's value as an operand
//! (`rsync -e "ssh -p 2222"`, `telnet -e x`, `tune2fs -L label`). A program not
//! in the table keeps the old reading (every word not starting with `-` is an
//! operand): more operands is the fail-closed side, since the effects judge
//! operands.

/// A program's options that take their value in the next word when not
/// attached: short letters (`-e VALUE`, also last in a cluster `-ave VALUE`)
/// and long names (`--rsh VALUE`; `--rsh=VALUE` is one word anyway).
pub(super) struct Takes {
    programs: &'static [&'static str],
    short: &'static str,
    long: &'static [&'static str],
}

// A static, not a const: one table at one address, whichever row `of` returns.
static TABLE: &[Takes] = &[
    Takes {
        programs: &["rsync"],
        short: "efTBM",
        long: &[
            "--rsh",
            "--rsync-path",
            "--filter",
            "--exclude",
            "--include",
            "--exclude-from",
            "--include-from",
            "--files-from",
            "--temp-dir",
            "--partial-dir",
            "--link-dest",
            "--compare-dest",
            "--copy-dest",
            "--backup-dir",
            "--suffix",
            "--chmod",
            "--chown",
            "--port",
            "--password-file",
            "--log-file",
            "--out-format",
            "--bwlimit",
            "--max-size",
            "--min-size",
            "--timeout",
            "--iconv",
        ],
    },
    Takes {
        programs: &["telnet"],
        short: "belnSXk",
        long: &[],
    },
    Takes {
        programs: &["ssh"],
        short: "BbcDEeFIiJLlmOopQRSWw",
        long: &[],
    },
    Takes {
        programs: &["scp", "sftp"],
        short: "cFiJloPSDBRs",
        long: &[],
    },
    Takes {
        programs: &["chage"],
        short: "dEImMWR",
        long: &[
            "--lastday",
            "--expiredate",
            "--inactive",
            "--mindays",
            "--maxdays",
            "--warndays",
            "--root",
        ],
    },
    Takes {
        programs: &["chsh"],
        short: "sR",
        long: &["--shell", "--root"],
    },
    Takes {
        programs: &["tune2fs"],
        short: "cCeEgiIJLmMoOrQTuUz",
        long: &[],
    },
    Takes {
        programs: &["xfs_admin"],
        short: "LUOr",
        long: &[],
    },
    Takes {
        programs: &["zpool", "zfs"],
        short: "dosRctT",
        long: &[],
    },
    Takes {
        programs: &["s3cmd"],
        short: "c",
        long: &["--config", "--access_key", "--secret_key", "--region"],
    },
    Takes {
        programs: &["curl"],
        short: "dXoFTHuAebcmxwrEKCyYz",
        // Not `--url`: its value is a URL, an operand to whoever reads them.
        long: &[
            "--data",
            "--data-ascii",
            "--data-binary",
            "--data-raw",
            "--data-urlencode",
            "--request",
            "--output",
            "--form",
            "--upload-file",
            "--header",
            "--user",
            "--user-agent",
            "--referer",
            "--cookie",
            "--cookie-jar",
            "--config",
            "--max-time",
            "--proxy",
            "--range",
            "--write-out",
            "--cert",
            "--key",
            "--cacert",
            "--connect-timeout",
            "--retry",
            "--resolve",
            "--connect-to",
        ],
    },
    Takes {
        programs: &["wget"],
        short: "OoaPetTU",
        long: &[
            "--output-document",
            "--output-file",
            "--append-output",
            "--directory-prefix",
            "--execute",
            "--timeout",
            "--tries",
            "--user-agent",
            "--header",
            "--post-data",
            "--post-file",
            "--user",
            "--password",
        ],
    },
    Takes {
        programs: &["grep", "egrep", "fgrep", "rg"],
        short: "efABCm",
        long: &[],
    },
];

/// The value-taking options of `program`, when the table knows it.
pub(super) fn of(program: &str) -> Option<&'static Takes> {
    // Every command of every call asks, and most programs are not in the
    // table: a `match` rejects them in one comparison by length rather than
    // one per name (the corpus scenario spent 2,700 instructions a call on
    // the scan in the dev profile).
    let row = match program {
        "rsync" => 0,
        "telnet" => 1,
        "ssh" => 2,
        "scp" | "sftp" => 3,
        "chage" => 4,
        "chsh" => 5,
        "tune2fs" => 6,
        "xfs_admin" => 7,
        "zpool" | "zfs" => 8,
        "s3cmd" => 9,
        "curl" => 10,
        "wget" => 11,
        "grep" | "egrep" | "fgrep" | "rg" => 12,
        _ => return None,
    };
    let takes = &TABLE[row];
    debug_assert!(takes.programs.contains(&program), "{program}: row {row}");
    Some(takes)
}

/// Whether `option` of `program` takes its value in the next word when none
/// is attached (`curl -o FILE`, `rsync --rsh CMD`): `None` when the table
/// does not know the program, and then every word after an option not
/// starting with `-` is read as an operand (the fail-closed side). `program`
/// is a basename (`curl`, not `/usr/bin/curl`).
pub fn takes_value(program: &str, option: &str) -> Option<bool> {
    of(program).map(|takes| value_follows(takes, option))
}

/// Whether `arg` is an option whose value is the next word.
pub(super) fn value_follows(takes: &Takes, arg: &str) -> bool {
    if arg.starts_with("--") {
        takes.long.contains(&arg)
    } else if let Some(short) = arg.strip_prefix('-') {
        // The first letter that takes a value ends the cluster; it takes the
        // next word only when nothing is attached to it.
        match short.char_indices().find(|(_, l)| takes.short.contains(*l)) {
            Some((k, l)) => k + l.len_utf8() == short.len(),
            None => false,
        }
    } else {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_of_the_table_finds_its_own_row() {
        for takes in TABLE {
            for program in takes.programs {
                assert!(
                    of(program).is_some_and(|t| std::ptr::eq(t, takes)),
                    "{program}"
                );
            }
        }
    }

    #[test]
    fn a_program_not_in_the_table_has_no_row() {
        assert!(of("rm").is_none());
        assert!(of("").is_none());
    }
}

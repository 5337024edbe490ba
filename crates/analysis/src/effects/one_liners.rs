//! Interpreter one-liners (`python -c`, `perl -e`, `ruby -e`, `node -e`,
//! `php -r`, …) that spell an effect of the table plainly: a tree removed, a
//! device written, shell text run through `system()` and its kin, code fetched
//! from the network and evaluated. Only literal strings in the code are read;
//! a path or command the code computes is out of reach (see docs/policy.md).

/// Calls that run their first string argument through a shell.
const RUNS_SHELL_TEXT: &[&str] = &[
    "os.system(",
    "os.popen(",
    // Lua.
    "os.execute(",
    "subprocess.run(",
    "subprocess.call(",
    "subprocess.check_call(",
    "subprocess.check_output(",
    "subprocess.Popen(",
    "subprocess.getoutput(",
    "subprocess.getstatusoutput(",
    "system(",
    ".exec(",
    "execSync(",
    "spawnSync(",
    "shell_exec(",
    "passthru(",
    "popen(",
    "proc_open(",
    "qx(",
    "%x(",
];

/// Calls that remove a directory tree.
const REMOVES_TREE: &[&str] = &[
    "rmtree(",
    "remove_tree(",
    "rm_rf(",
    "rm_r(",
    "remove_dir(",
    "rmSync(",
    "rmdirSync(",
    "rimraf(",
    "remove_dir_all(",
];

/// The string literals of `code` in order, without their quotes.
fn literals(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let q = bytes[i];
        if q == b'\'' || q == b'"' || q == b'`' {
            let start = i + 1;
            let mut j = start;
            while j < bytes.len() && bytes[j] != q {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            let end = j.min(bytes.len());
            out.push((i, code[start..end].to_string()));
            i = end + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// The first string literal after each of `calls` in `code`.
fn first_arguments(code: &str, calls: &[&str]) -> Vec<String> {
    let found = literals(code);
    let mut out = Vec::new();
    for call in calls {
        let mut from = 0;
        while let Some(at) = code[from..].find(call).map(|k| k + from) {
            let open = at + call.len();
            // The literal must be the call's first argument (`system("…")`,
            // `run(["sh", …])` is not shell text), before the call closes.
            if let Some((_, text)) = found.iter().find(|(k, _)| *k >= open)
                && code[open..].trim_start().starts_with(['\'', '"', '`'])
                && !out.contains(text)
            {
                out.push(text.clone());
            }
            from = open;
        }
    }
    out
}

/// Shell text the code runs: `os.system("…")`, `system("…")`, `` `…` `` in
/// Perl and Ruby, `execSync("…")`, …
pub(super) fn shell_text(code: &str) -> Vec<String> {
    let mut out = first_arguments(code, RUNS_SHELL_TEXT);
    // Backticks run their text in Perl, Ruby and PHP.
    out.extend(
        literals(code)
            .into_iter()
            .filter(|(k, _)| code.as_bytes()[*k] == b'`')
            .map(|(_, t)| t),
    );
    out
}

/// The trees the code removes, as written (`~` for the home directory
/// spelt `Path.home()`, `os.homedir()`, `$ENV{HOME}`, …).
pub(super) fn removed_trees(code: &str) -> Vec<String> {
    const WRAPPED: &[&str] = &[
        "os.path.expanduser(",
        "expanduser(",
        "pathlib.Path(",
        "Path(",
    ];
    const HOME: &[&str] = &[
        "Path.home()",
        "pathlib.Path.home()",
        "os.homedir()",
        "Dir.home",
        "os.environ['HOME']",
        "os.environ[\"HOME\"]",
        "os.getenv('HOME')",
        "os.getenv(\"HOME\")",
        "$ENV{HOME}",
        "$ENV{'HOME'}",
        "$ENV{\"HOME\"}",
        "process.env.HOME",
        "getenv(\"HOME\")",
        "getenv('HOME')",
    ];
    let mut out = first_arguments(code, REMOVES_TREE);
    for call in REMOVES_TREE {
        let mut from = 0;
        while let Some(open) = code[from..].find(call).map(|k| k + from + call.len()) {
            let argument = code[open..].trim_start();
            if HOME.iter().any(|h| argument.starts_with(h)) {
                out.push("~".into());
            } else if let Some(inner) = WRAPPED.iter().find_map(|w| argument.strip_prefix(w)) {
                out.extend(first_arguments(&format!("f({inner}"), &["f("]));
            }
            from = open;
        }
    }
    out
}

/// A device the code opens for writing (`open('/dev/sda','wb')`,
/// `open(F, ">/dev/sda")`), as written.
pub(super) fn written_devices(code: &str) -> Vec<String> {
    const WRITES: &[&str] = &[
        "'w",
        "\"w",
        "'r+",
        "\"r+",
        "'a",
        "\"a",
        "o_wronly",
        "o_rdwr",
        "writefile",
        "syswrite",
        "write(",
    ];
    let lower = code.to_ascii_lowercase();
    let literal = literals(code);
    let redirect = |t: &str| t.starts_with(['>', '+']);
    if !WRITES.iter().any(|w| lower.contains(w)) && !literal.iter().any(|(_, t)| redirect(t)) {
        return Vec::new();
    }
    literal
        .into_iter()
        .map(|(_, t)| t.trim_start_matches(['>', '+', '<', ' ']).to_string())
        .filter(|t| t.starts_with("/dev/"))
        .collect()
}

/// Code fetched from the network and evaluated in the same one-liner.
pub(super) fn fetches_and_runs(code: &str) -> bool {
    const FETCH: &[&str] = &[
        "urlopen(",
        "requests.get(",
        "urllib",
        "http.get(",
        "https.get(",
        "fetch(",
        "lwp::simple",
        "get(\"http",
        "get('http",
        "open-uri",
        "uri.open(",
        "net::http",
        "file_get_contents(\"http",
        "file_get_contents('http",
    ];
    const RUN: &[&str] = &[
        "exec(",
        "eval(",
        "eval ",
        "compile(",
        "instance_eval",
        "function(",
    ];
    let lower = code.to_ascii_lowercase();
    FETCH.iter().any(|s| lower.contains(s)) && RUN.iter().any(|s| lower.contains(s))
}

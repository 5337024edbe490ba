//! What an embedder of the library compiles: the facade's dependency tree,
//! with its default features, holds no server, database, metrics, file
//! watching, command line or allocator crate, and tokio only as wasmtime-wasi's;
//! nor does the decision log's, which the library is to write too.

use std::process::Command;

/// Crates that belong to the daemon or the binary, never to the library.
const NOT_IN_THE_LIBRARY: &[&str] = &[
    "axum",
    "hyper",
    "rusqlite",
    "prometheus",
    "notify",
    "clap",
    "mimalloc",
];

/// `cargo tree` of `package`'s normal dependencies: one `name version` a line.
fn tree(package: &str, extra: &[&str]) -> String {
    let output = Command::new(env!("CARGO"))
        .current_dir(warden_testkit::repo_root())
        .args([
            "tree",
            "--offline",
            "--locked",
            "-e",
            "normal",
            "-p",
            package,
        ])
        .args(extra)
        .output()
        .expect("run cargo tree");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn crates_in(tree: &str) -> Vec<&str> {
    tree.lines()
        .filter_map(|line| {
            line.trim_start_matches(|c: char| !c.is_ascii_alphanumeric())
                .split(' ')
                .next()
        })
        .collect()
}

/// Fails naming the path by which `package` reaches a crate that belongs to
/// the daemon or the binary.
fn assert_links_none_of_the_daemons(package: &str) {
    let listed = tree(package, &["--prefix", "none"]);
    let crates = crates_in(&listed);
    for forbidden in NOT_IN_THE_LIBRARY {
        assert!(
            !crates.contains(forbidden),
            "the {package} crate depends on {forbidden}:\n{}",
            tree(package, &["--invert", forbidden])
        );
    }
}

#[test]
fn the_library_links_no_daemon_database_cli_or_allocator_crate() {
    assert_links_none_of_the_daemons("warden");
}

#[test]
fn the_decision_log_links_no_daemon_database_cli_or_allocator_crate() {
    // The library and the Python module write the log too (issue 23).
    assert_links_none_of_the_daemons("warden-log");
}

#[test]
fn tokio_reaches_the_library_only_through_wasmtime_wasi() {
    let inverted = tree("warden", &["--invert", "tokio", "--depth", "1"]);
    let dependents: Vec<&str> = crates_in(&inverted).into_iter().skip(1).collect();
    assert_eq!(dependents, ["wasmtime-wasi"], "{inverted}");
}

#[test]
fn the_daemon_does_link_what_the_library_leaves_out() {
    // The check above can fail: the same query on the daemon finds them.
    let listed = tree("warden-server", &["--prefix", "none"]);
    let crates = crates_in(&listed);
    for expected in ["axum", "hyper", "rusqlite", "prometheus", "notify"] {
        assert!(
            crates.contains(&expected),
            "{expected} not in the daemon's tree"
        );
    }
}

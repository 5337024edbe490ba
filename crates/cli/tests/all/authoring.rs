//! The tools for provider authors, driven as an author would: `warden new
//! provider`, `warden test` and `warden inspect`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;
use serde_json::Value;

fn warden_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn warden(args: &[&str]) -> Output {
    warden_in(repo_root(), args)
}

pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Writes `warden.yaml` into a scaffolded provider's `project`: the provider
/// `name`, its component at `wasm` (relative to the project, or absolute)
/// pinned by its sha256, configured with the scaffold's own `config.yaml`.
/// Returns the digest.
pub(crate) fn write_pinned_config(project: &Path, name: &str, wasm: &Path) -> String {
    use sha2::{Digest, Sha256};
    let digest = hex::encode(Sha256::digest(std::fs::read(project.join(wasm)).unwrap()));
    let config: String = std::fs::read_to_string(project.join("config.yaml"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("        {l}\n"))
        .collect();
    let wasm = serde_json::to_string(wasm).unwrap();
    std::fs::write(
        project.join("warden.yaml"),
        format!(
            "guardrails:\n  providers:\n    - name: {name}\n      wasm: {wasm}\n      sha256: \"{digest}\"\n      config:\n{config}"
        ),
    )
    .unwrap();
    digest
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Files for `warden test`: the allowlist's vectors and config in a temp dir.
struct Vectors {
    dir: tempfile::TempDir,
}

impl Vectors {
    fn new(vectors: &str, config: &str) -> Vectors {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("vectors.jsonl"), vectors).unwrap();
        std::fs::write(dir.path().join("config.yaml"), config).unwrap();
        Vectors { dir }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn run(&self, extra: &[&str]) -> Output {
        let component = guest("allowlist");
        let vectors = self.file("vectors.jsonl");
        let config = self.file("config.yaml");
        let mut args = vec![
            "test",
            path(&component),
            "--vectors",
            path(&vectors),
            "--config",
            path(&config),
        ];
        args.extend_from_slice(extra);
        warden_in(self.dir.path(), &args)
    }
}

const ALLOWLIST_CONFIG: &str = "allowed_tools: [bash, read_file]\ndenied_tools: [rm]\n";

const ALLOWLIST_VECTORS: &str = r#"{"name": "bash is allowed", "request": {"tool_name": "bash", "tool_input": {"command": "ls"}}, "expect": {"verdict": "allow", "code": "oap.allowed"}}
{"name": "rm is denied", "request": {"tool_name": "rm", "tool_input": {}}, "expect": {"verdict": "deny", "code": "oap.tool_not_allowed"}}
{"name": "an unlisted tool is denied", "request": {"tool_name": "curl", "tool_input": {}}, "expect": {"verdict": "deny"}}
"#;

#[test]
fn test_passes_when_every_vector_holds() {
    let out = Vectors::new(ALLOWLIST_VECTORS, ALLOWLIST_CONFIG).run(&[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("3 passed, 0 failed"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn test_reports_a_failing_vector_with_expected_and_actual_and_exits_one() {
    let wrong = r#"{"name": "rm is allowed (wrong)", "request": {"tool_name": "rm"}, "expect": {"verdict": "allow"}}"#;
    let out = Vectors::new(&format!("{ALLOWLIST_VECTORS}{wrong}\n"), ALLOWLIST_CONFIG).run(&[]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("FAIL  rm is allowed (wrong) (line 4)"),
        "{text}"
    );
    assert!(text.contains("expected: allow"), "{text}");
    assert!(
        text.contains("actual:   deny oap.tool_not_allowed (tool 'rm' not in allowlist)"),
        "{text}"
    );
    assert!(text.contains("3 passed, 1 failed"), "{text}");
}

#[test]
fn test_checks_the_code_and_the_policy_id_when_a_vector_gives_them() {
    let wrong_code =
        r#"{"request": {"tool_name": "rm"}, "expect": {"verdict": "deny", "code": "oap.denied"}}"#;
    let wrong_policy =
        r#"{"request": {"tool_name": "rm"}, "expect": {"verdict": "deny", "policy_id": "p"}}"#;
    let out = Vectors::new(&format!("{wrong_code}\n{wrong_policy}\n"), ALLOWLIST_CONFIG).run(&[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("0 passed, 2 failed"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn test_prints_passing_vectors_when_verbose() {
    let out = Vectors::new(ALLOWLIST_VECTORS, ALLOWLIST_CONFIG).run(&["--verbose"]);
    assert!(
        stdout(&out).contains("ok    rm is denied"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn test_refuses_a_malformed_vectors_file_naming_the_line() {
    let bad = format!(
        "{ALLOWLIST_VECTORS}{{\"request\": {{\"tool_name\": \"x\"}}, \"expect\": {{\"verdict\": \"perhaps\"}}}}\n"
    );
    let out = Vectors::new(&bad, ALLOWLIST_CONFIG).run(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("vectors.jsonl:4: expect.verdict"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn test_exits_one_when_the_provider_refuses_its_config() {
    let out = Vectors::new(ALLOWLIST_VECTORS, "allow_tools: [bash]\n").run(&[]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("cannot be configured") && err.contains("allow_tools"),
        "{err}"
    );
}

#[test]
fn test_applies_the_limits_it_is_given() {
    let v = Vectors::new(ALLOWLIST_VECTORS, ALLOWLIST_CONFIG);
    // Per-call fuel: configuring has its own budget, so the calls run out.
    let out = v.run(&["--limit", "fuel=1000"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("warden.fuel_exhausted"),
        "{}",
        stdout(&out)
    );
    let out = v.run(&["--limit", "memory_mb=0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("limits.memory_mb"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn test_shows_why_a_provider_failed() {
    let dir = tempfile::tempdir().unwrap();
    let vectors = dir.path().join("v.jsonl");
    std::fs::write(
        &vectors,
        r#"{"request": {"tool_name": "bash"}, "expect": {"verdict": "allow"}}"#,
    )
    .unwrap();
    let config = dir.path().join("c.yaml");
    std::fs::write(&config, "behaviour: panic\n").unwrap();
    let out = warden(&[
        "test",
        path(&guest("hostile")),
        "--vectors",
        path(&vectors),
        "--config",
        path(&config),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("actual:   deny oap.evaluator_error") && text.contains("warden.trap: "),
        "{text}"
    );
}

#[test]
fn inspect_describes_a_loadable_component() {
    use sha2::Digest;
    let component = guest("allowlist");
    let out = warden(&["inspect", path(&component)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let bytes = std::fs::read(&component).unwrap();
    assert!(
        text.contains(&hex::encode(sha2::Sha256::digest(&bytes))),
        "{text}"
    );
    assert!(text.contains(&format!("{} bytes", bytes.len())), "{text}");
    assert!(text.contains("contract   warden:guardrail@0.1.0"), "{text}");
    assert!(text.contains("  warden:guardrail/provider@0.1.0"), "{text}");
    assert!(text.contains("  wasi:cli/stdout@"), "{text}");
    assert!(text.contains("verdict    loadable"), "{text}");
    assert!(text.contains("provider   allowlist 0.1.0"), "{text}");
    assert!(
        text.contains("config     checked at load against the manifest's JSON Schema")
            && text.contains("\"allowed_tools\""),
        "{text}"
    );
}

#[test]
fn inspect_says_no_manifest_for_a_component_without_one_and_finds_it_loadable() {
    let out = warden(&["inspect", path(&guest("hostile"))]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("manifest   no manifest"), "{text}");
    let out = warden(&["inspect", "--json", path(&guest("hostile"))]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["manifest"].is_null(), "{report}");
}

#[test]
fn inspect_flags_a_component_that_imports_the_filesystem() {
    let out = warden(&["inspect", path(&guest("fs_importer"))]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.contains("wasi:filesystem/") && l.contains("not granted to providers")),
        "{text}"
    );
    assert!(
        text.contains("verdict    REFUSED") && text.contains("imports `wasi:filesystem/"),
        "{text}"
    );
}

#[test]
fn inspect_flags_a_component_built_against_another_contract() {
    let out = warden(&["inspect", path(&guest("contract_v2"))]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("contract   warden:guardrail@0.2.0"), "{text}");
    assert!(text.contains("REFUSED"), "{text}");
}

#[test]
fn inspect_prints_json_when_asked() {
    let out = warden(&["inspect", "--json", path(&guest("fs_importer"))]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["contract"], "0.1.0");
    assert!(
        report["refusal"]
            .as_str()
            .unwrap()
            .contains("wasi:filesystem/")
    );
    let forbidden: Vec<&str> = report["imports"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["forbidden"] == true)
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert!(!forbidden.is_empty() && forbidden.iter().all(|i| i.starts_with("wasi:filesystem/")));
}

#[test]
fn inspect_refuses_a_file_that_is_not_a_component() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.wasm");
    std::fs::write(&junk, "not wasm").unwrap();
    let out = warden(&["inspect", path(&junk)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("not a valid WebAssembly component"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn wit_prints_the_contract_word_for_word() {
    let dir = tempfile::tempdir().unwrap();
    let out = warden_in(dir.path(), &["wit"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let contract = std::fs::read(repo_root().join("wit/guardrail.wit")).unwrap();
    assert!(out.stdout == contract, "{}", stdout(&out));
}

#[test]
fn new_provider_never_writes_into_a_non_empty_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mine.txt"), "keep").unwrap();
    let out = warden(&["new", "provider", "guard", "--dir", path(dir.path())]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not empty"), "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn new_provider_refuses_a_name_that_is_not_a_crate_name() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("x");
    let out = warden(&["new", "provider", "My Guard", "--dir", path(&target)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not a valid provider name"),
        "{}",
        stderr(&out)
    );
    assert!(!target.exists());
}

/// Where the scaffold test builds: a directory of this build's target dir, kept
/// between runs so that only the new crate is compiled each time.
pub(crate) fn scaffold_target_dir() -> PathBuf {
    guest_dir()
        .ancestors()
        .nth(3)
        .expect("the guest dir is <target>/guests/<triple>/<profile>")
        .join("scaffold")
}

fn cargo(dir: &Path, args: &[&str]) {
    let out = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", scaffold_target_dir())
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo {args:?} failed:\n{}",
        stderr(&out)
    );
}

#[test]
fn a_new_provider_depends_on_the_published_sdk_and_names_no_path_of_this_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let crate_dir = dir.path().join("web-guard");
    let out = warden_in(dir.path(), &["new", "provider", "web-guard"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let version = env!("CARGO_PKG_VERSION");
    for file in ["Cargo.toml", "src/lib.rs", "README.md", "config.yaml"] {
        let text = std::fs::read_to_string(crate_dir.join(file)).unwrap();
        assert!(
            !text.contains(path(repo_root())),
            "{file} names this checkout:\n{text}"
        );
    }
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains(&format!("warden-provider = \"{version}\"")),
        "{manifest}"
    );
}

/// The compiler a rebuilder needs travels with the source: the scaffold's
/// rust-toolchain.toml names the rustc that builds this test (and this
/// `warden`), with the guest target.
#[test]
fn a_new_provider_pins_the_compiler_this_warden_was_built_with() {
    let dir = tempfile::tempdir().unwrap();
    let out = warden_in(dir.path(), &["new", "provider", "pinned-guard"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rustc = Command::new("rustc")
        .arg("--version")
        .current_dir(repo_root())
        .output()
        .unwrap();
    let version = stdout(&rustc);
    let version = version.split_whitespace().nth(1).unwrap();
    let toolchain =
        std::fs::read_to_string(dir.path().join("pinned-guard/rust-toolchain.toml")).unwrap();
    assert!(
        toolchain.contains(&format!("channel = \"{version}\"\n"))
            && toolchain.contains("targets = [\"wasm32-wasip2\"]"),
        "{toolchain}"
    );
}

#[test]
fn a_new_provider_refuses_a_local_sdk_that_is_not_one() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("guard");
    let out = warden(&[
        "new",
        "provider",
        "guard",
        "--dir",
        path(&target),
        "--sdk",
        path(dir.path()),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot find the provider SDK"),
        "{}",
        stderr(&out)
    );
    assert!(!target.exists());
}

#[test]
fn a_new_provider_builds_and_passes_its_own_tests_and_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let crate_dir = dir.path().join("pii-guard");
    let sdk = repo_root().join("sdk/provider");
    let out = warden_in(
        dir.path(),
        &["new", "provider", "pii-guard", "--sdk", path(&sdk)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    cargo(&crate_dir, &["test", "--quiet"]);
    cargo(
        &crate_dir,
        &["build", "--quiet", "--release", "--target", "wasm32-wasip2"],
    );
    let component = scaffold_target_dir().join("wasm32-wasip2/release/pii_guard.wasm");

    let out = warden_in(
        &crate_dir,
        &[
            "test",
            path(&component),
            "--vectors",
            "vectors.jsonl",
            "--config",
            "config.yaml",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("5 passed, 0 failed"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("testing pii-guard 0.1.0"),
        "{}",
        stdout(&out)
    );

    let out = warden_in(&crate_dir, &["inspect", path(&component)]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("config     checked at load against the manifest's JSON Schema"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_new_providers_config_schema_refuses_a_misspelt_key_at_load_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let crate_dir = dir.path().join("schema-guard");
    let sdk = repo_root().join("sdk/provider");
    let out = warden_in(
        dir.path(),
        &["new", "provider", "schema-guard", "--sdk", path(&sdk)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lib = std::fs::read_to_string(crate_dir.join("src/lib.rs")).unwrap();
    assert!(
        lib.contains("config_schema = include_str!(\"../config.schema.json\")"),
        "{lib}"
    );
    cargo(
        &crate_dir,
        &["build", "--quiet", "--release", "--target", "wasm32-wasip2"],
    );
    let component = scaffold_target_dir().join("wasm32-wasip2/release/schema_guard.wasm");
    std::fs::write(
        crate_dir.join("warden.yaml"),
        format!(
            "guardrails:\n  providers:\n    - name: schema-guard\n      wasm: {}\n      config: {{blocked_tools: [x], blocked_comands: [y]}}\n",
            path(&component)
        ),
    )
    .unwrap();
    let out = warden_in(&crate_dir, &["check", "--config", "warden.yaml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    // Refused by the schema before the provider is asked to configure.
    let err = stderr(&out);
    assert!(
        err.contains("provider 'schema-guard': config") && err.contains("blocked_comands"),
        "{err}"
    );
    assert!(!err.contains("configure_failed"), "{err}");
}

pub(crate) fn run_ok(command: &mut Command) {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{command:?} failed:\n{}",
        stderr(&out)
    );
}

/// Scaffolds `echo-guard` in `parent` on the published SDK and makes it the
/// source a vendor ships: its dependencies served from a vendor directory
/// (cargo's directory source standing in for the registry: the packaged SDK
/// crates and every other dependency) and its `Cargo.lock` resolved from it.
/// Returns the project's folder.
fn scaffold_with_a_vendor_directory(parent: &Path) -> PathBuf {
    let out = warden_in(parent, &["new", "provider", "echo-guard"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let project = parent.canonicalize().unwrap().join("echo-guard");
    let version = env!("CARGO_PKG_VERSION");
    let sdk_crates = ["warden-provider", "warden-analysis", "warden-types"];

    // The SDK as packaged: `cargo package` of the three (files only;
    // scripts/test verifies their builds), unpacked.
    let packages = parent.join("packages");
    let mut package = Command::new(env!("CARGO"));
    package
        .args(["package", "--no-verify", "--allow-dirty", "--quiet"])
        .arg("--target-dir")
        .arg(&packages)
        .current_dir(repo_root());
    for name in sdk_crates {
        package.args(["-p", name]);
    }
    run_ok(&mut package);
    let sdk = parent.join("sdk");
    std::fs::create_dir(&sdk).unwrap();
    for name in sdk_crates {
        let file = packages.join(format!("package/{name}-{version}.crate"));
        run_ok(Command::new("tar").arg("xzf").arg(file).arg("-C").arg(&sdk));
    }

    // Vendor the rest with the SDK patched in, then serve all of it from the
    // vendor directory in place of the registry.
    let manifest = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    let mut patched = format!("{manifest}\n[patch.crates-io]\n");
    for name in sdk_crates {
        let dir = serde_json::to_string(&sdk.join(format!("{name}-{version}"))).unwrap();
        patched.push_str(&format!("{name} = {{ path = {dir} }}\n"));
    }
    std::fs::write(project.join("Cargo.toml"), patched).unwrap();
    run_ok(
        Command::new(env!("CARGO"))
            .args(["vendor", "--quiet", "vendor"])
            .current_dir(&project),
    );
    std::fs::write(project.join("Cargo.toml"), manifest).unwrap();
    // The lock names the patched SDK by path: resolve again, from the vendor
    // directory alone, below.
    std::fs::remove_file(project.join("Cargo.lock")).unwrap();
    for name in sdk_crates {
        let to = project.join(format!("vendor/{name}-{version}"));
        std::fs::rename(sdk.join(format!("{name}-{version}")), &to).unwrap();
        std::fs::write(
            to.join(".cargo-checksum.json"),
            r#"{"files":{},"package":null}"#,
        )
        .unwrap();
    }
    std::fs::create_dir_all(project.join(".cargo")).unwrap();
    std::fs::write(
        project.join(".cargo/config.toml"),
        "[source.crates-io]\nreplace-with = \"vendored\"\n[source.vendored]\ndirectory = \"vendor\"\n",
    )
    .unwrap();
    run_ok(
        Command::new(env!("CARGO"))
            .args(["generate-lockfile", "--offline", "--quiet"])
            .current_dir(&project),
    );
    project
}

/// Builds `project` with the command the scaffold's README gives, `$PWD` and
/// `$CARGO_HOME` filled in, into `target_dir`. Returns the component.
fn build_as_the_readme_says(project: &Path, target_dir: &Path, cargo_home: &Path) -> Vec<u8> {
    let readme = std::fs::read_to_string(project.join("README.md")).unwrap();
    let remap =
        "--remap-path-prefix=$PWD=/provider --remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}=/cargo";
    assert!(readme.contains(remap), "{readme}");
    let rustflags = remap
        .replace("$PWD", path(project))
        .replace("${CARGO_HOME:-$HOME/.cargo}", path(cargo_home));
    run_ok(
        Command::new(env!("CARGO"))
            .args(["build", "--quiet", "--offline", "--locked", "--release"])
            .args(["--target", "wasm32-wasip2"])
            .current_dir(project)
            .env("CARGO_HOME", cargo_home)
            .env("CARGO_TARGET_DIR", target_dir)
            .env("RUSTFLAGS", rustflags)
            .env_remove("CARGO_ENCODED_RUSTFLAGS"),
    );
    std::fs::read(target_dir.join("wasm32-wasip2/release/echo_guard.wasm")).unwrap()
}

fn copy_tree(from: &Path, to: &Path) {
    run_ok(Command::new("cp").arg("-R").arg(from).arg(to));
}

/// A provider's source (its lock file and vendored dependencies) rebuilt by
/// someone else, in another folder, another target dir and another
/// CARGO_HOME, gives the component its publisher built, byte for byte.
#[test]
fn a_new_provider_built_in_two_folders_has_one_digest() {
    use sha2::{Digest, Sha256};
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    let project = scaffold_with_a_vendor_directory(first.path());
    let cargo_home = std::env::var_os("CARGO_HOME").map_or_else(
        || Path::new(&std::env::var_os("HOME").unwrap()).join(".cargo"),
        PathBuf::from,
    );
    let a = build_as_the_readme_says(&project, &first.path().join("target"), &cargo_home);

    let deeper = second.path().canonicalize().unwrap().join("somewhere/else");
    std::fs::create_dir_all(&deeper).unwrap();
    copy_tree(&project, &deeper.join("echo-guard"));
    // Another machine's layout: the source alone travels (the first build's
    // target dir is outside it); CARGO_HOME is empty, the vendor directory
    // serving every dependency.
    let other_home = second.path().join("cargo-home");
    std::fs::create_dir(&other_home).unwrap();
    let b = build_as_the_readme_says(
        &deeper.join("echo-guard"),
        &second.path().join("elsewhere/target"),
        &other_home,
    );
    assert_eq!(
        hex::encode(Sha256::digest(&a)),
        hex::encode(Sha256::digest(&b))
    );
}

#[test]
fn bundle_create_signs_a_bundle_that_verify_accepts_and_a_tampered_one_it_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("publisher");
    assert_eq!(
        warden(&["keygen", "--out", path(&prefix)]).status.code(),
        Some(0)
    );
    let vectors = dir.path().join("vectors.jsonl");
    std::fs::write(
        &vectors,
        r#"{"name": "read is allowed", "request": {"tool_name": "read_file", "tool_input": {}}, "expect": {"verdict": "allow"}}"#,
    )
    .unwrap();
    let bundle = dir.path().join("allowlist.bundle");
    let out = warden(&[
        "bundle",
        "create",
        path(&bundle),
        "--component",
        path(&guest("allowlist")),
        "--vectors",
        path(&vectors),
        "--key",
        path(&prefix.with_extension("key")),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("trust: {publisher_keys: [{key: \"ed25519:"),
        "{}",
        stdout(&out)
    );
    let public = prefix.with_extension("pub");
    let out = warden(&["bundle", "verify", path(&bundle), "--key", path(&public)]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("verified   allowlist 0.1.0"),
        "{}",
        stdout(&out)
    );

    let component = bundle.join("provider.wasm");
    let mut bytes = std::fs::read(&component).unwrap();
    bytes.push(0);
    std::fs::write(&component, bytes).unwrap();
    let out = warden(&["bundle", "verify", path(&bundle), "--key", path(&public)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("digest: provider.wasm"),
        "{}",
        stdout(&out)
    );
}

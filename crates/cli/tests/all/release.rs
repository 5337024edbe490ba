//! The release archive (`scripts/release`) as a third party gets it: unpacked
//! into an empty folder outside any Warden checkout, it holds what it lists,
//! and its `warden` and SDK make, build, test and inspect a provider.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use crate::authoring::{run_ok, scaffold_target_dir, stderr, stdout};
use crate::common::*;

const VERSION: &str = env!("CARGO_PKG_VERSION");
const SDK_CRATES: [&str; 3] = ["warden-provider", "warden-analysis", "warden-types"];

/// The archive `scripts/release --dev` makes from this build's `warden`,
/// made once a run into this build's target dir (packing a dev binary is not
/// quick), and returned by path.
fn archive() -> &'static Path {
    static ARCHIVE: OnceLock<PathBuf> = OnceLock::new();
    ARCHIVE.get_or_init(|| {
        let dist = scaffold_target_dir().with_file_name("release-archive");
        if dist.exists() {
            std::fs::remove_dir_all(&dist).unwrap();
        }
        let out = Command::new(repo_root().join("scripts/release"))
            .arg("--dev")
            .arg("--binary")
            .arg(env!("CARGO_BIN_EXE_warden"))
            .arg("--out")
            .arg(&dist)
            .output()
            .unwrap();
        assert!(out.status.success(), "scripts/release:\n{}", stderr(&out));
        PathBuf::from(stdout(&out).trim())
    })
}

/// The archive unpacked into an empty folder outside this checkout.
struct Release {
    dir: tempfile::TempDir,
    /// The unpacked `warden-VERSION-TARGET/`.
    root: PathBuf,
}

impl Release {
    fn unpack() -> Release {
        let archive = archive();
        let name = archive
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .strip_suffix(".tar.gz")
            .expect("the archive is a .tar.gz")
            .to_string();
        assert!(name.starts_with(&format!("warden-{VERSION}-")), "{name}");
        let dir = tempfile::tempdir().unwrap();
        let unpacked = dir.path().join("unpacked");
        std::fs::create_dir(&unpacked).unwrap();
        run_ok(
            Command::new("tar")
                .arg("xzf")
                .arg(archive)
                .arg("-C")
                .arg(&unpacked),
        );
        let root = unpacked.join(name);
        Release { dir, root }
    }

    /// The archive's `warden`, run in `cwd` with nothing of this checkout
    /// in its environment: the variables a shell has, no cargo ones.
    fn warden(&self, cwd: &Path, args: &[&std::ffi::OsStr]) -> Output {
        let mut command = Command::new(self.root.join("bin/warden"));
        command.args(args).current_dir(cwd);
        outside_the_checkout(&mut command, self.dir.path())
            .output()
            .unwrap()
    }
}

/// Clears `command`'s environment but for what a third party's shell has,
/// with no `PATH` entry inside this checkout, the state directory in `scratch`.
fn outside_the_checkout<'a>(command: &'a mut Command, scratch: &Path) -> &'a mut Command {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path =
        std::env::join_paths(std::env::split_paths(&path).filter(|p| !p.starts_with(repo_root())))
            .unwrap();
    command.env_clear().env("PATH", path);
    // The user's cargo and rustup, with the toolchain this test runs on when
    // rustup named one: the scaffold's rust-toolchain.toml would otherwise
    // have rustup install the toolchain it pins, which a test never does.
    for var in ["HOME", "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN"] {
        if let Some(value) = std::env::var_os(var) {
            command.env(var, value);
        }
    }
    command
        .env("RUSTUP_AUTO_INSTALL", "0")
        .env("XDG_STATE_HOME", scratch.join("state"))
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Every file under `dir`, as paths relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let relative = path.strip_prefix(dir).unwrap();
                found.push(relative.to_str().unwrap().to_string());
            }
        }
    }
    found.sort();
    found
}

#[test]
fn the_release_archive_lists_the_sha256_of_every_file_it_holds() {
    let archive = archive();
    let beside = std::fs::read_to_string(archive.with_extension("gz.sha256")).unwrap();
    let archive_name = archive.file_name().unwrap().to_str().unwrap();
    assert_eq!(
        beside,
        format!(
            "{}  {archive_name}\n",
            sha256_hex(&std::fs::read(archive).unwrap())
        )
    );
    let release = Release::unpack();

    let sums = std::fs::read_to_string(release.root.join("SHA256SUMS")).unwrap();
    let mut listed: Vec<String> = Vec::new();
    for line in sums.lines() {
        let (sum, file) = line.split_once("  ").expect("`SUM  FILE` lines");
        let bytes = std::fs::read(release.root.join(file)).unwrap();
        assert_eq!(sum, sha256_hex(&bytes), "{file}");
        listed.push(file.to_string());
    }
    let mut held = files_under(&release.root);
    held.retain(|f| f != "SHA256SUMS");
    assert_eq!(listed, held);
}

#[test]
fn the_release_archive_holds_the_command_the_sdk_packages_the_contract_and_the_shipped_providers() {
    let release = Release::unpack();
    let root = &release.root;
    let held = files_under(root);
    assert!(held.contains(&"bin/warden".to_string()), "{held:?}");
    assert!(held.contains(&"README.md".to_string()), "{held:?}");
    for name in SDK_CRATES {
        let package = format!("sdk/rust/{name}-{VERSION}.crate");
        let unpacked = format!("sdk/rust/{name}-{VERSION}/Cargo.toml");
        assert!(
            held.contains(&package) && held.contains(&unpacked),
            "{name}: {held:?}"
        );
    }
    assert_eq!(
        std::fs::read(root.join("wit/guardrail.wit")).unwrap(),
        std::fs::read(repo_root().join("wit/guardrail.wit")).unwrap()
    );
    assert_eq!(
        std::fs::read(root.join("providers/allowlist.wasm")).unwrap(),
        std::fs::read(guest("allowlist")).unwrap()
    );
}

/// A third party's path, end to end: the archive's `warden` scaffolds a
/// provider on the archive's SDK, cargo builds it with no network (the SDK
/// from the archive, the rest from cargo's cache), and the archive's
/// `warden` runs its vectors and inspects it.
#[test]
fn a_provider_is_made_built_tested_and_inspected_from_the_release_archive_alone() {
    let release = Release::unpack();
    let work = release.dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let sdk = release.root.join("sdk/rust");
    let out = release.warden(
        &work,
        &[
            "new".as_ref(),
            "provider".as_ref(),
            "net-guard".as_ref(),
            "--sdk".as_ref(),
            sdk.as_os_str(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let project = work.join("net-guard");
    let checkout = repo_root().to_str().unwrap();
    for file in files_under(&project) {
        let text = std::fs::read_to_string(project.join(&file)).unwrap();
        assert!(
            !text.contains(checkout),
            "{file} names this checkout:\n{text}"
        );
    }

    let mut build = Command::new(env!("CARGO"));
    build
        .args(["build", "--quiet", "--offline", "--release"])
        .args(["--target", "wasm32-wasip2"])
        .current_dir(&project);
    outside_the_checkout(&mut build, release.dir.path())
        .env("CARGO_TARGET_DIR", scaffold_target_dir());
    run_ok(&mut build);
    let component = scaffold_target_dir().join("wasm32-wasip2/release/net_guard.wasm");

    let out = release.warden(
        &project,
        &[
            "test".as_ref(),
            component.as_os_str(),
            "--vectors".as_ref(),
            "vectors.jsonl".as_ref(),
            "--config".as_ref(),
            "config.yaml".as_ref(),
        ],
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(
        text.contains("testing net-guard 0.1.0") && text.contains("5 passed, 0 failed"),
        "{text}"
    );

    let out = release.warden(&project, &["inspect".as_ref(), component.as_os_str()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(
        text.contains("provider   net-guard 0.1.0") && text.contains("verdict    loadable"),
        "{text}"
    );

    // Loaded pinned, as an operator's configuration names it.
    let digest = crate::authoring::write_pinned_config(&project, "net-guard", &component);
    let out = release.warden(
        &project,
        &[
            "check".as_ref(),
            "--config".as_ref(),
            "warden.yaml".as_ref(),
        ],
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(text.contains(&digest), "{text}");
}

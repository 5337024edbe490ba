//! `warden new provider --lang python|js`, driven as an author outside any
//! Warden checkout would: the scaffold, made in a temporary folder, builds with
//! its pinned toolchain by the README's own command, passes its vectors with
//! `warden test`, and loads pinned. The toolchains are the ones
//! `scripts/build-language-providers` installs (no network here); this file is
//! compiled only with `--features language-scaffolds`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;
use serde_json::Value;

/// Where `scripts/build-language-providers` installs the toolchains
/// (`WARDEN_LANGUAGE_TOOLCHAINS` overrides it).
fn toolchains() -> PathBuf {
    let dir = std::env::var_os("WARDEN_LANGUAGE_TOOLCHAINS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/language-toolchains"));
    assert!(
        dir.is_dir(),
        "{} is missing: run scripts/build-language-providers",
        dir.display()
    );
    dir
}

fn warden_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn succeeds(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed:\n{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// Runs `warden new provider --lang LANG NAME` in a fresh temporary folder and
/// checks what every scaffold owes its author: the contract as `warden wit`
/// prints it, and no path of this checkout in any file.
fn scaffold(lang: &str, name: &str) -> (tempfile::TempDir, PathBuf) {
    let parent = tempfile::tempdir().unwrap();
    let out = warden_in(parent.path(), &["new", "provider", "--lang", lang, name]);
    succeeds(&out, "warden new provider");
    let project = parent.path().join(name);
    let wit = warden_in(parent.path(), &["wit"]);
    assert!(std::fs::read(project.join("wit/guardrail.wit")).unwrap() == wit.stdout);
    let checkout = repo_root().to_str().unwrap();
    for entry in std::fs::read_dir(&project).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                !text.contains(checkout),
                "{} names the checkout",
                path.display()
            );
        }
    }
    (parent, project)
}

/// The README's command whose line starts with `prefix`, run by the shell in
/// `project` with `replace` applied (the toolchain's place for the author's).
fn run_readme_command(project: &Path, prefix: &str, replace: (&str, &str)) {
    let readme = std::fs::read_to_string(project.join("README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("the README has no `{prefix}` command:\n{readme}"));
    let command = line.replace(replace.0, replace.1);
    let out = Command::new("sh")
        .args(["-c", &command])
        .current_dir(project)
        .output()
        .unwrap();
    succeeds(&out, &command);
}

/// The built component passes the scaffold's vectors with `warden test`, is
/// reported by its own name, and loads in Warden pinned to its digest.
fn passes_its_vectors_and_loads_pinned(project: &Path, name: &str, wasm: &str) {
    let out = warden_in(
        project,
        &[
            "test",
            wasm,
            "--vectors",
            "vectors.jsonl",
            "--config",
            "config.yaml",
        ],
    );
    succeeds(&out, "warden test");
    let report = text(&out.stdout);
    assert!(report.contains("5 passed, 0 failed"), "{report}");
    assert!(
        report.contains(&format!("testing {name} 0.1.0")),
        "{report}"
    );

    let digest = crate::authoring::write_pinned_config(project, name, Path::new(wasm));
    let out = warden_in(project, &["check", "--config", "warden.yaml"]);
    succeeds(&out, "warden check");
    assert!(text(&out.stdout).contains(&digest), "{}", text(&out.stdout));
}

#[test]
fn a_python_scaffold_builds_with_its_pinned_componentize_py_and_passes_its_vectors() {
    let (_parent, project) = scaffold("python", "py-guard");
    let python = toolchains().join("python/bin");
    let version = Command::new(python.join("componentize-py"))
        .arg("--version")
        .output()
        .unwrap();
    let version = text(&version.stdout);
    let requirements = std::fs::read_to_string(project.join("requirements.txt")).unwrap();
    let pin = requirements
        .lines()
        .find_map(|l| l.strip_prefix("componentize-py=="))
        .and_then(|l| l.split_whitespace().next())
        .expect("requirements.txt pins componentize-py");
    assert!(
        version.contains(pin),
        "toolchain {version} but pinned {pin}"
    );
    assert!(requirements.contains("--hash=sha256:"), "{requirements}");

    run_readme_command(
        &project,
        ".venv/bin/componentize-py ",
        (".venv/bin", python.to_str().unwrap()),
    );
    passes_its_vectors_and_loads_pinned(&project, "py-guard", "py_guard.wasm");
}

/// The packages a lock file installs, without the root package (the project).
fn locked_packages(lock: &Path) -> Value {
    let mut lock: Value = serde_json::from_slice(&std::fs::read(lock).unwrap()).unwrap();
    let packages = lock["packages"].as_object_mut().unwrap();
    let root = packages.remove("").unwrap();
    serde_json::json!({"root_dev": root["devDependencies"], "packages": packages})
}

#[test]
fn a_js_scaffold_builds_with_its_locked_componentize_js_and_passes_its_vectors() {
    let (_parent, project) = scaffold("js", "js-guard");
    let js = toolchains().join("javascript");
    // The toolchain is what `npm ci` installs from the scaffold's lock file:
    // the same packages at the same versions and integrity hashes.
    assert_eq!(
        locked_packages(&project.join("package-lock.json")),
        locked_packages(&js.join("package-lock.json"))
    );
    let package: Value =
        serde_json::from_slice(&std::fs::read(project.join("package.json")).unwrap()).unwrap();
    assert_eq!(package["name"], "js-guard");
    #[cfg(unix)]
    std::os::unix::fs::symlink(js.join("node_modules"), project.join("node_modules")).unwrap();

    run_readme_command(
        &project,
        "npm run build",
        ("npm run build", "npm run --silent build"),
    );
    passes_its_vectors_and_loads_pinned(&project, "js-guard", "js_guard.wasm");
}

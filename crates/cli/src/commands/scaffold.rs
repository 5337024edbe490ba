//! `warden new provider NAME`: a new provider crate (manifest, source with unit
//! tests, a provider config, conformance vectors, a README) that builds for
//! `wasm32-wasip2` and passes its own vectors as generated. Never overwrites:
//! the target directory must not exist or be empty.
//!
//! The crate depends on the published SDK by version, so that it builds on any
//! machine; a local SDK (Warden's own development) is a path the author names.

use std::fs;
use std::path::{Path, PathBuf};

/// The SDK version a scaffold asks for: this binary's own. The SDK and the
/// binary share the workspace's version, which names the contract they speak
/// (`0.x` ↔ `warden:guardrail@0.x`).
pub const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where the scaffold's `warden-provider` dependency comes from.
#[derive(Debug, Clone, Copy)]
pub enum Sdk<'a> {
    /// The published crate, at this binary's version ([`SDK_VERSION`]).
    Published,
    /// A folder holding the SDK's `Cargo.toml` (`sdk/provider` of a checkout).
    Local(&'a Path),
}

const TEMPLATES: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        include_str!("../../templates/provider/Cargo.toml.tmpl"),
    ),
    (
        "src/lib.rs",
        include_str!("../../templates/provider/lib.rs.tmpl"),
    ),
    (
        "vectors.jsonl",
        include_str!("../../templates/provider/vectors.jsonl"),
    ),
    (
        "config.yaml",
        include_str!("../../templates/provider/config.yaml"),
    ),
    (
        "README.md",
        include_str!("../../templates/provider/README.md.tmpl"),
    ),
    (
        ".gitignore",
        include_str!("../../templates/provider/gitignore"),
    ),
];

/// Names the generated source defines or imports: a provider type may not take them.
const TAKEN_TYPE_NAMES: &[&str] = &["Call", "Config", "ConfigError", "Decision", "Provider"];

/// Why a provider could not be scaffolded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScaffoldError {
    #[error(
        "'{0}' is not a valid provider name: use 1-64 lower-case letters, digits, '-' and '_', starting with a letter"
    )]
    InvalidName(String),
    #[error("{0} already exists and is not empty; choose another directory")]
    NotEmpty(PathBuf),
    #[error(
        "cannot find the provider SDK at {0}: --sdk takes the folder of warden-provider's Cargo.toml (sdk/provider in a Warden checkout)"
    )]
    SdkNotFound(PathBuf),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What was created.
#[derive(Debug)]
pub struct Scaffold {
    pub dir: PathBuf,
    pub files: Vec<PathBuf>,
    /// The component `cargo build --release --target wasm32-wasip2` produces,
    /// relative to `dir`.
    pub component: PathBuf,
}

/// Creates the provider `name` in `dir`, depending on `sdk`.
pub fn new_provider(name: &str, dir: &Path, sdk: Sdk<'_>) -> Result<Scaffold, ScaffoldError> {
    check_name(name)?;
    let dependency = sdk_dependency(sdk)?;
    if dir.exists() && fs::read_dir(dir).map_or(true, |mut d| d.next().is_some()) {
        return Err(ScaffoldError::NotEmpty(dir.to_path_buf()));
    }
    let crate_name = name.replace('-', "_");
    let mut type_name: String = name
        .split(['-', '_'])
        .filter(|s| !s.is_empty())
        .map(|s| s[..1].to_ascii_uppercase() + &s[1..])
        .collect();
    if TAKEN_TYPE_NAMES.contains(&type_name.as_str()) {
        type_name.push_str("Policy");
    }
    let mut files = Vec::new();
    for (file, template) in TEMPLATES {
        let text = template
            .replace("{{name}}", name)
            .replace("{{crate}}", &crate_name)
            .replace("{{code}}", &crate_name)
            .replace("{{type}}", &type_name)
            .replace("{{sdk}}", &dependency);
        let path = dir.join(file);
        let write = |path: &Path| -> std::io::Result<()> {
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent)?;
            }
            fs::write(path, text)
        };
        write(&path).map_err(|source| ScaffoldError::Write {
            path: path.clone(),
            source,
        })?;
        files.push(path);
    }
    Ok(Scaffold {
        dir: dir.to_path_buf(),
        files,
        component: PathBuf::from(format!("target/wasm32-wasip2/release/{crate_name}.wasm")),
    })
}

/// The value of `warden-provider = ...` in the scaffold's manifest.
fn sdk_dependency(sdk: Sdk<'_>) -> Result<String, ScaffoldError> {
    match sdk {
        Sdk::Published => Ok(format!("\"{SDK_VERSION}\"")),
        Sdk::Local(path) => {
            let found = path
                .canonicalize()
                .ok()
                .filter(|p| p.join("Cargo.toml").is_file())
                .ok_or_else(|| ScaffoldError::SdkNotFound(path.to_path_buf()))?;
            let path = found.display().to_string().replace('\\', "/");
            // A JSON string is a valid TOML basic string: the same escapes.
            let quoted = serde_json::to_string(&path).expect("a string serializes");
            Ok(format!("{{ path = {quoted} }}"))
        }
    }
}

fn check_name(name: &str) -> Result<(), ScaffoldError> {
    const RESERVED: &[&str] = &[
        "test",
        "core",
        "std",
        "alloc",
        "proc_macro",
        "self",
        "crate",
    ];
    let valid = (1..=64).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        && !RESERVED.contains(&name.replace('-', "_").as_str());
    if valid {
        Ok(())
    } else {
        Err(ScaffoldError::InvalidName(name.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_crate_names() {
        for good in ["guard", "my-guard", "pii_filter2"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "Guard",
            "2guard",
            "my guard",
            "../x",
            "test",
            &"a".repeat(65),
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_non_empty_directory_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("keep.txt"), "mine").unwrap();
        let err = new_provider("guard", dir.path(), Sdk::Published).unwrap_err();
        assert!(matches!(err, ScaffoldError::NotEmpty(_)), "{err}");
        assert_eq!(
            fs::read_to_string(dir.path().join("keep.txt")).unwrap(),
            "mine"
        );
    }

    #[test]
    fn every_placeholder_is_filled() {
        let dir = tempfile::tempdir().unwrap();
        let scaffold = new_provider("my-guard", &dir.path().join("g"), Sdk::Published).unwrap();
        for file in &scaffold.files {
            let text = fs::read_to_string(file).unwrap();
            assert!(!text.contains("{{"), "{}", file.display());
        }
        let lib = fs::read_to_string(scaffold.dir.join("src/lib.rs")).unwrap();
        assert!(lib.contains("pub struct MyGuard") && lib.contains("\"my_guard.tool_blocked\""));
    }

    #[test]
    fn the_sdk_is_the_published_crate_at_this_binarys_version() {
        let dir = tempfile::tempdir().unwrap();
        let scaffold = new_provider("guard", &dir.path().join("g"), Sdk::Published).unwrap();
        let manifest = fs::read_to_string(scaffold.dir.join("Cargo.toml")).unwrap();
        let line = format!("warden-provider = \"{}\"\n", env!("CARGO_PKG_VERSION"));
        assert!(manifest.contains(&line), "{manifest}");
        assert!(!manifest.contains("path"), "{manifest}");
    }

    #[test]
    fn a_local_sdk_is_a_path_dependency_quoted_for_toml() {
        let dir = tempfile::tempdir().unwrap();
        let sdk = dir.path().join("a \"quoted\" sdk");
        fs::create_dir(&sdk).unwrap();
        fs::write(sdk.join("Cargo.toml"), "").unwrap();
        let scaffold = new_provider("guard", &dir.path().join("g"), Sdk::Local(&sdk)).unwrap();
        let manifest = fs::read_to_string(scaffold.dir.join("Cargo.toml")).unwrap();
        let quoted = serde_json::to_string(&sdk.canonicalize().unwrap()).unwrap();
        assert!(
            manifest.contains(&format!("warden-provider = {{ path = {quoted} }}")),
            "{manifest}"
        );
    }

    #[test]
    fn a_local_sdk_without_a_manifest_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = new_provider("guard", &dir.path().join("g"), Sdk::Local(dir.path())).unwrap_err();
        assert!(matches!(err, ScaffoldError::SdkNotFound(_)), "{err}");
        assert!(!dir.path().join("g").exists());
    }

    #[test]
    fn a_name_that_would_clash_with_the_sdk_gets_a_suffix() {
        let dir = tempfile::tempdir().unwrap();
        let scaffold = new_provider("provider", &dir.path().join("p"), Sdk::Published).unwrap();
        let lib = fs::read_to_string(scaffold.dir.join("src/lib.rs")).unwrap();
        assert!(lib.contains("pub struct ProviderPolicy"), "{lib}");
    }
}

//! `warden new provider NAME`: a new provider crate (manifest, source with unit
//! tests, a provider config, conformance vectors, a README) that builds for
//! `wasm32-wasip2` and passes its own vectors as generated. Never overwrites:
//! the target directory must not exist or be empty.

use std::fs;
use std::path::{Path, PathBuf};

/// The provider SDK in the source tree this binary was built from.
pub const BUILT_WITH_SDK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../sdk/provider");

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
        "cannot find the provider SDK at {0}; pass --sdk with the path of sdk/provider in a Warden checkout"
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

/// Creates the provider `name` in `dir`, depending on the SDK at `sdk`.
pub fn new_provider(name: &str, dir: &Path, sdk: &Path) -> Result<Scaffold, ScaffoldError> {
    check_name(name)?;
    let sdk = sdk
        .canonicalize()
        .ok()
        .filter(|p| p.join("Cargo.toml").is_file())
        .ok_or_else(|| ScaffoldError::SdkNotFound(sdk.to_path_buf()))?;
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
    let sdk_text = sdk.display().to_string().replace('\\', "/");
    let mut files = Vec::new();
    for (file, template) in TEMPLATES {
        let text = template
            .replace("{{name}}", name)
            .replace("{{crate}}", &crate_name)
            .replace("{{code}}", &crate_name)
            .replace("{{type}}", &type_name)
            .replace("{{sdk}}", &sdk_text);
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
        let err = new_provider("guard", dir.path(), Path::new(BUILT_WITH_SDK)).unwrap_err();
        assert!(matches!(err, ScaffoldError::NotEmpty(_)), "{err}");
        assert_eq!(
            fs::read_to_string(dir.path().join("keep.txt")).unwrap(),
            "mine"
        );
    }

    #[test]
    fn every_placeholder_is_filled() {
        let dir = tempfile::tempdir().unwrap();
        let scaffold =
            new_provider("my-guard", &dir.path().join("g"), Path::new(BUILT_WITH_SDK)).unwrap();
        for file in &scaffold.files {
            let text = fs::read_to_string(file).unwrap();
            assert!(!text.contains("{{"), "{}", file.display());
        }
        let lib = fs::read_to_string(scaffold.dir.join("src/lib.rs")).unwrap();
        assert!(lib.contains("pub struct MyGuard") && lib.contains("\"my_guard.tool_blocked\""));
    }

    #[test]
    fn a_name_that_would_clash_with_the_sdk_gets_a_suffix() {
        let dir = tempfile::tempdir().unwrap();
        let scaffold =
            new_provider("provider", &dir.path().join("p"), Path::new(BUILT_WITH_SDK)).unwrap();
        let lib = fs::read_to_string(scaffold.dir.join("src/lib.rs")).unwrap();
        assert!(lib.contains("pub struct ProviderPolicy"), "{lib}");
    }
}

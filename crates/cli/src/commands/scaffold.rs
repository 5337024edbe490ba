//! `warden new provider NAME`: a new provider crate (manifest, source with unit
//! tests, a provider config, conformance vectors, a README) that builds for
//! `wasm32-wasip2` and passes its own vectors as generated. Never overwrites:
//! the target directory must not exist or be empty.
//!
//! The crate depends on the published SDK by version, so that it builds on any
//! machine; a local SDK (Warden's own development) is a path the author names.

use std::fs;
use std::path::{Path, PathBuf};

use crate::commands::wit::CONTRACT;

/// The SDK version a scaffold asks for: this binary's own. The SDK and the
/// binary share the workspace's version, which names the contract they speak
/// (`0.x` ↔ `warden:guardrail@0.x`).
pub const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The SDK crates as a release archive holds them, unpacked (`sdk/rust/NAME-VERSION/`).
const SDK_CRATES: &[&str] = &["warden-provider", "warden-analysis", "warden-types"];

/// The Rust compiler that built this binary (`rustc --version`, recorded by
/// build.rs): the toolchain a Rust scaffold pins.
const RUSTC_VERSION: &str = env!("WARDEN_RUSTC_VERSION");

/// Where the scaffold's `warden-provider` dependency comes from.
#[derive(Debug, Clone, Copy)]
pub enum Sdk<'a> {
    /// The published crate, at this binary's version ([`SDK_VERSION`]).
    Published,
    /// A folder holding the SDK's `Cargo.toml` (`sdk/provider` of a checkout),
    /// or a release archive's `sdk/rust` folder (the packaged crates, unpacked).
    Local(&'a Path),
}

/// The language a provider is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// A crate on the `warden-provider` SDK, built with cargo.
    Rust,
    /// A module built with componentize-py, pinned in `requirements.txt`.
    Python,
    /// A module built with componentize-js, pinned in `package-lock.json`.
    Js,
}

/// A file of a scaffold: a template (placeholders filled), a text written
/// as it is (the contract), or one made for this scaffold.
#[derive(Clone)]
enum Content<'a> {
    Template(&'static str),
    Verbatim(&'static str),
    Generated(&'a str),
}

const VECTORS: &str = include_str!("../../templates/provider/vectors.jsonl");
const CONFIG: &str = include_str!("../../templates/provider/config.yaml");
const CI: &str = include_str!("../../templates/provider/ci.md.tmpl");
const LOAD: &str = include_str!("../../templates/provider/load.md.tmpl");

const RUST: &[(&str, Content<'static>)] = &[
    (
        "Cargo.toml",
        Content::Template(include_str!("../../templates/provider/Cargo.toml.tmpl")),
    ),
    (
        "src/lib.rs",
        Content::Template(include_str!("../../templates/provider/lib.rs.tmpl")),
    ),
    (
        "config.schema.json",
        Content::Template(include_str!("../../templates/provider/config.schema.json")),
    ),
    ("vectors.jsonl", Content::Template(VECTORS)),
    ("config.yaml", Content::Template(CONFIG)),
    (
        "README.md",
        Content::Template(include_str!("../../templates/provider/README.md.tmpl")),
    ),
    (
        ".gitignore",
        Content::Template(include_str!("../../templates/provider/gitignore")),
    ),
];

const PYTHON: &[(&str, Content<'static>)] = &[
    (
        "provider.py",
        Content::Template(include_str!(
            "../../templates/provider-python/provider.py.tmpl"
        )),
    ),
    (
        "requirements.txt",
        Content::Verbatim(include_str!(
            "../../templates/provider-python/requirements.txt"
        )),
    ),
    ("wit/guardrail.wit", Content::Verbatim(CONTRACT)),
    ("vectors.jsonl", Content::Template(VECTORS)),
    ("config.yaml", Content::Template(CONFIG)),
    (
        "README.md",
        Content::Template(include_str!(
            "../../templates/provider-python/README.md.tmpl"
        )),
    ),
    (
        ".gitignore",
        Content::Template(include_str!("../../templates/provider-python/gitignore")),
    ),
];

const JS: &[(&str, Content<'static>)] = &[
    (
        "provider.js",
        Content::Template(include_str!("../../templates/provider-js/provider.js.tmpl")),
    ),
    (
        "package.json",
        Content::Template(include_str!(
            "../../templates/provider-js/package.json.tmpl"
        )),
    ),
    // The example's lock file, the one scripts/build-language-providers
    // installs from, renamed for the provider in `lock_file`.
    ("package-lock.json", Content::Template(JS_LOCK)),
    ("wit/guardrail.wit", Content::Verbatim(CONTRACT)),
    ("vectors.jsonl", Content::Template(VECTORS)),
    ("config.yaml", Content::Template(CONFIG)),
    (
        "README.md",
        Content::Template(include_str!("../../templates/provider-js/README.md.tmpl")),
    ),
    (
        ".gitignore",
        Content::Template(include_str!("../../templates/provider-js/gitignore")),
    ),
];

const JS_LOCK: &str = include_str!("../../../../examples/providers/javascript/package-lock.json");

/// The example's package name in [`JS_LOCK`], replaced by the provider's.
const JS_LOCK_NAME: &str = "\"name\": \"warden-command-guard\"";

impl Lang {
    fn files(self) -> &'static [(&'static str, Content<'static>)] {
        match self {
            Lang::Rust => RUST,
            Lang::Python => PYTHON,
            Lang::Js => JS,
        }
    }

    /// The component the README's build writes, relative to the project.
    fn component(self, crate_name: &str) -> PathBuf {
        match self {
            Lang::Rust => PathBuf::from(format!("target/wasm32-wasip2/release/{crate_name}.wasm")),
            Lang::Python | Lang::Js => PathBuf::from(format!("{crate_name}.wasm")),
        }
    }

    /// The CI snippet's build step, one command a line, indented for the
    /// YAML block it goes in.
    fn ci_build(self) -> &'static str {
        match self {
            Lang::Rust => {
                "          rustup target add wasm32-wasip2\n          cargo test\n          cargo build --release --target wasm32-wasip2"
            }
            Lang::Python => {
                "          python3 -m venv .venv\n          .venv/bin/pip install --require-hashes -r requirements.txt\n          .venv/bin/componentize-py -d wit -w guardrail-provider componentize --stub-wasi -p . provider -o {{crate}}.wasm"
            }
            Lang::Js => "          npm ci\n          npm run build",
        }
    }
}

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
        "cannot find the provider SDK at {0}: --sdk takes the folder of warden-provider's Cargo.toml (sdk/provider in a Warden checkout) or a release archive's sdk/rust folder (holding warden-provider-{SDK_VERSION}/)"
    )]
    SdkNotFound(PathBuf),
    #[error(
        "--sdk names a local Rust SDK; a {0:?} provider has none (it is built from the contract in wit/)"
    )]
    SdkWithoutRust(Lang),
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
    /// The component the README's build command produces, relative to `dir`.
    pub component: PathBuf,
}

/// Creates the provider `name`, written in `lang`, in `dir`; a Rust provider
/// depends on `sdk`.
pub fn new_provider(
    name: &str,
    dir: &Path,
    lang: Lang,
    sdk: Sdk<'_>,
) -> Result<Scaffold, ScaffoldError> {
    check_name(name)?;
    let (dependency, cargo_config) = match (lang, sdk) {
        (Lang::Rust, sdk) => sdk_dependency(sdk)?,
        (_, Sdk::Published) => (String::new(), None),
        (lang, Sdk::Local(_)) => return Err(ScaffoldError::SdkWithoutRust(lang)),
    };
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
    let component = lang.component(&crate_name);
    let ci = CI
        .replace("{{ci_build}}", lang.ci_build())
        .replace("{{component}}", &component.display().to_string());
    let toolchain = (lang == Lang::Rust).then(|| rust_toolchain(RUSTC_VERSION));
    let generated = [
        ("rust-toolchain.toml", toolchain),
        (".cargo/config.toml", cargo_config),
    ];
    let generated = generated
        .iter()
        .filter_map(|(file, text)| Some((*file, Content::Generated(text.as_deref()?))));
    let mut files = Vec::new();
    for (file, content) in lang
        .files()
        .iter()
        .map(|(f, c)| (*f, c.clone()))
        .chain(generated)
    {
        let text = match content {
            Content::Verbatim(text) => text.to_string(),
            Content::Generated(text) => text.to_string(),
            Content::Template(template) => template
                .replace(JS_LOCK_NAME, &format!("\"name\": \"{name}\""))
                .replace("{{ci}}", &ci)
                .replace("{{load}}", LOAD)
                .replace("{{name}}", name)
                .replace("{{crate}}", &crate_name)
                .replace("{{code}}", &crate_name)
                .replace("{{type}}", &type_name)
                .replace("{{contract}}", warden_runtime::provider::CONTRACT_VERSION)
                .replace("{{sdk}}", &dependency),
        };
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
        component,
    })
}

/// The value of `warden-provider = ...` in the scaffold's manifest and, for
/// a release's SDK, the `.cargo/config.toml` that patches the three crates in.
fn sdk_dependency(sdk: Sdk<'_>) -> Result<(String, Option<String>), ScaffoldError> {
    let published = format!("\"{SDK_VERSION}\"");
    let Sdk::Local(path) = sdk else {
        return Ok((published, None));
    };
    let found = path
        .canonicalize()
        .map_err(|_| ScaffoldError::SdkNotFound(path.to_path_buf()))?;
    if found.join("Cargo.toml").is_file() {
        return Ok((format!("{{ path = {} }}", toml_path(&found)), None));
    }
    // A release's SDK: the crates as they will be published, so the manifest
    // asks for the published version, and cargo takes them from this folder
    // until they are (deleting .cargo/config.toml switches to the registry).
    let released = |name: &str| found.join(format!("{name}-{SDK_VERSION}"));
    if !SDK_CRATES
        .iter()
        .all(|name| released(name).join("Cargo.toml").is_file())
    {
        return Err(ScaffoldError::SdkNotFound(path.to_path_buf()));
    }
    let mut config = String::from(
        "# The Warden SDK from a release archive, in place of the registry's\n# (`warden new provider --sdk`). Delete this file to build against the\n# published crates.\n[patch.crates-io]\n",
    );
    for name in SDK_CRATES {
        config.push_str(&format!(
            "{name} = {{ path = {} }}\n",
            toml_path(&released(name))
        ));
    }
    Ok((published, Some(config)))
}

/// `path` as a TOML string: a JSON string is a valid TOML basic string (the
/// same escapes).
fn toml_path(path: &Path) -> String {
    let path = path.display().to_string().replace('\\', "/");
    serde_json::to_string(&path).expect("a string serializes")
}

/// The scaffold's `rust-toolchain.toml`: the compiler that built this binary
/// (`rustc 1.95.0 (…)` pins `1.95.0`), with the guest target. A component's
/// bytes depend on the compiler, so the pin travels with the source and a
/// rebuilder's rustup picks the same one. A pre-release compiler names only
/// its channel (`nightly`): its version is not a name rustup installs.
fn rust_toolchain(rustc_version: &str) -> String {
    let version = rustc_version.split_whitespace().nth(1).unwrap_or_default();
    let channel = match version.split_once('-') {
        None => version,
        Some((_, pre)) => pre.split('.').next().unwrap_or(pre),
    };
    format!(
        "# The compiler this provider is built with, and rebuilt with to match its\n# sha256 (the `warden` that made this scaffold was built with {rustc_version}).\n[toolchain]\nchannel = \"{channel}\"\ntargets = [\"wasm32-wasip2\"]\nprofile = \"minimal\"\n"
    )
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
        let err = new_provider("guard", dir.path(), Lang::Rust, Sdk::Published).unwrap_err();
        assert!(matches!(err, ScaffoldError::NotEmpty(_)), "{err}");
        assert_eq!(
            fs::read_to_string(dir.path().join("keep.txt")).unwrap(),
            "mine"
        );
    }

    #[test]
    fn every_placeholder_is_filled() {
        let dir = tempfile::tempdir().unwrap();
        let scaffold = new_provider(
            "my-guard",
            &dir.path().join("g"),
            Lang::Rust,
            Sdk::Published,
        )
        .unwrap();
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
        let scaffold =
            new_provider("guard", &dir.path().join("g"), Lang::Rust, Sdk::Published).unwrap();
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
        let scaffold =
            new_provider("guard", &dir.path().join("g"), Lang::Rust, Sdk::Local(&sdk)).unwrap();
        let manifest = fs::read_to_string(scaffold.dir.join("Cargo.toml")).unwrap();
        let quoted = serde_json::to_string(&sdk.canonicalize().unwrap()).unwrap();
        assert!(
            manifest.contains(&format!("warden-provider = {{ path = {quoted} }}")),
            "{manifest}"
        );
    }

    /// A release archive's `sdk/rust`: the three crates unpacked.
    fn release_sdk(dir: &Path, crates: &[&str]) -> PathBuf {
        let sdk = dir.join("sdk \"rust\"");
        for name in crates {
            let folder = sdk.join(format!("{name}-{SDK_VERSION}"));
            fs::create_dir_all(&folder).unwrap();
            fs::write(folder.join("Cargo.toml"), "").unwrap();
        }
        sdk
    }

    #[test]
    fn a_release_sdk_is_patched_in_by_path_and_the_manifest_asks_for_the_published_version() {
        let dir = tempfile::tempdir().unwrap();
        let sdk = release_sdk(dir.path(), SDK_CRATES);
        let scaffold =
            new_provider("guard", &dir.path().join("g"), Lang::Rust, Sdk::Local(&sdk)).unwrap();
        let manifest = fs::read_to_string(scaffold.dir.join("Cargo.toml")).unwrap();
        let line = format!("warden-provider = \"{SDK_VERSION}\"\n");
        assert!(manifest.contains(&line), "{manifest}");
        let config = scaffold.dir.join(".cargo/config.toml");
        assert!(scaffold.files.contains(&config));
        let config = fs::read_to_string(config).unwrap();
        assert!(config.contains("[patch.crates-io]\n"), "{config}");
        for name in SDK_CRATES {
            let folder = sdk
                .canonicalize()
                .unwrap()
                .join(format!("{name}-{SDK_VERSION}"));
            let quoted = serde_json::to_string(&folder).unwrap();
            assert!(
                config.contains(&format!("{name} = {{ path = {quoted} }}\n")),
                "{config}"
            );
        }
    }

    #[test]
    fn a_release_sdk_missing_a_crate_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let sdk = release_sdk(dir.path(), &["warden-provider", "warden-analysis"]);
        let err =
            new_provider("guard", &dir.path().join("g"), Lang::Rust, Sdk::Local(&sdk)).unwrap_err();
        assert!(matches!(err, ScaffoldError::SdkNotFound(_)), "{err}");
        assert!(!dir.path().join("g").exists());
    }

    #[test]
    fn a_published_or_checkout_sdk_needs_no_cargo_config() {
        let dir = tempfile::tempdir().unwrap();
        let scaffold =
            new_provider("guard", &dir.path().join("g"), Lang::Rust, Sdk::Published).unwrap();
        assert!(!scaffold.dir.join(".cargo").exists());
    }

    #[test]
    fn a_rust_scaffold_pins_the_compiler_that_built_this_binary() {
        let dir = tempfile::tempdir().unwrap();
        let scaffold =
            new_provider("guard", &dir.path().join("g"), Lang::Rust, Sdk::Published).unwrap();
        let file = scaffold.dir.join("rust-toolchain.toml");
        assert!(scaffold.files.contains(&file));
        assert_eq!(
            fs::read_to_string(file).unwrap(),
            rust_toolchain(RUSTC_VERSION)
        );
        assert!(RUSTC_VERSION.starts_with("rustc "), "{RUSTC_VERSION}");
    }

    #[test]
    fn a_stable_compiler_is_pinned_by_version_and_a_pre_release_by_channel() {
        let stable = rust_toolchain("rustc 1.95.0 (59807616e 2026-04-14)");
        assert!(stable.contains("channel = \"1.95.0\"\n"), "{stable}");
        assert!(
            stable.contains("targets = [\"wasm32-wasip2\"]\n"),
            "{stable}"
        );
        let nightly = rust_toolchain("rustc 1.97.0-nightly (0123abcde 2026-05-01)");
        assert!(nightly.contains("channel = \"nightly\"\n"), "{nightly}");
        let beta = rust_toolchain("rustc 1.96.0-beta.3 (0123abcde 2026-05-01)");
        assert!(beta.contains("channel = \"beta\"\n"), "{beta}");
    }

    #[test]
    fn a_python_or_js_scaffold_pins_no_rust_toolchain() {
        for lang in [Lang::Python, Lang::Js] {
            let dir = tempfile::tempdir().unwrap();
            let scaffold =
                new_provider("guard", &dir.path().join("g"), lang, Sdk::Published).unwrap();
            assert!(
                !scaffold.dir.join("rust-toolchain.toml").exists(),
                "{lang:?}"
            );
        }
    }

    #[test]
    fn a_local_sdk_without_a_manifest_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = new_provider(
            "guard",
            &dir.path().join("g"),
            Lang::Rust,
            Sdk::Local(dir.path()),
        )
        .unwrap_err();
        assert!(matches!(err, ScaffoldError::SdkNotFound(_)), "{err}");
        assert!(!dir.path().join("g").exists());
    }

    #[test]
    fn a_name_that_would_clash_with_the_sdk_gets_a_suffix() {
        let dir = tempfile::tempdir().unwrap();
        let scaffold = new_provider(
            "provider",
            &dir.path().join("p"),
            Lang::Rust,
            Sdk::Published,
        )
        .unwrap();
        let lib = fs::read_to_string(scaffold.dir.join("src/lib.rs")).unwrap();
        assert!(lib.contains("pub struct ProviderPolicy"), "{lib}");
    }

    #[test]
    fn a_python_or_js_scaffold_vendors_the_contract_and_fills_every_placeholder() {
        for lang in [Lang::Python, Lang::Js] {
            let dir = tempfile::tempdir().unwrap();
            let scaffold =
                new_provider("web-guard", &dir.path().join("w"), lang, Sdk::Published).unwrap();
            let wit = fs::read_to_string(scaffold.dir.join("wit/guardrail.wit")).unwrap();
            assert_eq!(wit, CONTRACT, "{lang:?}");
            for file in &scaffold.files {
                let text = fs::read_to_string(file).unwrap();
                assert!(!text.contains("{{"), "{lang:?}: {}", file.display());
            }
            assert_eq!(scaffold.component, PathBuf::from("web_guard.wasm"));
        }
    }

    #[test]
    fn the_js_lock_file_is_the_examples_renamed_for_the_provider() {
        assert_eq!(
            JS_LOCK.matches(JS_LOCK_NAME).count(),
            2,
            "the lock's two names"
        );
        let dir = tempfile::tempdir().unwrap();
        let scaffold =
            new_provider("web-guard", &dir.path().join("w"), Lang::Js, Sdk::Published).unwrap();
        let lock: serde_json::Value = serde_json::from_str(
            &fs::read_to_string(scaffold.dir.join("package-lock.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(lock["name"], "web-guard");
        assert_eq!(lock["packages"][""]["name"], "web-guard");
        let example: serde_json::Value = serde_json::from_str(JS_LOCK).unwrap();
        let package: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(scaffold.dir.join("package.json")).unwrap())
                .unwrap();
        assert_eq!(
            package["devDependencies"],
            example["packages"][""]["devDependencies"]
        );
    }

    #[test]
    fn a_local_sdk_is_refused_for_a_python_or_js_provider() {
        let dir = tempfile::tempdir().unwrap();
        for lang in [Lang::Python, Lang::Js] {
            let err = new_provider("guard", &dir.path().join("g"), lang, Sdk::Local(dir.path()))
                .unwrap_err();
            assert!(matches!(err, ScaffoldError::SdkWithoutRust(_)), "{err}");
            assert!(!dir.path().join("g").exists());
        }
    }

    #[test]
    fn a_rust_scaffold_embeds_its_config_schema() {
        let dir = tempfile::tempdir().unwrap();
        let scaffold =
            new_provider("guard", &dir.path().join("g"), Lang::Rust, Sdk::Published).unwrap();
        let schema: serde_json::Value = serde_json::from_str(
            &fs::read_to_string(scaffold.dir.join("config.schema.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(schema["required"], serde_json::json!(["blocked_tools"]));
        let lib = fs::read_to_string(scaffold.dir.join("src/lib.rs")).unwrap();
        assert!(lib.contains("config_schema = include_str!(\"../config.schema.json\")"));
    }
}

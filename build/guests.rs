// Shared by the build scripts that build guest components (`include!`d by
// crates/warden/build.rs and crates/testkit/build.rs): one nested cargo
// builds the named guest packages for wasm32-wasip2 into `<target>/guests`,
// and the crate is told where they are (`WARDEN_GUEST_DIR`).

const TARGET: &str = "wasm32-wasip2";
const PROFILE: &str = "wasm-release";

/// Builds `guests` (package names) for the guest target, rebuilding when any
/// of `inputs` (paths relative to the workspace root) changes.
fn build_guests(guests: &[&str], inputs: &[&str]) {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest_dir
        .ancestors()
        .nth(2)
        .expect("the crate lives in crates/ of the workspace root");
    for input in inputs {
        println!("cargo:rerun-if-changed={}", root.join(input).display());
    }

    let target_dir = guest_target_dir();
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(root)
        .args([
            "build",
            "--profile",
            PROFILE,
            "--target",
            TARGET,
            "--target-dir",
        ])
        .arg(&target_dir);
    for guest in guests {
        build.args(["-p", guest]);
    }
    // The outer build's flags and wrappers are for the host, not for the guests.
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        build.env_remove(var);
    }
    let output = build
        .output()
        .expect("run cargo to build the guest components");
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        if stderr.contains("may not be installed") || stderr.contains("can't find crate for `core`")
        {
            panic!(
                "the {TARGET} target is not installed; run `rustup target add {TARGET}`\n\n{stderr}"
            );
        }
        panic!("building the guest components failed:\n{stderr}");
    }

    let guest_dir = target_dir.join(TARGET).join(PROFILE);
    println!("cargo:rustc-env=WARDEN_GUEST_DIR={}", guest_dir.display());
}

/// `<target dir>/guests`, shared by every profile of the host build so that the
/// guests are built once. The target dir is the ancestor of `OUT_DIR` that holds
/// cargo's `CACHEDIR.TAG`.
fn guest_target_dir() -> PathBuf {
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    let target_root = out_dir
        .ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| out_dir.join("guest-target"));
    target_root.join("guests")
}

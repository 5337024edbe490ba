//! The SDK ships its own copy of the contract (`wit/guardrail.wit`), so that the
//! package builds outside this repository: it must be the host's, word for word,
//! and the SDK's version must name the contract's (`0.x` ↔ `warden:guardrail@0.x`).

const SDK_CONTRACT: &str = include_str!("../wit/guardrail.wit");
const HOST_CONTRACT: &str = include_str!("../../../wit/guardrail.wit");

#[test]
fn the_sdks_contract_is_the_hosts() {
    assert!(
        SDK_CONTRACT == HOST_CONTRACT,
        "sdk/provider/wit/guardrail.wit differs from wit/guardrail.wit: copy the workspace's over it"
    );
}

#[test]
fn the_sdks_version_names_the_contracts_minor_version() {
    let contract = SDK_CONTRACT
        .lines()
        .find_map(|line| line.trim().strip_prefix("package warden:guardrail@"))
        .and_then(|rest| rest.strip_suffix(';'))
        .expect("the contract declares `package warden:guardrail@X.Y.Z;`");
    let minor = |version: &str| version.splitn(3, '.').take(2).collect::<Vec<_>>().join(".");
    assert_eq!(
        minor(env!("CARGO_PKG_VERSION")),
        minor(contract),
        "warden-provider {} speaks warden:guardrail@{contract}",
        env!("CARGO_PKG_VERSION")
    );
}

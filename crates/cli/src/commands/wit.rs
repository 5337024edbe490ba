//! `warden wit`: the contract this binary speaks, `wit/guardrail.wit`, word for
//! word, so that an author in Python or JavaScript (whose tools read WIT) needs
//! no Warden checkout: `warden wit > wit/guardrail.wit`.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;

/// The contract, embedded when the binary is built.
pub(crate) const CONTRACT: &str = include_str!("../../../../wit/guardrail.wit");

// The arguments of `warden wit`: none.
#[derive(Args)]
pub(crate) struct WitArgs {}

pub(crate) fn run(_: WitArgs) -> anyhow::Result<ExitCode> {
    std::io::stdout().lock().write_all(CONTRACT.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_contract_is_the_version_the_host_loads() {
        let declared = format!(
            "package {}@{};",
            warden_runtime::provider::CONTRACT_PACKAGE,
            warden_runtime::provider::CONTRACT_VERSION
        );
        assert!(
            CONTRACT.lines().any(|line| line.trim() == declared),
            "wit/guardrail.wit does not declare `{declared}`"
        );
    }
}

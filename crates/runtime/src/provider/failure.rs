//! Provider failures: what went wrong, as a precise `warden.*` detail code, and
//! the fail-closed (or, where the operator chose it, fail-open) decision it becomes.

use crate::engine::LimitHit;
use warden_types::OnError;
use warden_types::codes;
use warden_types::decision::{Decision, Reason, Verdict};
pub(crate) use warden_types::text::truncate;

/// The kinds of provider failure, each with its detail code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[non_exhaustive]
pub enum FailureKind {
    /// The call ran past `timeout_ms`.
    Timeout,
    /// The call used up its fuel.
    FuelExhausted,
    /// The guest tried to grow past `memory_mb` (or its table limit).
    MemoryLimit,
    /// The guest overflowed its stack.
    StackOverflow,
    /// Any other trap: a panic, `unreachable`, an out-of-bounds access.
    Trap,
    /// The guest answered with something that is not a valid decision.
    InvalidDecision,
    /// The request was larger than `max_input_bytes`; the guest was not called.
    InputTooLarge,
    /// No instance became free before the deadline.
    PoolExhausted,
    /// The instance could not be created or configured.
    ConfigureFailed,
}

impl FailureKind {
    /// The stable `warden.*` reason code of this kind (`warden.timeout`, ...).
    pub fn code(self) -> &'static str {
        match self {
            FailureKind::Timeout => "warden.timeout",
            FailureKind::FuelExhausted => "warden.fuel_exhausted",
            FailureKind::MemoryLimit => "warden.memory_limit",
            FailureKind::StackOverflow => "warden.stack_overflow",
            FailureKind::Trap => "warden.trap",
            FailureKind::InvalidDecision => "warden.invalid_decision",
            FailureKind::InputTooLarge => "warden.input_too_large",
            FailureKind::PoolExhausted => "warden.pool_exhausted",
            FailureKind::ConfigureFailed => "warden.configure_failed",
        }
    }
}

/// A failed provider call: the kind and what happened, in a sentence.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} ({})", message, kind.code())]
pub struct ProviderFailure {
    /// What went wrong.
    pub kind: FailureKind,
    /// What happened, in a sentence.
    pub message: String,
}

impl ProviderFailure {
    /// A failure of this kind.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        ProviderFailure {
            kind,
            message: message.into(),
        }
    }

    /// Classifies an error from a call into the guest. The limiter's record
    /// comes first: a refused memory growth surfaces as a plain error.
    pub(crate) fn classify(
        err: &wasmtime::Error,
        limit: Option<LimitHit>,
        timeout_ms: u64,
    ) -> ProviderFailure {
        use wasmtime::Trap;
        if let Some(hit) = limit {
            let message = match hit {
                LimitHit::Memory { desired } => {
                    format!("the provider tried to grow its memory to {desired} bytes")
                }
                LimitHit::Table { desired } => {
                    format!("the provider tried to grow a table to {desired} elements")
                }
            };
            return ProviderFailure::new(FailureKind::MemoryLimit, message);
        }
        if err
            .downcast_ref::<wasmtime::PoolConcurrencyLimitError>()
            .is_some()
        {
            return ProviderFailure::new(
                FailureKind::PoolExhausted,
                format!("the engine's instance pool is full: {err}"),
            );
        }
        match err.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => ProviderFailure::new(
                FailureKind::Timeout,
                format!("the provider ran past its {timeout_ms} ms timeout"),
            ),
            Some(Trap::OutOfFuel) => {
                ProviderFailure::new(FailureKind::FuelExhausted, "the provider ran out of fuel")
            }
            Some(Trap::StackOverflow) => ProviderFailure::new(
                FailureKind::StackOverflow,
                "the provider overflowed its stack",
            ),
            Some(Trap::UnreachableCodeReached) => ProviderFailure::new(
                FailureKind::Trap,
                "the provider trapped: unreachable code reached (a panic or `unreachable`)",
            ),
            Some(trap) => {
                ProviderFailure::new(FailureKind::Trap, format!("the provider trapped: {trap}"))
            }
            None => {
                ProviderFailure::new(FailureKind::Trap, format!("the provider failed: {err:#}"))
            }
        }
    }

    /// The decision this failure becomes: deny, unless the operator set the
    /// provider to fail open, and then an allow that still shows the error.
    /// A provider's failure puts the contract's `oap.evaluator_error` first and
    /// its detail second; the host's own refusal to call it (the request is over
    /// `max_input_bytes`: the model made it so) names its cause first, since a
    /// harness such as DeerFlow shows only the first reason.
    pub fn to_decision(&self, provider: &str, on_error: OnError) -> Decision {
        let (verdict, summary) = match on_error {
            OnError::Deny => (Verdict::Deny, "guardrail provider error (fail-closed)"),
            OnError::Ask => (Verdict::Ask, "guardrail provider error (ask a human)"),
            OnError::Allow => (Verdict::Allow, "guardrail provider error (fail-open)"),
        };
        let summary = Reason::new(codes::EVALUATOR_ERROR, summary);
        let detail = Reason::new(
            self.kind.code(),
            format!("provider '{provider}': {}", self.message),
        );
        let reasons = match self.kind {
            FailureKind::InputTooLarge => vec![detail, summary],
            _ => vec![summary, detail],
        };
        Decision::new(verdict, reasons)
            .with_meta("error_detail", self.kind.code())
            .with_meta("provider", provider)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_denies_by_default_with_the_detail_second() {
        let f = ProviderFailure::new(FailureKind::Timeout, "slow");
        let d = f.to_decision("p", OnError::Deny);
        assert_eq!(d.verdict, Verdict::Deny);
        assert_eq!(d.reasons[0].code, "oap.evaluator_error");
        assert_eq!(d.reasons[1].code, "warden.timeout");
        assert_eq!(d.metadata["error_detail"], "warden.timeout");
    }

    #[test]
    fn an_oversized_request_names_its_cause_first() {
        let d = ProviderFailure::new(FailureKind::InputTooLarge, "300000 bytes")
            .to_decision("p", OnError::Deny);
        assert_eq!(d.verdict, Verdict::Deny);
        assert_eq!(d.reasons[0].code, "warden.input_too_large");
        assert_eq!(d.reasons[1].code, "oap.evaluator_error");
    }

    #[test]
    fn a_fail_open_provider_allows_but_keeps_the_error_visible() {
        let d = ProviderFailure::new(FailureKind::Trap, "boom").to_decision("p", OnError::Allow);
        assert_eq!(d.verdict, Verdict::Allow);
        assert_eq!(d.reasons[0].code, "oap.evaluator_error");
        assert_eq!(d.reasons[0].message, "guardrail provider error (fail-open)");
    }

    #[test]
    fn a_refused_growth_is_a_memory_limit_whatever_the_error_says() {
        let err = wasmtime::format_err!("some error");
        let f = ProviderFailure::classify(&err, Some(LimitHit::Memory { desired: 1 << 30 }), 100);
        assert_eq!(f.kind, FailureKind::MemoryLimit);
    }

    #[test]
    fn an_unknown_error_is_a_trap() {
        let err = wasmtime::format_err!("something odd");
        assert_eq!(
            ProviderFailure::classify(&err, None, 100).kind,
            FailureKind::Trap
        );
    }
}

//! The deny for a lone call that could not be judged (the approval store could
//! not say whether its thread waits for a human; the daemon's judging pool was
//! full): led by `oap.evaluator_error` as every provider failure is, with a
//! `warden.*` code that says why; never an allow, and never an error a harness
//! could read as "go ahead".

use serde_json::{Map, Value};
use warden_policy::interaction::RunInteractionPolicy;
use warden_policy::origin::{Reach, RunOrigin};
use warden_types::codes;
use warden_types::decision::{Reason, Verdict};
use warden_types::request::{RequestError, ToolCall};
use warden_types::{Caller, Evaluation, StageReport};

/// Why a call was not judged, as its reasons.
pub fn reasons(code: &str, message: &str) -> Vec<Reason> {
    vec![
        Reason::new(
            codes::EVALUATOR_ERROR,
            "guardrail evaluation unavailable (fail-closed)",
        ),
        Reason::new(code, format!("{message}; the call was not judged")),
    ]
}

/// The deny for `call`, not judged: `stage` (in `decided_by`) could not do
/// its part, `code` and `message` say why. An error only for a context the
/// harness got wrong (as judging would refuse it).
pub fn evaluation(
    call: &ToolCall,
    caller: Caller,
    generation: u64,
    stage: &str,
    code: &str,
    message: &str,
) -> Result<Evaluation, RequestError> {
    let policy = RunInteractionPolicy::resolve(&call.context, caller)?;
    let reach = Reach::of(&policy, RunOrigin::resolve(&call.context, caller)?);
    let reasons = reasons(code, message);
    let mut metadata = Map::new();
    metadata.insert("error_detail".into(), Value::from(code));
    Ok(Evaluation {
        verdict: Verdict::Deny,
        allow: false,
        stages: vec![StageReport {
            stage: stage.into(),
            verdict: Verdict::Deny,
            codes: reasons.iter().map(|r| r.code.clone()).collect(),
            duration_us: 0,
            digest: None,
            fuel_used: None,
            error_detail: Some(code.to_string().into()),
            classifier: None,
        }],
        reasons,
        policy_id: None,
        metadata,
        decided_by: Some(stage.into()),
        cause: None,
        interaction_mode: policy.mode,
        reach: Some(reach.kind()),
        decision_record: None,
        generation,
        duration_us: 0,
        judged_at: warden_policy::trust::admit(call, caller).judged_at,
    })
}

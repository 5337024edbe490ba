//! Warden beside Cedar (issue 14): Warden's whole pipeline (the native core and
//! the allowlist provider of the embedded default) and native Cedar on the same
//! calls, both from the same JSON bytes, measured in one run, alternating.
//!
//! The Cedar policy (`cedar/warden.cedar`) says what the embedded default
//! decides on these calls: the allowlist provider's `allowed_tools` and
//! `denied_tools`, and the native core's sensitive paths, its
//! `Read(/etc/shadow)` deny and its `Bash(git push *)` ask, as conditions over
//! the call's attributes. The tests check that both give the same verdict on
//! every benchmark call, and on a few more.

use std::collections::HashSet;
use std::str::FromStr;
use std::time::Instant;

use anyhow::{Context as _, anyhow};
use cedar_policy::{
    Authorizer, Context, Decision, Entities, EntityId, EntityTypeName, EntityUid, PolicyId,
    PolicySet, Request, RestrictedExpression,
};
use serde::Deserialize;
use serde_json::json;
use warden::{Caller, Config, ToolCall, Verdict, Warden};

use crate::inputs::TYPICAL_COMMAND;
use crate::measure::{Measurement, measure, summary};

/// The Cedar policy equivalent to the embedded default on the benchmark calls.
pub const POLICY: &str = include_str!("cedar/warden.cedar");

/// The calls both engines judge: a name and the request's JSON bytes, as a
/// harness sends them (`POST /v1/evaluate`'s body).
pub fn calls() -> Vec<(&'static str, Vec<u8>)> {
    let call = |tool: &str, input: serde_json::Value| {
        serde_json::to_vec(&json!({"tool_name": tool, "tool_input": input}))
            .expect("a call serialises")
    };
    vec![
        (
            "typical shell call",
            call("bash", json!({ "command": TYPICAL_COMMAND })),
        ),
        (
            "allowlist-only call",
            call("web_search", json!({"query": "cedar policy language"})),
        ),
        (
            "denied call (sensitive path in a shell command)",
            call("bash", json!({"command": "cat ~/.ssh/id_rsa"})),
        ),
    ]
}

/// Warden as the comparison runs it: the embedded default (its permissions,
/// triage, its allowlist provider) without the OAP and rules providers.
pub fn warden() -> anyhow::Result<Warden> {
    let mut config = Config::embedded();
    config
        .guardrails
        .providers
        .retain(|p| p.name == "allowlist");
    anyhow::ensure!(
        config.guardrails.providers.len() == 1,
        "the embedded default has no allowlist provider"
    );
    Ok(Warden::new(&config)?)
}

/// Warden's verdict on a call's JSON bytes: the request parsed, then the whole pipeline.
pub fn warden_decide(warden: &Warden, json: &[u8]) -> anyhow::Result<Verdict> {
    let call: ToolCall = serde_json::from_slice(json)?;
    Ok(warden.evaluate(&call, Caller::Agent)?.verdict)
}

/// The parts of a call Cedar's request is made of: the policy reads the
/// arguments `command` and `path` only, so only they are taken into the
/// context (a call's JSON through `Context::from_json_value` took 4.3 µs
/// against 1.0 µs this way: the reference gets the faster path).
#[derive(Deserialize)]
struct CedarCall {
    tool_name: String,
    #[serde(default)]
    tool_input: CedarInput,
    #[serde(default)]
    context: CedarCallContext,
}

#[derive(Default, Deserialize)]
struct CedarInput {
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    path: Option<String>,
}

#[derive(Default, Deserialize)]
struct CedarCallContext {
    #[serde(default)]
    agent_id: Option<String>,
}

/// Native Cedar with [`POLICY`], compiled once, as Warden compiles its config once.
pub struct CedarReference {
    authorizer: Authorizer,
    policies: PolicySet,
    /// The forbids annotated `@verdict("ask")`.
    asks: HashSet<PolicyId>,
    entities: Entities,
    agent: EntityTypeName,
    tool: EntityTypeName,
    action: EntityUid,
}

impl CedarReference {
    pub fn new() -> anyhow::Result<Self> {
        Self::with(|_| true)
    }

    /// Cedar with the allowlist provider's policies alone (`allowlist`,
    /// `denied-tools`): the allowlist-style call of the issue's figure.
    pub fn allowlist_only() -> anyhow::Result<Self> {
        Self::with(|id| matches!(id, Some("allowlist" | "denied-tools")))
    }

    /// [`POLICY`]'s policies whose `@id` `keep` keeps.
    fn with(keep: impl Fn(Option<&str>) -> bool) -> anyhow::Result<Self> {
        Self::from_policies(POLICY, keep)
    }

    /// The policies of `text` whose `@id` `keep` keeps, over the same
    /// requests (the `scale` scenario's generated policies).
    pub fn from_policies(text: &str, keep: impl Fn(Option<&str>) -> bool) -> anyhow::Result<Self> {
        let all = PolicySet::from_str(text).map_err(|e| anyhow!("{e:?}"))?;
        let mut policies = PolicySet::new();
        for policy in all.policies().filter(|p| keep(p.annotation("id"))) {
            policies.add(policy.clone())?;
        }
        let asks = policies
            .policies()
            .filter(|p| p.annotation("verdict") == Some("ask"))
            .map(|p| p.id().clone())
            .collect();
        Ok(CedarReference {
            authorizer: Authorizer::new(),
            policies,
            asks,
            entities: Entities::empty(),
            agent: EntityTypeName::from_str("Agent")?,
            tool: EntityTypeName::from_str("Tool")?,
            action: EntityUid::from_str(r#"Action::"call""#)?,
        })
    }

    /// The request for a call's JSON bytes: principal, action, resource and
    /// the context (the call's `tool_input`).
    pub fn request(&self, json: &[u8]) -> anyhow::Result<Request> {
        let call: CedarCall = serde_json::from_slice(json)?;
        let principal = EntityUid::from_type_name_and_id(
            self.agent.clone(),
            EntityId::new(call.context.agent_id.as_deref().unwrap_or("agent")),
        );
        let resource =
            EntityUid::from_type_name_and_id(self.tool.clone(), EntityId::new(&call.tool_name));
        let mut pairs = Vec::with_capacity(2);
        if let Some(command) = call.tool_input.command {
            pairs.push((
                "command".to_string(),
                RestrictedExpression::new_string(command),
            ));
        }
        if let Some(path) = call.tool_input.path {
            pairs.push(("path".to_string(), RestrictedExpression::new_string(path)));
        }
        let context = Context::from_pairs(pairs).context("the call's context")?;
        Ok(Request::new(
            principal,
            self.action.clone(),
            resource,
            context,
            None,
        )?)
    }

    /// The verdict on a request: allow, or deny, or ask when every forbid that
    /// decided it is annotated `@verdict("ask")`.
    pub fn authorize(&self, request: &Request) -> Verdict {
        let response = self
            .authorizer
            .is_authorized(request, &self.policies, &self.entities);
        match response.decision() {
            Decision::Allow => Verdict::Allow,
            Decision::Deny => {
                let mut reasons = response.diagnostics().reason().peekable();
                if reasons.peek().is_some() && reasons.all(|id| self.asks.contains(id)) {
                    Verdict::Ask
                } else {
                    Verdict::Deny
                }
            }
        }
    }

    /// Cedar's verdict on a call's JSON bytes: the request built, then authorised.
    pub fn decide(&self, json: &[u8]) -> anyhow::Result<Verdict> {
        Ok(self.authorize(&self.request(json)?))
    }
}

/// The `cedar` scenario: each call judged by Warden, by Cedar with the
/// equivalent policy and by Cedar with the allowlist alone, in turn in each
/// round (the order rotated every round), so machine noise hits all three;
/// the median and p99 of each, and Warden's time as a multiple of Cedar's.
pub fn side_by_side(rounds: usize) -> anyhow::Result<Vec<Measurement>> {
    let warden = warden()?;
    let cedar = CedarReference::new()?;
    let allowlist = CedarReference::allowlist_only()?;
    let calls = calls();
    for (name, json) in &calls {
        let (w, c) = (warden_decide(&warden, json)?, cedar.decide(json)?);
        anyhow::ensure!(w == c, "{name}: Warden says {w:?}, Cedar {c:?}");
    }
    const ENGINES: usize = 3;
    let mut samples: Vec<Vec<Vec<_>>> = (0..calls.len())
        .map(|_| (0..ENGINES).map(|_| Vec::with_capacity(rounds)).collect())
        .collect();
    let warm_up = (rounds / 10).max(10);
    for round in 0..warm_up + rounds {
        for ((_, json), samples) in calls.iter().zip(&mut samples) {
            let json = std::hint::black_box(json.as_slice());
            for turn in 0..ENGINES {
                let engine = (round + turn) % ENGINES;
                let t = Instant::now();
                let verdict = match engine {
                    0 => warden_decide(&warden, json)?,
                    1 => cedar.decide(json)?,
                    _ => allowlist.decide(json)?,
                };
                let elapsed = t.elapsed();
                std::hint::black_box(verdict);
                if round >= warm_up {
                    samples[engine].push(elapsed);
                }
            }
        }
    }
    let mut rows = Vec::new();
    for ((name, _), mut samples) in calls.iter().zip(samples) {
        let a = summary(
            &format!("{name}: Cedar, allowlist policies alone"),
            1,
            samples.pop().unwrap_or_default(),
            None,
        );
        let c = summary(
            &format!("{name}: Cedar, equivalent policy"),
            1,
            samples.pop().unwrap_or_default(),
            None,
        );
        let w = summary("", 1, samples.pop().unwrap_or_default(), None);
        let scenario = format!(
            "{name}: Warden ({:.2}x / {:.2}x Cedar at p50 / p99; {:.2}x / {:.2}x Cedar's allowlist alone)",
            w.p50_us / c.p50_us,
            w.p99_us / c.p99_us,
            w.p50_us / a.p50_us,
            w.p99_us / a.p99_us,
        );
        rows.push(Measurement { scenario, ..w });
        rows.push(c);
        rows.push(a);
    }
    Ok(rows)
}

/// The `cedar-stages` scenario: where each engine's time goes on the typical
/// shell call, stage by stage (each measured alone).
pub fn stages(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    use warden_policy::interaction::RunInteractionPolicy;
    use warden_policy::trust;

    let warden = warden()?;
    let cedar = CedarReference::new()?;
    let (_, json) = &calls_named("typical shell call")?;
    let call: ToolCall = serde_json::from_slice(json)?;
    let snapshot = warden.snapshot();
    let permissions = snapshot.permissions();
    let canonical = permissions.canonical(&call);
    let provider = &snapshot.providers().providers()[0];
    let request = cedar.request(json)?;
    let interaction = RunInteractionPolicy::resolve(&call.context, Caller::Agent)?;
    let guest = snapshot.provider_call(&call, Caller::Agent, interaction.mode);
    Ok(vec![
        measure("Warden: whole pipeline from JSON", 1, calls, &|| {
            assert_eq!(warden_decide(&warden, json).ok(), Some(Verdict::Allow));
        }),
        measure("Warden: JSON to ToolCall", 1, calls, &|| {
            let call: ToolCall = serde_json::from_slice(std::hint::black_box(json)).expect("call");
            std::hint::black_box(call);
        }),
        measure("Warden: shell analysis alone", 1, calls, &|| {
            std::hint::black_box(warden_analysis::shell::analyze(std::hint::black_box(
                TYPICAL_COMMAND,
            )));
        }),
        measure(
            "Warden: canonical call (shell analysis, paths)",
            1,
            calls,
            &|| {
                std::hint::black_box(permissions.canonical(std::hint::black_box(&call)));
            },
        ),
        measure(
            "Warden: permission engine on the canonical call",
            1,
            calls,
            &|| {
                std::hint::black_box(permissions.judge(std::hint::black_box(&canonical)));
            },
        ),
        measure(
            "Warden: interaction policy and trust::admit (clock)",
            1,
            calls,
            &|| {
                let interaction = RunInteractionPolicy::resolve(&call.context, Caller::Agent);
                std::hint::black_box(interaction.ok());
                std::hint::black_box(trust::admit(&call, Caller::Agent));
            },
        ),
        measure(
            "Warden: allowlist provider (guest call and component)",
            1,
            calls,
            &|| {
                let guest = snapshot.provider_call(&call, Caller::Agent, interaction.mode);
                let opinion = provider.evaluate(&guest).expect("an opinion");
                assert_eq!(opinion.decision.verdict, Verdict::Allow);
            },
        ),
        measure(
            "Warden: the arguments serialised for the guest (tool_input.to_string)",
            1,
            calls,
            &|| {
                std::hint::black_box(std::hint::black_box(&call.tool_input).to_string());
            },
        ),
        measure(
            "Warden: the component alone (prepared guest call)",
            1,
            calls,
            &|| {
                let opinion = provider.evaluate(&guest).expect("an opinion");
                assert_eq!(opinion.decision.verdict, Verdict::Allow);
            },
        ),
        measure("Warden: triage detector", 1, calls, &|| {
            std::hint::black_box(snapshot.triage().assess(
                &canonical,
                &call.tool_input,
                Verdict::Allow,
                false,
            ));
        }),
        measure("Cedar: whole decision from JSON", 1, calls, &|| {
            assert_eq!(cedar.decide(json).ok(), Some(Verdict::Allow));
        }),
        measure(
            "Cedar: JSON to request (entity ids, context)",
            1,
            calls,
            &|| {
                std::hint::black_box(cedar.request(std::hint::black_box(json)).expect("request"));
            },
        ),
        measure("Cedar: is_authorized", 1, calls, &|| {
            std::hint::black_box(cedar.authorize(std::hint::black_box(&request)));
        }),
    ])
}

fn calls_named(name: &str) -> anyhow::Result<(&'static str, Vec<u8>)> {
    calls()
        .into_iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| anyhow!("no benchmark call '{name}'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A few more calls, beyond the benchmark's, on which the two policies
    /// must agree too: each verdict and each kind of condition once.
    fn more_calls() -> Vec<(serde_json::Value, Verdict)> {
        vec![
            (
                json!({"tool_name": "read_file", "tool_input": {"path": "src/main.rs"}}),
                Verdict::Allow,
            ),
            (
                json!({"tool_name": "write_file", "tool_input": {"path": "/workspace/notes.md", "content": "x"}}),
                Verdict::Allow,
            ),
            (
                json!({"tool_name": "read_file", "tool_input": {"path": "/home/agent/.aws/credentials"}}),
                Verdict::Deny,
            ),
            (
                json!({"tool_name": "read_file", "tool_input": {"path": "/home/agent/.ssh/id_ed25519.pub"}}),
                Verdict::Allow,
            ),
            (
                json!({"tool_name": "read_file", "tool_input": {"path": "/etc/shadow"}}),
                Verdict::Deny,
            ),
            (
                json!({"tool_name": "bash", "tool_input": {"command": "git push origin main"}}),
                Verdict::Ask,
            ),
            (
                json!({"tool_name": "bash_unsafe", "tool_input": {"command": "ls"}}),
                Verdict::Deny,
            ),
            (
                json!({"tool_name": "rm", "tool_input": {"path": "/tmp/x"}}),
                Verdict::Deny,
            ),
            (
                json!({"tool_name": "web_fetch", "tool_input": {"url": "https://example.com/"}}),
                Verdict::Allow,
            ),
        ]
    }

    #[test]
    fn cedar_and_warden_agree_on_every_benchmark_call() {
        let warden = warden().expect("Warden");
        let cedar = CedarReference::new().expect("the Cedar policy");
        let expected = [Verdict::Allow, Verdict::Allow, Verdict::Deny];
        let calls = calls();
        assert_eq!(calls.len(), expected.len());
        for ((name, json), expected) in calls.iter().zip(expected) {
            let w = warden_decide(&warden, json).expect("Warden decides");
            let c = cedar.decide(json).expect("Cedar decides");
            assert_eq!(w, expected, "{name}: Warden");
            assert_eq!(c, expected, "{name}: Cedar");
        }
    }

    #[test]
    fn cedar_and_warden_agree_on_more_calls() {
        let warden = warden().expect("Warden");
        let cedar = CedarReference::new().expect("the Cedar policy");
        for (call, expected) in more_calls() {
            let json = serde_json::to_vec(&call).expect("JSON");
            let w = warden_decide(&warden, &json).expect("Warden decides");
            let c = cedar.decide(&json).expect("Cedar decides");
            assert_eq!(w, expected, "{call}: Warden");
            assert_eq!(c, expected, "{call}: Cedar");
        }
    }

    /// Every built-in sensitive path of the native core is covered by a
    /// condition of the Cedar policy (a substring of the pattern), for a path
    /// argument and for a shell command.
    #[test]
    fn the_cedar_policy_covers_every_default_sensitive_path() {
        for attribute in ["context.path", "context.command"] {
            let opening = format!("{attribute} like \"");
            let literals: Vec<&str> = POLICY
                .match_indices(&opening)
                .filter_map(|(at, _)| POLICY[at + opening.len()..].split('"').next())
                .map(|literal| literal.trim_matches('*'))
                .collect();
            for pattern in warden_analysis::sensitive::DEFAULT_SENSITIVE_PATHS {
                let core = pattern.trim_matches('*');
                assert!(
                    literals.iter().any(|l| !l.is_empty() && core.contains(l)),
                    "no condition on {attribute} covers '{pattern}'"
                );
            }
        }
    }
}

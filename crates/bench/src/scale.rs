//! Policies that scale (issue 28): 10, 100, 1,000 and 10,000 rules of every
//! kind, in the native permission engine and in the rules provider, beside
//! Cedar with as many equivalent policies: how long the policy takes to load,
//! and a call that no rule matches and one that only the last rule matches,
//! through the whole pipeline (Cedar: the request built and authorised).
//! The Cedar rows need the `cedar` feature (`warden-bench`, not `warden
//! bench`, whose binary ships without Cedar).

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use warden::{Caller, Config, ToolCall, Verdict, Warden};

#[cfg(feature = "cedar")]
use crate::cedar::CedarReference;
#[cfg(feature = "cedar")]
use crate::measure::measure;
use crate::measure::{Measurement, measure_undisturbed, summary};

const SIZES: [usize; 4] = [10, 100, 1_000, 10_000];

/// The calls: one no rule matches, one the last rule alone matches (a deny).
const NONE_MATCHING: &str = "git status";
const LAST_MATCHING: &str = "make build";
/// The same when every command rule starts with the same word.
const SHARED_LAST_MATCHING: &str = "git push origin main";

/// `n` permission rules of every kind over the three lists, then the deny
/// that matches [`LAST_MATCHING`].
fn native_policy(n: usize) -> Value {
    let rule = |i: usize| match i % 7 {
        0 => format!("Bash(tool{i} sub{i} *)"),
        1 => format!("Bash(run{i} * --flag{i})"),
        2 => format!("Read(/srv/data{i}/**)"),
        3 => format!("Edit(~/work{i}/*.txt)"),
        4 => format!("WebFetch(domain:host{i}.example.org)"),
        5 => format!("WebFetch(domain:*.zone{i}.example.net)"),
        _ => format!("mcp__server{i}__tool{i}"),
    };
    permissions(n, rule, format!("Bash({LAST_MATCHING}*)"))
}

/// `n - 1` rules spread over deny, ask and allow, then `last` denying.
fn permissions(n: usize, rule: impl Fn(usize) -> String, last: String) -> Value {
    let (mut deny, mut ask, mut allow) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n - 1 {
        [&mut deny, &mut ask, &mut allow][i % 3].push(rule(i));
    }
    deny.push(last);
    json!({"permissions": {"mode": "full_auto", "allow": allow, "ask": ask, "deny": deny}})
}

/// `n` rules of every condition kind for the rules provider, the last (in
/// priority order) the deny that matches [`LAST_MATCHING`]; the default allows.
fn provider_policy(n: usize) -> Value {
    let rules: Vec<Value> = (0..n - 1)
        .map(|i| {
            let mut when = vec![match i % 6 {
                0 => json!({"field": "tool_name", "op": "eq", "value": format!("tool{i}")}),
                1 => json!({"field": "user_role", "op": "in", "value": [format!("role{i}"), format!("team{i}")]}),
                2 => json!({"field": "command", "op": "contains", "value": format!("--flag{i}")}),
                3 => json!({"field": "args.path", "op": "glob", "value": format!("/srv/data{i}/**")}),
                4 => json!({"field": "command", "op": "matches", "value": format!("^deploy{i}\\s+\\w+$")}),
                _ => json!({"field": "thread_id", "op": "ne", "value": format!("thread{i}")}),
            }];
            if i % 6 == 5 {
                when.push(json!({"field": "tool_name", "op": "eq", "value": format!("ne{i}")}));
            }
            let action = ["deny", "ask", "allow"][i % 3];
            json!({"id": format!("r{i}"), "priority": 1, "when": when, "action": action})
        })
        .collect();
    rules_provider(rules, LAST_MATCHING)
}

/// The rules provider with `rules`, then a deny of the command `last`; the
/// default allows.
fn rules_provider(mut rules: Vec<Value>, last: &str) -> Value {
    rules.push(json!({"id": "last", "priority": 0, "action": "deny",
        "when": [{"field": "command", "op": "eq", "value": last}]}));
    json!({"guardrails": {"providers": [{
        "name": "rules", "wasm": "builtin:rules",
        "config": {"policy_id": "scale", "default": "allow", "rules": rules},
    }]}})
}

/// `n` command rules that all start `git` (a trailing wildcard, one between
/// the words, one at the end, exact commands), then the deny that matches
/// [`SHARED_LAST_MATCHING`].
fn native_shared_policy(n: usize) -> Value {
    let rule = |i: usize| match i % 4 {
        0 => format!("Bash(git sub{i} *)"),
        1 => format!("Bash(git * --flag{i})"),
        2 => format!("Bash(git * x{i} *)"),
        _ => format!("Bash(git sub{i} --x{i})"),
    };
    permissions(n, rule, "Bash(git push origin *)".to_string())
}

/// `n` rules on the command that all start `git` (globs with a wildcard after
/// the first word or at the end, regexes), then the deny that matches
/// [`SHARED_LAST_MATCHING`]; the default allows.
fn provider_shared_policy(n: usize) -> Value {
    let rules: Vec<Value> = (0..n - 1)
        .map(|i| {
            let condition = match i % 3 {
                0 => json!({"field": "command", "op": "glob", "value": format!("git sub{i} *")}),
                1 => json!({"field": "command", "op": "glob", "value": format!("git * --flag{i}")}),
                _ => json!({"field": "command", "op": "matches", "value": format!("^git\\s+deploy{i}\\b")}),
            };
            let action = ["deny", "ask", "allow"][i % 3];
            json!({"id": format!("r{i}"), "priority": 1, "when": [condition], "action": action})
        })
        .collect();
    rules_provider(rules, SHARED_LAST_MATCHING)
}

/// `n` Cedar policies of the same kinds over the request's tool and its
/// `command` and `path`, then the forbid that matches [`LAST_MATCHING`], and
/// one permit.
#[cfg(feature = "cedar")]
fn cedar_policy(n: usize) -> String {
    let mut text = String::from("permit (principal, action, resource);\n");
    for i in 0..n - 1 {
        let condition = match i % 4 {
            0 => format!(r#"resource == Tool::"tool{i}""#),
            1 => format!(r#"context has command && context.command like "*--flag{i}*""#),
            2 => format!(r#"context has path && context.path like "/srv/data{i}/*""#),
            _ => format!(r#"context has command && context.command like "deploy{i} *""#),
        };
        text.push_str(&format!(
            "forbid (principal, action, resource) when {{ {condition} }};\n"
        ));
    }
    text.push_str(&format!(
        "forbid (principal, action, resource) when {{ context has command && context.command == \"{LAST_MATCHING}\" }};\n"
    ));
    text
}

fn bash(command: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({"tool_name": "bash", "tool_input": {"command": command}}))
        .expect("a call serialises")
}

/// How long loading takes: the median of a few loads.
fn loads(name: &str, times: usize, load: &dyn Fn()) -> Measurement {
    let samples: Vec<Duration> = (0..times)
        .map(|_| {
            let started = Instant::now();
            load();
            started.elapsed()
        })
        .collect();
    summary(name, 1, samples, None)
}

/// 10 to 10,000 command rules that all start with the same word, in both
/// engines: the call no rule matches and the one the last rule matches share
/// that word with every rule.
pub fn shared_first_word(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let mut rows = Vec::new();
    let (none, last) = (bash(NONE_MATCHING), bash(SHARED_LAST_MATCHING));
    for n in SIZES {
        let times = if n >= 10_000 { 3 } else { 10 };
        let calls = if n >= 10_000 { calls / 4 } else { calls }.max(100);
        for (engine, policy) in [
            ("native", native_shared_policy(n)),
            ("rules provider", provider_shared_policy(n)),
        ] {
            let config = Config::parse(&policy.to_string(), "<bench>", ".".into())?;
            let name = format!("{engine}, {n} rules sharing their first word");
            rows.push(loads(&format!("{name}: load"), times, &|| {
                Warden::new(&config).map(drop).expect("the policy loads")
            }));
            let warden = Warden::new(&config)?;
            for (what, json, verdict) in [
                ("none matching", &none, Verdict::Allow),
                ("last matching", &last, Verdict::Deny),
            ] {
                let (all, undisturbed) =
                    measure_undisturbed(&format!("{name}, {what}"), calls, &|| {
                        let call: ToolCall = serde_json::from_slice(json).expect("a call");
                        let e = warden.evaluate(&call, Caller::Agent).expect("a decision");
                        assert_eq!(e.verdict, verdict, "{what}: {e:?}");
                    });
                rows.extend([all].into_iter().chain(undisturbed));
            }
        }
    }
    Ok(rows)
}

pub fn scale(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let mut rows = Vec::new();
    let (none, last) = (bash(NONE_MATCHING), bash(LAST_MATCHING));
    for n in SIZES {
        let times = if n >= 10_000 { 3 } else { 10 };
        let calls = if n >= 10_000 { calls / 4 } else { calls }.max(100);
        let (native, provider) = (native_policy(n), provider_policy(n));
        // Reading the file is part of a load an operator waits for: timed
        // apart, as the text Warden::new is given is already read. As JSON (a
        // generated policy, read by the JSON parser) and as block YAML.
        for (engine, policy) in [("native", &native), ("rules provider", &provider)] {
            let yaml = serde_norway::to_string(policy)?;
            for (what, text) in [("parse", policy.to_string()), ("parse, as YAML", yaml)] {
                rows.push(loads(
                    &format!("{engine}, {n} rules: {what}"),
                    times,
                    &|| {
                        Config::parse(&text, "<bench>", ".".into())
                            .map(drop)
                            .expect("the policy parses")
                    },
                ));
            }
        }
        let (native, provider) = (native.to_string(), provider.to_string());
        let native = Config::parse(&native, "<bench>", ".".into())?;
        let provider = Config::parse(&provider, "<bench>", ".".into())?;
        rows.push(loads(&format!("native, {n} rules: load"), times, &|| {
            Warden::new(&native).map(drop).expect("the policy loads")
        }));
        rows.push(loads(
            &format!("rules provider, {n} rules: load"),
            times,
            &|| Warden::new(&provider).map(drop).expect("the policy loads"),
        ));
        #[cfg(feature = "cedar")]
        let cedar = {
            let text = cedar_policy(n);
            rows.push(loads(&format!("cedar, {n} policies: load"), times, &|| {
                CedarReference::from_policies(&text, |_| true)
                    .map(drop)
                    .expect("the policies parse")
            }));
            CedarReference::from_policies(&text, |_| true)?
        };
        let native = Warden::new(&native)?;
        let provider = Warden::new(&provider)?;
        for (what, json, verdict) in [
            ("none matching", &none, Verdict::Allow),
            ("last matching", &last, Verdict::Deny),
        ] {
            let warden_judge = |w: &Warden| {
                let call: ToolCall = serde_json::from_slice(json).expect("a call");
                let e = w.evaluate(&call, Caller::Agent).expect("a decision");
                assert_eq!(e.verdict, verdict, "{what}: {e:?}");
            };
            for (engine, warden) in [("native", &native), ("rules provider", &provider)] {
                let name = format!("{engine}, {n} rules, {what}");
                let (all, undisturbed) =
                    measure_undisturbed(&name, calls, &|| warden_judge(warden));
                rows.extend([all].into_iter().chain(undisturbed));
            }
            #[cfg(feature = "cedar")]
            rows.push(measure(
                &format!("cedar, {n} policies, {what}"),
                1,
                calls,
                &|| {
                    assert_eq!(cedar.decide(json).expect("a request"), verdict, "{what}");
                },
            ));
        }
    }
    Ok(rows)
}

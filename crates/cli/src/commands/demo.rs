//! `warden demo`: the embedded defaults judging example tool calls, and a
//! pause for a human answered in-process.

use std::process::ExitCode;

use warden::{Evaluation, Warden};
use warden_server::Config;
use warden_types::Caller;
use warden_types::request::ToolCall;

const DEMO_CALLS: &str = include_str!("../../../../examples/demo-calls.jsonl");

pub(crate) fn demo() -> anyhow::Result<ExitCode> {
    let mut config = Config::embedded();
    super::state_dir::place(&mut config.core, "demo");
    let warden = std::sync::Arc::new(Warden::new(&config.core)?);
    let snapshot = warden.snapshot();
    println!(
        "Warden demo: the embedded defaults (examples/warden.yaml), with the shipped providers"
    );
    println!(
        "  native core: permission engine ({} mode, sensitive paths, rules), risk triage",
        snapshot.permissions().mode().as_str()
    );
    for p in snapshot.providers().providers() {
        println!(
            "  loaded {} {} ({}, sha256:{}…)",
            p.name(),
            p.info().version,
            p.source(),
            &p.digest()[..12]
        );
    }
    println!("\nOne call at a time (as `warden eval --internal` would judge it):\n");
    for line in DEMO_CALLS.lines().filter(|l| !l.trim().is_empty()) {
        let call = ToolCall::from_json(line.as_bytes())?;
        // The demo speaks for the harness, so it may set the run's mode.
        let evaluation = warden.evaluate(&call, Caller::Internal)?;
        print_line(&call, &evaluation);
    }
    demo_approval(warden)?;
    Ok(ExitCode::SUCCESS)
}

/// A model response through the approval gate, paused and approved, with the
/// store in a scratch directory that is removed afterwards.
fn demo_approval(warden: std::sync::Arc<Warden>) -> anyhow::Result<()> {
    use warden_approval::{
        ApprovalGate, CallStatus, ModelResponse, RequestDecision, ResumeRequest, RunRef,
    };
    println!("\nA model response through the approval gate (hitl_approval.tools: [deploy]):\n");
    let dir = std::env::temp_dir().join(format!("warden-demo-{}", std::process::id()));
    let gate = ApprovalGate::open(warden, &dir, Default::default())?;
    let response = ModelResponse::from_json(
        br#"{"message": {"tool_calls": [
            {"id": "call_1", "name": "bash", "args": {"command": "git status"}},
            {"id": "call_2", "name": "deploy", "args": {"service": "api"}}]},
            "context": {"user_role": "admin"}}"#,
    )?;
    let outcome = gate.submit(
        &RunRef::new("demo-thread", "run-1"),
        &response,
        Caller::Internal,
    )?;
    for call in &outcome.calls {
        let status = match call.status {
            CallStatus::Run => "RUN",
            CallStatus::Pending => "PENDING",
            _ => "DENIED",
        };
        println!(
            "{status:<7} {} ({})",
            call.name,
            call.id.as_deref().unwrap_or("?")
        );
    }
    println!("        run state: {}", outcome.run_state.as_str());
    if let Some(approval_id) = &outcome.approval_id {
        let decisions = outcome
            .requests
            .iter()
            .map(|r| RequestDecision {
                request_id: r.request_id.clone(),
                decision: warden_approval::DecisionKind::Approve,
                args: None,
                message: None,
                grant: None,
            })
            .collect();
        let resolution = gate.resume(
            &warden_approval::Reviewer::human("demo-reviewer"),
            "demo-thread",
            Some(approval_id),
            &ResumeRequest::decide(decisions),
        )?;
        let answered = resolution.calls.iter().filter(|c| c.decision.is_some());
        for call in answered.filter(|c| c.status == CallStatus::Run) {
            println!(
                "RUN     {} ({}), approved by demo-reviewer",
                call.name,
                call.id.as_deref().unwrap_or("?")
            );
        }
    }
    drop(gate);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn print_line(call: &ToolCall, e: &Evaluation) {
    let mut args = call.tool_input.to_string();
    if args.len() > 48 {
        let mut end = 45;
        while !args.is_char_boundary(end) {
            end -= 1;
        }
        args.truncate(end);
        args.push('…');
    }
    // Each code once: on an allow, several stages often say the same thing.
    let mut reasons: Vec<String> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for r in &e.reasons {
        if seen.contains(&r.code.as_str()) {
            continue;
        }
        seen.push(&r.code);
        reasons.push(if r.message.is_empty() {
            r.code.clone()
        } else {
            format!("{}: {}", r.code, r.message)
        });
    }
    let context = if call.context == Default::default() {
        String::new()
    } else {
        format!(
            " {}",
            serde_json::to_string(&call.context).unwrap_or_default()
        )
    };
    println!(
        "{:<5} {} {}{}\n      {}  [{}, {} µs]",
        e.verdict.as_str().to_uppercase(),
        call.tool_name,
        args,
        context,
        reasons.join("; "),
        e.decided_by.as_deref().unwrap_or("no stage"),
        e.duration_us
    );
}

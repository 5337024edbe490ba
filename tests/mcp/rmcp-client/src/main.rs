//! rmcp's client in front of a stdio server, `2026-07-28` only (`server/discover`,
//! no handshake, no fallback):
//! `warden-rmcp-client CALLS_JSON COMMAND ARGS...`.
//!
//! Lists the tools, makes each call of CALLS_JSON (`[[name, arguments], ...]`)
//! and prints one JSON line: `{"protocol": "...", "tools": [...], "calls":
//! [{"result": ...} | {"error": "..."}]}`.

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [calls, command, rest @ ..] = args.as_slice() else {
        return Err("usage: warden-rmcp-client CALLS_JSON COMMAND ARGS...".into());
    };
    let calls: Vec<(String, Value)> = serde_json::from_str(calls)?;
    let mut child = tokio::process::Command::new(command);
    child.args(rest);
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = ().serve_with_lifecycle(TokioChildProcess::new(child)?, lifecycle).await?;
    let protocol = client
        .peer_info()
        .map(|info| info.protocol_version.to_string());
    let tools: Vec<String> = client
        .list_all_tools()
        .await?
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect();
    let mut results = Vec::new();
    for (name, arguments) in calls {
        let mut params = CallToolRequestParams::new(name);
        if let Value::Object(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        results.push(match client.call_tool(params).await {
            Ok(result) => json!({"result": result}),
            Err(err) => json!({"error": err.to_string()}),
        });
    }
    println!(
        "{}",
        json!({"protocol": protocol, "tools": tools, "calls": results})
    );
    client.cancel().await?;
    Ok(())
}

//! Warden inside a Rust program: load the embedded default policy (the shipped
//! allowlist and passport providers, the native core) or a configuration file,
//! judge tool calls before they run, and run only what is allowed. No daemon,
//! no async runtime.
//!
//!     cargo run -p embed-example [-- warden.yaml]

use serde_json::json;
use warden::{Caller, Config, ToolCall, Verdict, Warden};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let config = match std::env::args_os().nth(1) {
        Some(path) => Config::load(path.as_ref())?,
        None => Config::embedded(),
    };
    let warden = Warden::new(&config)?;
    let calls = [
        ToolCall::new("bash", json!({"command": "git status"})),
        ToolCall::new("bash", json!({"command": "cat ~/.ssh/id_rsa"})),
        ToolCall::new("rm", json!({"path": "/"})),
    ];
    for call in &calls {
        // A request the harness got wrong is an error; a call the model got
        // wrong is a deny. Either way, nothing runs unless the verdict allows:
        // an ask (a tool under hitl_approval, say) waits for a human.
        let evaluation = warden.evaluate(call, Caller::Agent)?;
        match evaluation.verdict {
            Verdict::Allow => println!("run   {} {}", call.tool_name, call.tool_input),
            verdict => {
                let why = evaluation.reasons.first().map_or("", |r| r.code.as_str());
                println!("{verdict:<5} {} ({why})", call.tool_name);
            }
        }
    }
    Ok(())
}

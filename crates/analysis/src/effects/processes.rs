//! Processes: signals sent to every process or to init
//! ([`Effect::SignalAll`](super::Effect::SignalAll)), and fork bombs
//! ([`Effect::ForkBomb`](super::Effect::ForkBomb)).

use crate::shell::{Analysis, Command};

pub(super) fn signals_all(c: &Command) -> Option<String> {
    let program = c.program.as_deref()?;
    match program {
        "kill" => {
            let mut pids = Vec::new();
            let mut k = 0;
            let mut options = true;
            while let Some(a) = c.args.get(k) {
                let v = a.value.as_str();
                k += 1;
                if options {
                    if v == "--" {
                        options = false;
                        continue;
                    }
                    if matches!(v, "-l" | "-L" | "--list" | "--table") {
                        return None;
                    }
                    if matches!(v, "-s" | "-n" | "--signal" | "-q" | "--queue" | "--timeout") {
                        k += 1;
                        continue;
                    }
                    if v.starts_with('-') && pids.is_empty() && k == 1 {
                        // The signal: `-9`, `-KILL`, `-SIGKILL`.
                        continue;
                    }
                    if v.starts_with("--") {
                        continue;
                    }
                    options = false;
                }
                pids.push(v);
            }
            pids.iter().find(|p| matches!(**p, "-1" | "1")).map(|p| {
                if *p == "1" {
                    "kill signals init (pid 1)".to_string()
                } else {
                    "kill signals every process (-1)".to_string()
                }
            })
        }
        "killall5" => Some("killall5 signals every process".into()),
        "pkill" | "killall" => {
            let targets: Vec<&str> = c.operands().map(|a| a.value.as_str()).collect();
            targets
                .iter()
                .find(|t| matches!(**t, "init" | "systemd" | "." | ".*" | "^" | ""))
                .map(|t| {
                    format!(
                        "{program} signals {}",
                        if matches!(*t, "init" | "systemd") {
                            "init"
                        } else {
                            "every process"
                        }
                    )
                })
        }
        _ => None,
    }
}

/// A function that runs itself in the background or in a pipeline: `:(){ :|:& };:`.
pub(super) fn fork_bomb(a: &Analysis) -> Option<String> {
    a.functions.iter().find_map(|f| {
        let body = &a.commands[f.commands.clone()];
        let recursive: Vec<&Command> = body
            .iter()
            .filter(|c| c.program.as_deref() == Some(f.name.as_str()))
            .collect();
        let multiplies = recursive.len() >= 2
            || recursive
                .iter()
                .any(|c| c.background || !c.stdin_from.is_empty());
        multiplies.then(|| f.name.clone())
    })
}

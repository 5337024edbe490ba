//! `warden bench`: latency percentiles and throughput of Warden's hot paths on
//! this machine, measured call by call (criterion reports means and medians;
//! an operator wants the p99 too). Build with `--release` to measure.

use serde_json::json;

#[cfg(feature = "cedar")]
pub mod cedar;
mod fixtures;
mod inputs;
pub mod loadgen;
mod measure;
mod replay;
mod scale;
mod sdk;
mod trail;

pub use inputs::{NESTED_COMMAND, TYPICAL_COMMAND};
pub use measure::{MARKDOWN_HEADER, Measurement, markdown_row, measure, summary};

use warden::Config;
use warden::Warden;
use warden_types::Caller;
use warden_types::request::ToolCall;

fn allowlist_config(instance: &str) -> Config {
    let yaml = format!(
        "guardrails:\n  providers:\n    - name: allowlist\n      wasm: \"builtin:allowlist\"\n      instance: {instance}\n      config: {{allowed_tools: [bash, read_file, write_file, web_search], denied_tools: [rm]}}\n"
    );
    Config::parse(&yaml, "<bench>", ".".into()).expect("bench config")
}

/// A named scenario: what it measures and how.
pub struct Scenario {
    pub name: &'static str,
    pub about: &'static str,
    pub run: fn(calls: usize) -> anyhow::Result<Vec<Measurement>>,
}

/// Every scenario `warden bench` knows.
pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "allowlist",
        about: "one evaluate through the allowlist provider: warm pool (1 and 2 threads) and a fresh instance per call",
        run: allowlist,
    },
    Scenario {
        name: "daemon",
        about: "POST /v1/evaluate over loopback HTTP against the real daemon, 1, 4 and 32 keep-alive connections",
        run: crate::loadgen::daemon,
    },
    Scenario {
        name: "daemon-dispatch",
        about: "the daemon's evaluate with the pipeline run on the judging pool, inline, in block_in_place and in spawn_blocking",
        run: crate::loadgen::dispatch,
    },
    Scenario {
        name: "daemon-fsync",
        about: "the daemon's evaluate with the decision log synced every 20 ms and before every answer (fsync: always), 1 and 8 connections",
        run: crate::loadgen::fsync,
    },
    Scenario {
        name: "daemon-floor",
        about: "the daemon's evaluate (1 and 4 connections) beside a minimal hyper server answering the same bytes and the pipeline alone, three rounds",
        run: crate::loadgen::floor,
    },
    Scenario {
        name: "daemon-telemetry",
        about: "the daemon's evaluate with telemetry off and on (every call traced, every line a log record) to a minimal collector, 1 and 4 connections, three rounds",
        run: crate::loadgen::telemetry,
    },
    Scenario {
        name: "daemon-everything",
        about: "the daemon's evaluate with shadow, hash chain, telemetry and PostgreSQL (WARDEN_DATABASE_URL) all on, against all off, 1 and 4 connections, three rounds",
        run: crate::loadgen::everything,
    },
    Scenario {
        name: "daemon-flood",
        about: "one token's evaluate (1 and 4 connections) on an idle daemon and while another token holds 40 connections sending 1 MiB bodies a byte every 2 s",
        run: crate::loadgen::flood,
    },
    Scenario {
        name: "healthz-stuck",
        about: "GET /healthz on an idle daemon and while 8 calls run to their provider's timeout, judging pool and inline (needs the test fixtures)",
        run: crate::loadgen::healthz_stuck,
    },
    Scenario {
        name: "reload",
        about: "POST /v1/admin/reload with a changed config to the first call judged by the new set",
        run: crate::loadgen::reload,
    },
    Scenario {
        name: "console",
        about: "a model response that pauses, from its POST to the paused event read from the console's event stream (200 pauses)",
        run: crate::loadgen::console,
    },
    Scenario {
        name: "rules",
        about: "the rules provider with 100 rules, none matching (worst case), warm: its decision alone, and the whole pipeline on 1 and 2 threads",
        run: sdk::rules,
    },
    Scenario {
        name: "languages",
        about: "one evaluate through the command-guard policy in Rust, Python and JavaScript, warm and fresh instance (needs scripts/build-language-providers)",
        run: sdk::languages,
    },
    Scenario {
        name: "artifact-cache",
        about: "first and second load (from the on-disk artifact cache) of a Rust, the rules, the 12 MB JavaScript and the 18 MB Python provider",
        run: sdk::artifact_cache,
    },
    Scenario {
        name: "bundle",
        about: "loading a small Rust provider (the allowlist) from the artifact cache pinned by SHA-256, and as a signed bundle whose signature, digests and 2 vectors are checked",
        run: sdk::bundle,
    },
    Scenario {
        name: "log-chain",
        about: "the decision log's hash chain: linking one line (SHA-256, on the writer's thread), with a signed checkpoint after every line, and verifying a 1,000-line log",
        run: trail::chain,
    },
    Scenario {
        name: "oap",
        about: "the OAP provider (example passport): a shell command through the warm component alone, and shell, file and URL calls through the whole pipeline",
        run: oap,
    },
    Scenario {
        name: "approval",
        about: "a model response paused for approval and resumed, through the SQLite store (calls/10 round trips)",
        run: approval,
    },
    Scenario {
        name: "approval-postgres",
        about: "the PostgreSQL store (the database named by WARDEN_DATABASE_URL): a pause + resume round trip, and an evaluate on a thread (the pending-on-thread query per call) beside the same on SQLite (calls/10 round trips)",
        run: approval_postgres,
    },
    Scenario {
        name: "approval-resume",
        about: "a resume alone, through the SQLite store: a message of 5 calls (3 approved, 2 never asked), every one judged again by the live pipeline (calls/10 resumes)",
        run: approval_resume,
    },
    Scenario {
        name: "native",
        about: "the whole native stage (request checks, interaction policy, permission engine, triage detector) on a typical shell command, no provider",
        run: native,
    },
    Scenario {
        name: "corpus",
        about: "the whole native stage on each command of the shell corpus (crates/analysis/tests/corpus, 3,701 commands from Debian manual pages) in full_auto with no rules; prints the share allowed, asked, denied and opaque",
        run: corpus,
    },
    #[cfg(feature = "cedar")]
    Scenario {
        name: "cedar",
        about: "Warden's whole pipeline (embedded default: native core + allowlist provider) beside native Cedar with the equivalent policy, from the same JSON bytes, alternating call by call: a typical shell call, an allowlist-only call, a denied call",
        run: cedar::side_by_side,
    },
    #[cfg(feature = "cedar")]
    Scenario {
        name: "cedar-stages",
        about: "where Warden's and Cedar's time goes on the typical shell call of the `cedar` scenario, stage by stage",
        run: cedar::stages,
    },
    Scenario {
        name: "scale",
        about: "10, 100, 1,000 and 10,000 rules of every kind in the native permission engine and in the rules provider (beside Cedar with as many policies, in warden-bench built with its cedar feature): load, a call no rule matches and one only the last rule matches",
        run: scale::scale,
    },
    Scenario {
        name: "scale-shared",
        about: "10, 100, 1,000 and 10,000 command rules that all start `git`, in the native permission engine and in the rules provider: load, a `git` call no rule matches and one only the last rule matches",
        run: scale::shared_first_word,
    },
    Scenario {
        name: "shadow",
        about: "one evaluate through the allowlist provider alone, then beside a shadow provider (mode: shadow) that denies the call, and beside one that loops to its 100 ms timeout on every call (shed when it cannot keep up)",
        run: shadow,
    },
    Scenario {
        name: "replay",
        about: "`warden replay` of a 100,000-line decision log (shell, file and URL calls, allowed and denied) through the allowlist and OAP providers, on every core: the time per whole log",
        run: replay::replay,
    },
    Scenario {
        name: "shell-analysis",
        about: "native shell analysis (parse and flatten) of a typical and of a nested command line",
        run: shell_analysis,
    },
    Scenario {
        name: "redact",
        about: "the redactor on what it cleans on every call: reasons without a secret (short, quoting a command, 500 characters), an id, and reasons holding a token",
        run: redact,
    },
];

/// Runs the scenarios named in `wanted` (every one when it is empty) and
/// prints their rows as one Markdown table; with `list`, prints the scenarios
/// instead. `program` and `release_command` name the binary and how to build
/// it for measuring, for the warning a debug build gets.
pub fn run(
    wanted: &[String],
    calls: usize,
    list: bool,
    program: &str,
    release_command: &str,
) -> anyhow::Result<()> {
    if list {
        for s in SCENARIOS {
            println!("{:<16} {}", s.name, s.about);
        }
        return Ok(());
    }
    for name in wanted {
        if !SCENARIOS.iter().any(|s| s.name == name) {
            let known: Vec<_> = SCENARIOS.iter().map(|s| s.name).collect();
            anyhow::bail!("unknown scenario '{name}' (known: {})", known.join(", "));
        }
    }
    if cfg!(debug_assertions) {
        eprintln!("{program}: this is a debug build; measure with `{release_command}`");
    }
    println!("{MARKDOWN_HEADER}");
    for scenario in SCENARIOS
        .iter()
        .filter(|s| wanted.is_empty() || wanted.iter().any(|w| w == s.name))
    {
        for m in (scenario.run)(calls)? {
            println!("{}", markdown_row(&m));
        }
    }
    Ok(())
}

fn oap(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    use warden_runtime::provider::{GuestCall, GuestInteractionMode};
    use warden_types::decision::Verdict;
    let warden = Warden::new(&oap_config())?;
    let judge = |call: &ToolCall| {
        let e = warden.evaluate(call, Caller::Agent).expect("decision");
        assert!(e.allow, "the benchmark call must be allowed: {e:?}");
    };
    let shell = ToolCall::new("bash", json!({ "command": TYPICAL_COMMAND }));
    let read = ToolCall::new("read_file", json!({"path": "/workspace/src/main.rs"}));
    let fetch = ToolCall::new(
        "web_fetch",
        json!({"url": "https://docs.rs/wasmtime/latest/wasmtime/"}),
    );
    // The component alone: one call into the warm instance and its decision
    // back, without the native stages the pipeline runs first.
    let snapshot = warden.snapshot();
    let provider = &snapshot.providers().providers()[0];
    let guest_call = GuestCall {
        tool_name: "bash".into(),
        tool_input: json!({ "command": TYPICAL_COMMAND }).to_string(),
        agent_id: None,
        thread_id: None,
        run_id: None,
        tool_call_id: None,
        user_id: None,
        user_role: None,
        oauth_provider: None,
        oauth_id: None,
        is_subagent: false,
        timestamp: warden_policy::clock::now_rfc3339(),
        interaction_mode: GuestInteractionMode::Interactive,
    };
    let component = || {
        let opinion = provider.evaluate(&guest_call).expect("an opinion");
        assert_eq!(opinion.decision.verdict, Verdict::Allow, "{opinion:?}");
    };
    Ok(vec![
        measure("oap component alone, shell command", 1, calls, &component),
        measure("oap, shell command, whole pipeline", 1, calls, &|| {
            judge(&shell)
        }),
        measure("oap, shell command, whole pipeline", 2, calls, &|| {
            judge(&shell)
        }),
        measure("oap, file read, whole pipeline", 1, calls, &|| judge(&read)),
        measure("oap, URL fetch, whole pipeline", 1, calls, &|| {
            judge(&fetch)
        }),
    ])
}

/// The OAP provider alone, on the example passport.
fn oap_config() -> Config {
    let passport: serde_json::Value =
        serde_json::from_str(include_str!("../../../examples/passport.json"))
            .expect("example passport");
    let yaml = format!(
        "guardrails:\n  providers:\n    - name: oap\n      wasm: \"builtin:oap-passport\"\n      config: {}\n",
        json!({ "passport": passport })
    );
    Config::parse(&yaml, "<bench>", ".".into()).expect("bench config")
}

fn shell_analysis(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    use warden_analysis::shell::analyze;
    let analyse = |src: &str, expected: usize| {
        let a = analyze(std::hint::black_box(src));
        assert_eq!(a.commands.len(), expected, "{src}: {a:?}");
    };
    Ok(vec![
        measure("shell analysis, typical command", 1, calls, &|| {
            analyse(TYPICAL_COMMAND, 3)
        }),
        measure("shell analysis, nested command", 1, calls, &|| {
            analyse(NESTED_COMMAND, 5)
        }),
    ])
}

/// The redactor (`warden_policy::redact`) on the text it cleans on every call:
/// reason messages when they are made, and the ids of every decision-log line.
fn redact(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    use warden_policy::redact::{REDACTED, Redactor};
    let redactor = Redactor::builtin();
    let long: String = format!(
        "the command '{}' is not in allowed_commands",
        "git log --oneline --graph --decorate ".repeat(14)
    )
    .chars()
    .take(500)
    .collect();
    let cases: [(&str, &str, bool); 6] = [
        (
            "redact, short reason, no secret",
            "tool 'delete_database' not in allowlist",
            false,
        ),
        (
            "redact, reason quoting a command, no secret",
            "'curl -s https://api.example.com/v1/items?limit=10' is not in allowed_commands",
            false,
        ),
        ("redact, 500-character reason, no secret", &long, false),
        ("redact, an id", "thread-7f3a9c2e-1b4d-4e8a", false),
        (
            "redact, reason with a bearer token",
            "'curl -H Authorization: Bearer s3cr3t-t0ken-value https://x' is not in allowed_commands",
            true,
        ),
        (
            "redact, reason with a token joined by _",
            "tool 'curl_ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8' not in allowlist",
            true,
        ),
    ];
    Ok(cases
        .iter()
        .map(|&(name, text, secret)| {
            measure(name, 1, calls, &|| {
                let out = redactor.redact(std::hint::black_box(text));
                assert_eq!(out.contains(REDACTED), secret, "{text}");
            })
        })
        .collect())
}

/// The corpus, judged call by call in turn; the shares of each verdict on stderr.
fn corpus(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    use warden_types::decision::Verdict;
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../analysis/tests/corpus/commands.tsv"
    );
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("{path}: {e} (run from the source tree)"))?;
    let commands: Vec<ToolCall> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.splitn(3, '\t').nth(2))
        .map(|escaped| {
            let command = escaped
                .replace("\\\\", "\u{0}")
                .replace("\\n", "\n")
                .replace('\u{0}', "\\");
            let mut call = ToolCall::new("bash", json!({ "command": command }));
            call.context.home = Some("/home/agent".into());
            call.context.cwd = Some("/home/agent/project".into());
            call
        })
        .collect();
    let config = Config::parse("triage: {detector: true}\n", "<bench>", ".".into())?;
    let warden = Warden::new(&config)?;
    let (mut allowed, mut asked, mut denied, mut opaque) = (0, 0, 0, 0);
    let mut by_code = std::collections::BTreeMap::<String, usize>::new();
    for call in &commands {
        let e = warden.evaluate(call, Caller::Agent).expect("decision");
        if let Some(reason) = e.reasons.first() {
            *by_code
                .entry(format!("{:?} {}", e.verdict, reason.code))
                .or_default() += 1;
        }
        match e.verdict {
            Verdict::Allow => allowed += 1,
            Verdict::Ask => asked += 1,
            Verdict::Deny => denied += 1,
        }
        if e.reasons.iter().any(|r| r.code == "perm.opaque_command") {
            opaque += 1;
        }
    }
    let n = commands.len();
    let share = |k: usize| 100.0 * k as f64 / n as f64;
    eprintln!(
        "corpus: {n} commands: allowed {allowed} ({:.1} %), asked {asked} ({:.1} %), denied {denied} ({:.1} %), opaque {opaque} ({:.2} %)",
        share(allowed),
        share(asked),
        share(denied),
        share(opaque)
    );
    eprintln!("corpus: by first reason: {by_code:?}");
    let next = std::sync::atomic::AtomicUsize::new(0);
    Ok(vec![measure(
        "native stage, corpus command",
        1,
        calls,
        &|| {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % n;
            std::hint::black_box(
                warden
                    .evaluate(&commands[i], Caller::Agent)
                    .expect("decision"),
            );
        },
    )])
}

/// A typical operator's rules: allow the usual read-only and build commands,
/// ask before pushing, deny destructive ones.
const NATIVE_CONFIG: &str = r#"
permissions:
  mode: default
  allow: ["Bash(git status*)", "Bash(git diff *)", "Bash(git log *)", "Bash(ls *)", "Bash(cargo test *)", "Bash(cargo build *)", "Bash(tail *)", "Bash(grep *)", Read, "Edit(src/**)"]
  ask: ["Bash(git push *)"]
  deny: ["Bash(rm -rf *)", "Read(~/.config/**)"]
"#;

fn native(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let config = Config::parse(NATIVE_CONFIG, "<bench>", ".".into())?;
    let warden = Warden::new(&config)?;
    let mut call = ToolCall::new("bash", json!({ "command": TYPICAL_COMMAND }));
    call.context.home = Some("/home/agent".into());
    call.context.cwd = Some("/home/agent/project".into());
    let mut read = ToolCall::new("read_file", json!({"path": "src/main.rs"}));
    read.context = call.context.clone();
    let judge = |call: &ToolCall| {
        let e = warden.evaluate(call, Caller::Agent).expect("decision");
        assert!(e.allow, "the benchmark call must be allowed: {e:?}");
    };
    Ok(vec![
        measure("native stage, typical shell command", 1, calls, &|| {
            judge(&call)
        }),
        measure("native stage, file read", 1, calls, &|| judge(&read)),
    ])
}

/// The allowlist provider live, with `shadow` (a provider entry) beside it.
fn shadowed_config(shadow: &str) -> anyhow::Result<Config> {
    let yaml = format!(
        "guardrails:\n  providers:\n    - name: allowlist\n      wasm: \"builtin:allowlist\"\n      config: {{allowed_tools: [bash, read_file, write_file, web_search], denied_tools: [rm]}}\n{shadow}"
    );
    Ok(Config::parse(&yaml, "<bench>", ".".into())?)
}

/// How many calls of each row of the shadow benchmark run before the other
/// row's turn: a few milliseconds, less than the machine stays in one state.
const SHADOW_BLOCK: usize = 500;

/// The live latency a shadow provider adds: the allowlist alone, beside a
/// shadow that denies everything, and beside one that loops to its timeout.
fn shadow(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let call = ToolCall::new("bash", json!({"command": "git status"}));
    let alone = Warden::new(&shadowed_config("")?)?;
    let denying = Warden::new(&shadowed_config(
        "    - name: candidate\n      wasm: \"builtin:allowlist\"\n      mode: shadow\n      config: {allowed_tools: [], denied_tools: [bash]}\n",
    )?)?;
    let looping = Warden::new(&shadowed_config(&format!(
        "    - name: candidate\n      wasm: {:?}\n      mode: shadow\n      config: {{behaviour: infinite_loop}}\n      limits: {{timeout_ms: 100, fuel: 1125899906842624}}\n",
        crate::fixtures::guest("hostile")?.display().to_string()
    ))?)?;
    let judge = |w: &Warden| {
        let e = w.evaluate(&call, Caller::Agent).expect("decision");
        assert!(e.allow, "the benchmark call must be allowed: {e:?}");
    };
    // Alternated in blocks, the shadow's queue emptied after each of its
    // blocks: the call alone meets no shadow still judging, and both meet
    // the same states of the machine.
    let mut rows = crate::measure::measure_alternating(
        &[
            ("allowlist alone", &|| judge(&alone)),
            ("allowlist, a deny-everything shadow", &|| judge(&denying)),
        ],
        calls,
        SHADOW_BLOCK,
        &|_| {
            denying.settle_shadows();
        },
    );
    rows.push(measure(
        "allowlist, a shadow looping to 100 ms",
        1,
        calls,
        &|| judge(&looping),
    ));
    for (name, w) in [("deny-everything", &denying), ("looping", &looping)] {
        w.settle_shadows();
        let counts = w.shadow_counts();
        eprintln!(
            "shadow {name}: {} judged, {} shed",
            counts.judged, counts.shed
        );
    }
    Ok(rows)
}

fn allowlist(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    let call = ToolCall::new("bash", json!({"command": "git status"}));
    let warm = Warden::new(&allowlist_config("warm"))?;
    let fresh = Warden::new(&allowlist_config("fresh"))?;
    let judge = |w: &Warden| {
        let e = w.evaluate(&call, Caller::Agent).expect("decision");
        assert!(e.allow, "the benchmark call must be allowed: {e:?}");
    };
    Ok(vec![
        measure("allowlist, warm instance", 1, calls, &|| judge(&warm)),
        measure("allowlist, warm instance", 2, calls, &|| judge(&warm)),
        measure("allowlist, fresh instance per call", 1, calls / 4, &|| {
            judge(&fresh)
        }),
    ])
}

/// One round trip: a two-call response (bash is listed, read_file is not) is
/// judged by the allowlist provider and paused into the store, then approved;
/// each round trip on its own thread, as a fresh conversation would be.
fn approval(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    use warden_approval::{ApprovalGate, Durability};

    let yaml = "hitl_approval:\n  tools: [bash]\nguardrails:\n  providers:\n    - name: allowlist\n      wasm: \"builtin:allowlist\"\n      config: {allowed_tools: [bash, read_file]}\n";
    let config = Config::parse(yaml, "<bench>", ".".into())?;
    let warden = std::sync::Arc::new(Warden::new(&config)?);
    let mut measurements = Vec::new();
    for durability in [Durability::Normal, Durability::Full] {
        let dir = ScratchDir::new(&format!("approval-{durability:?}"))?;
        let gate = ApprovalGate::open(warden.clone(), &dir.0, durability)?;
        let store = format!("SQLite WAL, durability: {}", durability.as_str());
        measurements.push(round_trips(&gate, &store, (calls / 10).max(1))?);
    }
    Ok(measurements)
}

/// The PostgreSQL store beside SQLite: pause + resume round trips, and one
/// evaluate of a call on a thread, which asks the store whether the thread
/// waits (one indexed query per call).
fn approval_postgres(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    use warden_approval::{ApprovalGate, Durability, PostgresApprovalStore};

    let url = std::env::var("WARDEN_DATABASE_URL").map_err(|_| {
        anyhow::anyhow!("set WARDEN_DATABASE_URL to a PostgreSQL database the benchmark may write")
    })?;
    let yaml = "hitl_approval:\n  tools: [bash]\n  max_pending_per_principal: 1000000\nguardrails:\n  providers:\n    - name: allowlist\n      wasm: \"builtin:allowlist\"\n      config: {allowed_tools: [bash, read_file]}\n";
    let config = Config::parse(yaml, "<bench>", ".".into())?;
    let warden = std::sync::Arc::new(Warden::new(&config)?);
    let dir = ScratchDir::new("approval-postgres")?;
    let sqlite = ApprovalGate::open(warden.clone(), &dir.0, Durability::Normal)?;
    // As a daemon opens it: with its index of waiting threads.
    let store = PostgresApprovalStore::connect(&url, Default::default())?;
    store.watch_waiting()?;
    let postgres = ApprovalGate::new(warden.clone(), std::sync::Arc::new(store));
    let unindexed = ApprovalGate::new(
        warden,
        std::sync::Arc::new(PostgresApprovalStore::connect(&url, Default::default())?),
    );
    let mut call = ToolCall::new("read_file", json!({"path": "README.md"}));
    call.context.thread_id = Some("bench-evaluate".into());
    let evaluate = |gate: &ApprovalGate| {
        let e = gate
            .evaluate("bench", &call, Caller::Agent)
            .expect("decision");
        assert!(e.allow, "the benchmark call must be allowed: {e:?}");
    };
    Ok(vec![
        round_trips(&postgres, "PostgreSQL", (calls / 10).max(1))?,
        round_trips(
            &sqlite,
            "SQLite WAL, durability: normal",
            (calls / 10).max(1),
        )?,
        measure("evaluate on a thread, PostgreSQL store", 1, calls, &|| {
            evaluate(&postgres)
        }),
        measure(
            "evaluate on a thread, PostgreSQL store without its index (a query per call)",
            1,
            calls,
            &|| evaluate(&unindexed),
        ),
        measure("evaluate on a thread, SQLite store", 1, calls, &|| {
            evaluate(&sqlite)
        }),
        pause_event_between_nodes(&url, (calls / 10).max(1))?,
        pause_known_on_another_node(&url, (calls / 20).max(1))?,
    ])
}

/// A pause committed through node A's store, and how long until node B's
/// index of waiting threads knows it (from A's commit returning to B no
/// longer knowing the thread free): the window in which B would judge a call
/// on the thread as if it did not wait.
fn pause_known_on_another_node(url: &str, pauses: usize) -> anyhow::Result<Measurement> {
    use std::time::{Duration, Instant};
    use warden_approval::store::ApprovalStore;
    use warden_approval::{ApprovalGate, LOCAL_PRINCIPAL, ModelResponse, PostgresApprovalStore};
    use warden_approval::{ResumeRequest, Reviewer, RunRef};

    let yaml = "hitl_approval:\n  tools: [bash]\n  max_pending_per_principal: 1000000\n";
    let warden = std::sync::Arc::new(Warden::new(&Config::parse(yaml, "<bench>", ".".into())?)?);
    let node_a = ApprovalGate::new(
        warden,
        std::sync::Arc::new(PostgresApprovalStore::connect(url, Default::default())?),
    );
    let node_b = PostgresApprovalStore::connect(url, Default::default())?;
    node_b.watch_waiting()?;
    let response: ModelResponse = serde_json::from_value(json!({"message": {"tool_calls": [
        {"id": "call_1", "name": "bash", "args": {"command": "git push origin main"}}
    ]}}))?;
    let reviewer = Reviewer::human("bench");
    let mut samples = Vec::with_capacity(pauses);
    for n in 0..pauses + 10 {
        let thread = format!("bench-known-{n}-{}", std::process::id());
        let deadline = Instant::now() + Duration::from_secs(5);
        while !node_b.known_free(LOCAL_PRINCIPAL, &thread) {
            anyhow::ensure!(Instant::now() < deadline, "node B's index is not fresh");
            std::thread::yield_now();
        }
        let outcome = node_a.submit(&RunRef::new(&thread, "r"), &response, Caller::Agent)?;
        let committed = Instant::now();
        while node_b.known_free(LOCAL_PRINCIPAL, &thread) {
            anyhow::ensure!(Instant::now() < deadline, "the pause never reached node B");
            std::thread::yield_now();
        }
        if n >= 10 {
            samples.push(committed.elapsed());
        }
        node_a.resume(
            &reviewer,
            &thread,
            outcome.approval_id.as_deref(),
            &ResumeRequest::reject_all(None),
        )?;
    }
    Ok(summary(
        "a pause on node A known to node B's index (PostgreSQL)",
        1,
        samples,
        None,
    ))
}

/// A pause event told by one daemon and heard by another through their
/// database (`NOTIFY` on one store's pool, `LISTEN` on the other's own
/// connection): what a console on node B waits after a pause on node A.
fn pause_event_between_nodes(url: &str, events: usize) -> anyhow::Result<Measurement> {
    use warden_approval::PostgresApprovalStore;
    use warden_approval::announce::Heard;
    use warden_approval::store::ApprovalStore;

    let node_a = PostgresApprovalStore::connect(url, Default::default())?;
    let node_b = PostgresApprovalStore::connect(url, Default::default())?;
    let (sender, heard) = std::sync::mpsc::channel();
    let _listening = node_b
        .announcer()
        .expect("a PostgreSQL store announces")
        .listen(Box::new(move |h| {
            let _ = sender.send(h);
        }))?;
    let heard = std::sync::Mutex::new(heard);
    let announcer = node_a.announcer().expect("a PostgreSQL store announces");
    let message = r#"{"from":"bench","event":{"kind":"paused","approval_id":"apr_bench","thread_id":"t","principal":"bench","run_id":"r","tools":["bash"],"at":"2026-12-06T00:00:00Z"}}"#;
    Ok(measure(
        "a pause event told on node A heard on node B (PostgreSQL NOTIFY)",
        1,
        events,
        &|| {
            announcer.announce(message).expect("announced");
            let got = heard
                .lock()
                .expect("the listener's channel")
                .recv_timeout(std::time::Duration::from_secs(5))
                .expect("heard within 5 s");
            assert_eq!(got, Heard::Message(message.into()));
        },
    ))
}

fn approval_resume(calls: usize) -> anyhow::Result<Vec<Measurement>> {
    use warden_approval::{
        ApprovalGate, DecisionKind, Durability, ModelResponse, RequestDecision, ResumeRequest,
        Reviewer, RunRef, RunState,
    };

    let yaml = "hitl_approval:\n  tools: [bash]\n  max_pending_per_principal: 1000000\nguardrails:\n  providers:\n    - name: allowlist\n      wasm: \"builtin:allowlist\"\n      config: {allowed_tools: [bash, read_file]}\n";
    let config = Config::parse(yaml, "<bench>", ".".into())?;
    let warden = std::sync::Arc::new(Warden::new(&config)?);
    let dir = ScratchDir::new("approval-resume")?;
    let gate = ApprovalGate::open(warden, &dir.0, Durability::Normal)?;
    let response: ModelResponse = serde_json::from_value(json!({"message": {"tool_calls": [
        {"id": "call_1", "name": "bash", "args": {"command": "git push origin main"}},
        {"id": "call_2", "name": "read_file", "args": {"path": "README.md"}},
        {"id": "call_3", "name": "bash", "args": {"command": "cargo publish --dry-run"}},
        {"id": "call_4", "name": "read_file", "args": {"path": "src/main.rs"}},
        {"id": "call_5", "name": "bash", "args": {"command": "make deploy ENV=staging"}}
    ]}}))?;
    // Pause every approval first (the warm-up takes some): only resumes are
    // timed. They all wait at once, hence the quota above.
    let resumes = (calls / 10).max(1);
    let mut paused = Vec::new();
    for n in 0..resumes + (resumes / 10).max(10) {
        let run = RunRef::new(format!("bench-{n}"), "run-1");
        let outcome = gate.submit(&run, &response, Caller::Agent)?;
        anyhow::ensure!(outcome.run_state == RunState::WaitingForInput, "no pause");
        let decisions = outcome
            .requests
            .iter()
            .map(|r| RequestDecision {
                request_id: r.request_id.clone(),
                decision: DecisionKind::Approve,
                args: None,
                message: None,
                grant: None,
            })
            .collect();
        paused.push((run, outcome.approval_id, ResumeRequest::decide(decisions)));
    }
    let queue = std::sync::Mutex::new(paused);
    let reviewer = Reviewer::human("bench");
    let resume = || {
        let (run, approval_id, request) = queue
            .lock()
            .expect("queue")
            .pop()
            .expect("a paused approval");
        let resolution = gate
            .resume(&reviewer, &run.thread_id, approval_id.as_deref(), &request)
            .expect("a resume");
        assert_eq!(resolution.calls.len(), 5);
    };
    Ok(vec![measure(
        "resume, 5 calls judged again (SQLite WAL, durability: normal)",
        1,
        resumes,
        &resume,
    )])
}

fn round_trips(
    gate: &warden_approval::ApprovalGate,
    store: &str,
    calls: usize,
) -> anyhow::Result<Measurement> {
    use std::sync::atomic::{AtomicU64, Ordering};
    use warden_approval::{ModelResponse, ResumeRequest, RunRef, RunState};

    let response: ModelResponse = serde_json::from_value(json!({"message": {"tool_calls": [
        {"id": "call_1", "name": "bash", "args": {"command": "git push origin main"}},
        {"id": "call_2", "name": "read_file", "args": {"path": "README.md"}}
    ]}}))?;
    let threads = AtomicU64::new(0);
    let round_trip = || {
        let n = threads.fetch_add(1, Ordering::Relaxed);
        let run = RunRef::new(format!("bench-{n}"), "run-1");
        let paused = gate
            .submit(&run, &response, Caller::Agent)
            .expect("a pause");
        assert_eq!(paused.run_state, RunState::WaitingForInput);
        let decisions = paused
            .requests
            .iter()
            .map(|r| warden_approval::RequestDecision {
                request_id: r.request_id.clone(),
                decision: warden_approval::DecisionKind::Approve,
                args: None,
                message: None,
                grant: None,
            })
            .collect();
        let resolution = gate
            .resume(
                &warden_approval::Reviewer::human("bench"),
                &run.thread_id,
                paused.approval_id.as_deref(),
                &ResumeRequest::decide(decisions),
            )
            .expect("a resume");
        assert_eq!(resolution.calls.len(), 2);
    };
    let name = format!("approval pause + resume ({store})");
    Ok(measure(&name, 1, calls, &round_trip))
}

/// A directory for a scenario's files, on the same file system as the system's
/// temporary directory, removed afterwards.
struct ScratchDir(std::path::PathBuf);

impl ScratchDir {
    fn new(name: &str) -> std::io::Result<Self> {
        let dir = std::env::temp_dir().join(format!("warden-bench-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(ScratchDir(dir))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_from_the_sorted_samples() {
        let m = measure("noop", 1, 200, &|| std::hint::black_box(()));
        assert_eq!(m.calls, 200);
        assert!(m.p50_us <= m.p99_us);
    }
}

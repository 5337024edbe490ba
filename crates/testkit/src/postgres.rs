//! A real PostgreSQL for tests: `initdb` and `postgres` from the machine's
//! installation, in a temporary directory, on a free loopback port, a fresh
//! database per test.
//!
//! PostgreSQL refuses to run as root: as root the server runs as the
//! `postgres` user (through `runuser`), otherwise as the caller. The server
//! is started through a small shell that stops it (fast shutdown) when its
//! standard input closes, and the test process holds the other end of that
//! pipe: however the test process ends (a panic, `kill -9`), the server stops
//! with it. [`PgServer`]'s drop stops it at once.

use std::io::Write;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The superuser's password: the tests connect over TCP with a password, as
/// a daemon does, never through trust.
const PASSWORD: &str = "warden-test";

/// The account the server runs as when the tests run as root.
const SERVER_USER: &str = "postgres";

/// How long a start may take on a loaded machine before the test fails.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// One running PostgreSQL server; stopped when dropped.
pub struct PgServer {
    dir: tempfile::TempDir,
    port: u16,
    /// The shell holding the server; its stdin is the life line.
    guard: Mutex<Option<Child>>,
    databases: AtomicU64,
    remove_at_exit: bool,
}

impl PgServer {
    /// The server every test of this process shares (started on first use;
    /// stopped when the process ends, by the life line).
    pub fn shared() -> &'static PgServer {
        static SHARED: OnceLock<PgServer> = OnceLock::new();
        // A static is never dropped: the life line stops this one, and the
        // shell removes its directory once the server is down.
        SHARED.get_or_init(|| PgServer::launch(true).unwrap_or_else(|e| panic!("{e}")))
    }

    /// Starts a new server of its own (a test that stops or restarts it).
    pub fn start() -> Result<PgServer, String> {
        PgServer::launch(false)
    }

    /// Starts a server; with `remove_at_exit`, its directory is removed when
    /// it stops, for a server that is never dropped.
    fn launch(remove_at_exit: bool) -> Result<PgServer, String> {
        let bin = bin_dir()?;
        let dir = tempfile::Builder::new()
            .prefix("warden-pg-")
            .tempdir()
            .map_err(|e| format!("test PostgreSQL: temporary directory: {e}"))?;
        let data = dir.path().join("data");
        std::fs::create_dir(&data).map_err(|e| format!("test PostgreSQL: {e}"))?;
        // The server's socket and log.
        let run = dir.path().join("run");
        std::fs::create_dir(&run).map_err(|e| format!("test PostgreSQL: {e}"))?;
        let pwfile = dir.path().join("pwfile");
        std::fs::write(&pwfile, PASSWORD).map_err(|e| format!("test PostgreSQL: {e}"))?;
        if as_root() {
            // The server's user must own its data directory and read the
            // password file; the temporary directory is the test's.
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
                .map_err(|e| format!("test PostgreSQL: {e}"))?;
            for path in [dir.path(), &data, &run, &pwfile] {
                chown(path)?;
            }
        }
        let mut initdb = server_command(&bin.join("initdb"));
        initdb.args(["-D"]).arg(&data).args([
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--locale=C",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "--no-instructions",
            "--no-sync",
        ]);
        initdb.arg(format!("--pwfile={}", pwfile.display()));
        let out = initdb
            .output()
            .map_err(|e| format!("test PostgreSQL: cannot run initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "test PostgreSQL: initdb failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        enable_tls(&data)?;
        // A port found free may be taken before the server binds it: the
        // start then fails with the server's log, never silently.
        let port = free_port()?;
        let remove = remove_at_exit.then(|| dir.path().to_path_buf());
        let child = spawn_server(&bin, &data, &run, port, remove.as_deref())?;
        let server = PgServer {
            remove_at_exit,
            dir,
            port,
            guard: Mutex::new(Some(child)),
            databases: AtomicU64::new(0),
        };
        server.wait_ready().map_err(|e| {
            server.stop();
            let log = std::fs::read_to_string(server.dir.path().join("run/server.log"));
            format!("{e}; its log: {}", log.unwrap_or_default())
        })?;
        Ok(server)
    }

    /// The loopback port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of database `name`, with the password, as a daemon reads it
    /// from its environment.
    pub fn url(&self, name: &str) -> String {
        format!(
            "postgres://postgres:{PASSWORD}@127.0.0.1:{}/{name}?sslmode=disable",
            self.port
        )
    }

    /// A fresh, empty database; returns its URL.
    pub fn database(&self) -> String {
        let n = self.databases.fetch_add(1, Ordering::SeqCst);
        let name = format!("t{}_{n}", std::process::id());
        off_runtime(|| {
            let mut admin = ::postgres::Client::connect(&self.url("postgres"), ::postgres::NoTls)
                .expect("connect to the test PostgreSQL");
            admin
                .batch_execute(&format!("CREATE DATABASE {name}"))
                .expect("create a test database");
        });
        self.url(&name)
    }

    /// Stops the server (fast shutdown) and waits for it; a stopped server
    /// refuses connections until [`PgServer::restart`].
    pub fn stop(&self) {
        let mut guard = self.guard.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(mut child) = guard.take() {
            // Closing the life line is the shell's signal to stop the server.
            drop(child.stdin.take());
            let _ = child.wait();
        }
    }

    /// Starts the stopped server again on the same port and data.
    pub fn restart(&self) -> Result<(), String> {
        self.stop();
        let child = spawn_server(
            &bin_dir()?,
            &self.dir.path().join("data"),
            &self.dir.path().join("run"),
            self.port,
            self.remove_at_exit.then(|| self.dir.path()),
        )?;
        *self.guard.lock().unwrap_or_else(|p| p.into_inner()) = Some(child);
        self.wait_ready()
    }

    fn wait_ready(&self) -> Result<(), String> {
        let started = Instant::now();
        loop {
            let url = self.url("postgres");
            match off_runtime(|| ::postgres::Client::connect(&url, ::postgres::NoTls).map(drop)) {
                Ok(_) => return Ok(()),
                Err(e) => {
                    let exited = {
                        let mut guard = self.guard.lock().unwrap_or_else(|p| p.into_inner());
                        match guard.as_mut().map(Child::try_wait) {
                            Some(Ok(Some(status))) => Some(status.to_string()),
                            _ => None,
                        }
                    };
                    if let Some(status) = exited {
                        return Err(format!("test PostgreSQL exited at start ({status})"));
                    }
                    if started.elapsed() > START_TIMEOUT {
                        return Err(format!("test PostgreSQL did not accept connections: {e}"));
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A file of the TLS fixtures (`fixtures/pg-tls/`): `ca.pem`, the authority
/// that signed the test server's certificate (for the name `warden-test-db`
/// only), and `other-ca.pem`, one that signed nothing of it.
pub fn tls_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/pg-tls")
        .join(name)
}

/// Makes the server offer TLS, with the fixtures' certificate: a client that
/// asks for it gets it, one that does not (`sslmode=disable`) connects in
/// the clear as before.
fn enable_tls(data: &Path) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("test PostgreSQL: TLS files: {e}");
    for name in ["server.pem", "server.key"] {
        let to = data.join(name);
        std::fs::copy(tls_fixture(name), &to).map_err(fail)?;
        // The server refuses a key others may read.
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o600)).map_err(fail)?;
        if as_root() {
            chown(&to)?;
        }
    }
    let mut conf = std::fs::OpenOptions::new()
        .append(true)
        .open(data.join("postgresql.conf"))
        .map_err(fail)?;
    conf.write_all(b"\nssl = on\nssl_cert_file = 'server.pem'\nssl_key_file = 'server.key'\n")
        .map_err(fail)
}

/// The directory of the installed PostgreSQL's programs: `WARDEN_PG_BIN`, or
/// the newest `/usr/lib/postgresql/<major>/bin` (Debian's layout).
pub fn bin_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("WARDEN_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let major = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            bin.join("postgres").exists().then_some((major, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin).ok_or_else(|| {
        "no PostgreSQL server installed: install Debian's postgresql package (scripts/test \
         does), or set WARDEN_PG_BIN to the directory of initdb and postgres"
            .to_string()
    })
}

fn as_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A command run as the server's user when the tests run as root.
fn server_command(program: &Path) -> Command {
    if as_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", SERVER_USER, "--"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

fn chown(path: &Path) -> Result<(), String> {
    let status = Command::new("chown")
        .arg(SERVER_USER)
        .arg(path)
        .status()
        .map_err(|e| format!("test PostgreSQL: chown: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "test PostgreSQL: cannot give {} to {SERVER_USER}",
            path.display()
        ))
    }
}

/// Starts `postgres` under a shell that stops it when its stdin closes.
fn spawn_server(
    bin: &Path,
    data: &Path,
    run: &Path,
    port: u16,
    remove: Option<&Path>,
) -> Result<Child, String> {
    let script = r#"
"$0" -D "$1" -p "$2" -k "$3" -c listen_addresses=127.0.0.1 -c fsync=off \
    -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 \
    >>"$3/server.log" 2>&1 &
server=$!
cat >/dev/null
kill -INT "$server" 2>/dev/null
wait "$server"
if [ -n "$4" ]; then rm -rf "$4"; fi
"#;
    let mut command = server_command(Path::new("sh"));
    command
        .arg("-c")
        .arg(script)
        .arg(bin.join("postgres"))
        .arg(data)
        .arg(port.to_string())
        .arg(run)
        .arg(remove.unwrap_or(Path::new("")))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = command
        .spawn()
        .map_err(|e| format!("test PostgreSQL: cannot start postgres: {e}"))?;
    // Nothing is ever written: the pipe only has to stay open.
    let _ = child.stdin.as_mut().map(|stdin| stdin.flush());
    Ok(child)
}

/// Runs `f` on a thread of its own: the synchronous client starts a runtime
/// of its own, which a `#[tokio::test]`'s thread may not.
fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| scope.spawn(f).join().expect("no panic"))
}

fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("test PostgreSQL: no free loopback port: {e}"))
}

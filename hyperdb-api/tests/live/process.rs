//! `HyperProcess` against the real hyperd: start, endpoints, stop, no orphans,
//! and a typed error for each kind of bad input.

use std::fs;
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hyperdb_api::types::SqlType;
use hyperdb_api::{
    Config, ConnectOptions, Connection, CreateMode, Endpoint, Error, ErrorKind, HyperProcess,
    HyperProcessOptions, Inserter, Listen, TableDefinition,
};
use hyperdb_api_core::client::Client;

use crate::common;

/// Set in the child process of `killed_owner_leaves_no_hyperd`.
const OWNER_CHILD_ENV: &str = "HYPERDB_TEST_OWNER_CHILD";
const GONE_WITHIN: Duration = Duration::from_secs(5);

/// Whether `pid` is a live process. A zombie counts as gone: after its parent
/// dies, hyperd is reaped by whatever init the machine has, maybe never.
pub fn alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|state| state != 'Z' && state != 'X'),
        Err(_) => false,
    }
}

/// Waits up to `within` for `pid` to exit; returns how long it took.
pub(crate) fn assert_gone(pid: u32, within: Duration) -> Duration {
    let start = Instant::now();
    while alive(pid) {
        assert!(
            start.elapsed() < within,
            "hyperd pid {pid} still running after {within:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    start.elapsed()
}

fn start(options: HyperProcessOptions) -> HyperProcess {
    let t = Instant::now();
    let server = HyperProcess::new(options).unwrap_or_else(|e| panic!("start: {e}"));
    eprintln!(
        "hyperd {} started in {:?} at {}",
        server.pid(),
        t.elapsed(),
        server.endpoint()
    );
    server
}

fn start_error(options: HyperProcessOptions) -> Error {
    match HyperProcess::new(options) {
        Ok(server) => panic!("expected a start error, got {server:?}"),
        Err(e) => e,
    }
}

#[test]
fn tcp_server_reports_its_real_port() {
    let server = common::tcp_server();
    let Endpoint::Tcp { host, port } = server.endpoint() else {
        panic!("expected TCP, got {:?}", server.endpoint());
    };
    assert_eq!(host, "127.0.0.1");
    assert_ne!(*port, 0);
    let reparsed: Endpoint = server
        .endpoint()
        .to_string()
        .parse()
        .expect("endpoint round-trips");
    assert_eq!(&reparsed, server.endpoint());
    TcpStream::connect((host.as_str(), *port)).expect("hyperd accepts TCP connections");
    assert!(alive(server.pid()));
    assert!(server.log_dir().join("hyperd.log").is_file());
}

/// Issue 18, defect 5: the default server must not be open to every local
/// account. It listens on a Unix socket in a directory only this user can
/// enter, and needs no password, so connecting with the endpoint alone
/// works for the owner.
#[test]
fn default_server_is_a_unix_socket_in_a_directory_only_we_can_enter() {
    let server = common::server();
    let path = server
        .endpoint()
        .unix_path()
        .unwrap_or_else(|| panic!("the default is a Unix socket, got {}", server.endpoint()))
        .to_path_buf();
    let meta = fs::metadata(&path).expect("socket exists at the reported path");
    assert!(
        meta.file_type().is_socket(),
        "{} is not a socket",
        path.display()
    );
    let dir = path.parent().expect("socket has a directory");
    let dir_meta = fs::symlink_metadata(dir).expect("socket directory");
    assert!(dir_meta.is_dir(), "{} is not a directory", dir.display());
    let mode = dir_meta.permissions().mode() & 0o7777;
    assert_eq!(
        mode,
        0o700,
        "socket directory {} has mode {mode:o}",
        dir.display()
    );
    // Owned by us: whatever we create is owned by our effective uid.
    let ours = common::temp_dir();
    let our_uid = fs::metadata(ours.path()).expect("our directory").uid();
    assert_eq!(dir_meta.uid(), our_uid, "{} is not ours", dir.display());
    assert_eq!(server.password(), None, "no password on the private socket");
    UnixStream::connect(&path).expect("hyperd accepts connections on the socket");

    // The owner connects with the endpoint alone: DDL, inserts, queries.
    let db = ours.path().join("default.hyper");
    let mut c = Connection::connect(server.endpoint(), &db, CreateMode::Create).expect("connect");
    let table = TableDefinition::new("t")
        .with_not_null_column("id", SqlType::Int)
        .with_column("s", SqlType::Text);
    c.catalog().create_table(&table).expect("create table");
    let mut ins = Inserter::new(&mut c, &table).expect("inserter");
    for id in 0..1000i32 {
        ins.add_row(&[&id, &Some(format!("v{id}"))]).expect("row");
    }
    assert_eq!(ins.execute().expect("insert"), 1000);
    assert_eq!(
        c.query_scalar::<i64>("SELECT sum(id) FROM t")
            .expect("query"),
        999 * 1000 / 2
    );
    assert_eq!(
        c.query_scalar::<String>("SELECT s FROM t WHERE id = 7")
            .expect("query"),
        "v7"
    );
    c.close().expect("close");
}

/// TCP is one option away, and still not open to every local account: a
/// TCP server without a given password gets a generated one, refuses
/// connections without it (or with another), and the configs the handle
/// hands out carry it.
#[test]
fn tcp_server_refuses_connections_without_its_generated_password() {
    let server = common::tcp_server();
    let endpoint = server.endpoint().clone();
    assert!(matches!(endpoint, Endpoint::Tcp { .. }), "{endpoint}");
    let password = server
        .password()
        .expect("a TCP server without a given password gets one");
    assert!(password.len() >= 32, "a short password: {}", password.len());
    assert!(
        !format!("{server:?}").contains(password),
        "Debug shows the password"
    );

    let e = Connection::connect_with(&ConnectOptions::new(endpoint.clone())).unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::Auth), "{e:?}");
    assert!(e.to_string().contains("password"), "{e}");
    let e = Connection::connect_with(&ConnectOptions::new(endpoint.clone()).with_password("guess"))
        .unwrap_err();
    assert_eq!(e.sqlstate(), "42501", "a wrong password: {e:?}");
    let e = Client::connect(&Config::new(endpoint.clone())).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Auth, "{e:?}");

    let mut c = Connection::connect_with(&server.connect_options()).expect("connect_options");
    assert_eq!(c.query_scalar::<i32>("SELECT 5").expect("query"), 5);
    let mut c =
        Connection::connect_with(&ConnectOptions::new(endpoint.clone()).with_password(password))
            .expect("the password, handed over");
    assert_eq!(c.query_scalar::<i32>("SELECT 6").expect("query"), 6);
    let mut client = Client::connect(&server.config()).expect("config");
    assert_eq!(client.execute("SELECT 7").expect("query"), 1);
}

/// A password given for TCP is the one required, not replaced by a
/// generated one; a given password protects the Unix socket too.
#[test]
fn given_password_is_required_on_either_listener() {
    for listen in [Listen::Tcp, Listen::Unix] {
        let server = start(
            HyperProcessOptions::default()
                .with_listen(listen)
                .with_password("given pw"),
        );
        assert_eq!(server.password(), Some("given pw"));
        let e =
            Connection::connect_with(&ConnectOptions::new(server.endpoint().clone())).unwrap_err();
        assert_eq!(e.kind(), Some(ErrorKind::Auth), "{listen:?}: {e:?}");
        let mut c = Connection::connect_with(&server.connect_options())
            .unwrap_or_else(|e| panic!("{listen:?}: {e}"));
        assert_eq!(c.query_scalar::<i32>("SELECT 8").expect("query"), 8);
    }
}

#[test]
fn shutdown_stops_hyperd() {
    let mut server = start(HyperProcessOptions::default());
    let pid = server.pid();
    assert!(server.is_running());
    let t = Instant::now();
    server.shutdown(GONE_WITHIN).expect("shutdown");
    eprintln!("hyperd {pid} shut down in {:?}", t.elapsed());
    assert_gone(pid, GONE_WITHIN);
}

#[test]
fn drop_stops_hyperd_and_removes_the_socket_directory() {
    let server = start(HyperProcessOptions::default());
    let pid = server.pid();
    let dir = server
        .endpoint()
        .unix_path()
        .and_then(Path::parent)
        .expect("socket dir")
        .to_path_buf();
    let t = Instant::now();
    drop(server);
    eprintln!("hyperd {pid} dropped in {:?}", t.elapsed());
    assert_gone(pid, GONE_WITHIN);
    assert!(!dir.exists(), "{} left behind", dir.display());
}

#[test]
fn given_log_dir_and_settings_are_used_and_kept() {
    let logs = common::temp_dir();
    let server = start(
        HyperProcessOptions::default()
            .with_log_dir(logs.path())
            .with_default_database_version(1)
            .with_param("language", "en_US"),
    );
    assert_eq!(server.log_dir(), logs.path());
    server.shutdown(GONE_WITHIN).expect("shutdown");
    assert!(logs.path().join("hyperd.log").is_file());
    assert!(logs.path().join("hyperd.out").is_file());
}

/// Helper process for `killed_owner_leaves_no_hyperd`; does nothing in a
/// normal run.
#[test]
fn owner_child() {
    if std::env::var_os(OWNER_CHILD_ENV).is_none() {
        return;
    }
    let server = HyperProcess::start().unwrap_or_else(|e| panic!("start: {e}"));
    // Without a log directory of its own, hyperd logs into the private
    // temporary directory.
    println!(
        "HYPERD_PID={} PRIVATE_DIR={}",
        server.pid(),
        server.log_dir().display()
    );
    std::thread::sleep(Duration::from_secs(60));
}

#[test]
fn killed_owner_leaves_no_hyperd() {
    let exe = std::env::current_exe().expect("test binary path");
    let mut child = Command::new(exe)
        .args([
            "process::owner_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(OWNER_CHILD_ENV, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn owner child");
    let stdout = child.stdout.take().expect("piped stdout");
    let reported = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        // libtest prints "test process::owner_child ... " on the same line.
        .find_map(|line| {
            let (_, rest) = line.split_once("HYPERD_PID=")?;
            let (pid, dir) = rest.split_once(" PRIVATE_DIR=")?;
            Some((pid.trim().parse::<u32>().ok()?, PathBuf::from(dir.trim())))
        });
    let Some((pid, private_dir)) = reported else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("owner child did not report a hyperd pid");
    };
    assert!(alive(pid));
    child.kill().expect("SIGKILL the owner");
    child.wait().expect("reap the owner");
    let took = assert_gone(pid, GONE_WITHIN);
    eprintln!("hyperd {pid} exited {took:?} after its owner was killed");

    // Nobody ran the owner's destructors: its private directory is left
    // behind until the next start sweeps it away. That start may be
    // another test's, running in parallel, so the directory may be gone
    // already; after ours it must be.
    drop(start(HyperProcessOptions::default()));
    assert!(
        !private_dir.exists(),
        "{} survived the next start",
        private_dir.display()
    );
}

/// A process id no process has: a child's, once it has been reaped.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().expect("spawn true");
    let pid = child.id();
    child.wait().expect("reap true");
    assert!(!alive(pid));
    pid
}

/// A start removes the private directories other `HyperProcess`es left
/// when they died (named after their dead process), and keeps those of
/// live processes and everything not named like one.
#[test]
fn start_removes_private_directories_of_dead_owners_only() {
    let tmp = std::env::temp_dir();
    let unique = format!("{:x}", std::process::id() ^ 0x5eed_0000);
    let stale = tmp.join(format!("hyperdb-{}-0-{unique}", dead_pid()));
    let live = tmp.join(format!("hyperdb-{}-9999999-{unique}", std::process::id()));
    let foreign = tmp.join(format!("hyperdb-{}-0-{unique}-not-ours", dead_pid()));
    for dir in [&stale, &live, &foreign] {
        fs::create_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        fs::write(dir.join("hyperd.log"), b"log").expect("a file inside");
    }
    drop(start(HyperProcessOptions::default()));
    let (stale_left, live_kept, foreign_kept) = (stale.exists(), live.exists(), foreign.exists());
    for dir in [&stale, &live, &foreign] {
        let _ = fs::remove_dir_all(dir);
    }
    assert!(!stale_left, "{} was not removed", stale.display());
    assert!(
        live_kept,
        "{} of a live process was removed",
        live.display()
    );
    assert!(foreign_kept, "{} is not ours to remove", foreign.display());
}

#[test]
fn wrong_hyperd_path_is_not_found() {
    let e = start_error(HyperProcessOptions::default().with_hyperd_path("/no/such/dir/hyperd"));
    match e {
        Error::HyperdNotFound(message) => {
            assert!(message.contains("/no/such/dir/hyperd"), "{message}")
        }
        other => panic!("expected HyperdNotFound, got {other:?}"),
    }
}

#[test]
fn executable_that_is_not_hyperd_fails_to_start() {
    let t = Instant::now();
    let e = start_error(HyperProcessOptions::default().with_hyperd_path("/bin/false"));
    assert!(matches!(e, Error::ProcessStart { .. }), "got {e:?}");
    assert!(e.to_string().contains("exited"), "{e}");
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "took {:?}",
        t.elapsed()
    );
}

#[test]
fn bad_parameter_name_is_invalid_argument() {
    let e = start_error(HyperProcessOptions::default().with_param("Bad-Name", "1"));
    match e {
        Error::InvalidArgument { what, .. } => assert_eq!(what, "Bad-Name"),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn reserved_parameter_name_is_invalid_argument() {
    for name in [
        "listen_connection",
        "callback_connection",
        "init_user",
        "log_dir",
        "no_password",
        "skip_license",
    ] {
        match start_error(HyperProcessOptions::default().with_param(name, "x")) {
            Error::InvalidArgument { what, .. } => assert_eq!(what, name),
            other => panic!("expected InvalidArgument for {name}, got {other:?}"),
        }
    }
}

#[test]
fn unknown_setting_is_refused_by_hyperd() {
    let t = Instant::now();
    let e = start_error(HyperProcessOptions::default().with_param("no_such_setting", "1"));
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "took {:?}",
        t.elapsed()
    );
    eprintln!("refused in {:?}: {e}", t.elapsed());
    match &e {
        Error::ProcessStart { message, .. } => {
            assert!(
                message.contains("No internal setting named 'no_such_setting'"),
                "{message}"
            )
        }
        other => panic!("expected ProcessStart, got {other:?}"),
    }
}

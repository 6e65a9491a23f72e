//! `NativeProcess`: a `HyperProcess` held by a JS object. Starting and
//! stopping block on the child process, so both run on tokio's blocking
//! pool: the event loop never waits for hyperd.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyperdb_api::{HyperProcess, HyperProcessOptions, Listen};
use napi_derive::napi;

use crate::error::{invalid, js, Result};

/// How long `close()` lets hyperd shut down before killing it.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);

/// Options of `NativeProcess.start` (see `lib/process.ts`).
#[napi(object)]
pub struct NativeProcessOptions {
    /// `ipc` (a Unix socket in a private directory; the default on Unix)
    /// or `tcp` (loopback, with a password).
    pub transport: Option<String>,
    /// Also serve gRPC.
    pub grpc: Option<bool>,
    pub hyperd_path: Option<String>,
    pub log_dir: Option<String>,
    /// hyperd parameters, `[name, value]` pairs.
    pub parameters: Option<Vec<Vec<String>>>,
    pub default_database_version: Option<u32>,
    pub password: Option<String>,
    pub start_timeout_ms: Option<u32>,
}

/// A running hyperd.
#[napi]
pub struct NativeProcess {
    process: Arc<Mutex<Option<HyperProcess>>>,
    endpoint: String,
    grpc_endpoint: Option<String>,
    password: Option<String>,
    pid: u32,
}

#[napi]
impl NativeProcess {
    /// Starts hyperd and waits until it accepts connections.
    #[napi(factory)]
    pub async fn start(options: Option<NativeProcessOptions>) -> Result<NativeProcess> {
        let options = process_options(options)?;
        let process = tokio::task::spawn_blocking(move || HyperProcess::new(options))
            .await
            .map_err(|e| invalid("hyperd", &e.to_string()))?;
        let process = js(process)?;
        Ok(NativeProcess {
            endpoint: process.endpoint().to_string(),
            grpc_endpoint: process.grpc_endpoint().map(str::to_owned),
            password: process.password().map(str::to_owned),
            pid: process.pid(),
            process: Arc::new(Mutex::new(Some(process))),
        })
    }

    /// Where to connect: `tab.tcp://127.0.0.1:PORT`, or `unix:/DIR/SOCKET` for `ipc`.
    #[napi(getter)]
    pub fn endpoint(&self) -> String {
        self.endpoint.clone()
    }

    /// The password hyperd requires: the one given, or the one generated
    /// for `tcp` (without gRPC); `null` otherwise.
    #[napi(getter)]
    pub fn password(&self) -> Option<String> {
        self.password.clone()
    }

    /// The gRPC endpoint, when started with `grpc: true`.
    #[napi(getter)]
    pub fn grpc_endpoint(&self) -> Option<String> {
        self.grpc_endpoint.clone()
    }

    #[napi(getter)]
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Shuts hyperd down (killing it after 10 s); closing twice is fine.
    #[napi]
    pub async fn close(&self) -> Result<()> {
        let process = self.process.lock().ok().and_then(|mut p| p.take());
        let Some(process) = process else {
            return Ok(());
        };
        let stopped = tokio::task::spawn_blocking(move || process.shutdown(SHUTDOWN_TIMEOUT))
            .await
            .map_err(|e| invalid("hyperd", &e.to_string()))?;
        js(stopped)
    }
}

fn process_options(o: Option<NativeProcessOptions>) -> Result<HyperProcessOptions> {
    let mut options = HyperProcessOptions::default();
    let Some(o) = o else {
        return Ok(options);
    };
    // Without a transport, the Rust default (ipc on Unix).
    if let Some(transport) = o.transport.as_deref() {
        options = options.with_listen(match transport {
            "tcp" => Listen::Tcp,
            "ipc" => Listen::Unix,
            other => {
                return Err(invalid(
                    "transport",
                    &format!("{other:?} is neither tcp nor ipc"),
                ))
            }
        });
    }
    if o.grpc == Some(true) {
        options = options.with_grpc();
    }
    if let Some(path) = o.hyperd_path {
        if path.is_empty() {
            // Else taken as no path at all, and hyperd searched for.
            return Err(invalid("hyperdPath", "an empty path names no hyperd"));
        }
        options = options.with_hyperd_path(path);
    }
    if let Some(dir) = o.log_dir {
        options = options.with_log_dir(dir);
    }
    if let Some(version) = o.default_database_version {
        options = options.with_default_database_version(version);
    }
    if let Some(password) = o.password {
        options = options.with_password(password);
    }
    if let Some(ms) = o.start_timeout_ms {
        options = options.with_start_timeout(Duration::from_millis(ms.into()));
    }
    for pair in o.parameters.unwrap_or_default() {
        match pair.as_slice() {
            [name, value] => options = options.with_param(name.clone(), value.clone()),
            _ => {
                return Err(invalid(
                    "parameters",
                    "each parameter is a [name, value] pair",
                ))
            }
        }
    }
    Ok(options)
}

//! The soak's hyperd: started, killed, restarted after its handshake
//! abort or to end stuck sessions, and reached directly (not through the
//! fault proxy) by the coordinator.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use hyperdb_api::{ConnectOptions, Connection, HyperProcess, HyperProcessOptions, Listen};

use crate::fault_proxy::{socket_addr, FaultProxy};
use crate::work::Shared;

/// The password every hyperd of the run requires (TCP servers need one):
/// fixed, so that clients keep theirs across restarts.
pub(crate) const PASSWORD: &str = "soak";

/// hyperd 0.0.26963 aborts (SIGABRT, an uncaught `std::system_error`) when
/// a connection is reset right after the client's SCRAM proof: it asks
/// for the peer's address after the peer is gone (DEVELOPMENT.md, pinned
/// by `faults::handshake_reset`). The soak's resets land there about once
/// in 20 minutes, so such an abort is restarted like a kill and counted;
/// any other exit fails the soak.
const KNOWN_ABORT: &str = "getRemoteAddress(): Transport endpoint is not connected";

/// The running hyperd (none only while one is replaced).
pub(crate) struct Server {
    hyperd: Option<HyperProcess>,
    /// Restarts after [`KNOWN_ABORT`].
    pub(crate) aborts: u64,
}

fn start_hyperd() -> Result<HyperProcess, String> {
    HyperProcess::new(
        HyperProcessOptions::default()
            .with_listen(Listen::Tcp)
            .with_password(PASSWORD),
    )
    .map_err(|e| format!("starting hyperd: {e}"))
}

impl Server {
    pub(crate) fn start() -> Result<Server, String> {
        Ok(Server {
            hyperd: Some(start_hyperd()?),
            aborts: 0,
        })
    }

    pub(crate) fn current(&self) -> Result<&HyperProcess, String> {
        self.hyperd
            .as_ref()
            .ok_or_else(|| "hyperd is not running".to_owned())
    }

    /// Kills hyperd and starts a new one on the same file (a new port): the
    /// proxy sends new connections there.
    pub(crate) fn kill_and_restart(
        &mut self,
        shared: &Shared,
        proxy: &FaultProxy,
    ) -> Result<(), String> {
        let old = self.hyperd.take().ok_or("no hyperd to kill")?;
        let pid = old.pid();
        let killed = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .map_err(|e| format!("kill -KILL {pid}: {e}"))?;
        if !killed.success() {
            return Err(format!("kill -KILL {pid}: {killed}"));
        }
        // Reaped before the next start: while the dead hyperd is a zombie
        // its lock on the database file counts as held (measured: 55006
        // "locked by another process").
        drop(old);
        self.replace_dead(shared, proxy)
    }

    /// Stops hyperd cleanly (which writes every commit and ends every
    /// session) and starts it again; the same generation.
    pub(crate) fn restart_cleanly(&mut self, proxy: &FaultProxy) -> Result<(), String> {
        let old = self.hyperd.take().ok_or("no hyperd")?;
        old.shutdown(Duration::from_secs(30))
            .map_err(|e| format!("stopping hyperd: {e}"))?;
        let fresh = start_hyperd()?;
        proxy.set_upstream(socket_addr(fresh.endpoint()).map_err(|e| e.to_string())?);
        self.hyperd = Some(fresh);
        Ok(())
    }

    /// Restarts hyperd if it aborted on its handshake bug (see
    /// [`KNOWN_ABORT`]); fails if it exited for any other reason.
    pub(crate) fn restart_if_aborted(
        &mut self,
        shared: &Shared,
        proxy: &FaultProxy,
    ) -> Result<(), String> {
        let Some(hyperd) = self.hyperd.as_mut() else {
            return Ok(());
        };
        if hyperd.is_running() {
            return Ok(());
        }
        let output = std::fs::read_to_string(hyperd.log_dir().join("hyperd.out"));
        if !output.is_ok_and(|out| out.contains(KNOWN_ABORT)) {
            return Err(format!("hyperd exited{}", self.state()));
        }
        eprintln!("hyperd aborted on a reset during its handshake (a hyperd bug); restarting it");
        drop(self.hyperd.take());
        self.replace_dead(shared, proxy)?;
        self.aborts += 1;
        Ok(())
    }

    /// A connection straight to hyperd. The proxy's cut just before may
    /// have aborted hyperd (see [`KNOWN_ABORT`]): a refused connect waits
    /// for hyperd to exit, restarts it and tries once more.
    pub(crate) fn connect_direct(
        &mut self,
        shared: &Shared,
        proxy: &FaultProxy,
    ) -> Result<Connection, String> {
        let connect = |server: &Server| -> Result<Connection, String> {
            let endpoint = server.current()?.endpoint().clone();
            Connection::connect_with(&ConnectOptions::new(endpoint).with_password(PASSWORD))
                .map_err(|e| e.to_string())
        };
        self.restart_if_aborted(shared, proxy)?;
        let first = match connect(self) {
            Ok(c) => return Ok(c),
            Err(e) => e,
        };
        let deadline = Instant::now() + Duration::from_secs(2);
        while self.hyperd.as_mut().is_some_and(HyperProcess::is_running)
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.restart_if_aborted(shared, proxy)?;
        connect(self).map_err(|e| format!("{first}; then {e}{}", self.state()))
    }

    /// For an error message: whether hyperd is still running and, if it
    /// exited by itself, the last lines it wrote (its log directory goes
    /// with the process handle, so this is the only chance to see them).
    pub(crate) fn state(&mut self) -> String {
        let Some(hyperd) = self.hyperd.as_mut() else {
            return " (no hyperd)".to_owned();
        };
        if hyperd.is_running() {
            return format!(" (hyperd pid {} is running)", hyperd.pid());
        }
        let mut state = format!("\nhyperd pid {} exited by itself", hyperd.pid());
        for (file, lines) in [("hyperd.out", 20), ("hyperd.log", 12)] {
            let text = std::fs::read_to_string(hyperd.log_dir().join(file)).unwrap_or_default();
            let all: Vec<&str> = text.lines().collect();
            state.push_str(&format!("\nlast lines of {file}:"));
            for line in &all[all.len().saturating_sub(lines)..] {
                let cut = line.char_indices().nth(400).map_or(line.len(), |(i, _)| i);
                state.push_str(&format!("\n  {}", &line[..cut]));
            }
        }
        state
    }

    /// Starts a hyperd on the same file in place of a dead (and reaped)
    /// one: a new generation, whose commits alone the next barrier
    /// acknowledges.
    fn replace_dead(&mut self, shared: &Shared, proxy: &FaultProxy) -> Result<(), String> {
        let fresh = start_hyperd()?;
        let addr = socket_addr(fresh.endpoint()).map_err(|e| e.to_string())?;
        shared.generation.fetch_add(1, Ordering::SeqCst);
        proxy.set_upstream(addr);
        self.hyperd = Some(fresh);
        Ok(())
    }
}

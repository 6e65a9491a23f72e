//! Where hyperd listens for gRPC.
//!
//! Measured on hyperd 0.0.26963: the callback reports one descriptor, the
//! PostgreSQL listener's when there is one (`tab.tcp://` or
//! `tab.domain://`, whatever the order in `--listen-connection`), and
//! `tcp.grpc://127.0.0.1:PORT` only when gRPC is the sole listener. hyperd
//! prints `gRPC listening on 127.0.0.1:PORT` on stdout (also with port 0,
//! then with the port it bound) before it calls back, so with both
//! listeners the port is read from its output file rather than picked by us
//! (a port we pick and release could be taken before hyperd binds it).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::{Duration, Instant};

/// The gRPC listener `--listen-connection` gets.
pub(super) const GRPC_LISTEN: &str = "tcp.grpc://127.0.0.1:0";

/// The prefix of the callback descriptor for a gRPC-only server.
pub(super) const GRPC_SCHEME: &str = "tcp.grpc://";

const LINE: &str = "gRPC listening on ";

/// How long to wait for the line after the callback came (it is normally
/// there already).
const WAIT: Duration = Duration::from_secs(5);

/// The `http://HOST:PORT` URI for a `tcp.grpc://HOST:PORT` descriptor.
pub(super) fn uri_from_descriptor(descriptor: &str) -> Option<String> {
    let hostport = descriptor.strip_prefix(GRPC_SCHEME)?;
    Some(format!("http://{hostport}"))
}

/// Reads hyperd's output from `start` until the gRPC line appears; returns
/// its `http://HOST:PORT`.
pub(super) fn uri_from_output(path: &Path, start: u64) -> Result<String, String> {
    let deadline = Instant::now() + WAIT;
    loop {
        let text = read_from(path, start).map_err(|e| format!("reading hyperd's output: {e}"))?;
        if let Some(hostport) = parse(&text) {
            return Ok(format!("http://{hostport}"));
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "hyperd did not print `{LINE}HOST:PORT` within {WAIT:?} of starting"
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn read_from(path: &Path, start: u64) -> std::io::Result<String> {
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// `HOST:PORT` from the first complete gRPC line.
fn parse(output: &str) -> Option<&str> {
    output.lines().find_map(|line| {
        let hostport = line.trim().strip_prefix(LINE)?;
        let (host, port) = hostport.rsplit_once(':')?;
        (!host.is_empty() && port.parse::<u16>().is_ok()).then_some(hostport)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_measured_output() {
        let out = "LogFile: /tmp/x/hyperd.log\n\
                   --no-password option is specified: this is a security risk\n\
                   hyperd server version 9.1.0 build version main.0.0.26963.r84171622\n\
                   listening to 127.0.0.1:44269 using ipv4 with system PID 12411\n\
                   gRPC listening on 127.0.0.1:43489\n";
        assert_eq!(parse(out), Some("127.0.0.1:43489"));
        assert_eq!(parse("gRPC listening on 127.0.0.1:4"), Some("127.0.0.1:4"));
        assert_eq!(parse("gRPC listening on 127.0.0.1:"), None);
        assert_eq!(parse("listening to 127.0.0.1:1"), None);
    }

    #[test]
    fn descriptors_become_uris() {
        assert_eq!(
            uri_from_descriptor("tcp.grpc://127.0.0.1:38763").as_deref(),
            Some("http://127.0.0.1:38763")
        );
        assert_eq!(uri_from_descriptor("tab.tcp://127.0.0.1:1"), None);
    }
}

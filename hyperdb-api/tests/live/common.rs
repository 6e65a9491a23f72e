//! Shared fixtures for the live tests.
//!
//! One hyperd per transport serves the whole binary: starting a server per
//! test would dominate the run time. The statics are never dropped; hyperd
//! still exits when this test process does, because the kernel closes the
//! callback connection that `HyperProcess` holds.

#![allow(dead_code)]

use std::sync::OnceLock;

use hyperdb_api::{Endpoint, HyperProcess, HyperProcessOptions, Listen};

/// The shared TCP server.
pub fn server() -> &'static HyperProcess {
    static SERVER: OnceLock<HyperProcess> = OnceLock::new();
    SERVER.get_or_init(|| start(Listen::Tcp))
}

/// The shared Unix-socket server.
pub fn unix_server() -> &'static HyperProcess {
    static SERVER: OnceLock<HyperProcess> = OnceLock::new();
    SERVER.get_or_init(|| start(Listen::Unix))
}

/// Both shared servers' endpoints, TCP first: tests that loop over this
/// cover both transports with one body.
pub fn endpoints() -> Vec<Endpoint> {
    vec![
        server().endpoint().clone(),
        unix_server().endpoint().clone(),
    ]
}

fn start(listen: Listen) -> HyperProcess {
    match HyperProcess::new(HyperProcessOptions::default().with_listen(listen)) {
        Ok(server) => server,
        Err(e) => panic!("starting the shared {listen:?} hyperd: {e}"),
    }
}

/// A fresh temporary directory, removed when dropped.
pub fn temp_dir() -> tempfile::TempDir {
    match tempfile::Builder::new().prefix("hyperdb-test-").tempdir() {
        Ok(dir) => dir,
        Err(e) => panic!("creating a temporary directory: {e}"),
    }
}

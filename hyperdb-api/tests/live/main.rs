//! Live-server integration tests: one binary, one shared hyperd per transport
//! (see `common`). Needs hyperd: `make hyperd`, or `HYPERD_PATH`.

#![allow(clippy::unwrap_used)]

#[cfg(feature = "arrow")]
mod arrow;
mod auth;
mod cancel;
mod catalog;
mod common;
mod connect;
#[cfg(feature = "derive")]
mod derive;
mod errors;
#[cfg(feature = "grpc")]
mod grpc;
mod insert;
mod insert_arrow_range;
mod insert_definition;
mod interop;
mod params;
#[cfg(feature = "pool")]
mod pool;
mod prepared;
mod prepared_cache;
mod process;
#[cfg(all(feature = "async", feature = "arrow"))]
mod shared;
#[cfg(all(feature = "async", feature = "arrow"))]
mod shared_insert;
mod streaming;
mod tracing;

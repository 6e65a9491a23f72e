//! Live-server integration tests: one binary, one shared hyperd per transport
//! (see `common`). Needs hyperd: `make hyperd`, or `HYPERD_PATH`.

#![allow(clippy::unwrap_used)]

mod abandoned;
#[cfg(feature = "arrow")]
mod arrow;
mod async_drop;
mod async_yield;
mod auth;
mod cancel;
mod capture;
mod catalog;
mod common;
mod connect;
mod csv_abort;
mod csv_stream;
#[cfg(feature = "derive")]
mod derive;
mod errors;
#[path = "../../test_support/fault_proxy.rs"]
mod fault_proxy;
mod faults;
mod files;
#[cfg(feature = "grpc")]
mod grpc;
mod insert;
mod insert_arrow_range;
mod insert_check_types;
mod insert_definition;
mod insert_large;
mod insert_mapped;
mod insert_repeat;
mod interop;
mod large_values;
#[cfg(all(feature = "derive", feature = "arrow", feature = "async"))]
mod lent_rows;
mod params;
mod pipelined;
#[cfg(feature = "pool")]
mod pool;
mod prepared;
mod prepared_cache;
mod process;
mod route;
mod route_refusals;
mod route_tracing;
mod session;
#[cfg(all(feature = "async", feature = "arrow"))]
mod shared;
#[cfg(all(feature = "async", feature = "arrow"))]
mod shared_insert;
mod streaming;
mod text_numeric;
#[cfg(feature = "tls")]
mod tls;
mod tracing;

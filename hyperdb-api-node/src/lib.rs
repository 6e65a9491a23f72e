//! Node.js bindings for `hyperdb-api`, built with napi-rs.
//!
//! Thin shims: each `Native*` class holds a `hyperdb-api` value and turns
//! JS arguments into Rust ones and results back; the logic (queuing calls
//! on a connection, routing a query to Arrow or rows, reading ahead) is
//! `hyperdb_api::SharedConnection`'s. The public JavaScript API is the
//! TypeScript in `lib/`, over these classes.

// The `#[napi(object)]` types hold JS-owned values (typed arrays) that
// have no useful `Debug`; they only cross the boundary.
#![allow(missing_debug_implementations)]

mod arrow_batches;
mod call;
mod catalog;
mod columns;
mod connection;
mod error;
mod grpc;
mod handover;
mod inserter;
mod params;
mod process;
mod streams;
mod text;

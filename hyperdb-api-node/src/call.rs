//! [`promise`] and [`spawn_started`]: how a call on a connection becomes
//! the Promise JS awaits, or a task in the background.
//!
//! napi-rs spawns the call's future as a tokio task, whose first poll waits
//! for a parked worker to wake up. The call is polled once first on the JS
//! thread (`hyperdb_api::started`), so its request is on the wire when the
//! worker wakes: the wake-up overlaps hyperd's work instead of adding to
//! each call's latency.

use std::future::Future;

use napi::bindgen_prelude::{
    spawn, within_runtime_if_available, AsyncBlock, AsyncBlockBuilder, ToNapiValue,
};
use napi::Env;

use crate::error::{internal, Result};

/// `call` as a Promise, started on this thread.
pub(crate) fn promise<T, F>(env: &Env, call: F) -> Result<AsyncBlock<T>>
where
    T: ToNapiValue + Send + 'static,
    F: Future<Output = Result<T>> + Send + 'static,
{
    AsyncBlockBuilder::new(start_here(call)?).build(env)
}

/// `task` run in the background, started on this thread.
pub(crate) fn spawn_started<F>(task: F) -> Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    spawn(start_here(task)?);
    Ok(())
}

/// `fut` polled once on this (JS) thread. A panic there would unwind into
/// napi's C frames and abort the process; caught, it is an XX000 error, as
/// a panic in a task is a rejection.
fn start_here<F: Future + Send + 'static>(fut: F) -> Result<hyperdb_api::Started<F>> {
    within_runtime_if_available(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hyperdb_api::started(fut)))
    })
    .map_err(|_| internal("the call panicked as it started (a bug in hyperdb-api)"))
}

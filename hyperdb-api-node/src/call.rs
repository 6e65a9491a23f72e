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

use crate::error::Result;

/// `call` as a Promise, started on this thread.
pub(crate) fn promise<T, F>(env: &Env, call: F) -> Result<AsyncBlock<T>>
where
    T: ToNapiValue + Send + 'static,
    F: Future<Output = Result<T>> + Send + 'static,
{
    let call = within_runtime_if_available(|| hyperdb_api::started(call));
    AsyncBlockBuilder::new(call).build(env)
}

/// `task` run in the background, started on this thread.
pub(crate) fn spawn_started<F>(task: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    spawn(within_runtime_if_available(|| hyperdb_api::started(task)));
}

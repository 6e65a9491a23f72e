//! The tokio pool, on `deadpool`.

use std::fmt;

use deadpool::managed::{self, Metrics, PoolError, RecycleError, RecycleResult, TimeoutType};
use deadpool::Runtime;
use hyperdb_api_core::protocol::backend::TransactionStatus;

use super::sync_pool::not_reusable;
use super::{recycle_step, PoolOptions, Recycle};
use crate::error::{Error, Result};
use crate::{AsyncConnection, ConnectOptions};

/// A pool of [`AsyncConnection`]s for tokio tasks; cloning it is cheap and
/// shares the pool. See the [module docs](crate::pool).
#[derive(Clone)]
pub struct AsyncPool {
    inner: managed::Pool<AsyncManager>,
}

/// An [`AsyncConnection`] checked out of an [`AsyncPool`]; it dereferences
/// to the connection and goes back to the pool when dropped.
pub type AsyncPooledConnection = managed::Object<AsyncManager>;

impl AsyncPool {
    /// A pool that opens connections with `connect` as they are needed
    /// (none is opened here).
    pub fn new(connect: ConnectOptions, options: PoolOptions) -> Result<AsyncPool> {
        let inner = managed::Pool::builder(AsyncManager {
            connect,
            options: options.clone(),
        })
        .max_size(options.max_size)
        .wait_timeout(Some(options.wait_timeout))
        .create_timeout(Some(options.create_timeout))
        .recycle_timeout(Some(options.recycle_timeout))
        .runtime(Runtime::Tokio1)
        .build()
        .map_err(|e| Error::invalid_argument("pool options", e.to_string()))?;
        Ok(AsyncPool { inner })
    }

    /// A healthy connection: an idle one that passed its check, or a new
    /// one. A failed connect is returned as it came (the server's or the
    /// socket's error); waiting longer than the wait timeout for a free
    /// connection is [`Error::PoolTimeout`].
    pub async fn get(&self) -> Result<AsyncPooledConnection> {
        let started = std::time::Instant::now();
        self.inner.get().await.map_err(|e| match e {
            PoolError::Backend(e) => e,
            PoolError::Closed => Error::PoolClosed,
            PoolError::Timeout(what) => Error::PoolTimeout {
                waited: started.elapsed(),
                message: match what {
                    TimeoutType::Wait => "every connection is in use",
                    TimeoutType::Create => "opening a connection took too long",
                    TimeoutType::Recycle => "checking an idle connection took too long",
                }
                .to_owned(),
            },
            other => Error::invalid_argument("pool", other.to_string()),
        })
    }

    /// Closes the pool: idle connections are dropped now, checked-out ones
    /// when they return; later [`get`](Self::get)s fail with
    /// [`Error::PoolClosed`].
    pub fn close(&self) {
        self.inner.close();
    }

    /// Connections open now, and how many of them are idle.
    pub fn state(&self) -> (usize, usize) {
        let s = self.inner.status();
        (s.size, s.available)
    }
}

impl fmt::Debug for AsyncPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (open, idle) = self.state();
        f.debug_struct("AsyncPool")
            .field("open", &open)
            .field("idle", &idle)
            .finish_non_exhaustive()
    }
}

/// Opens and checks the pool's connections (the `deadpool` manager).
pub struct AsyncManager {
    connect: ConnectOptions,
    options: PoolOptions,
}

impl fmt::Debug for AsyncManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncManager").finish_non_exhaustive()
    }
}

impl managed::Manager for AsyncManager {
    type Type = AsyncConnection;
    type Error = Error;

    async fn create(&self) -> Result<AsyncConnection> {
        AsyncConnection::connect_with(&self.connect).await
    }

    async fn recycle(&self, conn: &mut AsyncConnection, metrics: &Metrics) -> RecycleResult<Error> {
        // deadpool has no lifetime or idle limit of its own.
        if let Some(why) = self.options.expired(metrics.age(), metrics.last_used()) {
            return Err(RecycleError::message(why));
        }
        match recycle_step(
            conn.is_broken(),
            conn.session_changed(),
            conn.transaction_status(),
        ) {
            Recycle::Discard(why) => return Err(not_reusable(why).into()),
            Recycle::RollBackThenPing => {
                match conn.execute_command("ROLLBACK").await {
                    Err(e) if e.db_error().is_none() => return Err(e.into()),
                    _ => {}
                }
                if conn.transaction_status() != TransactionStatus::Idle {
                    return Err(not_reusable("the transaction could not be rolled back").into());
                }
            }
            Recycle::Ping => {}
        }
        Ok(conn.ping().await?)
    }
}

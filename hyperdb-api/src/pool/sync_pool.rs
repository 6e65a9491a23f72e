//! The blocking pool, on `r2d2`.

use std::fmt;
use std::time::Instant;

use hyperdb_api_core::protocol::backend::TransactionStatus;

use super::{recycle_step, PoolOptions, Recycle};
use crate::error::{Error, Result};
use crate::{ConnectOptions, Connection};

/// A pool of [`Connection`]s for threads; cloning it is cheap and shares
/// the pool. See the [module docs](crate::pool).
#[derive(Clone)]
pub struct Pool {
    inner: r2d2::Pool<Manager>,
}

/// A [`Connection`] checked out of a [`Pool`]; it dereferences to the
/// connection and goes back to the pool when dropped.
pub type PooledConnection = r2d2::PooledConnection<Manager>;

impl Pool {
    /// A pool that opens connections with `connect` as they are needed
    /// (none is opened here).
    pub fn new(connect: ConnectOptions, options: PoolOptions) -> Result<Pool> {
        let max_size = u32::try_from(options.max_size).map_err(|_| {
            Error::invalid_argument("max_size", format!("{} is too large", options.max_size))
        })?;
        let inner = r2d2::Pool::builder()
            .max_size(max_size)
            .min_idle(Some(0))
            .test_on_check_out(true)
            .connection_timeout(options.wait_timeout)
            .max_lifetime(options.max_lifetime)
            .idle_timeout(options.idle_timeout)
            .error_handler(Box::new(LogConnectErrors))
            .build_unchecked(Manager { connect });
        Ok(Pool { inner })
    }

    /// A healthy connection: an idle one that passed its check, or a new
    /// one. Fails with [`Error::PoolTimeout`] when none could be had within
    /// the wait timeout (all in use, or new ones failed to connect: the
    /// message carries the last connect error).
    pub fn get(&self) -> Result<PooledConnection> {
        let started = Instant::now();
        self.inner.get().map_err(|e| Error::PoolTimeout {
            waited: started.elapsed(),
            message: e.to_string(),
        })
    }

    /// Connections open now, and how many of them are idle.
    pub fn state(&self) -> (usize, usize) {
        let s = self.inner.state();
        (s.connections as usize, s.idle_connections as usize)
    }
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (open, idle) = self.state();
        f.debug_struct("Pool")
            .field("open", &open)
            .field("idle", &idle)
            .finish_non_exhaustive()
    }
}

/// Opens and checks the pool's connections (the `r2d2` manager).
pub struct Manager {
    connect: ConnectOptions,
}

impl fmt::Debug for Manager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Manager").finish_non_exhaustive()
    }
}

impl r2d2::ManageConnection for Manager {
    type Connection = Connection;
    type Error = Error;

    fn connect(&self) -> Result<Connection> {
        Connection::connect_with(&self.connect)
    }

    fn is_valid(&self, conn: &mut Connection) -> Result<()> {
        match recycle_step(
            conn.is_broken(),
            conn.session_changed(),
            conn.transaction_status(),
        ) {
            Recycle::Discard(why) => return Err(not_reusable(why)),
            Recycle::RollBackThenPing => {
                // A server error here (nothing left to roll back) is fine;
                // the status below is what decides.
                match conn.execute_command("ROLLBACK") {
                    Err(e) if e.db_error().is_none() => return Err(e),
                    _ => {}
                }
                if conn.transaction_status() != TransactionStatus::Idle {
                    return Err(not_reusable("the transaction could not be rolled back"));
                }
            }
            Recycle::Ping => {}
        }
        conn.ping()
    }

    fn has_broken(&self, conn: &mut Connection) -> bool {
        conn.is_broken()
    }
}

/// Why a connection goes out of the pool instead of back to a caller.
pub(super) fn not_reusable(why: &str) -> Error {
    Error::Client(hyperdb_api_core::Error::closed(format!(
        "pooled connection not reusable: {why}"
    )))
}

/// r2d2 reports failed connects to a handler (its default one logs through
/// the `log` crate); ours logs through `tracing` like the rest of the crate.
#[derive(Debug)]
struct LogConnectErrors;

impl r2d2::HandleError<Error> for LogConnectErrors {
    fn handle_error(&self, error: Error) {
        tracing::warn!(target: "hyperdb::pool", error = %error, "opening a pooled connection failed");
    }
}

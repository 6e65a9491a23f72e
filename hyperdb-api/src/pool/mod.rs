//! Connection pools: [`Pool`] for threads (on `r2d2`) and [`AsyncPool`]
//! for tokio tasks (on `deadpool`).
//!
//! Both hand out connections opened with one [`ConnectOptions`] (so the
//! database is attached on every connection) and check a connection before
//! handing it out again: a broken one (hyperd restarted, socket lost) is
//! dropped and replaced, one left inside a transaction is rolled back, and
//! a `ping` proves the server still answers. A connection whose session a
//! caller changed (a `SET` or `RESET`, a database attached or detached, a
//! temporary table, any DDL) is dropped and replaced too, so no caller
//! meets another's settings, databases or temporary tables: hyperd can
//! restore none of them in place (`RESET` goes to hyperd's defaults, not
//! the connection's; temporary tables and attachments have no reset). Why these two crates: r2d2 is
//! the standard blocking pool (max lifetime, idle reaping and checkout
//! tests built in), deadpool the maintained async one with wait, create and
//! recycle timeouts; bb8 offers nothing deadpool lacks here.
//!
//! ```no_run
//! use hyperdb_api::{ConnectOptions, CreateMode, HyperProcess, Pool, PoolOptions};
//! let server = HyperProcess::start()?;
//! let options = ConnectOptions::new(server.endpoint().clone())
//!     .with_database("pooled.hyper", CreateMode::CreateIfNotExists);
//! let pool = Pool::new(options, PoolOptions::default().with_max_size(4))?;
//! let mut conn = pool.get()?;
//! let one: i32 = conn.query_scalar("SELECT 1")?;
//! assert_eq!(one, 1);
//! # Ok::<(), hyperdb_api::Error>(())
//! ```

#[cfg(feature = "async")]
mod async_pool;
mod sync_pool;

#[cfg(feature = "async")]
pub use async_pool::{AsyncPool, AsyncPooledConnection};
pub use sync_pool::{Pool, PooledConnection};

use std::time::Duration;

use hyperdb_api_core::protocol::backend::TransactionStatus;

#[cfg(doc)]
use crate::ConnectOptions;

/// Limits and timeouts of a pool, as a consuming builder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolOptions {
    pub(crate) max_size: usize,
    pub(crate) wait_timeout: Duration,
    pub(crate) create_timeout: Duration,
    pub(crate) recycle_timeout: Duration,
    pub(crate) max_lifetime: Option<Duration>,
    pub(crate) idle_timeout: Option<Duration>,
}

impl Default for PoolOptions {
    /// 8 connections; a checkout waits up to 30 s; connections live at most
    /// 30 minutes and are closed after 10 idle minutes.
    fn default() -> Self {
        PoolOptions {
            max_size: 8,
            wait_timeout: Duration::from_secs(30),
            create_timeout: Duration::from_secs(30),
            recycle_timeout: Duration::from_secs(5),
            max_lifetime: Some(Duration::from_secs(30 * 60)),
            idle_timeout: Some(Duration::from_secs(10 * 60)),
        }
    }
}

impl PoolOptions {
    /// How many connections the pool opens at most (at least 1).
    pub fn with_max_size(mut self, max_size: usize) -> Self {
        self.max_size = max_size.max(1);
        self
    }

    /// How long [`Pool::get`] waits for a free connection before failing
    /// with [`Error::PoolTimeout`](crate::Error::PoolTimeout).
    pub fn with_wait_timeout(mut self, timeout: Duration) -> Self {
        self.wait_timeout = timeout;
        self
    }

    /// How long opening a new connection may take (async pool; the sync
    /// pool bounds it by the wait timeout and the connect timeout of the
    /// [`ConnectOptions`]).
    pub fn with_create_timeout(mut self, timeout: Duration) -> Self {
        self.create_timeout = timeout;
        self
    }

    /// How long the health check of a returning connection may take
    /// (async pool; the sync pool's check is bounded by the query timeout
    /// of the [`ConnectOptions`]).
    pub fn with_recycle_timeout(mut self, timeout: Duration) -> Self {
        self.recycle_timeout = timeout;
        self
    }

    /// Connections older than this are closed instead of handed out.
    pub fn with_max_lifetime(mut self, lifetime: Option<Duration>) -> Self {
        self.max_lifetime = lifetime;
        self
    }

    /// Connections unused for this long are closed instead of handed out.
    pub fn with_idle_timeout(mut self, idle: Option<Duration>) -> Self {
        self.idle_timeout = idle;
        self
    }

    /// Why a connection of this `age`, unused for `idle`, must not be
    /// handed out again; `None` when it may be.
    fn expired(&self, age: Duration, idle: Duration) -> Option<&'static str> {
        if self.max_lifetime.is_some_and(|max| age >= max) {
            Some("the connection reached the pool's max lifetime")
        } else if self.idle_timeout.is_some_and(|max| idle >= max) {
            Some("the connection was idle longer than the pool's idle timeout")
        } else {
            None
        }
    }
}

/// What a returning connection needs before reuse, read from its state:
/// the same decision for both pools.
#[derive(Debug, PartialEq, Eq)]
enum Recycle {
    /// Broken, or its session changed: drop it, open another.
    Discard(&'static str),
    /// Inside a transaction (open or failed): `ROLLBACK` first, then ping.
    RollBackThenPing,
    /// Idle: ping.
    Ping,
}

fn recycle_step(broken: bool, session_changed: bool, status: TransactionStatus) -> Recycle {
    if broken {
        Recycle::Discard("the connection is broken")
    } else if session_changed {
        Recycle::Discard(
            "its session was changed (a setting, a database attached or detached, a \
             temporary table, DDL)",
        )
    } else if status == TransactionStatus::Idle {
        Recycle::Ping
    } else {
        Recycle::RollBackThenPing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_follows_lifetime_then_idle_time() {
        let opts = PoolOptions::default()
            .with_max_lifetime(Some(Duration::from_secs(60)))
            .with_idle_timeout(Some(Duration::from_secs(10)));
        let s = Duration::from_secs;
        assert_eq!(opts.expired(s(5), s(5)), None);
        assert!(opts.expired(s(60), s(0)).unwrap_or("").contains("lifetime"));
        assert!(opts.expired(s(30), s(10)).unwrap_or("").contains("idle"));
        let forever = opts.with_max_lifetime(None).with_idle_timeout(None);
        assert_eq!(forever.expired(s(1 << 30), s(1 << 30)), None);
    }

    #[test]
    fn broken_connections_are_discarded_and_open_transactions_rolled_back() {
        for changed in [false, true] {
            assert!(matches!(
                recycle_step(true, changed, TransactionStatus::Idle),
                Recycle::Discard(why) if why.contains("broken")
            ));
        }
        assert!(matches!(
            recycle_step(false, true, TransactionStatus::InTransaction),
            Recycle::Discard(why) if why.contains("session")
        ));
        assert_eq!(
            recycle_step(false, false, TransactionStatus::Idle),
            Recycle::Ping
        );
        assert_eq!(
            recycle_step(false, false, TransactionStatus::InTransaction),
            Recycle::RollBackThenPing
        );
        assert_eq!(
            recycle_step(false, false, TransactionStatus::Failed),
            Recycle::RollBackThenPing
        );
    }

    #[test]
    fn max_size_is_at_least_one() {
        assert_eq!(PoolOptions::default().with_max_size(0).max_size, 1);
    }
}

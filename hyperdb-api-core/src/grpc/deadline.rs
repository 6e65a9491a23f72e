//! The query timeout of a gRPC query ([`GrpcConfig::with_query_timeout`]):
//! one deadline from the call that starts the query to the end of its
//! result, checked at every wait for the server.
//!
//! Unlike the PostgreSQL protocol's (`client/deadline.rs`), expiry does
//! not wait for the server to answer the cancel: the HTTP/2 connection is
//! shared by every query of the client and carries no per-query state
//! that a lost reply could leave out of step, so the call fails at once
//! and the `CancelQuery` goes out in the background.
//!
//! [`GrpcConfig::with_query_timeout`]: super::GrpcConfig::with_query_timeout

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use crate::error::{Error, Result};

/// How long a background `CancelQuery` for a timed-out or abandoned query
/// may take; past it (a dead link) the attempt is given up.
pub(crate) const CANCEL_WAIT: Duration = Duration::from_secs(5);

#[derive(Clone, Copy, Debug)]
pub(crate) struct QueryDeadline {
    at: Instant,
    timeout: Duration,
}

impl QueryDeadline {
    /// A deadline `timeout` from now.
    pub(crate) fn new(timeout: Duration) -> QueryDeadline {
        QueryDeadline {
            at: Instant::now() + timeout,
            timeout,
        }
    }

    /// The error of a query that ran past the deadline.
    pub(crate) fn error(&self) -> Error {
        Error::timeout(format!(
            "gRPC query timeout of {:?} expired; the query is cancelled on the server",
            self.timeout
        ))
    }
}

/// `f`'s output, or the deadline's error if the deadline passes first
/// (`f` is then dropped). Without a deadline, `f`'s output.
pub(crate) async fn until<F: Future>(deadline: Option<&QueryDeadline>, f: F) -> Result<F::Output> {
    match deadline {
        None => Ok(f.await),
        Some(d) => tokio::time::timeout_at(d.at, f)
            .await
            .map_err(|_| d.error()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_deadline_ends_a_wait_with_a_timeout_error() {
        let d = QueryDeadline::new(Duration::from_millis(20));
        let e = until(Some(&d), std::future::pending::<()>())
            .await
            .unwrap_err();
        assert!(e.is_timeout(), "{e:?}");
        assert!(e.to_string().contains("20ms"), "{e}");
        let done = until(Some(&QueryDeadline::new(Duration::from_secs(60))), async {
            7
        })
        .await;
        assert_eq!(done.unwrap(), 7);
        assert_eq!(until(None, async { 8 }).await.unwrap(), 8);
    }
}

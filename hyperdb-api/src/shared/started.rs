//! [`started`]: a future polled once on the calling thread before it is
//! handed to a task.
//!
//! Why: a call made from a thread outside the runtime (a binding's
//! JavaScript thread) is spawned as a task, and the task's first poll
//! waits for a parked worker to wake up. Polled once here, the call has
//! already written its request when the worker wakes, so the wake-up
//! overlaps the server's work instead of preceding it. Polling with a
//! no-op waker loses nothing: whoever spawns the returned future polls it
//! again, and that poll registers the task's own waker.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// `fut`, polled once now; the returned future continues it. Call it
/// inside the runtime's context (`Handle::enter`) when `fut` may spawn or
/// set timers on its first poll.
pub fn started<F: Future>(fut: F) -> Started<F> {
    let mut fut = Box::pin(fut);
    Started(
        match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(out) => State::Done(Some(out)),
            Poll::Pending => State::Running(fut),
        },
    )
}

/// See [`started`].
pub struct Started<F: Future>(State<F>);

enum State<F: Future> {
    Running(Pin<Box<F>>),
    /// Finished on its first poll; `None` once its output was taken.
    Done(Option<F::Output>),
}

impl<F: Future> std::fmt::Debug for Started<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.0 {
            State::Running(_) => "running",
            State::Done(Some(_)) => "done",
            State::Done(None) => "taken",
        };
        f.debug_tuple("Started").field(&state).finish()
    }
}

// The output is moved out, never pinned, and the future is boxed.
impl<F: Future> Unpin for Started<F> {}

impl<F: Future> Future for Started<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        match &mut self.get_mut().0 {
            State::Running(fut) => fut.as_mut().poll(cx),
            State::Done(out) => match out.take() {
                Some(out) => Poll::Ready(out),
                None => panic!("`Started` polled after it completed"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[tokio::test]
    async fn runs_up_to_its_first_wait_at_once_and_finishes_when_awaited() {
        let steps = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = tokio::sync::oneshot::channel::<u32>();
        let s = steps.clone();
        let fut = started(async move {
            s.fetch_add(1, Ordering::SeqCst);
            let v = rx.await.unwrap_or(0);
            s.fetch_add(1, Ordering::SeqCst);
            v
        });
        assert_eq!(steps.load(Ordering::SeqCst), 1, "ran up to its first wait");
        assert!(matches!(fut.0, State::Running(_)));
        let task = tokio::spawn(fut);
        tx.send(7).unwrap();
        assert_eq!(task.await.unwrap(), 7, "woken through the task's waker");
        assert_eq!(steps.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_future_that_finishes_at_once_keeps_its_output() {
        let fut = started(async { 5 });
        assert!(matches!(fut.0, State::Done(Some(5))));
        assert_eq!(fut.await, 5);
    }
}

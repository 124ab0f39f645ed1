//! What a connection may cost before it authenticated (the WebSocket's proofs, or an HTTP request
//! with the right bearer), shared by both listeners. Until then a connection
//! - may send at most [`PREAUTH_BYTES`] in all (the request head and the proof frame fit; a
//!   bigger frame, or a slow trickle of them, is cut off),
//! - has [`PREAUTH_DEADLINE`] to authenticate, and
//! - is one of at most `capacity` unauthenticated connections: a new one evicts the oldest, so a
//!   flood of silent sockets can never keep a legitimate client out (it only ever pushes out the
//!   flood's own oldest socket, while the client needs a few milliseconds to prove itself).
//!
//! Once it authenticated, a connection takes one of the pool's authenticated slots (bounded too)
//! and none of the limits above applies any more.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// The most bytes a connection may send before it authenticated: a browser's upgrade request
/// (about 1 KB, cookies included where a browser sends them) and the proof frame (about 300 bytes)
/// fit many times over.
pub const PREAUTH_BYTES: usize = 16 * 1024;

/// The time a connection has to authenticate.
pub const PREAUTH_DEADLINE: Duration = Duration::from_secs(3);

/// The connections of one listener that have not authenticated yet, oldest first, and the
/// slots of those that have.
pub struct Pool {
    capacity: usize,
    waiting: Mutex<Waiting>,
    authenticated: Arc<Semaphore>,
}

#[derive(Default)]
struct Waiting {
    next_id: u64,
    /// Oldest first: each connection's id and how to tell it that it was evicted.
    members: VecDeque<(u64, Arc<Notify>)>,
}

impl Pool {
    /// A pool of at most `unauthenticated` waiting connections and `authenticated` ones.
    pub fn new(unauthenticated: usize, authenticated: usize) -> Arc<Pool> {
        Arc::new(Pool {
            capacity: unauthenticated,
            waiting: Mutex::new(Waiting::default()),
            authenticated: Arc::new(Semaphore::new(authenticated)),
        })
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Admits a new connection; when the pool is full, the oldest waiting one is evicted (it
    /// is told, and closes). Says whether one was.
    pub fn admit(self: &Arc<Self>) -> (Admission, bool) {
        let evicted = Arc::new(Notify::new());
        let mut waiting = self.waiting();
        let mut evicted_one = false;
        while waiting.members.len() >= self.capacity {
            let Some((_, oldest)) = waiting.members.pop_front() else {
                break;
            };
            oldest.notify_one();
            evicted_one = true;
        }
        let id = waiting.next_id;
        waiting.next_id += 1;
        waiting.members.push_back((id, evicted.clone()));
        drop(waiting);
        let admission = Admission {
            pool: self.clone(),
            id,
            evicted,
            deadline: Instant::now() + PREAUTH_DEADLINE,
            budget: Arc::new(AtomicUsize::new(PREAUTH_BYTES)),
            authenticated: AtomicBool::new(false),
            slot: Mutex::new(None),
        };
        (admission, evicted_one)
    }

    /// How many connections are waiting to authenticate.
    #[cfg(test)]
    fn waiting_count(&self) -> usize {
        self.waiting().members.len()
    }

    fn leave(&self, id: u64) {
        self.waiting().members.retain(|(member, _)| *member != id);
    }
}

/// Why an unauthenticated connection is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lost {
    /// Newer connections pushed it out of the pool.
    Evicted,
    /// It did not authenticate within [`PREAUTH_DEADLINE`].
    TimedOut,
}

/// One connection's place: in the waiting pool until it authenticates, then in a slot.
pub struct Admission {
    pool: Arc<Pool>,
    id: u64,
    evicted: Arc<Notify>,
    deadline: Instant,
    budget: Arc<AtomicUsize>,
    authenticated: AtomicBool,
    slot: Mutex<Option<OwnedSemaphorePermit>>,
}

impl Admission {
    /// Resolves when the connection is evicted or its deadline passes, unless it authenticated
    /// by then (then never).
    pub async fn lost(&self) -> Lost {
        let lost = tokio::select! {
            () = self.evicted.notified() => Lost::Evicted,
            () = tokio::time::sleep_until(self.deadline) => Lost::TimedOut,
        };
        if self.is_authenticated() {
            std::future::pending::<()>().await;
        }
        lost
    }

    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    pub fn is_authenticated(&self) -> bool {
        self.authenticated.load(Ordering::Acquire)
    }

    /// The connection proved itself: it leaves the waiting pool, its byte budget is lifted, and
    /// it takes an authenticated slot. False when every slot is taken (the caller refuses it).
    pub fn authenticate(&self) -> bool {
        if self.is_authenticated() {
            return true;
        }
        let Ok(permit) = self.pool.authenticated.clone().try_acquire_owned() else {
            return false;
        };
        *self.slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(permit);
        self.pool.leave(self.id);
        self.budget.store(usize::MAX, Ordering::Release);
        self.authenticated.store(true, Ordering::Release);
        true
    }

    /// `stream`, reading at most the pre-authentication budget until [`Self::authenticate`].
    pub fn meter<S>(&self, stream: S) -> Metered<S> {
        Metered {
            inner: stream,
            budget: self.budget.clone(),
        }
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        if !self.is_authenticated() {
            self.pool.leave(self.id);
        }
    }
}

/// A stream that fails a read past its connection's pre-authentication budget.
pub struct Metered<S> {
    inner: S,
    budget: Arc<AtomicUsize>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Metered<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = buf.filled().len() - before;
        if read > 0 {
            let left = self.budget.load(Ordering::Acquire);
            if left != usize::MAX {
                if read > left {
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("sent more than {PREAUTH_BYTES} bytes before authenticating"),
                    )));
                }
                // Only this connection's reader spends its budget.
                self.budget.store(left - read, Ordering::Release);
            }
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Metered<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn a_full_pool_evicts_its_oldest_waiting_connection() {
        let pool = Pool::new(2, 8);
        let (first, evicted) = pool.admit();
        assert!(!evicted);
        let (second, _) = pool.admit();
        let (third, evicted) = pool.admit();
        assert!(evicted);
        assert_eq!(first.lost().await, Lost::Evicted);
        assert_eq!(pool.waiting_count(), 2);
        // An authenticated connection leaves the pool and is never evicted.
        assert!(second.authenticate());
        let (_fourth, _) = pool.admit();
        let (_fifth, evicted) = pool.admit();
        assert!(evicted, "third was the oldest waiting");
        assert_eq!(third.lost().await, Lost::Evicted);
        let still = tokio::time::timeout(Duration::from_millis(50), second.lost()).await;
        assert!(still.is_err(), "an authenticated connection is never lost");
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_that_does_not_authenticate_in_time_is_lost() {
        let pool = Pool::new(4, 8);
        let (admission, _) = pool.admit();
        assert_eq!(admission.lost().await, Lost::TimedOut);
        drop(admission);
        assert_eq!(pool.waiting_count(), 0);
    }

    #[tokio::test]
    async fn authenticated_slots_are_bounded_and_freed_with_the_connection() {
        let pool = Pool::new(4, 1);
        let (a, _) = pool.admit();
        let (b, _) = pool.admit();
        assert!(a.authenticate());
        assert!(!b.authenticate());
        drop(a);
        assert!(b.authenticate());
    }

    #[tokio::test]
    async fn reading_past_the_budget_fails_until_authenticated() {
        let pool = Pool::new(4, 4);
        let (admission, _) = pool.admit();
        let (mut client, server) = tokio::io::duplex(64 * 1024);
        let mut metered = admission.meter(server);
        client.write_all(&vec![1u8; PREAUTH_BYTES]).await.unwrap();
        let mut buf = vec![0u8; PREAUTH_BYTES];
        metered.read_exact(&mut buf).await.unwrap();
        client.write_all(&[2u8; 10]).await.unwrap();
        let over = metered.read(&mut [0u8; 10]).await;
        assert!(over.is_err(), "{over:?}");

        let (admission, _) = pool.admit();
        let (mut client, server) = tokio::io::duplex(64 * 1024);
        let mut metered = admission.meter(server);
        assert!(admission.authenticate());
        client.write_all(&vec![3u8; 40 * 1024]).await.unwrap();
        let mut buf = vec![0u8; 40 * 1024];
        metered.read_exact(&mut buf).await.unwrap();
    }
}

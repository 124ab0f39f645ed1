//! What a connection may cost before it authenticated (the WebSocket's proofs, or an HTTP request
//! with the right bearer), shared by both listeners. Until then a connection
//! - may send at most [`PREAUTH_BYTES`] in all (the request head and the proof frame fit; a
//!   bigger frame, or a slow trickle of them, is cut off),
//! - has [`PREAUTH_DEADLINE`] to authenticate, and
//! - is one of at most `capacity` unauthenticated connections: a new one evicts one of them, so a
//!   flood of silent sockets can never keep a legitimate client out. The one evicted is the oldest
//!   of those that have not sent a whole request head by then (judged by a peek when it was
//!   accepted and by what its reader took since). A legitimate client sends its whole head at
//!   once, which a silent or trickling flood never does, so under a flood it is kept however long
//!   a busy machine takes to read it; and a client accepted before it wrote is the youngest, so a
//!   flood must turn over the whole pool before it comes to it.
//!
//! Once it authenticated, a connection takes one of the pool's authenticated slots (bounded too)
//! and none of the limits above applies any more.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
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
    /// Oldest first.
    members: VecDeque<Member>,
}

struct Member {
    id: u64,
    /// Whether it has sent a whole request head: seen when it was accepted, or by its reader.
    whole_head: Arc<AtomicBool>,
    /// How to tell it that it was evicted.
    evicted: Arc<Notify>,
}

/// What a connection has sent, least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Opening {
    /// Nothing yet.
    Nothing,
    /// Some bytes, but not a whole HTTP request head.
    Partial,
    /// A whole request head (ended by an empty line), as every legitimate client sends at once.
    WholeHead,
}

impl Opening {
    /// The most of a connection's opening [`Opening::of`] looks at: the heads Tabwire's clients
    /// send to 127.0.0.1 fit well within it.
    const PEEK: usize = 4096;

    /// Classifies what `bytes` (the start of what a connection sent) holds.
    pub fn classify(bytes: &[u8]) -> Opening {
        if bytes.is_empty() {
            Opening::Nothing
        } else if bytes.windows(4).any(|w| w == b"\r\n\r\n") {
            Opening::WholeHead
        } else {
            Opening::Partial
        }
    }

    /// What `stream` has sent and nobody read yet, looked at without reading it (one
    /// non-blocking `recv(MSG_PEEK)`). The stream comes back re-registered with the runtime: tokio
    /// peeks only once its reactor saw the socket readable, which a just-accepted socket is not yet.
    /// (Looking again at eviction would need a second handle on every waiting socket: twice the
    /// file descriptors, which macOS limits to 256 by default.)
    pub fn of(stream: TcpStream) -> std::io::Result<(TcpStream, Opening)> {
        let stream = stream.into_std()?;
        let mut buf = [0u8; Opening::PEEK];
        let opening = match stream.peek(&mut buf) {
            Ok(n) => Opening::classify(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Opening::Nothing,
            Err(e) => return Err(e),
        };
        Ok((TcpStream::from_std(stream)?, opening))
    }
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

    /// Admits a new connection that opened with `opening`; when the pool is full, one waiting
    /// connection is evicted (it is told, and closes): the oldest of those that have not sent a
    /// whole request head by now, or the oldest when all have. Says whether one was.
    pub fn admit(self: &Arc<Self>, opening: Opening) -> (Admission, bool) {
        let evicted = Arc::new(Notify::new());
        let whole_head = Arc::new(AtomicBool::new(opening == Opening::WholeHead));
        let mut waiting = self.waiting();
        let mut evicted_one = false;
        while waiting.members.len() >= self.capacity {
            let unfinished = (waiting.members.iter())
                .position(|member| !member.whole_head.load(Ordering::Acquire));
            let Some(member) = waiting.members.remove(unfinished.unwrap_or(0)) else {
                break;
            };
            member.evicted.notify_one();
            evicted_one = true;
        }
        let id = waiting.next_id;
        waiting.next_id += 1;
        waiting.members.push_back(Member {
            id,
            whole_head: whole_head.clone(),
            evicted: evicted.clone(),
        });
        drop(waiting);
        let admission = Admission {
            pool: self.clone(),
            id,
            evicted,
            deadline: Instant::now() + PREAUTH_DEADLINE,
            budget: Arc::new(AtomicUsize::new(PREAUTH_BYTES)),
            whole_head,
            authenticated: AtomicBool::new(false),
            slot: Mutex::new(None),
        };
        (admission, evicted_one)
    }

    /// Admits a just-accepted `stream` by what it opened with ([`Opening::of`]), as [`Self::admit`]
    /// does; `None` when it could not be looked at (it is dropped, which closes it).
    pub fn admit_stream(
        self: &Arc<Self>,
        stream: TcpStream,
        peer: SocketAddr,
    ) -> Option<(TcpStream, Admission, bool)> {
        match Opening::of(stream) {
            Ok((stream, opening)) => {
                let (admission, evicted) = self.admit(opening);
                Some((stream, admission, evicted))
            }
            Err(e) => {
                tracing::debug!(%peer, error = %e, "dropped a connection that could not be looked at");
                None
            }
        }
    }

    /// How many connections are waiting to authenticate.
    #[cfg(test)]
    fn waiting_count(&self) -> usize {
        self.waiting().members.len()
    }

    fn leave(&self, id: u64) {
        self.waiting().members.retain(|member| member.id != id);
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
    whole_head: Arc<AtomicBool>,
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
            whole_head: self.whole_head.clone(),
            head_end: 0,
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

/// A stream that fails a read past its connection's pre-authentication budget, and tells the
/// pool once the connection has sent a whole request head.
pub struct Metered<S> {
    inner: S,
    budget: Arc<AtomicUsize>,
    whole_head: Arc<AtomicBool>,
    /// How much of the empty line that ends a head the bytes read so far end with, so an end
    /// split across two reads is seen.
    head_end: usize,
}

/// The `\r\n\r\n` that ends an HTTP request head.
const HEAD_END: &[u8] = b"\r\n\r\n";

/// How much of [`HEAD_END`] has been read after `bytes`, `matched` of it having been read before
/// them ([`HEAD_END`]'s length: all of it).
fn head_end_after(mut matched: usize, bytes: &[u8]) -> usize {
    for &byte in bytes {
        if matched == HEAD_END.len() {
            break;
        }
        matched = if byte == HEAD_END[matched] {
            matched + 1
        } else {
            // Only `\r` can begin the end again (`\r\n\r` + `\r`, or a lone `\r`).
            usize::from(byte == b'\r')
        };
    }
    matched
}

/// Polls `inner` into `buf`, and shows the bytes this read added (when it added any) to `seen`,
/// whose error fails the read: what a stream that watches its reads does.
pub fn poll_read_seeing<S: AsyncRead + Unpin>(
    inner: &mut S,
    cx: &mut Context<'_>,
    buf: &mut ReadBuf<'_>,
    seen: impl FnOnce(&[u8]) -> std::io::Result<()>,
) -> Poll<std::io::Result<()>> {
    let before = buf.filled().len();
    let polled = Pin::new(inner).poll_read(cx, buf);
    let read = &buf.filled()[before..];
    if !read.is_empty() {
        seen(read)?;
    }
    polled
}

impl<S: AsyncRead + Unpin> AsyncRead for Metered<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        poll_read_seeing(&mut this.inner, cx, buf, |read| {
            let left = this.budget.load(Ordering::Acquire);
            if left == usize::MAX {
                return Ok(());
            }
            if read.len() > left {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("sent more than {PREAUTH_BYTES} bytes before authenticating"),
                ));
            }
            // Only this connection's reader spends its budget.
            this.budget.store(left - read.len(), Ordering::Release);
            this.head_end = head_end_after(this.head_end, read);
            if this.head_end == HEAD_END.len() {
                this.whole_head.store(true, Ordering::Release);
            }
            Ok(())
        })
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
        let (first, evicted) = pool.admit(Opening::Nothing);
        assert!(!evicted);
        let (second, _) = pool.admit(Opening::Nothing);
        let (third, evicted) = pool.admit(Opening::Nothing);
        assert!(evicted);
        assert_eq!(first.lost().await, Lost::Evicted);
        assert_eq!(pool.waiting_count(), 2);
        // An authenticated connection leaves the pool and is never evicted.
        assert!(second.authenticate());
        let (_fourth, _) = pool.admit(Opening::Nothing);
        let (_fifth, evicted) = pool.admit(Opening::Nothing);
        assert!(evicted, "third was the oldest waiting");
        assert_eq!(third.lost().await, Lost::Evicted);
        let still = tokio::time::timeout(Duration::from_millis(50), second.lost()).await;
        assert!(still.is_err(), "an authenticated connection is never lost");
    }

    #[tokio::test]
    async fn a_full_pool_evicts_the_oldest_that_has_not_sent_a_whole_head() {
        let pool = Pool::new(3, 8);
        let (client, _) = pool.admit(Opening::WholeHead);
        let (trickle, _) = pool.admit(Opening::Partial);
        let (silent, _) = pool.admit(Opening::Nothing);
        let (newer, evicted) = pool.admit(Opening::Nothing);
        assert!(evicted);
        assert_eq!(trickle.lost().await, Lost::Evicted);
        let (_newest, _) = pool.admit(Opening::Partial);
        assert_eq!(silent.lost().await, Lost::Evicted);
        let (_whole, _) = pool.admit(Opening::WholeHead);
        assert_eq!(newer.lost().await, Lost::Evicted);
        let kept = tokio::time::timeout(Duration::from_millis(50), client.lost()).await;
        assert!(
            kept.is_err(),
            "the client that sent its whole head is evicted last"
        );
        // When every one sent a whole head, the oldest goes.
        let pool = Pool::new(1, 8);
        let (older, _) = pool.admit(Opening::WholeHead);
        let (_younger, evicted) = pool.admit(Opening::WholeHead);
        assert!(evicted);
        assert_eq!(older.lost().await, Lost::Evicted);
    }

    #[tokio::test]
    async fn a_client_that_has_not_written_yet_outlives_an_older_trickle() {
        let pool = Pool::new(2, 8);
        let (trickle, _) = pool.admit(Opening::Partial);
        // A busy client connected but has not written its request yet.
        let (client, _) = pool.admit(Opening::Nothing);
        let (_newcomer, evicted) = pool.admit(Opening::Partial);
        assert!(evicted);
        assert_eq!(trickle.lost().await, Lost::Evicted);
        let kept = tokio::time::timeout(Duration::from_millis(50), client.lost()).await;
        assert!(
            kept.is_err(),
            "the younger client is kept while an older one has not finished"
        );
    }

    #[tokio::test]
    async fn a_head_its_reader_took_counts_though_its_end_came_in_two_reads() {
        let pool = Pool::new(2, 8);
        let (client, _) = pool.admit(Opening::Nothing);
        let (younger_silent, _) = pool.admit(Opening::Nothing);
        let (mut writer, server) = tokio::io::duplex(1024);
        let mut metered = client.meter(server);
        for part in [&b"GET / HTTP/1.1\r\n\r"[..], b"\n"] {
            writer.write_all(part).await.unwrap();
            let read = metered.read(&mut [0u8; 64]).await.unwrap();
            assert_eq!(read, part.len());
        }
        // A newcomer finds the pool full: the silent one goes, though younger.
        let (newcomer, evicted) = pool.admit(Opening::Nothing);
        assert!(evicted);
        assert_eq!(younger_silent.lost().await, Lost::Evicted);
        let kept = tokio::time::timeout(Duration::from_millis(50), client.lost()).await;
        assert!(kept.is_err(), "the whole head its reader took keeps it");
        drop(newcomer);
    }

    #[test]
    fn the_end_of_a_head_is_found_however_it_is_split() {
        let whole = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n{}";
        for split in 0..=whole.len() {
            let (first, second) = whole.split_at(split);
            let matched = head_end_after(head_end_after(0, first), second);
            assert_eq!(matched, HEAD_END.len(), "split at {split}");
        }
        for not_yet in [&b"GET / HTTP/1.1\r\n"[..], b"\r\r\n\r", b"\n\n\r\n", b"P"] {
            assert!(head_end_after(0, not_yet) < HEAD_END.len(), "{not_yet:?}");
        }
        assert_eq!(head_end_after(0, b"\r\n\r\r\n\r\n"), HEAD_END.len());
    }

    #[test]
    fn an_opening_is_classified_by_what_it_holds() {
        assert_eq!(Opening::classify(b""), Opening::Nothing);
        assert_eq!(Opening::classify(b"P"), Opening::Partial);
        let partial = b"POST /mcp HTTP/1.1\r\nHost: x\r\n";
        assert_eq!(Opening::classify(partial), Opening::Partial);
        let whole = b"POST /mcp HTTP/1.1\r\nHost: x\r\n\r\n{}";
        assert_eq!(Opening::classify(whole), Opening::WholeHead);
    }

    #[tokio::test]
    async fn a_peek_sees_what_was_sent_without_taking_it() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let (server, opening) = Opening::of(server).unwrap();
        assert_eq!(opening, Opening::Nothing);
        client.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
        // Waits until the bytes arrived (a peek leaves them where they are).
        server.peek(&mut [0u8; 1]).await.unwrap();
        let (mut server, opening) = Opening::of(server).unwrap();
        assert_eq!(opening, Opening::WholeHead);
        let mut head = [0u8; 18];
        server.read_exact(&mut head).await.unwrap();
        assert_eq!(&head, b"GET / HTTP/1.1\r\n\r\n");
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_that_does_not_authenticate_in_time_is_lost() {
        let pool = Pool::new(4, 8);
        let (admission, _) = pool.admit(Opening::Nothing);
        assert_eq!(admission.lost().await, Lost::TimedOut);
        drop(admission);
        assert_eq!(pool.waiting_count(), 0);
    }

    #[tokio::test]
    async fn authenticated_slots_are_bounded_and_freed_with_the_connection() {
        let pool = Pool::new(4, 1);
        let (a, _) = pool.admit(Opening::Nothing);
        let (b, _) = pool.admit(Opening::Nothing);
        assert!(a.authenticate());
        assert!(!b.authenticate());
        drop(a);
        assert!(b.authenticate());
    }

    #[tokio::test]
    async fn reading_past_the_budget_fails_until_authenticated() {
        let pool = Pool::new(4, 4);
        let (admission, _) = pool.admit(Opening::Nothing);
        let (mut client, server) = tokio::io::duplex(64 * 1024);
        let mut metered = admission.meter(server);
        client.write_all(&vec![1u8; PREAUTH_BYTES]).await.unwrap();
        let mut buf = vec![0u8; PREAUTH_BYTES];
        metered.read_exact(&mut buf).await.unwrap();
        client.write_all(&[2u8; 10]).await.unwrap();
        let over = metered.read(&mut [0u8; 10]).await;
        assert!(over.is_err(), "{over:?}");

        let (admission, _) = pool.admit(Opening::Nothing);
        let (mut client, server) = tokio::io::duplex(64 * 1024);
        let mut metered = admission.meter(server);
        assert!(admission.authenticate());
        client.write_all(&vec![3u8; 40 * 1024]).await.unwrap();
        let mut buf = vec![0u8; 40 * 1024];
        metered.read_exact(&mut buf).await.unwrap();
    }
}

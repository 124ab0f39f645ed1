//! Keeping the browser port this user's while any tabwire of this user runs, so that a hub's exit
//! leaves no gap in which another user's program could bind the freed port and cut the browser off.
//!
//! On Linux every tabwire binds the port with `SO_REUSEPORT`, which the kernel grants to a second
//! socket only when it belongs to the same effective user: the hub binds and listens, each peer
//! binds and does not listen (a socket that is not listening gets no connection, so the hub gets
//! them all). When the hub exits, the port is still held by the peers' sockets; the one peer that
//! takes the hub lock starts listening on the socket it already holds. The lock is an abstract Unix
//! socket named after a hash of the pairing secret and the port (another user cannot guess the name,
//! so cannot squat it), released by the OS with its holder.
//!
//! macOS grants `SO_REUSEPORT` to any user who sets it, so co-binding there would let another
//! user share the port: tabwire binds it exclusively there, as on Windows (whose
//! `SO_REUSEADDR` would let anyone take it over). On those systems the hand-over keeps its short
//! gap; a program of another user holding the port is named (its uid) by `tabwire doctor` and in
//! the log line of a tabwire that finds the port taken.

use std::io;

use sha2::{Digest, Sha256};

use crate::pairing::Secret;

/// The lock that makes this process the hub (held for the process's life once taken).
pub struct HubLock {
    #[cfg(target_os = "linux")]
    _socket: std::os::unix::net::UnixListener,
}

/// The hub lock's name for `port`: unguessable without the secret.
fn lock_name(secret: &Secret, port: u16) -> String {
    let digest = Sha256::digest(format!("tabwire hub lock\0{}\0{port}", secret.expose()));
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("tabwire-hub-{hex}")
}

/// Takes the hub lock of `port` if no process holds it.
pub fn try_lock_hub(secret: &Secret, port: u16) -> Option<HubLock> {
    #[cfg(target_os = "linux")]
    {
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::net::{SocketAddr, UnixListener};
        let address = SocketAddr::from_abstract_name(lock_name(secret, port)).ok()?;
        match UnixListener::bind_addr(&address) {
            Ok(socket) => Some(HubLock { _socket: socket }),
            Err(e) if e.kind() == io::ErrorKind::AddrInUse => None,
            Err(e) => {
                tracing::debug!(error = %e, "cannot take the hub lock");
                None
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = lock_name(secret, port);
        None
    }
}

/// The port, bound on 127.0.0.1 and not listening: held against other users.
pub struct HeldPort {
    socket: socket2::Socket,
}

/// Binds 127.0.0.1:`port` so that only this user's tabwires can bind it too; `Unsupported` where
/// the OS cannot restrict co-binding to one user.
pub fn hold(port: u16) -> io::Result<HeldPort> {
    #[cfg(target_os = "linux")]
    {
        use socket2::{Domain, Protocol, Socket, Type};
        let socket = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP))?;
        socket.set_reuse_port(true)?;
        let address = std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port));
        socket.bind(&address.into())?;
        Ok(HeldPort { socket })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = port;
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}

impl HeldPort {
    /// Starts listening on the held port.
    pub fn listen(self) -> io::Result<tokio::net::TcpListener> {
        // Set only now: the connections it accepts inherit it, so their TIME_WAIT remains do not
        // keep a later plain bind of the port (`tabwire doctor`, an older tabwire) out once this
        // process exits. A listening socket still conflicts with every other user's bind, while a
        // held, not listening, socket with it would let another user bind beside it.
        self.socket.set_reuse_address(true)?;
        self.socket.listen(1024)?;
        self.socket.set_nonblocking(true)?;
        tokio::net::TcpListener::from_std(self.socket.into())
    }
}

/// Who listens on 127.0.0.1:`port`, when the OS says (Linux: `/proc/net/tcp`, readable by every
/// user): the listener's user id, and whether that is this process's (effective) user.
pub fn listener_owner(port: u16) -> Option<(u32, bool)> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    // The local address as the kernel writes it: 127.0.0.1 little-endian, then the port.
    let local = format!("0100007F:{port:04X}");
    let uid = table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // sl local remote st ... uid: state 0A is LISTEN.
        (fields.get(1) == Some(&local.as_str()) && fields.get(3) == Some(&"0A"))
            .then(|| fields.get(7)?.parse::<u32>().ok())
            .flatten()
    })?;
    Some((uid, Some(uid) == effective_uid()))
}

/// This process's effective user id (`/proc/self/status`).
fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn peers_co_bind_the_port_and_only_the_listener_gets_connections() {
        let first = hold(0).unwrap();
        let port = first
            .socket
            .local_addr()
            .unwrap()
            .as_socket()
            .unwrap()
            .port();
        let second = hold(port).expect("the same user co-binds");
        // Without SO_REUSEPORT nobody binds it, this user included.
        let plain = std::net::TcpListener::bind(("127.0.0.1", port));
        assert!(
            plain.is_err(),
            "the held port was bound without SO_REUSEPORT"
        );
        // Nothing listens yet: a connection is refused.
        assert!(
            tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_err()
        );
        let listener = second.listen().unwrap();
        for _ in 0..20 {
            let _client = tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .unwrap();
            let accepted =
                tokio::time::timeout(std::time::Duration::from_secs(2), listener.accept());
            assert!(
                accepted.await.is_ok(),
                "a connection went to the socket that does not listen"
            );
        }
        drop(first);
    }

    #[test]
    fn the_owner_of_a_listener_is_found() {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        assert_eq!(listener_owner(port), Some((effective_uid().unwrap(), true)));
        drop(listener);
        assert_eq!(listener_owner(port), None);
    }

    #[test]
    fn one_process_holds_the_hub_lock_at_a_time() {
        let secret = Secret::parse(&"c3".repeat(32)).unwrap();
        let lock = try_lock_hub(&secret, 17373).expect("free");
        assert!(try_lock_hub(&secret, 17373).is_none(), "taken twice");
        let other = Secret::parse(&"c4".repeat(32)).unwrap();
        assert!(
            try_lock_hub(&other, 17373).is_some(),
            "another secret's lock is another lock"
        );
        drop(lock);
        assert!(
            try_lock_hub(&secret, 17373).is_some(),
            "freed with its holder"
        );
    }
}

//! Messages for the server waiting for the link to come up: bounded, oldest dropped first, and
//! minus what the `tools_snapshot` sent on every (re)connect already says.

use std::collections::VecDeque;

use bridge::ToServer;

/// How many messages wait at most while the server is unreachable.
pub const OUTBOX_CAPACITY: usize = 256;

#[derive(Debug, Default)]
pub struct Outbox {
    queue: VecDeque<ToServer>,
    dropped: usize,
}

impl Outbox {
    /// Queues `msg`; returns the message dropped to make room, if any.
    pub fn push(&mut self, msg: ToServer) -> Option<ToServer> {
        let dropped = if self.queue.len() >= OUTBOX_CAPACITY {
            self.dropped += 1;
            self.queue.pop_front()
        } else {
            None
        };
        self.queue.push_back(msg);
        dropped
    }

    /// Everything queued, oldest first, without the messages the snapshot supersedes.
    pub fn drain_after_snapshot(&mut self) -> Vec<ToServer> {
        self.queue
            .drain(..)
            .filter(|msg| !superseded_by_snapshot(msg))
            .collect()
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// How many messages were dropped for lack of room since the worker started.
    pub fn dropped(&self) -> usize {
        self.dropped
    }
}

/// Tab state the `tools_snapshot` restates in full, so stale copies must not follow it.
fn superseded_by_snapshot(msg: &ToServer) -> bool {
    matches!(
        msg,
        ToServer::ToolsUpdated(_)
            | ToServer::ToolsSnapshot { .. }
            | ToServer::TabClosed { .. }
            | ToServer::TabNavigated { .. }
            | ToServer::Hello { .. }
            | ToServer::Ping { .. }
            | ToServer::Pong { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(n: usize) -> ToServer {
        ToServer::CallToolResult {
            id: n.to_string(),
            result: json!(n),
            navigated: None,
        }
    }

    #[test]
    fn drops_oldest_when_full() {
        let mut outbox = Outbox::default();
        for n in 0..OUTBOX_CAPACITY {
            assert!(outbox.push(result(n)).is_none());
        }
        assert_eq!(outbox.push(result(999)), Some(result(0)));
        assert_eq!(outbox.dropped(), 1);
        let drained = outbox.drain_after_snapshot();
        assert_eq!(drained.len(), OUTBOX_CAPACITY);
        assert_eq!(drained[0], result(1));
        assert!(outbox.is_empty());
    }

    #[test]
    fn snapshot_supersedes_tab_state() {
        let mut outbox = Outbox::default();
        outbox.push(ToServer::TabClosed { tab: 1 });
        outbox.push(result(1));
        outbox.push(ToServer::TabFocused { tab: 2 });
        assert_eq!(
            outbox.drain_after_snapshot(),
            vec![result(1), ToServer::TabFocused { tab: 2 }]
        );
    }
}

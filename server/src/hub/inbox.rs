//! A queue of requests the hub hands to one task of its own (the grant keeper, the recorder):
//! the hub sends as frames arrive; the first task to ask takes the receiving end.

use std::sync::{Mutex, PoisonError};

use tokio::sync::mpsc;

pub struct Inbox<T> {
    sender: mpsc::UnboundedSender<T>,
    receiver: Mutex<Option<mpsc::UnboundedReceiver<T>>>,
}

impl<T> Default for Inbox<T> {
    fn default() -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        Inbox {
            sender,
            receiver: Mutex::new(Some(receiver)),
        }
    }
}

impl<T> Inbox<T> {
    /// Queues `request`; gives it back when the task that served the queue is gone.
    pub fn send(&self, request: T) -> Result<(), T> {
        self.sender.send(request).map_err(|e| e.0)
    }

    /// The receiving end, once (later calls: `None`).
    pub fn take(&self) -> Option<mpsc::UnboundedReceiver<T>> {
        self.receiver
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

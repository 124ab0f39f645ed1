//! Page tool calls waiting for the port of a runtime that is starting in their tab (issue 32):
//! after injecting the runtime, a call waits until the page's `tabwire-wake` port connects
//! (`runtime.onConnect`) and goes out on it at once, instead of looking for the port every few
//! ms. Each wait is bounded by a deadline (the glue's timer gives it up) and ends early when its
//! tab is closed. Generic over the waker (the glue's promise resolver), so it is tested on the host.

use bridge::protocol::TabId;

/// One wait, as the glue names it to give it up.
pub type WaitId = u32;

struct Waiter<W> {
    id: WaitId,
    tab: TabId,
    wake: W,
}

/// The waits, a few at most at any time: a list is smaller in wasm than a map.
pub struct PortWaits<W> {
    waiting: Vec<Waiter<W>>,
    last_id: WaitId,
}

impl<W> Default for PortWaits<W> {
    fn default() -> Self {
        PortWaits {
            waiting: Vec::new(),
            last_id: 0,
        }
    }
}

/// Why a wait ended: the glue posts the call on the new port, or sends it the slow way
/// (`tabs.sendMessage`, which says what went wrong: no runtime, a closed tab).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitEnd {
    /// A port of the tab connected: post the call on it.
    Connected,
    /// The tab was closed, or the deadline passed: stop waiting.
    GaveUp,
}

impl WaitEnd {
    /// What the glue's resolver carries (`true` for a connected port), read back after the wait.
    pub fn from_flag(connected: bool) -> Self {
        if connected {
            WaitEnd::Connected
        } else {
            WaitEnd::GaveUp
        }
    }

    pub fn flag(self) -> bool {
        self == WaitEnd::Connected
    }
}

impl<W> PortWaits<W> {
    /// A call waits for a port of `tab`; `wake` is what ends the wait.
    pub fn wait(&mut self, tab: TabId, wake: W) -> WaitId {
        self.last_id = self.last_id.wrapping_add(1);
        let id = self.last_id;
        self.waiting.push(Waiter { id, tab, wake });
        id
    }

    /// A port of `tab` connected: every call waiting for one wakes ([`WaitEnd::Connected`]).
    pub fn connected(&mut self, tab: TabId) -> Vec<W> {
        self.take(|w| w.tab == tab)
    }

    /// `tab` was closed: its waits end ([`WaitEnd::GaveUp`]).
    pub fn tab_removed(&mut self, tab: TabId) -> Vec<W> {
        self.take(|w| w.tab == tab)
    }

    /// Wait `id` is over (woken or timed out): its waker, if nothing woke it yet.
    pub fn give_up(&mut self, id: WaitId) -> Option<W> {
        self.take(|w| w.id == id).pop()
    }

    /// How many calls wait.
    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    fn take(&mut self, which: impl Fn(&Waiter<W>) -> bool) -> Vec<W> {
        let (taken, kept) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|w| which(w));
        self.waiting = kept;
        taken.into_iter().map(|w: Waiter<W>| w.wake).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connecting_port_wakes_every_call_waiting_for_its_tab_only() {
        let mut waits = PortWaits::default();
        waits.wait(7, "first call in tab 7");
        waits.wait(8, "call in tab 8");
        waits.wait(7, "second call in tab 7");
        assert_eq!(
            waits.connected(7),
            ["first call in tab 7", "second call in tab 7"]
        );
        assert_eq!(waits.len(), 1);
        assert!(waits.connected(7).is_empty(), "nothing is woken twice");
        assert_eq!(waits.connected(8), ["call in tab 8"]);
        assert!(waits.is_empty());
    }

    #[test]
    fn a_wait_given_up_at_its_deadline_leaves_the_others() {
        let mut waits = PortWaits::default();
        let late = waits.wait(7, "late");
        waits.wait(7, "other");
        assert_eq!(waits.give_up(late), Some("late"));
        assert_eq!(waits.give_up(late), None, "already gone");
        assert_eq!(waits.connected(7), ["other"]);
    }

    #[test]
    fn a_woken_wait_has_nothing_left_to_give_up() {
        let mut waits = PortWaits::default();
        let id = waits.wait(3, ());
        assert_eq!(waits.connected(3).len(), 1);
        assert_eq!(waits.give_up(id), None);
    }

    #[test]
    fn closing_a_tab_ends_its_waits() {
        let mut waits = PortWaits::default();
        waits.wait(5, "in 5");
        waits.wait(6, "in 6");
        assert_eq!(waits.tab_removed(5), ["in 5"]);
        assert_eq!(waits.len(), 1);
    }

    #[test]
    fn the_wakers_flag_reads_back_as_the_end_it_meant() {
        for end in [WaitEnd::Connected, WaitEnd::GaveUp] {
            assert_eq!(WaitEnd::from_flag(end.flag()), end);
        }
        // The deadline's timer resolves with no value, which reads as giving up.
        assert_eq!(WaitEnd::from_flag(false), WaitEnd::GaveUp);
    }
}

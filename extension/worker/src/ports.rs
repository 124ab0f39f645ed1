//! The requests the worker sent to pages over their long-lived ports (the `tabwire-wake` port
//! each page's runtime holds), and which answers it accepts: an answer counts only when it comes
//! back on the very port its request went out on, so a page cannot answer another tab's call,
//! and a port that closes gives back every request it still owed (the glue then fails them as
//! `TAB_CLOSED` or `NAVIGATED`, never leaving them to hang).

use bridge::protocol::{RequestId, TabId};

use crate::core::OnReply;

/// A port, as the glue numbers them (one number per `runtime.onConnect`).
pub type PortSerial = u32;

/// A few dozen requests at most are in flight: a list is smaller in wasm than a hash map.
#[derive(Debug, Default)]
pub struct PortRequests {
    waiting: Vec<(TabId, PortSerial, OnReply)>,
}

impl PortRequests {
    /// The id a request carries, when its answer is awaited (`call_tool`, `request_state`).
    pub fn awaited_id(on_reply: &OnReply) -> Option<&RequestId> {
        match on_reply {
            OnReply::CallTool(id) | OnReply::State(id) => Some(id),
            OnReply::InjectIfMissing | OnReply::Nothing => None,
        }
    }

    /// `on_reply`'s request went to `tab` over `port`.
    pub fn sent(&mut self, tab: TabId, port: PortSerial, on_reply: OnReply) {
        if let Some(id) = Self::awaited_id(&on_reply) {
            self.unsent(&id.clone());
            self.waiting.push((tab, port, on_reply));
        }
    }

    fn position(&self, id: &str) -> Option<usize> {
        self.waiting
            .iter()
            .position(|(_, _, r)| Self::awaited_id(r).is_some_and(|i| i == id))
    }

    /// The request went out some other way after all (posting on the port failed).
    pub fn unsent(&mut self, id: &str) {
        if let Some(i) = self.position(id) {
            self.waiting.swap_remove(i);
        }
    }

    /// An answer to `id` came on `port` of `tab`: what it answers, if that port owes it.
    pub fn answered(&mut self, id: &str, tab: TabId, port: PortSerial) -> Option<OnReply> {
        let i = self.position(id)?;
        let (t, p, _) = &self.waiting[i];
        (*t == tab && *p == port).then(|| self.waiting.swap_remove(i).2)
    }

    /// `port` closed: the requests it still owed, with their tab.
    pub fn port_closed(&mut self, port: PortSerial) -> Vec<(TabId, OnReply)> {
        let (owed, kept) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|(_, p, _)| *p == port);
        self.waiting = kept;
        owed.into_iter()
            .map(|(tab, _, on_reply): (TabId, PortSerial, OnReply)| (tab, on_reply))
            .collect()
    }

    /// The tab is gone (the core has failed its calls already): forget what it owed.
    pub fn tab_removed(&mut self, tab: TabId) {
        self.waiting.retain(|(t, _, _)| *t != tab);
    }

    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> OnReply {
        OnReply::CallTool(id.to_owned())
    }

    #[test]
    fn an_answer_counts_only_on_the_port_that_was_asked() {
        let mut requests = PortRequests::default();
        requests.sent(7, 1, call("a"));
        requests.sent(8, 2, OnReply::State("b".into()));
        // Another tab's page, or the same tab's previous page, cannot answer "a".
        assert_eq!(requests.answered("a", 8, 2), None);
        assert_eq!(requests.answered("a", 7, 3), None);
        assert_eq!(requests.answered("a", 7, 1), Some(call("a")));
        // Answered once only.
        assert_eq!(requests.answered("a", 7, 1), None);
        assert_eq!(
            requests.answered("b", 8, 2),
            Some(OnReply::State("b".into()))
        );
        assert!(requests.is_empty());
    }

    #[test]
    fn fire_and_forget_messages_are_not_awaited() {
        let mut requests = PortRequests::default();
        requests.sent(7, 1, OnReply::Nothing);
        requests.sent(7, 1, OnReply::InjectIfMissing);
        assert!(requests.is_empty());
    }

    #[test]
    fn a_closed_port_gives_back_what_it_owed_and_nothing_else() {
        let mut requests = PortRequests::default();
        requests.sent(7, 1, call("a"));
        requests.sent(7, 1, OnReply::State("s".into()));
        requests.sent(7, 2, call("b"));
        let mut owed = requests.port_closed(1);
        owed.sort_by_key(|(_, r)| format!("{r:?}"));
        assert_eq!(owed, vec![(7, call("a")), (7, OnReply::State("s".into()))]);
        assert_eq!(requests.len(), 1);
        assert!(requests.port_closed(1).is_empty());
        requests.unsent("b");
        assert!(requests.is_empty());
    }

    #[test]
    fn a_removed_tab_owes_nothing() {
        let mut requests = PortRequests::default();
        requests.sent(7, 1, call("a"));
        requests.sent(8, 2, call("b"));
        requests.tab_removed(7);
        assert!(requests.port_closed(1).is_empty());
        assert_eq!(requests.answered("b", 8, 2), Some(call("b")));
    }
}

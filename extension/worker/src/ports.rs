//! The pages' long-lived ports (the `tabwire-wake` port each page's runtime holds) and the
//! requests sent over them: which port a message to a tab goes on, and which answers count. A tab
//! has at most one port, its current document's (a message from another document of the tab
//! means the port's page is gone); an answer counts only when it comes back on the very port its
//! request went out on, so a page cannot answer another tab's call; and a port that closes gives
//! back every request it still owed (the glue then fails them as `TAB_CLOSED` or `NAVIGATED`,
//! never leaving them to hang). Generic over the port handle, so the glue keeps only the JS calls
//! and this is tested on the host.

use bridge::protocol::{RequestId, TabId};

use crate::core::OnReply;

/// A port, as the router numbers them (one number per `runtime.onConnect`).
pub type PortSerial = u32;

struct PagePort<P> {
    tab: TabId,
    serial: PortSerial,
    port: P,
    /// The document that opened it (`sender.documentId`).
    document: Option<String>,
}

/// A few dozen requests and tabs at most: lists are smaller in wasm than hash maps.
pub struct PortRouter<P> {
    ports: Vec<PagePort<P>>,
    /// Requests whose answer is awaited, with the tab and port they went to.
    waiting: Vec<(TabId, PortSerial, OnReply)>,
    last_serial: PortSerial,
}

impl<P> Default for PortRouter<P> {
    fn default() -> Self {
        PortRouter {
            ports: Vec::new(),
            waiting: Vec::new(),
            last_serial: 0,
        }
    }
}

/// The id a request carries, when its answer is awaited (`call_tool`, `request_state`).
fn awaited_id(on_reply: &OnReply) -> Option<&RequestId> {
    match on_reply {
        OnReply::CallTool(id) | OnReply::State(id) => Some(id),
        OnReply::InjectIfMissing | OnReply::Nothing => None,
    }
}

impl<P: Clone> PortRouter<P> {
    /// A page's runtime in `tab` (document `document`) connected: the tab's messages go over
    /// `port` from now on (its previous port belonged to a page that is gone). Returns the port's
    /// serial, which its messages and its disconnect are reported with.
    pub fn adopt(&mut self, tab: TabId, document: Option<String>, port: P) -> PortSerial {
        self.last_serial = self.last_serial.wrapping_add(1);
        let serial = self.last_serial;
        self.ports.retain(|p| p.tab != tab);
        self.ports.push(PagePort {
            tab,
            serial,
            port,
            document,
        });
        serial
    }

    /// A message came from `tab`'s document `document`. Only the tab's current document (`active`
    /// lifecycle, or none said) makes a port of another document stale: a page being unloaded may
    /// still send a last message after the next page's port connected.
    pub fn message_from(&mut self, tab: TabId, document: Option<&str>, lifecycle: Option<&str>) {
        let (Some(document), true) = (document, lifecycle.is_none_or(|l| l == "active")) else {
            return;
        };
        self.document_shown(tab, document);
    }

    /// `tab` shows `document` now (a message from it, or Chrome's commit of it): a port of another
    /// document belongs to a page that is gone, even while its disconnect is still on the way. (A
    /// page with no runtime yet, which the next page tool's call injects into, must not get that
    /// call on the previous page's port: the port would close and the call fail as `NAVIGATED`.)
    pub fn document_shown(&mut self, tab: TabId, document: &str) {
        self.ports
            .retain(|p| p.tab != tab || p.document.as_deref().is_none_or(|d| d == document));
    }

    /// The port a message to `tab` goes on, with its serial, the request recorded as owed by it;
    /// `None` when the message must go by `tabs.sendMessage` (no port; or the message is to inject
    /// a missing runtime, which needs sendMessage's error to tell).
    pub fn route(&mut self, tab: TabId, on_reply: &OnReply) -> Option<(PortSerial, P)> {
        if *on_reply == OnReply::InjectIfMissing {
            return None;
        }
        let port = self.ports.iter().find(|p| p.tab == tab)?;
        let routed = (port.serial, port.port.clone());
        if let Some(id) = awaited_id(on_reply) {
            let id = id.clone();
            self.forget(&id);
            self.waiting.push((tab, routed.0, on_reply.clone()));
        }
        Some(routed)
    }

    /// Posting on port `serial` failed: the message goes by `tabs.sendMessage` after all, and the
    /// port is closed (see [`PortRouter::closed`]).
    pub fn post_failed(&mut self, serial: PortSerial, on_reply: &OnReply) -> Vec<(TabId, OnReply)> {
        if let Some(id) = awaited_id(on_reply) {
            let id = id.clone();
            self.forget(&id);
        }
        self.closed(serial)
    }

    fn forget(&mut self, id: &str) {
        self.waiting
            .retain(|(_, _, r)| awaited_id(r).is_none_or(|i| i != id));
    }

    /// An answer to `id` came on port `serial` of `tab`: what it answers, if that port owes it.
    pub fn answered(&mut self, id: &str, tab: TabId, serial: PortSerial) -> Option<OnReply> {
        let i = self
            .waiting
            .iter()
            .position(|(_, _, r)| awaited_id(r).is_some_and(|i| i == id))?;
        let (t, s, _) = &self.waiting[i];
        (*t == tab && *s == serial).then(|| self.waiting.swap_remove(i).2)
    }

    /// Port `serial` closed: it is forgotten, and the requests it still owed come back, with
    /// their tab.
    pub fn closed(&mut self, serial: PortSerial) -> Vec<(TabId, OnReply)> {
        self.ports.retain(|p| p.serial != serial);
        let (owed, kept) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|(_, s, _)| *s == serial);
        self.waiting = kept;
        owed.into_iter()
            .map(|(tab, _, on_reply): (TabId, PortSerial, OnReply)| (tab, on_reply))
            .collect()
    }

    /// The tab is gone (the core has failed its calls already): its port and what it owed go.
    pub fn tab_removed(&mut self, tab: TabId) {
        self.ports.retain(|p| p.tab != tab);
        self.waiting.retain(|(t, _, _)| *t != tab);
    }

    /// How many requests wait for an answer on some port.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> OnReply {
        OnReply::CallTool(id.to_owned())
    }

    /// A router over ports that are just names.
    fn router() -> PortRouter<&'static str> {
        PortRouter::default()
    }

    #[test]
    fn messages_to_a_tab_go_over_its_current_port_and_answers_count_only_there() {
        let mut ports = router();
        let first = ports.adopt(7, Some("doc-a".into()), "port A");
        let second = ports.adopt(8, None, "port B");
        assert_eq!(ports.route(7, &call("a")), Some((first, "port A")));
        assert_eq!(
            ports.route(8, &OnReply::State("b".into())),
            Some((second, "port B"))
        );
        // Another tab's page, or the same tab's previous page, cannot answer "a".
        assert_eq!(ports.answered("a", 8, second), None);
        assert_eq!(ports.answered("a", 7, second), None);
        assert_eq!(ports.answered("a", 7, first), Some(call("a")));
        assert_eq!(ports.answered("a", 7, first), None, "answered once only");
        assert_eq!(
            ports.answered("b", 8, second),
            Some(OnReply::State("b".into()))
        );
        assert_eq!(ports.waiting(), 0);
        // Without a port, and to inject a runtime, messages go by tabs.sendMessage.
        assert_eq!(ports.route(9, &call("c")), None);
        assert_eq!(ports.route(7, &OnReply::InjectIfMissing), None);
        // Fire-and-forget messages owe nothing.
        assert!(ports.route(7, &OnReply::Nothing).is_some());
        assert_eq!(ports.waiting(), 0);
    }

    #[test]
    fn a_new_document_replaces_the_tabs_port_and_a_closed_port_gives_back_what_it_owed() {
        let mut ports = router();
        let old = ports.adopt(7, Some("doc-a".into()), "old page");
        ports.route(7, &call("a"));
        ports.route(7, &OnReply::State("s".into()));
        let new = ports.adopt(7, Some("doc-b".into()), "new page");
        assert_eq!(ports.route(7, &call("b")), Some((new, "new page")));
        let mut owed = ports.closed(old);
        owed.sort_by_key(|(_, r)| format!("{r:?}"));
        assert_eq!(owed, vec![(7, call("a")), (7, OnReply::State("s".into()))]);
        assert!(ports.closed(old).is_empty());
        assert_eq!(ports.waiting(), 1);
        assert_eq!(ports.route(7, &call("c")), Some((new, "new page")));
    }

    #[test]
    fn a_message_from_the_tabs_other_active_document_makes_its_port_stale() {
        let mut ports = router();
        ports.adopt(7, Some("doc-a".into()), "port");
        // A page being unloaded may still speak: only an active document counts.
        ports.message_from(7, Some("doc-b"), Some("pending_deletion"));
        ports.message_from(7, Some("doc-a"), Some("active"));
        ports.message_from(8, Some("doc-b"), None);
        assert!(ports.route(7, &call("a")).is_some());
        ports.message_from(7, Some("doc-b"), Some("active"));
        assert_eq!(ports.route(7, &call("b")), None);
    }

    #[test]
    fn a_committed_document_makes_the_previous_documents_port_stale_before_it_disconnects() {
        let mut ports = router();
        let old = ports.adopt(7, Some("doc-a".into()), "old page");
        ports.route(7, &call("a"));
        ports.adopt(8, Some("doc-c".into()), "other tab");
        ports.document_shown(7, "doc-a");
        assert!(ports.route(7, &call("b")).is_some(), "the same document");
        ports.document_shown(7, "doc-b");
        assert_eq!(
            ports.route(7, &call("c")),
            None,
            "the new page has no port yet: the call goes by injecting and sendMessage"
        );
        assert!(
            ports.route(8, &call("d")).is_some(),
            "other tabs keep theirs"
        );
        let mut owed = ports.closed(old);
        owed.sort_by_key(|(_, r)| format!("{r:?}"));
        assert_eq!(
            owed,
            vec![(7, call("a")), (7, call("b"))],
            "what it owed still comes back"
        );
    }

    #[test]
    fn a_failed_post_goes_another_way_and_closes_the_port() {
        let mut ports = router();
        let serial = ports.adopt(7, None, "broken");
        ports.route(7, &call("x"));
        ports.route(7, &call("a"));
        let owed = ports.post_failed(serial, &call("a"));
        assert_eq!(
            owed,
            vec![(7, call("x"))],
            "the failed one is not owed: it goes by sendMessage"
        );
        assert_eq!(ports.route(7, &call("b")), None);
    }

    #[test]
    fn a_removed_tab_owes_nothing() {
        let mut ports = router();
        let seven = ports.adopt(7, None, "seven");
        let eight = ports.adopt(8, None, "eight");
        ports.route(7, &call("a"));
        ports.route(8, &call("b"));
        ports.tab_removed(7);
        assert!(ports.closed(seven).is_empty());
        assert_eq!(ports.route(7, &call("c")), None);
        assert_eq!(ports.answered("b", 8, eight), Some(call("b")));
    }
}

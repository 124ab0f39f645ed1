//! Which loads get their runtime early (issue 32). A page's runtime compiles its wasm once the
//! page has loaded (`extension/content.js`), so a person's load is not slowed by it; a load
//! Tabwire set off is hurried instead: a call waits on it or follows it at once (an act's
//! navigation, `browser_open`, a call held while its tab loads). Those are the loads of a tab a
//! request went to lately, and the load a held request waits for. Part of [`Core`]; host-tested
//! with it.

use std::collections::HashMap;

use bridge::protocol::TabId;

use super::{Action, Core};

/// How long after a request went to a tab its loads are taken for Tabwire's: a slow server's
/// answer to a form's post commits seconds after the call that sent it.
pub const DRIVEN_FOR_MS: f64 = 30_000.0;

/// When a request last went to each tab.
#[derive(Default, Debug)]
pub(super) struct Driven {
    last_request_ms: HashMap<TabId, f64>,
}

impl Core {
    /// A request goes to `tab`, or waits for its page: a load there hurries (`held`: now, the
    /// load it waits for, once that has committed).
    pub(super) fn driving(&mut self, tab: TabId, held: bool, actions: &mut Vec<Action>) {
        self.driven.last_request_ms.insert(tab, self.now_ms());
        if held && self.load_committed(tab) {
            actions.push(self.hurry(tab));
        }
    }

    /// `tab` was just opened for a request (`browser_open` without a tab): its first load is
    /// Tabwire's, and may have committed before the worker heard of the tab.
    pub fn on_tab_opened(&mut self, tab: TabId) -> Vec<Action> {
        let mut actions = Vec::new();
        self.driving(tab, true, &mut actions);
        actions
    }

    /// A new document committed in `tab`: hurried when the load is Tabwire's.
    pub(super) fn hurry_if_driven(&self, tab: TabId, actions: &mut Vec<Action>) {
        let now = self.now_ms();
        if self
            .driven
            .last_request_ms
            .get(&tab)
            .is_some_and(|at| now - at <= DRIVEN_FOR_MS)
        {
            actions.push(self.hurry(tab));
        }
    }

    pub(super) fn forget_driven(&mut self, tab: TabId) {
        self.driven.last_request_ms.remove(&tab);
    }

    fn hurry(&self, tab: TabId) -> Action {
        Action::HurryRuntime {
            tab,
            document: self.shown_document(tab).map(str::to_owned),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::connected_with_tab_3;
    use super::super::{NavEvent, OnReply};
    use super::*;

    fn call(core: &mut Core, id: &str, tab: TabId) -> Vec<Action> {
        let call = json!({"type":"call_tool","id":id,"tab":tab,"tool":"todomvc_list_todos",
                          "args":{},"timeout_ms":5000});
        core.on_server_frame(&call.to_string())
    }

    fn load(core: &mut Core, tab: TabId, document: &str) -> Vec<Action> {
        let url = "http://127.0.0.1/next";
        core.on_navigation(
            tab,
            NavEvent::Before {
                url: url.into(),
                at_ms: None,
            },
        );
        core.on_navigation(
            tab,
            NavEvent::Committed {
                url: url.into(),
                document: Some(document.into()),
            },
        )
    }

    fn hurried(actions: &[Action]) -> Vec<(TabId, Option<&str>)> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::HurryRuntime { tab, document } => Some((*tab, document.as_deref())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_load_after_a_request_is_hurried_and_a_persons_load_is_not() {
        let mut core = connected_with_tab_3();
        core.set_clock(1000.0);
        assert!(
            hurried(&load(&mut core, 3, "d1")).is_empty(),
            "no request went to tab 3"
        );

        call(&mut core, "c1", 3);
        core.set_clock(1000.0 + DRIVEN_FOR_MS);
        assert_eq!(hurried(&load(&mut core, 3, "d2")), [(3, Some("d2"))]);

        core.set_clock(1001.0 + 2.0 * DRIVEN_FOR_MS);
        assert!(
            hurried(&load(&mut core, 3, "d3")).is_empty(),
            "the request is long past"
        );
    }

    #[test]
    fn a_request_held_for_a_committed_load_hurries_it_at_once() {
        let mut core = connected_with_tab_3();
        core.set_clock(1000.0);
        load(&mut core, 3, "d1");
        assert!(
            core.is_loading(3),
            "its runtime has not announced the page yet"
        );
        let actions = call(&mut core, "c1", 3);
        assert_eq!(hurried(&actions), [(3, Some("d1"))]);
        assert!(
            !actions.iter().any(|a| matches!(
                a,
                Action::ToTab {
                    on_reply: OnReply::CallTool(_),
                    ..
                }
            )),
            "the call waits for the page: {actions:?}"
        );
    }

    #[test]
    fn a_tab_opened_for_a_request_is_hurried_whether_its_load_committed_before_or_after() {
        let mut core = connected_with_tab_3();
        core.set_clock(1000.0);
        assert!(
            hurried(&core.on_tab_opened(7)).is_empty(),
            "nothing committed yet"
        );
        assert_eq!(hurried(&load(&mut core, 7, "d7")), [(7, Some("d7"))]);

        assert!(hurried(&load(&mut core, 8, "d8")).is_empty());
        assert_eq!(hurried(&core.on_tab_opened(8)), [(8, Some("d8"))]);
    }

    #[test]
    fn a_closed_tab_is_forgotten() {
        let mut core = connected_with_tab_3();
        core.set_clock(1000.0);
        call(&mut core, "c1", 3);
        core.on_tab_removed(3);
        assert!(hurried(&load(&mut core, 3, "d2")).is_empty());
    }
}

//! The browser tabs the hub knows, and the choices made among them: which tab a call goes to
//! (an explicit one must offer the tool; else the highest-ranked offering it), which tool of a
//! name MCP clients see (the highest-ranked tab's), and the order `browser_tabs` lists them in.
//! A tab ranks by when it was last focused, then by when it last registered its tools.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use bridge::protocol::{RuntimeKind, ToolSpec};
use bridge::{TabId, WireError};

use super::{ConnId, text};

/// A tab and what it offers.
#[derive(Debug, Clone)]
pub struct Tab {
    pub conn: ConnId,
    pub url: String,
    pub title: String,
    pub tools: Vec<Arc<ToolSpec>>,
    pub runtime: Option<RuntimeKind>,
    /// Clock of the last `tab_focused` (0: never).
    pub focused_at: u64,
    /// Clock of the last registration of its tools.
    pub registered_at: u64,
}

impl Tab {
    /// Per-site calls without `tab_id` go to the highest rank: the most recently focused
    /// tab, else the most recently registered.
    pub fn rank(&self) -> (u64, u64) {
        (self.focused_at, self.registered_at)
    }

    pub fn offers(&self, tool: &str) -> bool {
        self.tools.iter().any(|t| t.name == tool)
    }

    pub fn tool_names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.name.clone()).collect()
    }
}

/// The tab a call of `tool` goes to: `explicit` if given (it must offer the tool), else the
/// highest-ranked tab offering it among those the caller may use now (`usable`: not another
/// agent's, not waiting for the person), or the highest-ranked one when it may use none (its
/// call is then refused naming why). `closed` says whether a tab closed lately.
pub fn select(
    tabs: &HashMap<TabId, Tab>,
    closed: impl Fn(TabId) -> bool,
    usable: impl Fn(TabId) -> bool,
    tool: &str,
    explicit: Option<TabId>,
) -> Result<(TabId, ConnId), WireError> {
    if let Some(id) = explicit {
        let tab = tabs
            .get(&id)
            .ok_or_else(|| text::unknown_tab(id, closed(id)))?;
        if !tab.offers(tool) {
            return Err(text::tab_does_not_offer(id, tool));
        }
        return Ok((id, tab.conn));
    }
    let offering: Vec<(&TabId, &Tab)> = tabs.iter().filter(|(_, t)| t.offers(tool)).collect();
    // A page's own tool is named from its origin; should two origins ever offer one name (a
    // page that ground its name's tag), a call without `tab_id` goes to neither: it never
    // carries one site's arguments to another (issue 26).
    let page_registered = offering.iter().any(|(_, t)| {
        t.tools
            .iter()
            .any(|spec| spec.name == tool && spec.adapter == bridge::webmcp::ADAPTER)
    });
    if page_registered {
        let origins: std::collections::BTreeSet<Option<String>> = offering
            .iter()
            .map(|(_, t)| bridge::origin::text_of(&t.url))
            .collect();
        if origins.len() > 1 {
            return Err(text::several_origins_offer(
                tool,
                origins.into_iter().flatten().collect(),
            ));
        }
    }
    offering
        .into_iter()
        .max_by_key(|(id, t)| (usable(**id), t.rank(), **id))
        .map(|(id, t)| (*id, t.conn))
        .ok_or_else(|| text::no_tab_offers(tool))
}

/// The tools offered to MCP clients, one per name: the highest-ranked tab's.
pub fn exported(tabs: &HashMap<TabId, Tab>) -> BTreeMap<String, Arc<ToolSpec>> {
    let mut ranked: Vec<(&TabId, &Tab)> =
        tabs.iter().filter(|(_, t)| !t.tools.is_empty()).collect();
    ranked.sort_by_key(|(id, t)| std::cmp::Reverse((t.rank(), **id)));
    let mut exported = BTreeMap::new();
    for (_, tab) in ranked {
        for tool in &tab.tools {
            exported
                .entry(tool.name.clone())
                .or_insert_with(|| tool.clone());
        }
    }
    exported
}

/// Every tab, the one calls go to by default first, and that one if it was ever focused.
pub fn ranked(tabs: &HashMap<TabId, Tab>) -> (Vec<(TabId, &Tab)>, Option<TabId>) {
    let mut list: Vec<(TabId, &Tab)> = tabs.iter().map(|(id, t)| (*id, t)).collect();
    list.sort_by_key(|(id, t)| (std::cmp::Reverse(t.rank()), *id));
    let focused = list
        .first()
        .filter(|(_, t)| t.focused_at > 0)
        .map(|(id, _)| *id);
    (list, focused)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bridge::ErrorCode;
    use serde_json::json;

    fn spec(name: &str, description: &str) -> Arc<ToolSpec> {
        Arc::new(ToolSpec {
            name: name.into(),
            adapter: name.split('_').next().unwrap().into(),
            description: description.into(),
            title: None,
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: Default::default(),
        })
    }

    fn tab(tools: &[Arc<ToolSpec>], focused_at: u64, registered_at: u64) -> Tab {
        Tab {
            conn: 1,
            url: String::new(),
            title: String::new(),
            tools: tools.to_vec(),
            runtime: None,
            focused_at,
            registered_at,
        }
    }

    #[test]
    fn calls_go_to_the_most_recently_focused_then_registered_tab_offering_the_tool() {
        let a = spec("todomvc_a", "1");
        let b = spec("todomvc_b", "2");
        let mut tabs = HashMap::new();
        tabs.insert(1, tab(std::slice::from_ref(&a), 0, 1));
        tabs.insert(2, tab(&[a.clone(), b.clone()], 0, 2));
        let never_closed = |_| false;
        let all_usable = |_| true;
        assert_eq!(
            select(&tabs, never_closed, all_usable, "todomvc_a", None),
            Ok((2, 1))
        );
        tabs.get_mut(&1).unwrap().focused_at = 3;
        assert_eq!(
            select(&tabs, never_closed, all_usable, "todomvc_a", None),
            Ok((1, 1))
        );
        assert_eq!(
            select(&tabs, never_closed, all_usable, "todomvc_b", None),
            Ok((2, 1))
        );
        assert_eq!(
            select(&tabs, never_closed, all_usable, "todomvc_a", Some(2)),
            Ok((2, 1))
        );
        let err = select(&tabs, never_closed, all_usable, "todomvc_b", Some(1)).unwrap_err();
        assert_eq!(err, text::tab_does_not_offer(1, "todomvc_b"));
        let err = select(&tabs, never_closed, all_usable, "todomvc_c", None).unwrap_err();
        assert_eq!(err, text::no_tab_offers("todomvc_c"));
        assert_eq!(
            select(&tabs, |t| t == 9, all_usable, "todomvc_a", Some(9))
                .unwrap_err()
                .code,
            ErrorCode::TabClosed
        );
        assert_eq!(
            select(&tabs, never_closed, all_usable, "todomvc_a", Some(8))
                .unwrap_err()
                .code,
            ErrorCode::NoSuchTab
        );

        // Issue 28: without `tab_id`, a tab the caller may use goes before a higher-ranked one it
        // may not (another agent's); with none usable, the best one (its call is refused).
        let not_tab_1 = |t| t != 1;
        assert_eq!(
            select(&tabs, never_closed, not_tab_1, "todomvc_a", None),
            Ok((2, 1))
        );
        assert_eq!(
            select(&tabs, never_closed, |_| false, "todomvc_a", None),
            Ok((1, 1))
        );

        let (list, focused) = ranked(&tabs);
        assert_eq!(list.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(focused, Some(1));
    }

    /// Issue 26: a page tool name offered by tabs of two origins goes to neither without
    /// `tab_id`; with it, to the tab named.
    #[test]
    fn a_page_tool_of_two_origins_is_called_only_with_its_tab() {
        let t = spec("webmcp_mail_google_test_abcdefg_send", "");
        let mut tabs = HashMap::new();
        let mut victim = tab(std::slice::from_ref(&t), 1, 1);
        victim.url = "https://mail.google.test/inbox".into();
        let mut attacker = tab(std::slice::from_ref(&t), 5, 2);
        attacker.url = "https://mail-google.test/".into();
        tabs.insert(1, victim.clone());
        let never_closed = |_| false;
        let all_usable = |_| true;
        assert_eq!(
            select(&tabs, never_closed, all_usable, &t.name, None),
            Ok((1, 1))
        );
        // Another tab of the victim's origin (ranked lower) is no ambiguity.
        let mut same_origin = tab(std::slice::from_ref(&t), 0, 0);
        same_origin.url = "https://mail.google.test/other".into();
        tabs.insert(3, same_origin);
        assert_eq!(
            select(&tabs, never_closed, all_usable, &t.name, None),
            Ok((1, 1))
        );
        tabs.insert(2, attacker);
        let refused = select(&tabs, never_closed, all_usable, &t.name, None).unwrap_err();
        assert_eq!(refused.code, ErrorCode::InvalidArgs);
        assert!(
            refused.message.contains("https://mail-google.test"),
            "{refused:?}"
        );
        assert_eq!(
            select(&tabs, never_closed, all_usable, &t.name, Some(1)),
            Ok((1, 1))
        );
    }

    #[test]
    fn clients_see_each_tool_once_from_the_highest_ranked_tab() {
        let mut tabs = HashMap::new();
        tabs.insert(1, tab(&[spec("webmcp_x_t", "tab one's")], 5, 1));
        tabs.insert(
            2,
            tab(&[spec("webmcp_x_t", "tab two's"), spec("a_b", "")], 0, 9),
        );
        tabs.insert(3, tab(&[], 9, 9));
        let exported = exported(&tabs);
        assert_eq!(exported.keys().collect::<Vec<_>>(), ["a_b", "webmcp_x_t"]);
        assert_eq!(exported["webmcp_x_t"].description, "tab one's");
        let (_, focused) = ranked(&tabs);
        assert_eq!(
            focused,
            Some(3),
            "a tab without tools can be the focused one"
        );
    }
}

//! Each agent's tabs in a Chrome tab group titled with its name (issue 28), so the person sees
//! at a glance who works where. The hub's `agents` list is the truth: a tab an agent holds is in
//! its group, a tab we grouped that no agent holds any more leaves its group (and stays open). A
//! stopped agent's group says so in its title. Tabs the person grouped are left alone. A browser
//! without tab groups groups nothing (each attempt logged): the popup still lists who holds what.
//!
//! Chrome's calls are asynchronous: lists are applied one at a time, and a list that arrives
//! meanwhile replaces any other still waiting (only the latest matters).

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};

use bridge::agents::AgentView;
use bridge::protocol::TabId;
use wasm_bindgen_futures::{JsFuture, spawn_local};

use super::chrome::{self, error_text, from_json};
use super::state::log;

thread_local! {
    /// The group each agent's tabs are in, by agent name.
    static GROUPS: RefCell<HashMap<String, f64>> = RefCell::new(HashMap::new());
    /// The tabs we put in a group.
    static GROUPED: RefCell<HashSet<TabId>> = RefCell::new(HashSet::new());
    /// The latest list not applied yet.
    static LATEST: RefCell<Option<Vec<AgentView>>> = const { RefCell::new(None) };
    static APPLYING: Cell<bool> = const { Cell::new(false) };
}

/// Shows `agents` as tab groups (soon: after the list being applied, if any).
pub fn show(agents: Vec<AgentView>) {
    LATEST.with(|latest| latest.replace(Some(agents)));
    if !APPLYING.with(|applying| applying.replace(true)) {
        spawn_local(apply_latest());
    }
}

async fn apply_latest() {
    while let Some(agents) = LATEST.with(|latest| latest.take()) {
        apply(&agents).await;
    }
    APPLYING.with(|applying| applying.set(false));
}

async fn apply(agents: &[AgentView]) {
    let held: HashSet<TabId> = agents.iter().flat_map(|a| a.tabs.iter().copied()).collect();
    let released: Vec<TabId> = GROUPED.with(|grouped| {
        let mut grouped = grouped.borrow_mut();
        let released = grouped
            .iter()
            .copied()
            .filter(|t| !held.contains(t))
            .collect();
        grouped.retain(|t| held.contains(t));
        released
    });
    if !released.is_empty() {
        // A closed tab fails the call: ungroup the others one by one then.
        if settle(chrome::tabs_ungroup(&ids(&released))).await.is_err() {
            for tab in released {
                let _ = settle(chrome::tabs_ungroup(&ids(&[tab]))).await;
            }
        }
    }
    for agent in agents.iter().filter(|a| !a.tabs.is_empty()) {
        let Some(group) = group_tabs(&agent.name, &agent.tabs).await else {
            continue;
        };
        GROUPS.with(|groups| groups.borrow_mut().insert(agent.name.clone(), group));
        GROUPED.with(|grouped| grouped.borrow_mut().extend(agent.tabs.iter().copied()));
        let title = match agent.stopped {
            true => format!("{} (stopped)", agent.name),
            false => agent.name.clone(),
        };
        let properties = serde_json::json!({"title": title}).to_string();
        if let Err(e) = settle(chrome::tab_groups_update(group, &from_json(&properties))).await {
            log(&format!(
                "naming {}'s tab group: {}",
                agent.name,
                error_text(&e)
            ));
        }
    }
    let live: HashSet<&str> = agents.iter().map(|a| a.name.as_str()).collect();
    GROUPS.with(|groups| {
        groups
            .borrow_mut()
            .retain(|name, _| live.contains(name.as_str()))
    });
}

/// Puts `tabs` in agent `name`'s group (a new one when it has none, or its old one is gone);
/// the group's id.
async fn group_tabs(name: &str, tabs: &[TabId]) -> Option<f64> {
    let existing = GROUPS.with(|groups| groups.borrow().get(name).copied());
    if let Some(group) = existing {
        let options = serde_json::json!({"tabIds": tabs, "groupId": group}).to_string();
        if let Ok(id) = settle(chrome::tabs_group(&from_json(&options))).await {
            return id.as_f64();
        }
    }
    let options = serde_json::json!({"tabIds": tabs}).to_string();
    match settle(chrome::tabs_group(&from_json(&options))).await {
        Ok(id) => id.as_f64(),
        Err(e) => {
            log(&format!("grouping {name}'s tabs: {}", error_text(&e)));
            None
        }
    }
}

/// The outcome of a call that may throw at once (no such API) or reject later.
async fn settle(
    call: Result<js_sys::Promise, wasm_bindgen::JsValue>,
) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue> {
    JsFuture::from(call?).await
}

fn ids(tabs: &[TabId]) -> wasm_bindgen::JsValue {
    from_json(&serde_json::to_string(tabs).unwrap_or_default())
}

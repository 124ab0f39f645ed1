//! What MCP clients learn about a tab's adapter state, independent of rmcp: the reports of the
//! `site_state` meta-tool (cache by default, the page on `force_refresh`, the cache again with
//! a note when the page fails), the URIs of the tab and state resources, and the cap on the
//! size of what a result may carry.

use std::time::Duration;

use bridge::{TabId, WireError};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::hub::{CachedState, Hub, StateSource};

/// The resource listing every tab.
pub const TABS_URI: &str = "tabwire://tabs";

/// The template of a tab's state resource.
pub const STATE_URI_TEMPLATE: &str = "tabwire://tabs/{tab_id}/state";

/// Results larger than this (as compact JSON) are replaced by a note saying so.
pub const MAX_RESULT_BYTES: usize = 256 * 1024;

/// The URI of `tab`'s state resource.
pub fn state_uri(tab: TabId) -> String {
    format!("tabwire://tabs/{tab}/state")
}

/// A resource URI tabwire serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceUri {
    Tabs,
    State(TabId),
}

impl ResourceUri {
    pub fn parse(uri: &str) -> Option<ResourceUri> {
        if uri == TABS_URI {
            return Some(ResourceUri::Tabs);
        }
        let id = uri
            .strip_prefix("tabwire://tabs/")?
            .strip_suffix("/state")?;
        // Only canonical decimal ids: one URI per resource, so subscriptions match updates.
        if id.is_empty()
            || !id.bytes().all(|b| b.is_ascii_digit())
            || id.len() > 1 && id.starts_with('0')
        {
            return None;
        }
        id.parse().ok().map(ResourceUri::State)
    }
}

/// `site_state`'s answer for `tab`: the cache unless `force_refresh` (or there is none), the
/// page otherwise, and the cache with a note when the page fails.
pub async fn site_state(hub: &Hub, tab: TabId, force_refresh: bool) -> Result<Value, WireError> {
    let cached = hub.cached_state(tab);
    if !force_refresh && let Some(cached) = &cached {
        return Ok(report(tab, cached, Instant::now(), None));
    }
    let fresh = hub.request_state(tab).await;
    resolve(tab, fresh, cached, Instant::now())
}

/// Chooses between a fresh answer and the cache.
fn resolve(
    tab: TabId,
    fresh: Result<Value, WireError>,
    cached: Option<CachedState>,
    now: Instant,
) -> Result<Value, WireError> {
    match (fresh, cached) {
        (Ok(state), _) => Ok(json!({"tab_id": tab, "state": state, "source": "page", "age_ms": 0})),
        (Err(error), Some(cached)) => {
            let note = format!("the page did not answer ({error}); this is the cached state");
            Ok(report(tab, &cached, now, Some(note)))
        }
        (Err(error), None) => Err(WireError::new(
            error.code,
            format!(
                "tab {tab} has no cached state and its page did not answer: {}",
                error.message
            ),
        )),
    }
}

fn report(tab: TabId, cached: &CachedState, now: Instant, note: Option<String>) -> Value {
    let age = now.saturating_duration_since(cached.received);
    let mut report = json!({
        "tab_id": tab,
        "state": cached.state,
        "source": "cache",
        "age_ms": millis(age),
        "cached_from": match cached.source {
            StateSource::Push => "state_update",
            StateSource::Page => "page",
        },
    });
    if cached.page_ts > 0 {
        report["page_ts"] = json!(cached.page_ts);
    }
    let closed = cached
        .tab_closed
        .then(|| format!("tab {tab} was closed; this is the last state it reported"));
    let notes: Vec<String> = closed.into_iter().chain(note).collect();
    if cached.tab_closed {
        report["tab_closed"] = json!(true);
    }
    if !notes.is_empty() {
        report["note"] = json!(notes.join("; "));
    }
    report
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// A result too large for a model's context is replaced by a note with its size and the
/// start of its text; `None` when it fits.
pub fn cap(value: &Value, text: &str) -> Option<(Value, String)> {
    if text.len() <= MAX_RESULT_BYTES {
        return None;
    }
    let mut end = MAX_RESULT_BYTES / 16;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let note = format!(
        "the result was {} bytes, more than the {MAX_RESULT_BYTES} a result may carry; it was cut \
         (ask for less, e.g. with a narrower query)",
        text.len()
    );
    let kind = match value {
        Value::Array(items) => format!("an array of {} items", items.len()),
        Value::Object(map) => format!("an object with {} keys", map.len()),
        _ => "a scalar".to_owned(),
    };
    let structured = json!({"truncated": true, "bytes": text.len(), "shape": kind, "note": note,
                            "preview": &text[..end]});
    Some((structured, format!("{}… [{note}]", &text[..end])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bridge::ErrorCode;

    fn cached(source: StateSource, age: Duration, now: Instant) -> CachedState {
        CachedState {
            state: json!({"todos": 2}),
            page_ts: 1_700_000_000_000,
            received: now - age,
            source,
            tab_closed: false,
        }
    }

    #[test]
    fn resource_uris_round_trip_and_reject_lookalikes() {
        assert_eq!(ResourceUri::parse(TABS_URI), Some(ResourceUri::Tabs));
        assert_eq!(
            ResourceUri::parse(&state_uri(42)),
            Some(ResourceUri::State(42))
        );
        for bad in [
            "tabwire://tabs/",
            "tabwire://tabs//state",
            "tabwire://tabs/x/state",
            "tabwire://tabs/-1/state",
            "tabwire://tabs/007/state",
            "tabwire://tabs/1/state/x",
            "tabwire://tab/1/state",
            "http://tabs/1/state",
            "tabwire://tabs/99999999999999999999999/state",
        ] {
            assert_eq!(ResourceUri::parse(bad), None, "{bad}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_fresh_answer_wins_and_a_failed_page_falls_back_to_the_cache_with_a_note() {
        let now = Instant::now();
        let fresh = resolve(3, Ok(json!({"todos": 5})), None, now).unwrap();
        assert_eq!(
            fresh,
            json!({"tab_id": 3, "state": {"todos": 5}, "source": "page", "age_ms": 0})
        );

        let failed = || Err(WireError::new(ErrorCode::Timeout, "no answer"));
        let old = cached(StateSource::Push, Duration::from_millis(1500), now);
        let fallback = resolve(3, failed(), Some(old), now).unwrap();
        assert_eq!(fallback["source"], "cache");
        assert_eq!(fallback["age_ms"], 1500);
        assert_eq!(fallback["state"], json!({"todos": 2}));
        assert_eq!(fallback["cached_from"], "state_update");
        assert!(
            fallback["note"]
                .as_str()
                .unwrap()
                .contains("TIMEOUT: no answer"),
            "{fallback}"
        );

        let nothing = resolve(3, failed(), None, now).unwrap_err();
        assert_eq!(nothing.code, ErrorCode::Timeout);
        assert!(nothing.message.contains("no cached state"), "{nothing}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_closed_tabs_last_state_says_so_and_a_refresh_falls_back_to_it() {
        let now = Instant::now();
        let mut last = cached(StateSource::Push, Duration::from_millis(200), now);
        last.tab_closed = true;
        let read = report(4, &last, now, None);
        assert_eq!(read["tab_closed"], true);
        assert_eq!(
            read["note"],
            "tab 4 was closed; this is the last state it reported"
        );
        let closed = Err(WireError::new(ErrorCode::TabClosed, "tab 4 was closed"));
        let refreshed = resolve(4, closed, Some(last), now).unwrap();
        assert_eq!(
            (
                refreshed["source"].as_str(),
                refreshed["tab_closed"].as_bool()
            ),
            (Some("cache"), Some(true))
        );
        let note = refreshed["note"].as_str().unwrap();
        assert!(note.starts_with("tab 4 was closed; this is the last state it reported; the page did not answer (TAB_CLOSED"), "{note}");
    }

    #[test]
    fn small_results_pass_and_large_ones_are_cut_with_a_note() {
        let small = json!({"a": 1});
        assert_eq!(cap(&small, &small.to_string()), None);
        let big = json!(vec!["é".repeat(100); 5000]);
        let text = big.to_string();
        let (structured, short) = cap(&big, &text).expect("capped");
        assert_eq!(structured["truncated"], true);
        assert_eq!(structured["bytes"], text.len());
        assert_eq!(structured["shape"], "an array of 5000 items");
        assert!(short.len() < MAX_RESULT_BYTES / 8, "{}", short.len());
        assert!(short.contains("it was cut"), "{short}");
    }
}

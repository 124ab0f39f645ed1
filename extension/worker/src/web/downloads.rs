//! Each tab's downloads: `chrome.downloads.onCreated` gives each new download to a tab by
//! [`bridge::download::attribute`]'s rule (the tab showing its referrer, else one of its origin;
//! no referrer, no tab), with the origin of the document that started it, kept in
//! `chrome.storage.session` so a restarted worker still knows, until the tab closes;
//! `BrowserOp::Downloads` answers with the current state of the tab's downloads from
//! `chrome.downloads.search`, each with the origin that started it (the server lists only the
//! allowed origin's). What an item becomes is decided by the
//! pure [`download_of`], tested on the host.

use std::cell::RefCell;
use std::collections::BTreeMap;

use bridge::download::{
    Attributed, Download, DownloadList, DownloadState, OpenTab, attribute, base_name,
};
use bridge::protocol::TabId;
use bridge::{ErrorCode, WireError};
use serde_json::Value;
use wasm_bindgen_futures::{JsFuture, spawn_local};

use super::chrome::{self, error_text, from_json, get, to_json};

/// The `chrome.storage.session` key of the download → tab map.
const STORED: &str = "downloads";

thread_local! {
    /// Download id → the tab it belongs to and the origin that started it.
    static OWNERS: RefCell<BTreeMap<u64, Attributed>> = const { RefCell::new(BTreeMap::new()) };
}

/// A `DownloadItem` (as JSON) as the server reads it; `None` for one without an id or state.
pub fn download_of(item: &Value) -> Option<Download> {
    let text = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or("");
    let count = |key: &str| item.get(key).and_then(Value::as_f64).filter(|n| *n >= 0.0);
    let path = text("filename");
    let url = Some(text("finalUrl"))
        .filter(|u| !u.is_empty())
        .unwrap_or(text("url"));
    Some(Download {
        id: item.get("id")?.as_u64()?,
        file_name: if path.is_empty() {
            String::new()
        } else {
            base_name(path)
        },
        bytes: count("bytesReceived").unwrap_or(0.0) as u64,
        total_bytes: count("totalBytes").filter(|n| *n > 0.0).map(|n| n as u64),
        state: DownloadState::parse(text("state"))?,
        mime: text("mime").to_owned(),
        origin: bridge::origin::text_of(url),
        path: (!path.is_empty()).then(|| path.to_owned()),
        exists: item.get("exists").and_then(Value::as_bool).unwrap_or(true),
        // Known from the attribution (`list` fills it in), never from the item.
        started_by: None,
    })
}

/// Chrome started download `id` from `referrer` (empty when none): give it to a tab.
pub fn created(id: u64, referrer: String) {
    spawn_local(async move {
        let tabs = match JsFuture::from(chrome::tabs_query(&from_json("{}"))).await {
            Ok(tabs) => json_of(&tabs),
            Err(e) => {
                super::state::log(&format!(
                    "download {id}: listing the tabs failed: {}",
                    error_text(&e)
                ));
                return;
            }
        };
        let open: Vec<OpenTab<'_>> = tabs
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| {
                Some(OpenTab {
                    id: t.get("id")?.as_u64()?,
                    url: t.get("url")?.as_str()?,
                    active: t.get("active").and_then(Value::as_bool).unwrap_or(false),
                })
            })
            .collect();
        if let Some(owner) = attribute(&referrer, &open) {
            OWNERS.with(|o| o.borrow_mut().insert(id, owner));
            persist();
        }
    });
}

/// `tab` closed: its downloads are no tab's any more.
pub fn tab_removed(tab: TabId) {
    let had = OWNERS.with(|o| {
        let mut owners = o.borrow_mut();
        let before = owners.len();
        owners.retain(|_, owner| owner.tab != tab);
        owners.len() != before
    });
    if had {
        persist();
    }
}

/// Reads back what an earlier life of the worker attributed (what it attributed since wins).
pub async fn restore() {
    let Ok(stored) =
        JsFuture::from(chrome::session_get(&from_json(&format!("[\"{STORED}\"]")))).await
    else {
        return;
    };
    // An earlier version's `[id, tab]` pairs do not read: their downloads are no tab's.
    let pairs: Vec<(u64, Attributed)> = to_json(&get(&stored, STORED))
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    OWNERS.with(|o| {
        let mut owners = o.borrow_mut();
        for (id, owner) in pairs {
            owners.entry(id).or_insert(owner);
        }
    });
}

fn persist() {
    let pairs: Vec<(u64, Attributed)> =
        OWNERS.with(|o| o.borrow().iter().map(|(i, a)| (*i, a.clone())).collect());
    let items = serde_json::json!({ STORED: pairs }).to_string();
    let _ = chrome::session_set(&from_json(&items));
}

/// The downloads of `tab`, oldest first, as Chrome has them now (one the user removed from
/// Chrome's list is left out).
pub async fn list(tab: TabId) -> Result<DownloadList, WireError> {
    let owned: BTreeMap<u64, String> = OWNERS.with(|o| {
        o.borrow()
            .iter()
            .filter(|(_, owner)| owner.tab == tab)
            .map(|(id, owner)| (*id, owner.started_by.clone()))
            .collect()
    });
    if owned.is_empty() {
        return Ok(DownloadList::default());
    }
    let items = JsFuture::from(chrome::downloads_search(&from_json("{}")))
        .await
        .map_err(|e| {
            WireError::new(
                ErrorCode::Internal,
                format!("chrome.downloads.search failed: {}", error_text(&e)),
            )
        })?;
    let mut downloads: Vec<Download> = json_of(&items)
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(download_of)
        .filter_map(|mut d| {
            d.started_by = Some(owned.get(&d.id)?.clone());
            Some(d)
        })
        .collect();
    downloads.sort_by_key(|d| d.id);
    Ok(DownloadList { downloads })
}

fn json_of(value: &wasm_bindgen::JsValue) -> Value {
    to_json(value)
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_item_becomes_a_download_with_its_base_name_and_origin() {
        let item = json!({"id": 4, "filename": "/root/Downloads/résumé ü.bin",
            "url": "http://127.0.0.1:5/get", "finalUrl": "http://127.0.0.1:6/file",
            "bytesReceived": 256, "totalBytes": 256, "state": "complete",
            "mime": "application/octet-stream", "exists": true});
        let download = download_of(&item).unwrap();
        assert_eq!(download.file_name, "résumé ü.bin");
        assert_eq!(
            download.path.as_deref(),
            Some("/root/Downloads/résumé ü.bin")
        );
        assert_eq!(download.origin.as_deref(), Some("http://127.0.0.1:6"));
        assert_eq!((download.bytes, download.total_bytes), (256, Some(256)));
        assert_eq!(download.state, DownloadState::Complete);
        // Just started: no file name yet, size unknown (-1 or 0).
        let started = json!({"id": 5, "filename": "", "url": "data:text/plain,x",
            "bytesReceived": 0, "totalBytes": -1, "state": "in_progress", "exists": true});
        let started = download_of(&started).unwrap();
        assert_eq!(
            (
                started.file_name.as_str(),
                started.path,
                started.total_bytes
            ),
            ("", None, None)
        );
        assert_eq!(started.origin, None);
        assert_eq!(download_of(&json!({"id": 6, "state": "weird"})), None);
    }
}

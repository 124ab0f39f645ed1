//! A tab's downloads (`browser_downloads`): what the worker reports of each (`chrome.downloads`),
//! the rule that decides which tab a download belongs to, and the name a saved copy takes in the
//! user's downloads directory. Shared by the worker (which attributes and lists) and the server
//! (which shows and saves); pure, so both sides test it on the host.

use serde::{Deserialize, Serialize};

use crate::protocol::TabId;

/// One download, as [`crate::browser_ops::BrowserOp::Downloads`] answers it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Download {
    /// Chrome's download id: what `save` names.
    pub id: u64,
    /// The file's base name (as Chrome saved it).
    pub file_name: String,
    /// The bytes Chrome has written so far (all of them once complete).
    pub bytes: u64,
    /// The size the server announced, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_bytes: Option<u64>,
    pub state: DownloadState,
    #[serde(default)]
    pub mime: String,
    /// The origin the file came from (`data:` and `blob:` URLs have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Where Chrome wrote it, absolute, on this machine: the server copies it from there and
    /// never shows it to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The file is still where Chrome wrote it (`false`: the user deleted or moved it).
    #[serde(default = "yes")]
    pub exists: bool,
}

fn yes() -> bool {
    true
}

/// Chrome's `DownloadItem.state`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DownloadState {
    InProgress,
    Complete,
    Interrupted,
}

impl DownloadState {
    pub fn parse(chrome: &str) -> Option<DownloadState> {
        match chrome {
            "in_progress" => Some(DownloadState::InProgress),
            "complete" => Some(DownloadState::Complete),
            "interrupted" => Some(DownloadState::Interrupted),
            _ => None,
        }
    }
}

/// The answer to [`crate::browser_ops::BrowserOp::Downloads`]: the tab's downloads, oldest first.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct DownloadList {
    pub downloads: Vec<Download>,
}

/// An open tab as attribution sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenTab<'a> {
    pub id: TabId,
    pub url: &'a str,
    /// The selected tab of its window.
    pub active: bool,
}

/// The tab a new download belongs to. A click on a link or a form's answer names the page it
/// came from as the item's `referrer`: the tab showing exactly that URL (the selected one first,
/// when several do); else a tab of the referrer's origin (a page that changed its URL since);
/// else the tab a call last ran in (`last_acted`, a download a script started without a
/// referrer) when it is still open; else none (a download the user started elsewhere is no
/// tab's).
pub fn attribute(referrer: &str, tabs: &[OpenTab<'_>], last_acted: Option<TabId>) -> Option<TabId> {
    let pick = |matches: &dyn Fn(&OpenTab<'_>) -> bool| {
        let mut found = tabs.iter().filter(|t| matches(t));
        let first = found.clone().next()?;
        Some(found.find(|t| t.active).unwrap_or(first).id)
    };
    if !referrer.is_empty() {
        if let Some(tab) = pick(&|t| t.url == referrer) {
            return Some(tab);
        }
        if let Some(origin) = crate::webmcp::origin(referrer)
            && let Some(tab) =
                pick(&|t| crate::webmcp::origin(t.url).as_deref() == Some(origin.as_str()))
        {
            return Some(tab);
        }
    }
    last_acted.filter(|acted| tabs.iter().any(|t| t.id == *acted))
}

/// The base name of `path` as Chrome wrote it (either separator: the browser may be on Windows),
/// with nothing that could lead out of a directory: `..`, `.` and empty names become `download`.
pub fn base_name(path: &str) -> String {
    let name = path.rsplit(['/', '\\']).next().unwrap_or("").trim();
    let name: String = name.chars().filter(|c| !c.is_control()).collect();
    match name.as_str() {
        "" | "." | ".." => "download".to_owned(),
        _ => name,
    }
}

/// The `n`th name to try for a saved copy of `name`: the name itself, then `stem (1).ext`,
/// `stem (2).ext`… (as browsers name a second download of the same file).
pub fn numbered(name: &str, n: u32) -> String {
    if n == 0 {
        return name.to_owned();
    }
    match name.rfind('.').filter(|&dot| dot > 0) {
        Some(dot) => format!("{} ({n}){}", &name[..dot], &name[dot..]),
        None => format!("{name} ({n})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tab(id: TabId, url: &str, active: bool) -> OpenTab<'_> {
        OpenTab { id, url, active }
    }

    #[test]
    fn a_download_belongs_to_the_tab_showing_its_referrer() {
        let tabs = [
            tab(1, "http://127.0.0.1:8000/files", false),
            tab(2, "http://127.0.0.1:8000/files", true),
            tab(3, "http://127.0.0.1:9000/", false),
            tab(4, "http://127.0.0.1:8000/other", false),
        ];
        // Several tabs show the page: the selected one.
        assert_eq!(
            attribute("http://127.0.0.1:8000/files", &tabs, Some(3)),
            Some(2)
        );
        // The page changed its URL since: a tab of its origin.
        assert_eq!(
            attribute("http://127.0.0.1:9000/gone", &tabs, Some(1)),
            Some(3)
        );
        // No referrer (a script's download): the tab a call last ran in, if still open.
        assert_eq!(attribute("", &tabs, Some(4)), Some(4));
        assert_eq!(attribute("", &tabs, Some(99)), None);
        // A referrer no tab shows and no call: no tab's.
        assert_eq!(attribute("https://elsewhere.example/", &tabs, None), None);
        assert_eq!(
            attribute("https://elsewhere.example/", &tabs, Some(1)),
            Some(1)
        );
    }

    #[test]
    fn base_names_never_lead_out_of_a_directory() {
        assert_eq!(base_name("/home/u/Downloads/résumé ü.bin"), "résumé ü.bin");
        assert_eq!(base_name(r"C:\Users\u\Downloads\a.pdf"), "a.pdf");
        assert_eq!(base_name("/home/u/Downloads/.."), "download");
        assert_eq!(base_name("../../etc/passwd"), "passwd");
        assert_eq!(base_name("/"), "download");
        assert_eq!(base_name("a\nb.txt"), "ab.txt");
    }

    #[test]
    fn copies_are_numbered_before_the_extension() {
        assert_eq!(numbered("a.tar.gz", 0), "a.tar.gz");
        assert_eq!(numbered("a.tar.gz", 1), "a.tar (1).gz");
        assert_eq!(numbered("report.pdf", 2), "report (2).pdf");
        assert_eq!(numbered("README", 1), "README (1)");
        assert_eq!(numbered(".bashrc", 1), ".bashrc (1)");
    }

    #[test]
    fn a_download_travels_as_json_and_states_parse_chromes_names() {
        let d = Download {
            id: 7,
            file_name: "a.bin".into(),
            bytes: 3,
            total_bytes: Some(3),
            state: DownloadState::Complete,
            mime: "application/octet-stream".into(),
            origin: Some("http://127.0.0.1:1".into()),
            path: Some("/d/a.bin".into()),
            exists: true,
        };
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json["state"], "complete");
        assert_eq!(serde_json::from_value::<Download>(json).unwrap(), d);
        assert_eq!(
            DownloadState::parse("in_progress"),
            Some(DownloadState::InProgress)
        );
        assert_eq!(DownloadState::parse("paused"), None);
    }
}

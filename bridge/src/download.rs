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
    /// The origin of the document that started it (its referrer's [`crate::Origin`]), as the
    /// worker attributed it: a download is listed and saved only for that origin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_by: Option<String>,
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

impl DownloadList {
    /// The downloads a document of `origin` (the tab's allowed origin, checked by the server's
    /// gate) started: one another origin's page started in the tab before it navigated, or one
    /// attributed without knowing its document, is not that origin's to list or save.
    pub fn started_by(mut self, origin: &str) -> DownloadList {
        self.downloads
            .retain(|d| d.started_by.as_deref() == Some(origin));
        self
    }
}

/// An open tab as attribution sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenTab<'a> {
    pub id: TabId,
    pub url: &'a str,
    /// The selected tab of its window.
    pub active: bool,
}

/// Which tab a new download belongs to, and the origin of the document that started it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attributed {
    pub tab: TabId,
    /// The canonical [`crate::Origin`] of the document that started the download.
    pub started_by: String,
}

/// The tab a new download belongs to, by the document that started it: a click on a link or a
/// form's answer names that document as the item's `referrer`. The tab showing exactly that URL
/// (the selected one first, when several do); else a tab of the referrer's origin (a page that
/// changed its URL since). A download without a referrer that is a website's URL (a page with
/// `referrerpolicy="no-referrer"`, or one the user started elsewhere) is no tab's: guessing
/// (the tab a call last ran in) gave a hostile page's file to an allowed tab (issue 26).
pub fn attribute(referrer: &str, tabs: &[OpenTab<'_>]) -> Option<Attributed> {
    let started_by = crate::origin::text_of(referrer)?;
    let pick = |matches: &dyn Fn(&OpenTab<'_>) -> bool| {
        let mut found = tabs.iter().filter(|t| matches(t));
        let first = found.clone().next()?;
        Some(found.find(|t| t.active).unwrap_or(first).id)
    };
    let tab = pick(&|t| t.url == referrer).or_else(|| {
        pick(&|t| crate::origin::text_of(t.url).as_deref() == Some(started_by.as_str()))
    })?;
    Some(Attributed { tab, started_by })
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
        let to = |tab: TabId, started_by: &str| {
            Some(Attributed {
                tab,
                started_by: started_by.to_owned(),
            })
        };
        // Several tabs show the page: the selected one.
        assert_eq!(
            attribute("http://127.0.0.1:8000/files", &tabs),
            to(2, "http://127.0.0.1:8000")
        );
        // The page changed its URL since: a tab of its origin.
        assert_eq!(
            attribute("http://127.0.0.1:9000/gone", &tabs),
            to(3, "http://127.0.0.1:9000")
        );
        // Issue 26: no referrer (a hostile page's no-referrer download) is no tab's, whatever
        // tab a call last ran in; so is a referrer no tab's origin shows, or one with user info.
        assert_eq!(attribute("", &tabs), None);
        assert_eq!(attribute("https://elsewhere.example/", &tabs), None);
        assert_eq!(attribute("http://u@127.0.0.1:8000/files", &tabs), None);
    }

    #[test]
    fn a_tab_lists_only_what_a_document_of_its_origin_started() {
        let download = |id: u64, started_by: Option<&str>| Download {
            id,
            file_name: "a.bin".into(),
            bytes: 1,
            total_bytes: None,
            state: DownloadState::Complete,
            mime: String::new(),
            origin: None,
            path: None,
            exists: true,
            started_by: started_by.map(str::to_owned),
        };
        let list = DownloadList {
            downloads: vec![
                download(1, Some("http://127.0.0.1:8000")),
                download(2, Some("http://127.0.0.1:9000")),
                download(3, None),
            ],
        };
        let ids: Vec<u64> = list
            .started_by("http://127.0.0.1:8000")
            .downloads
            .iter()
            .map(|d| d.id)
            .collect();
        assert_eq!(ids, [1]);
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
            started_by: Some("http://127.0.0.1:1".into()),
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

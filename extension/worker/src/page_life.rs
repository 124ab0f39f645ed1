//! The glue's decisions about a tab's page coming and going, free of browser APIs: whether a page
//! that went away without answering a call belongs to a tab being closed (the caller should hear
//! `TAB_CLOSED`, not `NAVIGATED`), and when a page `open_tab` opened has loaded and what to report.
//! The glue looks (`chrome.tabs.get`) and waits; this says when to look and what it means.

use bridge::protocol::LoadedPage;

use crate::core::NavEvent;

/// A `webNavigation` event as `worker.js` forwards it, if it is about a tab's own page: its top
/// frame (not an `<iframe>`, not a page being prerendered or kept in the back/forward cache).
pub fn nav_event(
    kind: &str,
    frame_id: Option<f64>,
    frame_type: Option<&str>,
    lifecycle: Option<&str>,
    url: String,
    error: String,
    at_ms: Option<f64>,
) -> Option<NavEvent> {
    let top = frame_id == Some(0.0)
        && frame_type.is_none_or(|t| t == "outermost_frame")
        && lifecycle.is_none_or(|l| l == "active");
    if !top {
        return None;
    }
    Some(match kind {
        "before" => NavEvent::Before { url, at_ms },
        "committed" => NavEvent::Committed { url },
        "completed" => NavEvent::Completed { url },
        "failed" => NavEvent::Failed { url, error },
        _ => return None,
    })
}

/// How often, and how far apart, the glue looks for a tab whose page went away: closing a tab
/// tears its page down (failing the message) a moment before Chrome stops listing it, so one look
/// is not enough to tell a closed tab from a navigating one.
pub const GONE_LOOKS: u32 = 10;
pub const GONE_EVERY_MS: f64 = 30.0;

/// Whether the reply to a call needs those looks: the page went away without an answer (the
/// message failed, or it resolved with nothing, as a page torn down mid-call can).
pub fn needs_looks(reply: &Result<Option<String>, String>) -> bool {
    !matches!(reply, Ok(Some(_)))
}

/// Looking for a tab, one look after the other.
#[derive(Debug)]
pub struct GoneProbe {
    looks: u32,
}

/// What to do after a look.
#[derive(Debug, PartialEq)]
pub enum Next {
    /// Look again after this many ms.
    LookAfter(f64),
    /// The tab is gone: Chrome's message.
    Gone(String),
    /// It is still there after every look: the page navigated.
    StillThere,
}

impl Default for GoneProbe {
    fn default() -> Self {
        GoneProbe { looks: GONE_LOOKS }
    }
}

impl GoneProbe {
    /// A look found the tab (`Ok`) or Chrome said it has none (`Err`, its message).
    pub fn looked(&mut self, tab: Result<(), String>) -> Next {
        self.looks = self.looks.saturating_sub(1);
        match tab {
            Err(gone) => Next::Gone(gone),
            Ok(()) if self.looks == 0 => Next::StillThere,
            Ok(()) => Next::LookAfter(GONE_EVERY_MS),
        }
    }
}

/// The reply the core gets: a tab found gone replaces the page's silence or failure.
pub fn settle(
    reply: Result<Option<String>, String>,
    gone: Option<String>,
) -> Result<Option<String>, String> {
    match gone {
        Some(gone) => Err(gone),
        None => reply,
    }
}

/// How often the glue looks whether a page `open_tab` opened has loaded.
pub const LOAD_EVERY_MS: f64 = 50.0;

/// Whether a tab's page has finished loading: `status` is `complete` and there is no pending URL
/// (right after `tabs.update` the old page may still look complete).
pub fn loaded(status: Option<&str>, pending_url: bool) -> bool {
    status == Some("complete") && !pending_url
}

/// What to do once a page has loaded, given whether Tabwire's runtime runs there (or was asked
/// for by a WebMCP registration) and whether an adapter serves its URL.
#[derive(Debug, PartialEq)]
pub enum AfterLoad {
    Report(LoadedPage),
    /// A tab opened while the content script's registration was still under way can miss it:
    /// an adapter page must not stay without its runtime. Report whether injecting worked.
    Inject,
}

pub fn after_load(runtime: bool, adapter_matches: bool) -> AfterLoad {
    if !runtime && adapter_matches {
        AfterLoad::Inject
    } else {
        AfterLoad::Report(LoadedPage { runtime })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_gone_without_an_answer_is_looked_for_a_few_times() {
        assert!(needs_looks(&Err("message channel closed".into())));
        assert!(needs_looks(&Ok(None)));
        assert!(!needs_looks(&Ok(Some("{}".into()))));

        let mut probe = GoneProbe::default();
        for _ in 1..GONE_LOOKS {
            assert_eq!(probe.looked(Ok(())), Next::LookAfter(GONE_EVERY_MS));
        }
        assert_eq!(probe.looked(Ok(())), Next::StillThere);

        let mut probe = GoneProbe::default();
        probe.looked(Ok(()));
        assert_eq!(
            probe.looked(Err("No tab with id: 3.".into())),
            Next::Gone("No tab with id: 3.".into())
        );
    }

    #[test]
    fn a_tab_found_gone_replaces_the_pages_silence() {
        let gone = Some("No tab with id: 3.".to_owned());
        assert_eq!(
            settle(Ok(None), gone.clone()),
            Err("No tab with id: 3.".into())
        );
        assert_eq!(
            settle(Err("closed".into()), gone),
            Err("No tab with id: 3.".into())
        );
        assert_eq!(settle(Ok(None), None), Ok(None));
        assert_eq!(settle(Err("closed".into()), None), Err("closed".into()));
    }

    #[test]
    fn only_a_tabs_own_top_frame_counts() {
        let url = || "http://127.0.0.1/x".to_owned();
        assert_eq!(
            nav_event(
                "committed",
                Some(0.0),
                Some("outermost_frame"),
                Some("active"),
                url(),
                String::new(),
                None
            ),
            Some(NavEvent::Committed { url: url() })
        );
        assert_eq!(
            nav_event(
                "before",
                Some(0.0),
                None,
                None,
                url(),
                String::new(),
                Some(5.0)
            ),
            Some(NavEvent::Before {
                url: url(),
                at_ms: Some(5.0)
            })
        );
        assert_eq!(
            nav_event(
                "failed",
                Some(0.0),
                None,
                None,
                url(),
                "net::ERR_ABORTED".into(),
                None
            ),
            Some(NavEvent::Failed {
                url: url(),
                error: "net::ERR_ABORTED".into()
            })
        );
        assert_eq!(
            nav_event(
                "committed",
                Some(3.0),
                None,
                None,
                url(),
                String::new(),
                None
            ),
            None,
            "an iframe"
        );
        assert_eq!(
            nav_event(
                "committed",
                Some(0.0),
                Some("outermost_frame"),
                Some("prerender"),
                url(),
                String::new(),
                None
            ),
            None,
            "a page being prerendered"
        );
        assert_eq!(
            nav_event(
                "teleported",
                Some(0.0),
                None,
                None,
                url(),
                String::new(),
                None
            ),
            None
        );
    }

    #[test]
    fn a_loaded_page_reports_its_runtime_or_gets_it_injected() {
        assert!(loaded(Some("complete"), false));
        assert!(
            !loaded(Some("complete"), true),
            "the old page, before tabs.update took"
        );
        assert!(!loaded(Some("loading"), false));
        assert!(!loaded(None, false));
        assert_eq!(
            after_load(true, true),
            AfterLoad::Report(LoadedPage { runtime: true })
        );
        assert_eq!(
            after_load(false, false),
            AfterLoad::Report(LoadedPage { runtime: false })
        );
        assert_eq!(after_load(false, true), AfterLoad::Inject);
    }
}

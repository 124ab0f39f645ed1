//! The glue's decisions about a tab's page coming and going, free of browser APIs: whether a page
//! that went away without answering a call belongs to a tab being closed (the caller should hear
//! `TAB_CLOSED`, not `NAVIGATED`), and when a page `open_tab` opened has loaded and what to report.
//! The glue looks (`chrome.tabs.get`) and waits; this says when to look and what it means.

use bridge::protocol::LoadedPage;

use crate::core::NavEvent;

/// A `webNavigation` event's details as `worker.js` forwards them.
#[derive(Debug, Default, Clone)]
pub struct RawNav {
    /// `before`, `committed`, `completed` or `failed`.
    pub kind: String,
    pub frame_id: Option<f64>,
    pub frame_type: Option<String>,
    pub lifecycle: Option<String>,
    pub url: String,
    pub error: String,
    pub at_ms: Option<f64>,
    pub document: Option<String>,
}

/// The event, if it is about a tab's own page: its top frame (not an `<iframe>`, not a page being
/// prerendered or kept in the back/forward cache).
pub fn nav_event(raw: RawNav) -> Option<NavEvent> {
    let top = raw.frame_id == Some(0.0)
        && raw
            .frame_type
            .as_deref()
            .is_none_or(|t| t == "outermost_frame")
        && raw.lifecycle.as_deref().is_none_or(|l| l == "active");
    if !top {
        return None;
    }
    let RawNav {
        url,
        error,
        at_ms,
        document,
        ..
    } = raw;
    // A navigation that ended before it had a document (a 204, a download) names the nil
    // documentId: it is no document, least of all the one shown.
    let document = document.filter(|id| !id.bytes().all(|b| b == b'0'));
    Some(match raw.kind.as_str() {
        "before" => NavEvent::Before { url, at_ms },
        "committed" => NavEvent::Committed { url, document },
        "completed" => NavEvent::Completed { url },
        "failed" => NavEvent::Failed {
            url,
            error,
            document,
        },
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

/// A tab `open_tab` sent to `target`, as `tabs.get` shows it while the worker waits for its page.
#[derive(Debug, Clone, Copy)]
pub struct Opening<'a> {
    pub status: Option<&'a str>,
    /// Chrome's `pendingUrl` is set (Firefox has none).
    pub pending_url: bool,
    /// The URL the tab shows now.
    pub url: &'a str,
    /// The URL it showed before it was sent (`about:blank` for a new tab).
    pub before: &'a str,
    pub target: &'a str,
}

/// Whether the page `open_tab` asked for has finished loading: `complete`, with no pending URL,
/// and no longer the page shown before, unless that was the target itself (a reload). Right
/// after `tabs.create` or `tabs.update` the old page (or a new tab's `about:blank`) may still
/// look complete: Chrome says so with `pendingUrl`, Firefox only by its URL not having changed
/// yet, so the URL is what tells, in both.
pub fn loaded(tab: Opening<'_>) -> bool {
    tab.status == Some("complete")
        && !tab.pending_url
        && (tab.url != tab.before || same_page(tab.before, tab.target))
}

/// `a` and `b` name the same page as far as a tab's URL shows: the browser writes the root path
/// (`http://h/`) the caller may have left out.
fn same_page(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// What to do once a page has loaded, given whether Tabwire's runtime runs there, whether the
/// page asked for it by a WebMCP registration, whether an adapter serves its URL, and whether
/// its origin allows page tools (`preload.rs`: the runtime loads with its pages).
#[derive(Debug, PartialEq)]
pub enum AfterLoad {
    /// `runtime` in the report: tools are coming from the page (an adapter's, or the ones it
    /// registered), so `browser_open` waits briefly for them. A runtime loaded only because the
    /// origin allows page tools (`preload.rs`) announces none: nothing to wait for.
    Report(LoadedPage),
    /// A tab opened while the content script's registration was still under way can miss it:
    /// an adapter page, or an allowed origin's (whose first call would otherwise pay for
    /// loading the runtime, issue 32), must not stay without its runtime. Report whether
    /// injecting worked as `runtime` where tools are coming (`tools_coming`: an adapter's).
    Inject { tools_coming: bool },
}

pub fn after_load(
    runtime: bool,
    webmcp_asked: bool,
    adapter_matches: bool,
    preloaded: bool,
) -> AfterLoad {
    if !runtime && !webmcp_asked && (adapter_matches || preloaded) {
        AfterLoad::Inject {
            tools_coming: adapter_matches,
        }
    } else {
        AfterLoad::Report(LoadedPage {
            runtime: webmcp_asked || (runtime && adapter_matches),
        })
    }
}

/// How long `open_tab` waits, once its page has loaded, for the runtime there to warm its call
/// path up (`injector/src/page/warm.rs`), so that a call made at once after `browser_open` is as
/// fast as the next. A runtime that compiled while the page parsed starts and warms within tens
/// of ms; this bounds one still compiling on a busy machine, or one that never starts.
pub const WARM_WAIT_MS: f64 = 1500.0;

/// How long `open_tab` waits for the warm-up (`None`: not at all): only where a runtime runs
/// (loaded with the page: an adapter matched or page tools are allowed; or just injected), and
/// within what is left of its wait for the page. It never fails because of it.
pub fn warm_wait_ms(runtime: bool, left_ms: f64) -> Option<f64> {
    let wait = WARM_WAIT_MS.min(left_ms);
    (runtime && wait > 0.0).then_some(wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warm_up_is_waited_for_only_where_a_runtime_runs_and_within_the_wait() {
        assert_eq!(warm_wait_ms(false, 5000.0), None);
        assert_eq!(warm_wait_ms(true, 5000.0), Some(WARM_WAIT_MS));
        assert_eq!(warm_wait_ms(true, 200.0), Some(200.0));
        assert_eq!(
            warm_wait_ms(true, 0.0),
            None,
            "no wait left: answer at once"
        );
        assert_eq!(warm_wait_ms(true, -3.0), None);
    }

    #[test]
    fn tools_are_waited_for_only_where_an_adapter_or_the_page_brings_some() {
        let report = |runtime| AfterLoad::Report(LoadedPage { runtime });
        let inject = |tools_coming| AfterLoad::Inject { tools_coming };
        assert_eq!(after_load(false, false, true, false), inject(true));
        assert_eq!(after_load(false, false, true, true), inject(true));
        assert_eq!(after_load(true, false, true, false), report(true));
        assert_eq!(after_load(false, true, false, false), report(true));
        assert_eq!(after_load(true, true, false, false), report(true));
        // Preloaded on an allowed origin, no adapter, no WebMCP: no tools are coming.
        assert_eq!(after_load(true, false, false, true), report(false));
        assert_eq!(after_load(false, false, false, false), report(false));
        // An allowed origin's page that loaded before the runtime's registration covered it
        // gets the runtime now, and still no tools are waited for.
        assert_eq!(after_load(false, false, false, true), inject(false));
    }

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
        let url = "http://127.0.0.1/x".to_owned();
        let raw = |kind: &str| RawNav {
            kind: kind.into(),
            frame_id: Some(0.0),
            url: url.clone(),
            document: Some("d1".into()),
            at_ms: Some(5.0),
            ..RawNav::default()
        };
        assert_eq!(
            nav_event(RawNav {
                frame_type: Some("outermost_frame".into()),
                lifecycle: Some("active".into()),
                ..raw("committed")
            }),
            Some(NavEvent::Committed {
                url: url.clone(),
                document: Some("d1".into())
            })
        );
        assert_eq!(
            nav_event(raw("before")),
            Some(NavEvent::Before {
                url: url.clone(),
                at_ms: Some(5.0)
            })
        );
        assert_eq!(
            nav_event(RawNav {
                error: "net::ERR_ABORTED".into(),
                ..raw("failed")
            }),
            Some(NavEvent::Failed {
                url: url.clone(),
                error: "net::ERR_ABORTED".into(),
                document: Some("d1".into())
            })
        );
        let iframe = RawNav {
            frame_id: Some(3.0),
            ..raw("committed")
        };
        assert_eq!(nav_event(iframe), None);
        let prerendered = RawNav {
            lifecycle: Some("prerender".into()),
            ..raw("committed")
        };
        assert_eq!(nav_event(prerendered), None, "a page being prerendered");
        assert_eq!(nav_event(raw("teleported")), None);
    }

    #[test]
    fn a_navigation_that_ended_before_its_document_names_none() {
        // Chrome's onErrorOccurred for a 204 or a download, as seen in a real tab.
        let failed = RawNav {
            kind: "failed".into(),
            frame_id: Some(0.0),
            url: "http://127.0.0.1/204".into(),
            error: "net::ERR_ABORTED".into(),
            document: Some("00000000000000000000000000000000".into()),
            ..RawNav::default()
        };
        assert_eq!(
            nav_event(failed),
            Some(NavEvent::Failed {
                url: "http://127.0.0.1/204".into(),
                error: "net::ERR_ABORTED".into(),
                document: None
            })
        );
    }

    #[test]
    fn a_loaded_page_reports_its_runtime_or_gets_it_injected() {
        let target = "http://127.0.0.1:8000/b";
        let tab = Opening {
            status: Some("complete"),
            pending_url: false,
            url: target,
            before: "about:blank",
            target,
        };
        assert!(loaded(tab));
        assert!(
            !loaded(Opening {
                pending_url: true,
                ..tab
            }),
            "the old page, before tabs.update took (Chrome)"
        );
        assert!(
            !loaded(Opening {
                url: "about:blank",
                ..tab
            }),
            "a new tab before its navigation started (Firefox: no pendingUrl)"
        );
        let old = "http://127.0.0.1:8000/a";
        assert!(
            !loaded(Opening {
                url: old,
                before: old,
                ..tab
            }),
            "the old page, before tabs.update took (Firefox)"
        );
        let redirected = "http://127.0.0.1:8000/login";
        assert!(loaded(Opening {
            url: redirected,
            before: old,
            ..tab
        }));
        assert!(
            loaded(Opening {
                url: target,
                before: target,
                ..tab
            }),
            "a reload"
        );
        assert!(loaded(Opening {
            url: "http://127.0.0.1:8000/",
            before: "http://127.0.0.1:8000/",
            target: "http://127.0.0.1:8000",
            ..tab
        }));
        assert!(!loaded(Opening {
            status: Some("loading"),
            ..tab
        }));
        assert!(!loaded(Opening {
            status: None,
            ..tab
        }));
        assert_eq!(
            after_load(true, false, true, false),
            AfterLoad::Report(LoadedPage { runtime: true })
        );
        assert_eq!(
            after_load(false, false, false, false),
            AfterLoad::Report(LoadedPage { runtime: false })
        );
        assert_eq!(
            after_load(false, false, true, false),
            AfterLoad::Inject { tools_coming: true }
        );
    }
}

//! Page life, as the worker knows it: which tabs are loading another page (Chrome's
//! `webNavigation` events for the tab's top frame, and the page's own word that an action set one
//! loading), and what waits on that. A call whose last action set a page loading is answered once
//! the new document has committed ([`Core::answer_once_landed`], the one place page tools' acts
//! use too); a call whose steps remain goes on in the next page's runtime; a call, state request
//! or `open_tab` for a tab that is loading waits for the page it is going to. Every wait is
//! bounded by a timer the glue sets ([`Action::After`]). Part of [`Core`]; host-tested with it.

use std::collections::{HashMap, HashSet};

use bridge::page::ToPage;
use bridge::protocol::{RequestId, TabId};
use bridge::{ErrorCode, ToServer, WireError};
use serde_json::Value;

use super::{Action, Core, OnReply};

/// How long a page whose load completed may take to announce its tools before calls held for
/// it go to it anyway (a runtime that failed to start must not hold a tab's calls for good).
pub const ANNOUNCE_GRACE_MS: f64 = 3000.0;

/// The longest a state request or `open_tab` waits for a tab's page to finish loading.
pub const HELD_OTHER_MS: f64 = 10_000.0;

/// How long after a page said it set another page loading Chrome has to begin that load
/// (`onBeforeNavigate` comes within milliseconds); past it, the page's word was wrong and its
/// tab must not hold calls for the rest of the call's time.
pub const UNCONFIRMED_LOAD_MS: f64 = 2000.0;

/// How long requests wait for their tab's load before the worker looks at the tab itself, and
/// again after each look that found it still loading: a load whose commit the worker never heard
/// of (an event lost as the worker started, under load) must not hold them for their whole time.
pub const LOOK_MS: f64 = 1000.0;

/// A `webNavigation` event of a tab's top frame, as the glue reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum NavEvent {
    /// `onBeforeNavigate`: a new document is requested, at `at_ms` (the event's `timeStamp`:
    /// it may reach the worker after a call it began before).
    Before { url: String, at_ms: Option<f64> },
    /// `onCommitted`: the new document (`document`, Chrome's `documentId`) replaced the old one.
    Committed {
        url: String,
        document: Option<String>,
    },
    /// `onCompleted`: the new document and its resources have loaded.
    Completed { url: String },
    /// `onErrorOccurred`: the navigation to `url` failed or was aborted (a 204, a download, a
    /// stop), or, when `document` is the one shown, that document's own loading was cut short by
    /// the next navigation.
    Failed {
        url: String,
        error: String,
        document: Option<String>,
    },
}

/// What a timer the core asked for is about.
#[derive(Debug, Clone, PartialEq)]
pub enum Timer {
    /// A call waiting for the page its last action set loading to commit.
    Landing(RequestId),
    /// A call waiting for the next page's runtime to go on.
    Continuation(RequestId),
    /// A request held while its tab loads.
    Held(RequestId),
    /// A page that completed loading and has not announced its tools yet: `load` is that
    /// load's [`Load::serial`] (a timer of an earlier load of the tab must not release the calls
    /// held for a later one, whose runtime is still starting).
    Announce { tab: TabId, load: u64 },
    /// A load a page said it set off, and Chrome had not begun (`load`: as above).
    Unconfirmed { tab: TabId, load: u64 },
    /// Requests have waited [`LOOK_MS`] for `tab`'s load: time to ask Chrome whether the tab still
    /// loads ([`Action::LookAtLoad`], about the load it is on by then: one that replaced the load
    /// they first waited for is looked at as well).
    Look { tab: TabId },
    /// Time to write the tabs' copy ([`super::Core::tabs_changed`]).
    PersistTabs,
}

/// A tab loading another page.
#[derive(Debug)]
struct Load {
    url: String,
    /// Navigations Chrome started in the tab and has not ended (committed or failed) yet: a load
    /// replaced by another, even to the same URL, fails while the other goes on.
    pending: u32,
    /// When it began (`Date.now()` ms), to tell a load a call set off from one it arrived into.
    began_ms: f64,
    committed: bool,
    /// Which load of the worker's it is, for the timers that are about it.
    serial: u64,
}

/// A call that goes on in the next page.
#[derive(Debug)]
pub(super) struct Continuation {
    pub id: RequestId,
    pub tool: String,
    pub rest: ToPage,
    pub step: String,
    pub acted: bool,
    /// The origin of the page it left.
    pub from: String,
}

#[derive(Debug)]
struct Landing {
    tab: TabId,
    result: Value,
    step: String,
    url: String,
}

#[derive(Default, Debug)]
pub(super) struct Navigation {
    now_ms: f64,
    loads: HashMap<TabId, Load>,
    /// Calls sent to a page: when, and the message (sent again when it reached a page that was
    /// already leaving).
    sent: HashMap<RequestId, (f64, String)>,
    landings: HashMap<RequestId, Landing>,
    pub(super) continuations: HashMap<TabId, Continuation>,
    /// Requests waiting for their tab's page, in arrival order.
    held: HashMap<TabId, Vec<(RequestId, Action)>>,
    /// Continued calls whose leaving step acted: their failures say it may have been performed.
    pub(super) acted: HashSet<RequestId>,
    /// The document each tab shows (Chrome's `documentId` of its last commit).
    shown: HashMap<TabId, String>,
    /// How many loads began (the last one's [`Load::serial`]).
    loads_begun: u64,
}

/// The [`bridge::Origin`] of `url` as text; the whole URL when it has none (a `chrome:` page,
/// user info), so it equals no website's origin and still says what the page was.
pub fn origin(url: &str) -> String {
    bridge::origin::text_of(url).unwrap_or_else(|| url.to_owned())
}

impl Core {
    /// The time now (`Date.now()`), set by the glue before each event.
    pub fn set_clock(&mut self, now_ms: f64) {
        self.nav.now_ms = now_ms;
    }

    pub(super) fn now_ms(&self) -> f64 {
        self.nav.now_ms
    }

    /// The document `tab` shows (Chrome's `documentId` of its last commit), if known.
    pub(super) fn shown_document(&self, tab: TabId) -> Option<&str> {
        self.nav.shown.get(&tab).map(String::as_str)
    }

    /// Whether `tab` is loading another page (its calls wait for it).
    pub fn is_loading(&self, tab: TabId) -> bool {
        self.nav.loads.contains_key(&tab)
    }

    /// Whether `tab`'s load has committed (messages from the tab come from the new page).
    pub(super) fn load_committed(&self, tab: TabId) -> bool {
        self.nav.loads.get(&tab).is_some_and(|l| l.committed)
    }

    /// Sends `action` (a request `id` for `tab`) now, or holds it until the tab's page has
    /// loaded, at most `bound_ms`.
    pub(super) fn send_when_loaded(
        &mut self,
        tab: TabId,
        id: RequestId,
        action: Action,
        bound_ms: f64,
        actions: &mut Vec<Action>,
    ) {
        self.driving(tab, self.is_loading(tab), actions);
        if self.is_loading(tab) {
            actions.push(Action::After {
                ms: bound_ms,
                timer: Timer::Held(id.clone()),
            });
            let held = self.nav.held.entry(tab).or_default();
            if held.is_empty() {
                actions.push(Action::After {
                    ms: LOOK_MS,
                    timer: Timer::Look { tab },
                });
            }
            held.push((id, action));
            return;
        }
        self.note_sent(&id, &action);
        actions.push(action);
    }

    fn note_sent(&mut self, id: &str, action: &Action) {
        if let Action::ToTab {
            message,
            on_reply: OnReply::CallTool(_),
            ..
        } = action
        {
            self.nav
                .sent
                .insert(id.to_owned(), (self.nav.now_ms, message.clone()));
        }
    }

    /// A `webNavigation` event of `tab`'s top frame.
    pub fn on_navigation(&mut self, tab: TabId, event: NavEvent) -> Vec<Action> {
        let mut actions = Vec::new();
        match event {
            NavEvent::Before { url, at_ms } => {
                let began_ms = at_ms.unwrap_or(self.nav.now_ms).min(self.nav.now_ms);
                let pending = self.nav.loads.get(&tab).map_or(0, |l| l.pending) + 1;
                let serial = self.next_load_serial();
                self.nav.loads.insert(
                    tab,
                    Load {
                        url,
                        pending,
                        began_ms,
                        committed: false,
                        serial,
                    },
                );
            }
            NavEvent::Committed { url, document } => {
                self.dialogs_open.remove(&tab); // a dialog leaves with its document
                if let Some(document) = document {
                    self.nav.shown.insert(tab, document);
                }
                self.hurry_if_driven(tab, &mut actions);
                self.answer_check.committed(tab, &url);
                let serial = match self.nav.loads.get(&tab) {
                    Some(load) => load.serial,
                    None => self.next_load_serial(),
                };
                let load = self.nav.loads.entry(tab).or_insert(Load {
                    url: url.clone(),
                    pending: 1,
                    began_ms: self.nav.now_ms,
                    committed: false,
                    serial,
                });
                load.pending = load.pending.saturating_sub(1);
                load.committed = true;
                load.url = url.clone();
                self.land_all(tab, Some(&url), &mut actions);
                self.continuation_committed(tab, &url, &mut actions);
                if !self.any_adapter_matches(&url) {
                    // No runtime will announce itself there: what waits goes to the page as it is.
                    self.loaded(tab, &mut actions);
                }
            }
            NavEvent::Completed { url } => {
                // A page no adapter matches has no runtime until one is injected to record.
                self.record_in_new_page(tab, &url, &mut actions);
                let matched = self.any_adapter_matches(&url);
                let unannounced = self.load_committed(tab) || !self.tabs.contains(tab);
                if unannounced && matched {
                    // The registered content script should have started a runtime; one
                    // registered while this page was loading does not (right after connecting,
                    // under load), and nothing else would: inject it where it is missing.
                    actions.push(Action::ToTab {
                        tab,
                        message: self.adapters_message(&url),
                        on_reply: OnReply::InjectIfMissing,
                    });
                }
                if let Some(load) = self.nav.loads.get(&tab).filter(|l| l.committed) {
                    if matched {
                        actions.push(Action::After {
                            ms: ANNOUNCE_GRACE_MS,
                            timer: Timer::Announce {
                                tab,
                                load: load.serial,
                            },
                        });
                    } else {
                        self.loaded(tab, &mut actions);
                    }
                }
            }
            NavEvent::Failed {
                url,
                error,
                document,
            } => {
                // The page shown stopped loading its resources: not a navigation of ours. (A
                // document not known to be another is taken for the shown one: the load's own
                // timer then answers for it.)
                let of_shown = match (&document, self.nav.shown.get(&tab)) {
                    (Some(failed), Some(shown)) => failed == shown,
                    (Some(_), None) => true,
                    (None, _) => false,
                };
                if of_shown {
                    return actions;
                }
                let Some(load) = self.nav.loads.get_mut(&tab).filter(|l| l.url == url) else {
                    return actions;
                };
                load.pending = load.pending.saturating_sub(1);
                // Another navigation still under way (one that replaced this) decides.
                if load.pending == 0 && !load.committed {
                    // The page stays: the call's steps are done, answered as they are.
                    self.land_all(tab, None, &mut actions);
                    if let Some(c) = self.nav.continuations.remove(&tab) {
                        let error = WireError::new(
                            ErrorCode::Navigated,
                            format!(
                                "{}: loading {url} failed ({error}), so the call cannot go on there",
                                c.step
                            ),
                        );
                        self.fail_continued(c, error, &mut actions);
                    }
                    self.loaded(tab, &mut actions);
                }
            }
        }
        actions
    }

    /// `tab`'s page is there (its runtime announced itself, or none will): the held requests go.
    fn loaded(&mut self, tab: TabId, actions: &mut Vec<Action>) {
        self.nav.loads.remove(&tab);
        for (id, action) in self.nav.held.remove(&tab).unwrap_or_default() {
            self.note_sent(&id, &action);
            actions.push(action);
        }
    }

    /// The page in `tab` announced its tools: a new page's runtime is up once its load
    /// committed. Returns the continuation to send it, if a call goes on there.
    pub(super) fn page_announced(&mut self, tab: TabId, actions: &mut Vec<Action>) {
        if self.load_committed(tab) {
            self.loaded(tab, actions);
        }
    }

    /// The page's answer: call `id`'s steps are done and its last action (`step`) set a page
    /// loading (`url`, as the page saw it). The answer waits until that page has committed, at
    /// most `timeout_ms`. Page tools' acts answer through here too.
    #[allow(clippy::too_many_arguments)]
    pub fn answer_once_landed(
        &mut self,
        id: RequestId,
        tab: TabId,
        result: Value,
        step: String,
        url: String,
        timeout_ms: u64,
        actions: &mut Vec<Action>,
    ) {
        let sent_ms = self.nav.sent.get(&id).map_or(0.0, |(at, _)| *at);
        self.calls.insert(id.clone(), tab);
        self.nav.landings.insert(
            id.clone(),
            Landing {
                tab,
                result,
                step,
                url: url.clone(),
            },
        );
        match self.nav.loads.get(&tab) {
            // Chrome told of the commit before the page's answer came.
            Some(load) if load.committed && load.began_ms >= sent_ms => {
                let landed = load.url.clone();
                self.land(&id, Some(landed), actions);
            }
            Some(_) => self.wait_for(Timer::Landing(id), timeout_ms, actions),
            None => {
                let load = self.started_loading(tab, url);
                self.wait_for(Timer::Landing(id), timeout_ms, actions);
                actions.push(Action::After {
                    ms: UNCONFIRMED_LOAD_MS,
                    timer: Timer::Unconfirmed { tab, load },
                });
            }
        }
    }

    /// The page said it is leaving before Chrome did: calls that come meanwhile wait too.
    /// The tab is loading another page from now (unless it was already): that load's serial.
    fn started_loading(&mut self, tab: TabId, url: String) -> u64 {
        let began_ms = self.nav.now_ms;
        if let Some(load) = self.nav.loads.get(&tab) {
            return load.serial;
        }
        let serial = self.next_load_serial();
        self.nav.loads.insert(
            tab,
            Load {
                url,
                pending: 0,
                began_ms,
                committed: false,
                serial,
            },
        );
        serial
    }

    fn next_load_serial(&mut self) -> u64 {
        self.nav.loads_begun += 1;
        self.nav.loads_begun
    }

    /// `tab`'s load now, if it is load `serial` still.
    fn load_now(&self, tab: TabId, serial: u64) -> Option<&Load> {
        self.nav.loads.get(&tab).filter(|l| l.serial == serial)
    }

    fn wait_for(&self, timer: Timer, timeout_ms: u64, actions: &mut Vec<Action>) {
        actions.push(Action::After {
            ms: timeout_ms as f64,
            timer,
        });
    }

    /// Answers every call waiting for `tab`'s page to land.
    fn land_all(&mut self, tab: TabId, landed: Option<&str>, actions: &mut Vec<Action>) {
        let waiting: Vec<RequestId> = self
            .nav
            .landings
            .iter()
            .filter(|(_, l)| l.tab == tab)
            .map(|(id, _)| id.clone())
            .collect();
        for id in waiting {
            self.land(&id, landed.map(str::to_owned), actions);
        }
    }

    /// Answers landing call `id` (`landed`: where the page committed; `None`: it stayed).
    fn land(&mut self, id: &str, landed: Option<String>, actions: &mut Vec<Action>) {
        let Some(landing) = self.nav.landings.remove(id) else {
            return;
        };
        self.calls.remove(id);
        self.nav.sent.remove(id);
        if landed.is_none() {
            actions.push(Action::Log(format!(
                "{} set off loading {}, which did not happen: answered from the page as it is",
                landing.step, landing.url
            )));
        }
        self.send(
            ToServer::CallToolResult {
                id: id.to_owned(),
                result: landing.result,
                navigated: landed,
            },
            actions,
        );
    }

    /// The page's answer: call `id` goes on in the next page (after a `navigate` step, or an
    /// action that set one loading: `acted`).
    pub(super) fn continue_in_next_page(
        &mut self,
        tab: TabId,
        continuation: Continuation,
        timeout_ms: u64,
        actions: &mut Vec<Action>,
    ) {
        let id = continuation.id.clone();
        self.calls.insert(id.clone(), tab);
        if continuation.acted {
            self.started_loading(tab, String::new());
        }
        self.nav.continuations.insert(tab, continuation);
        self.wait_for(Timer::Continuation(id), timeout_ms, actions);
    }

    /// The next page of a continuing call committed: it must be on the same site and have a
    /// runtime, or the call fails saying so.
    fn continuation_committed(&mut self, tab: TabId, url: &str, actions: &mut Vec<Action>) {
        let Some(c) = self.nav.continuations.get(&tab) else {
            return;
        };
        let problem = if origin(url) != c.from {
            Some(format!(
                "led to {url}, another site than {}: the call does not go on there",
                c.from
            ))
        } else if !self.any_adapter_matches(url) {
            Some(format!(
                "led to {url}, where no Tabwire runtime runs (no adapter matches it): the call cannot go on there"
            ))
        } else {
            None
        };
        if let Some(problem) = problem {
            let c = self
                .nav
                .continuations
                .remove(&tab)
                .expect("looked up above");
            let error = WireError::new(ErrorCode::Navigated, format!("{}: {problem}", c.step));
            self.fail_continued(c, error, actions);
        }
    }

    /// Fails continuing call `c`, saying the action may have been performed when it acted.
    pub(super) fn fail_continued(
        &mut self,
        c: Continuation,
        error: WireError,
        actions: &mut Vec<Action>,
    ) {
        self.calls.remove(&c.id);
        let error = if c.acted {
            error.maybe_performed()
        } else {
            error
        };
        self.send(ToServer::CallToolError { id: c.id, error }, actions);
    }

    /// Whether call `id`, sent to `tab`'s page, failed because that page was already leaving
    /// when it was sent (a navigation that began before the call did): then it is held for the
    /// next page instead, and this returns true.
    pub(super) fn sent_into_leaving_page(
        &mut self,
        id: &str,
        tab: TabId,
        actions: &mut Vec<Action>,
    ) -> bool {
        let Some((sent_ms, message)) = self.nav.sent.get(id).cloned() else {
            return false;
        };
        if !self
            .nav
            .loads
            .get(&tab)
            .is_some_and(|load| load.began_ms <= sent_ms)
        {
            return false;
        }
        self.calls.insert(id.to_owned(), tab);
        let again = Action::ToTab {
            tab,
            message,
            on_reply: OnReply::CallTool(id.to_owned()),
        };
        self.send_when_loaded(tab, id.to_owned(), again, HELD_OTHER_MS, actions);
        true
    }

    /// Call `id` was answered or failed: nothing of it is kept.
    pub(super) fn call_done(&mut self, id: &str) {
        self.nav.sent.remove(id);
        self.nav.acted.remove(id);
    }

    /// Cancel of a held call: it is dropped (the server already answered its caller).
    pub(super) fn drop_held(&mut self, id: &str) -> bool {
        for held in self.nav.held.values_mut() {
            if let Some(at) = held.iter().position(|(h, _)| h == id) {
                held.remove(at);
                return true;
            }
        }
        false
    }

    /// Call `id` was answered otherwise: it no longer waits for a page, a landing or a next page.
    pub(super) fn forget_call(&mut self, id: &str) {
        self.drop_held(id);
        self.nav.landings.remove(id);
        self.nav.continuations.retain(|_, c| c.id != id);
        self.nav.sent.remove(id);
        self.nav.acted.remove(id);
    }

    pub(super) fn forget_tab_loads(&mut self, tab: TabId) {
        self.nav.loads.remove(&tab);
        self.nav.shown.remove(&tab);
        self.answer_check.forget_tab(tab);
        self.nav.held.remove(&tab);
        self.nav.continuations.remove(&tab);
        self.nav.landings.retain(|_, l| l.tab != tab);
    }

    /// A timer the core asked for ran out.
    pub fn on_timer(&mut self, timer: Timer) -> Vec<Action> {
        let mut actions = Vec::new();
        match timer {
            Timer::Landing(id) => {
                if let Some(landing) = self.nav.landings.remove(&id) {
                    self.calls.remove(&id);
                    self.nav.sent.remove(&id);
                    // A load that never answers must not hold the tab: the page still shown
                    // takes the next calls (and one it lands on after all is told apart).
                    self.loaded(landing.tab, &mut actions);
                    let error = WireError::new(
                        ErrorCode::Timeout,
                        format!(
                            "{} set off loading {}, which did not arrive within the call's time",
                            landing.step, landing.url
                        ),
                    )
                    .maybe_performed();
                    self.send(ToServer::CallToolError { id, error }, &mut actions);
                }
            }
            Timer::Continuation(id) => {
                let tab = self
                    .nav
                    .continuations
                    .iter()
                    .find(|(_, c)| c.id == id)
                    .map(|(tab, _)| *tab);
                if let Some((tab, c)) =
                    tab.and_then(|tab| Some((tab, self.nav.continuations.remove(&tab)?)))
                {
                    self.loaded(tab, &mut actions);
                    let error = WireError::new(
                        ErrorCode::Timeout,
                        format!(
                            "{}: the next page did not offer {:?} to go on within the call's time",
                            c.step, c.tool
                        ),
                    );
                    self.fail_continued(c, error, &mut actions);
                }
            }
            Timer::Held(id) => {
                let found = self.nav.held.iter_mut().find_map(|(tab, held)| {
                    let at = held.iter().position(|(h, _)| *h == id)?;
                    Some((*tab, held.remove(at).1))
                });
                if let Some((tab, action)) = found {
                    let url = self.nav.loads.get(&tab).map(|l| l.url.clone());
                    match action {
                        Action::ToTab {
                            on_reply: OnReply::CallTool(id),
                            ..
                        }
                        | Action::PageOp { id, .. } => {
                            self.calls.remove(&id);
                            let error = WireError::new(
                                ErrorCode::Timeout,
                                format!(
                                    "tab {tab} was still loading {} when the call's time ran out: the call did not run",
                                    url.unwrap_or_default()
                                ),
                            );
                            self.send(ToServer::CallToolError { id, error }, &mut actions);
                        }
                        // A state request or an `open_tab` goes ahead: the page answers for itself.
                        other => actions.push(other),
                    }
                }
            }
            Timer::Unconfirmed { tab, load } => {
                // No navigation began since the page's word (a `Before` counts one pending).
                let unconfirmed = self
                    .load_now(tab, load)
                    .is_some_and(|l| l.pending == 0 && !l.committed);
                if unconfirmed {
                    self.land_all(tab, None, &mut actions);
                    self.loaded(tab, &mut actions);
                }
            }
            Timer::Announce { tab, load } => {
                if self.load_now(tab, load).is_some_and(|l| l.committed) {
                    self.loaded(tab, &mut actions);
                }
            }
            Timer::PersistTabs => {
                self.tabs_write_due = false;
                actions.push(Action::PersistTabs);
            }
            Timer::Look { tab } => {
                let waiting = self.nav.held.get(&tab).is_some_and(|h| !h.is_empty());
                if let Some(load) = self.nav.loads.get(&tab).filter(|_| waiting) {
                    actions.push(Action::LookAtLoad {
                        tab,
                        load: load.serial,
                    });
                }
            }
        }
        actions
    }

    /// What Chrome said of `tab` once requests had waited for its load `load` ([`Timer::Look`]):
    /// `complete`, the tab loads nothing (`tabs.get`'s `status`). A load still under way is looked
    /// at again later. One that never committed is over (its commit event never came, or its
    /// navigation ended without a word): the page shown stays and what waits goes to it. One that
    /// committed waits for its runtime's announcement, bounded as its completion would have.
    pub fn on_load_looked(&mut self, tab: TabId, load: u64, complete: bool) -> Vec<Action> {
        let mut actions = Vec::new();
        let Some(now) = self.load_now(tab, load) else {
            return actions;
        };
        if !complete {
            self.wait_for(Timer::Look { tab }, LOOK_MS as u64, &mut actions);
        } else if now.committed {
            self.wait_for(
                Timer::Announce { tab, load },
                ANNOUNCE_GRACE_MS as u64,
                &mut actions,
            );
        } else {
            actions.push(Action::Log(format!(
                "tab {tab}: Chrome says its page has loaded, yet the load of {} it began never \
                 committed ({} navigation(s) unended): what waited for it goes to the page shown",
                now.url, now.pending
            )));
            self.land_all(tab, None, &mut actions);
            self.loaded(tab, &mut actions);
        }
        actions
    }
}

#[cfg(test)]
#[path = "navigation_tests.rs"]
mod tests;

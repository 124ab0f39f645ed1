//! The recordings the popup makes, one per tab, kept here so that they outlive each page the
//! tab loads (a form submitted, a link followed): the popup starts one on a site the user
//! allowed, each page of that site the tab shows is told to record ([`ToPage::Record`]) and
//! sends its steps ([`FromPage::Recorded`](bridge::page::FromPage::Recorded)); Stop ends the
//! page's listening; Save sends the steps to the server (`save_recording`), which drafts the
//! tool, saves and loads it. What the popup shows is written to `chrome.storage.session`
//! (`recordings`, by tab) whenever it changes.

use std::collections::{BTreeMap, HashMap};

use bridge::ToServer;
use bridge::grants::{GrantList, Need};
use bridge::page::ToPage;
use bridge::protocol::{RequestId, TabId};
use bridge::recording::{RecordedStep, Recording, ToolDraft};
use serde::{Deserialize, Serialize};

use super::{Action, Core, LinkState, OnReply};

/// What the popup asks of a tab's recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordAction {
    Start,
    Stop,
    Discard,
}

/// One tab's recording, as the popup reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TabRecording {
    /// The site it records: pages of another origin the tab shows meanwhile record nothing.
    pub origin: String,
    /// The page it started on: the tool opens it first.
    pub start_url: String,
    /// Still recording (`false`: stopped, waiting to be saved or discarded).
    pub live: bool,
    pub steps: Vec<RecordedStep>,
    /// Each step in words (never a password), for the popup's list.
    pub lines: Vec<String>,
}

/// Every tab's recording and what the worker needs to decide about them.
#[derive(Debug, Default)]
pub struct Recordings {
    tabs: BTreeMap<TabId, TabRecording>,
    /// The grants tabwire pushed last: recording needs page tools allowed on the site.
    grants: GrantList,
    all_origins: bool,
    /// Saves sent to the server, by request id: the tab whose recording they save.
    saving: HashMap<RequestId, TabId>,
}

impl Recordings {
    /// The grants tabwire pushed (its `grants` frame).
    pub fn set_grants(&mut self, grants: GrantList, all_origins: bool) {
        self.grants = grants;
        self.all_origins = all_origins;
    }

    /// A save the server answered: the tab whose recording it saved.
    pub fn saved(&mut self, id: &str) -> Option<TabId> {
        self.saving.remove(id)
    }

    fn allowed(&self, origin: &str) -> bool {
        self.all_origins
            || self
                .grants
                .get(origin)
                .is_some_and(|g| g.allows(Need::PageTools))
    }

    /// What the popup reads: the recordings by tab, as JSON.
    pub fn json(&self) -> String {
        serde_json::to_string(&self.tabs).expect("recordings serialize")
    }

    /// A recording a previous incarnation of the worker wrote (`json`); its pages record on.
    pub fn restore(&mut self, json: &str) {
        // Through a `Value`, whose decoders of recorded steps the worker has for the page's
        // messages: decoding the text directly compiled a second set (see `crate::popup::decode`).
        let value = serde_json::from_str(json).unwrap_or(serde_json::Value::Null);
        if let Ok(tabs) = serde_json::from_value(value) {
            self.tabs = tabs;
        }
    }
}

fn record_message(recording: bool) -> String {
    serde_json::to_string(&ToPage::Record { recording }).expect("page messages serialize")
}

impl Core {
    /// The popup's `action` on `tab`'s recording; the tab shows `url` now (the glue asked
    /// Chrome). The error is the sentence the popup shows.
    pub fn record(
        &mut self,
        tab: TabId,
        url: &str,
        action: RecordAction,
    ) -> Result<Vec<Action>, String> {
        let mut actions = vec![Action::PersistRecordings];
        match action {
            RecordAction::Start => {
                let origin = bridge::origin::text_of(url).ok_or_else(|| {
                    format!("Recording works on websites (http and https) only, not on {url}")
                })?;
                if !self.recordings.allowed(&origin) {
                    return Err(format!(
                        "Allow page tools on {origin} first (above): a recording becomes a tool that acts there"
                    ));
                }
                self.recordings.tabs.insert(
                    tab,
                    TabRecording {
                        origin,
                        start_url: url.to_owned(),
                        live: true,
                        steps: Vec::new(),
                        lines: Vec::new(),
                    },
                );
                actions.push(Action::ToTab {
                    tab,
                    message: record_message(true),
                    on_reply: OnReply::InjectIfMissing,
                });
            }
            RecordAction::Stop => {
                let recording = self
                    .recordings
                    .tabs
                    .get_mut(&tab)
                    .ok_or_else(|| format!("tab {tab} is not recording"))?;
                recording.live = false;
                actions.push(Action::ToTab {
                    tab,
                    message: record_message(false),
                    on_reply: OnReply::Nothing,
                });
            }
            RecordAction::Discard => {
                if let Some(recording) = self.recordings.tabs.remove(&tab)
                    && recording.live
                {
                    actions.push(Action::ToTab {
                        tab,
                        message: record_message(false),
                        on_reply: OnReply::Nothing,
                    });
                }
            }
        }
        Ok(actions)
    }

    /// The popup's Save of `tab`'s stopped recording as `tool`: sent to the server as request
    /// `id` (never queued, like a grant change).
    pub fn save_recording(
        &mut self,
        id: RequestId,
        tab: TabId,
        tool: ToolDraft,
    ) -> Result<Vec<Action>, String> {
        if self.link != LinkState::Connected {
            return Err("tabwire is not connected, so nothing was saved".to_owned());
        }
        let recording = self
            .recordings
            .tabs
            .get(&tab)
            .ok_or_else(|| format!("tab {tab} has no recording to save"))?;
        if recording.live {
            return Err("Stop the recording before saving it".to_owned());
        }
        let frame = ToServer::SaveRecording {
            id: id.clone(),
            tab,
            origin: recording.origin.clone(),
            start_url: recording.start_url.clone(),
            tool,
            steps: recording.steps.clone(),
        }
        .encode();
        self.recordings.saving.insert(id, tab);
        Ok(vec![Action::Frame(frame)])
    }

    /// A step the page at `url` in `tab` recorded: kept when the tab records that site.
    pub(super) fn on_recorded(&mut self, tab: TabId, url: &str, step: RecordedStep) -> Vec<Action> {
        let Some(recording) = self.recordings.tabs.get_mut(&tab) else {
            return vec![Action::Log(format!(
                "tab {tab} recorded a step, but records nothing: dropped"
            ))];
        };
        if !recording.live || bridge::origin::text_of(url).as_deref() != Some(&recording.origin) {
            return vec![Action::Log(format!(
                "tab {tab} recorded a step on {url}, which this recording does not record: dropped"
            ))];
        }
        let mut steps = Recording {
            steps: std::mem::take(&mut recording.steps),
        };
        let kept = steps.push(step);
        recording.steps = steps.steps;
        recording.lines = recording.steps.iter().map(RecordedStep::describe).collect();
        let mut actions = vec![Action::PersistRecordings];
        if !kept {
            actions.push(Action::Log(format!(
                "tab {tab}'s recording is full: step dropped"
            )));
        }
        actions
    }

    /// A page of `tab` at `url` is ready, or loaded: told to record when the tab records its site.
    pub(super) fn record_in_new_page(&self, tab: TabId, url: &str, actions: &mut Vec<Action>) {
        if let Some(recording) = self.recordings.tabs.get(&tab)
            && recording.live
            && bridge::origin::text_of(url).as_deref() == Some(&recording.origin)
        {
            actions.push(Action::ToTab {
                tab,
                message: record_message(true),
                on_reply: OnReply::InjectIfMissing,
            });
        }
    }

    /// A closed tab's recording goes with it.
    pub(super) fn forget_recording(&mut self, tab: TabId, actions: &mut Vec<Action>) {
        if self.recordings.tabs.remove(&tab).is_some() {
            actions.push(Action::PersistRecordings);
        }
    }

    pub fn recordings_json(&self) -> String {
        self.recordings.json()
    }
}

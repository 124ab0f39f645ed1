//! Handing a step to the person (issue 28's `browser_handoff`): the browser operations that show
//! the person a message in the extension's own window (never in the page, whose scripts could read
//! or forge it), read their answer (Done or Cancel) and close the window. The server asks
//! ([`crate::browser_ops::BrowserOp`]'s `handoff`, `handoff_answer`, `end_handoff`), the worker
//! performs; the hub marks the tab as waiting for the person meanwhile.

use serde::{Deserialize, Serialize};

use crate::protocol::TabId;

/// The longest message shown to the person, in characters.
pub const MAX_MESSAGE_CHARS: usize = 1000;

/// The most one `handoff_answer` waits for the person, in milliseconds (the server asks again).
pub const MAX_ANSWER_WAIT_MS: u64 = 10_000;

/// Show the person `message` about `tab`: the tab is brought to the front and the extension's
/// handoff window opens beside it. Answered with [`HandoffShown`].
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ShowHandoff {
    /// This hand-off's id (fresh for each), which the other operations name.
    pub handoff: String,
    pub tab: TabId,
    pub message: String,
}

/// The answer to a [`ShowHandoff`]: the window showing it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct HandoffShown {
    pub window: u64,
}

/// The answer to `handoff_answer`: what the person said so far.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PersonSaid {
    /// Nothing yet (the window is still open).
    Nothing,
    /// They pressed Done.
    Done,
    /// They pressed Cancel, or closed the window.
    Cancel,
}

/// The answer to `handoff_answer`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct HandoffAnswer {
    pub said: PersonSaid,
}

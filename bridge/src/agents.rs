//! Several agents in one browser (issue 28), as both ends know them: each agent (an MCP session)
//! with the tabs it holds, which the hub tells the extension (`agents`) so that the popup lists
//! them and the worker groups each agent's tabs under its name; and what the person asks from
//! the popup (`agent_control`: stop an agent or let it go on; `share_tab`: no agent holds a tab).
//! The hub alone decides holds (the server's `hub::agents`).

use serde::{Deserialize, Serialize};

use crate::protocol::TabId;

/// An agent as the popup shows it and its tabs' group is titled.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct AgentView {
    pub name: String,
    /// Its client's `clientInfo` name.
    #[serde(default)]
    pub client: String,
    /// The person stopped it: its calls are refused until allowed again.
    #[serde(default)]
    pub stopped: bool,
    /// The tabs it holds.
    #[serde(default)]
    pub tabs: Vec<TabId>,
    /// Its calls running now.
    #[serde(default)]
    pub running: usize,
}

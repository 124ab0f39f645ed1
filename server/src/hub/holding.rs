//! The hub's async face for agents (issue 28): sessions join and leave, tabs are claimed,
//! released and shared, the person stops and allows agents, and the tab list says who holds
//! what. The rules themselves are [`super::agents::Agents`]'s, under the registry's lock; here
//! is only which process decides (the one whose registry talks to the browser, never a peer)
//! and what watchers hear.

use bridge::browser_ops::{BrowserOp, TabAction, TabHolders, TabList};
use bridge::{ErrorCode, TabId, ToExtension, WireError};
use serde_json::{Value, json};

use bridge::agents::AgentView;

use super::agents::{self, AgentFrame, AgentName};
use super::registry::Changes;
use super::{Hub, Registry};

impl Hub {
    /// A new agent for a session of client `client` (its `clientInfo` name); see
    /// [`agents::Agents::join`].
    pub fn join_agent(&self, client: &str) -> AgentName {
        self.change(|r| {
            let name = r.agents.join(client);
            // A peer tells its hub at once, before any request of the agent.
            r.send_to_relays(&AgentFrame::Join {
                local: name.to_string(),
            });
            (name, r.agents_changed())
        })
    }

    /// A connection to a hub opened: it hears of every agent of this process.
    pub(super) fn introduce_agents(&self, conn: super::ConnId) {
        let registry = self.registry();
        for name in registry.agents.names() {
            registry.send_text(
                conn,
                AgentFrame::Join {
                    local: name.to_string(),
                }
                .encode(),
            );
        }
    }

    /// In a peer: what the hub answered about an agent of ours (`agent_named`).
    pub fn hub_named(&self, frame: AgentFrame) {
        match frame {
            AgentFrame::Named { local, name } => {
                self.registry().agents.named_by_hub(&local, name);
            }
            AgentFrame::Join { local } | AgentFrame::Leave { local } => {
                tracing::warn!(local, "a hub sent a frame only peers send; ignored");
            }
        }
    }

    /// The name agent `name` goes by among all agents (in a peer, the one its hub gave it).
    pub fn agent_known_as(&self, name: &AgentName) -> String {
        self.registry().agents.known_as(name)
    }

    /// Agent `name`'s session ended: its tabs are released (left open).
    pub fn leave_agent(&self, name: &str) {
        self.change(|r| {
            r.send_to_relays(&AgentFrame::Leave {
                local: name.to_owned(),
            });
            let released = r.agents.leave(name);
            tracing::info!(
                agent = name,
                ?released,
                "an agent left; its tabs are shared again"
            );
            ((), r.agents_changed())
        });
    }

    /// Every live agent with the tabs it holds.
    pub fn agents(&self) -> Vec<AgentView> {
        self.registry().agents.list()
    }

    /// A call of agent `name` starts: it is counted, and learns when the person stops the
    /// agent (`None` when it is not live here).
    pub fn agent_call(&self, name: &str) -> Option<agents::CallOf> {
        self.registry().agents.call(name)
    }

    /// The person stops agent `name` (`stop`) or lets it go on; whether it is live.
    pub fn set_agent_stopped(&self, name: &str, stop: bool) -> bool {
        self.change(|r| (r.agents.set_stopped(name, stop), r.agents_changed()))
    }

    /// The person shares `tab`: no agent holds it any more. Whether one did.
    pub fn share_tab(&self, tab: TabId) -> bool {
        self.change(|r| (r.agents.share(tab), r.agents_changed()))
    }

    /// Whether the calling agent may act on `tab` now, where this process decides (a peer's hub
    /// decides for it when its request arrives). The registry checks again as the request
    /// starts; this answers early, before the permission gate may ask the user anything.
    pub fn admit(&self, tab: Option<TabId>) -> Result<(), WireError> {
        let registry = self.registry();
        if registry.relays_to_hub(tab) {
            return Ok(());
        }
        registry.agents.admit(agents::caller().as_ref(), tab)
    }

    /// `browser_tab`'s claim and release, decided here unless this process is a peer (then
    /// `None`: the request goes to the hub like any other).
    pub(super) fn hold_change(
        &self,
        tab: TabId,
        action: TabAction,
    ) -> Option<Result<Value, WireError>> {
        let claim = match action {
            TabAction::Claim => true,
            TabAction::Release => false,
            TabAction::Back
            | TabAction::Forward
            | TabAction::Reload
            | TabAction::Activate
            | TabAction::Close => return None,
        };
        if self.registry().relays_to_hub(Some(tab)) {
            return None;
        }
        let Some(caller) = agents::caller() else {
            return Some(Err(WireError::new(
                ErrorCode::InvalidArgs,
                "only an agent (an MCP session) can claim or release a tab",
            )));
        };
        Some(self.change(|r| {
            let outcome = r.agents.claim(&caller, tab, claim).map(|()| {
                let holder = r.agents.holder(tab).map(|h| h.to_string());
                json!({"tab": tab, "holder": holder})
            });
            (outcome, r.agents_changed())
        }))
    }

    /// What a browser op means for the tabs waiting for the person, once it succeeded.
    pub(super) fn handoff_mark(&self, op: &BrowserOp) -> Option<HandoffMark> {
        match op {
            BrowserOp::Handoff(show) => Some(HandoffMark::Started {
                caller: agents::caller(),
                tab: show.tab,
                handoff: show.handoff.clone(),
            }),
            BrowserOp::EndHandoff { handoff } => Some(HandoffMark::Ended(handoff.clone())),
            BrowserOp::ListTabs
            | BrowserOp::Tab { .. }
            | BrowserOp::Capture(_)
            | BrowserOp::Downloads { .. }
            | BrowserOp::HandoffAnswer { .. } => None,
        }
    }

    pub(super) fn mark_handoff(&self, mark: HandoffMark) {
        self.change(|r| {
            match mark {
                HandoffMark::Started {
                    caller,
                    tab,
                    handoff,
                } => r.agents.handoff_started(caller.as_ref(), tab, &handoff),
                HandoffMark::Ended(handoff) => r.agents.handoff_ended(&handoff),
            }
            ((), Changes::tabs(false))
        });
    }

    /// Adds who holds which tab, and who asked, to a `list_tabs` answer this process's browser
    /// gave (a peer's hub added them already).
    pub(super) fn with_holders(&self, list: Value, relayed: bool) -> Value {
        if relayed {
            return list;
        }
        let Ok(mut decoded) = serde_json::from_value::<TabList>(list.clone()) else {
            return list;
        };
        let registry = self.registry();
        decoded.agents = Some(TabHolders {
            you: agents::caller().map(|c| c.to_string()),
            holders: decoded
                .tabs
                .iter()
                .filter_map(|t| Some((t.id, registry.agents.holder(t.id)?.to_string())))
                .collect(),
        });
        serde_json::to_value(decoded).unwrap_or(list)
    }
}

/// A change of the tabs waiting for the person.
pub(super) enum HandoffMark {
    Started {
        caller: Option<AgentName>,
        tab: TabId,
        handoff: String,
    },
    Ended(String),
}

impl Registry {
    /// The agents or their tabs changed: every browser connection hears the new list (once it
    /// differs from what it was told last), and tab watchers are told.
    pub(super) fn agents_changed(&mut self) -> Changes {
        let frame = ToExtension::Agents {
            agents: self.agents.list(),
        }
        .encode();
        if self.agents_told.as_deref() != Some(frame.as_str()) {
            let browsers: Vec<super::ConnId> = self.browser_connections().collect();
            for conn in browsers {
                self.send_text(conn, frame.clone());
            }
            self.agents_told = Some(frame);
        }
        Changes::tabs(false)
    }

    /// Sends `frame` to every connection to a hub (a peer has one).
    fn send_to_relays(&self, frame: &AgentFrame) {
        let conns: Vec<super::ConnId> = self.relay_connections().collect();
        for conn in conns {
            self.send_text(conn, frame.encode());
        }
    }

    /// Whether a request about `tab` (absent: a new tab) goes to the hub this process is a peer
    /// of.
    pub fn relays_to_hub(&self, tab: Option<TabId>) -> bool {
        self.open_tab_connection(tab)
            .is_ok_and(|conn| self.relays_hub(conn))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use bridge::protocol::RequestId;
    use bridge::{PROTOCOL_VERSION, ToServer};
    use serde_json::json;
    use tokio::sync::mpsc;

    use super::super::{Hub, HubConfig, Link};
    use super::*;

    fn hub() -> Arc<Hub> {
        let hub = Hub::new(HubConfig {
            port: 17373,
            call_timeout: Duration::from_secs(30),
            instance_id: "test".into(),
            adapters: Vec::new(),
            grants: None,
            uploads: None,
        });
        hub.set_link(Link::Listening);
        Arc::new(hub)
    }

    /// A browser (or, when `relay`, a peer) that said hello to `hub` and has no tabs yet: its
    /// connection and the frames it hears.
    fn connected(
        hub: &Hub,
        relay: bool,
    ) -> (super::super::ConnId, mpsc::UnboundedReceiver<String>) {
        let (outbox, frames) = mpsc::unbounded_channel();
        let conn = match relay {
            true => hub.connect_relay(outbox),
            false => hub.connect(outbox),
        };
        let hello = json!({"type": "hello", "protocol": PROTOCOL_VERSION});
        hub.handle_frame(conn, &hello.to_string());
        hub.handle_frame(conn, r#"{"type":"tools_snapshot","tabs":[]}"#);
        (conn, frames)
    }

    /// The next frame `frames` got, as JSON.
    async fn next(frames: &mut mpsc::UnboundedReceiver<String>) -> serde_json::Value {
        let frame = tokio::time::timeout(Duration::from_secs(5), frames.recv())
            .await
            .expect("a frame within 5 s")
            .expect("outbox open");
        serde_json::from_str(&frame).unwrap()
    }

    /// Has `agent` open a tab; the extension (whose frames are `frames`, on `conn`) answers tab 5.
    async fn open_as(
        hub: &Arc<Hub>,
        agent: &AgentName,
        conn: crate::hub::ConnId,
        frames: &mut mpsc::UnboundedReceiver<String>,
    ) {
        let opener = {
            let (hub, agent) = (hub.clone(), agent.clone());
            tokio::spawn(agents::as_agent(agent, async move {
                hub.open_tab("http://127.0.0.1/x", None, None).await
            }))
        };
        let frame = loop {
            let frame = next(frames).await;
            if frame["type"] == "open_tab" {
                break frame;
            }
        };
        let id: RequestId = frame["id"].as_str().unwrap().into();
        let answer = ToServer::OpenTabResult {
            id,
            tab: 5,
            loaded: None,
        };
        hub.handle_frame(conn, &answer.encode());
        assert_eq!(opener.await.unwrap().unwrap().tab, 5);
    }

    #[tokio::test]
    async fn the_hub_refuses_another_agents_tab_before_sending_anything_and_tells_the_browser() {
        let hub = hub();
        let (conn, mut frames) = connected(&hub, false);
        let (a, b) = (hub.join_agent("Claude Code"), hub.join_agent("claude-code"));
        assert_eq!((&*a, &*b), ("claude-code", "claude-code-2"));
        open_as(&hub, &a, conn, &mut frames).await;
        // The browser hears who holds what.
        let told = loop {
            let frame = next(&mut frames).await;
            if frame["type"] == "agents" && frame["agents"][0]["tabs"] == json!([5]) {
                break frame;
            }
        };
        assert_eq!(told["agents"][0]["name"], "claude-code");

        let reload = BrowserOp::Tab {
            tab: 5,
            action: TabAction::Reload,
        };
        let refused = agents::as_agent(b.clone(), hub.browser(reload)).await;
        assert_eq!(refused.unwrap_err().code, ErrorCode::TabHeld);
        assert!(
            frames.try_recv().is_err(),
            "nothing was sent for a refused call"
        );
        let claim = BrowserOp::Tab {
            tab: 5,
            action: TabAction::Claim,
        };
        let refused = agents::as_agent(b.clone(), hub.browser(claim.clone())).await;
        assert_eq!(refused.unwrap_err().code, ErrorCode::TabHeld);

        hub.leave_agent(&a);
        let claimed = agents::as_agent(b.clone(), hub.browser(claim))
            .await
            .unwrap();
        assert_eq!(claimed, json!({"tab": 5, "holder": "claude-code-2"}));
    }

    #[tokio::test]
    async fn a_peer_stamps_its_agents_and_leaves_the_deciding_to_its_hub() {
        let peer = hub();
        let (conn, mut to_hub) = connected(&peer, true);
        let a = peer.join_agent("mcp");
        let joined = loop {
            let frame = next(&mut to_hub).await;
            if frame["type"] != "welcome" {
                break frame;
            }
        };
        assert_eq!(joined, json!({"type": "agent_join", "local": "mcp"}));
        open_as(&peer, &a, conn, &mut to_hub).await;
        // The peer holds nothing itself: the hub decides.
        assert!(peer.agents()[0].tabs.is_empty());
        let b = peer.join_agent("mcp");
        let _ = next(&mut to_hub).await;
        let asked = {
            let peer = peer.clone();
            let reload = BrowserOp::Tab {
                tab: 5,
                action: TabAction::Reload,
            };
            tokio::spawn(agents::as_agent(
                b,
                async move { peer.browser(reload).await },
            ))
        };
        let frame = next(&mut to_hub).await;
        assert_eq!(frame["type"], "browser");
        assert_eq!(frame["agent"], "mcp-2");
        asked.abort();
        peer.hub_named(AgentFrame::Named {
            local: "mcp".into(),
            name: "mcp-3".into(),
        });
        assert_eq!(peer.agent_known_as(&a), "mcp-3");
    }
}

//! Several agents in one browser (issue 28): who is calling, which tabs each holds, and which
//! ones the person stopped. Every MCP session is an agent named from its client's `clientInfo`
//! name, with a short suffix (`-2`, `-3`, ...) when two live sessions share a name. A tab an
//! agent opened is held by it; tabs the person opened are shared; an agent may claim a shared
//! tab and release it, and leaving releases (never closes) its tabs.
//!
//! [`Agents`] lives in the registry, under its one lock, so the hold check is made atomically
//! with the start of the request it guards (no claim can slip between a check and a call). Only
//! the hub — the process whose registry talks to the browser itself — decides: a peer's own
//! registry stamps the caller's name on the frames it relays and the hub decides on arrival.
//!
//! Who is calling travels as a task-local ([`as_agent`], [`caller`]): the MCP layer (or, for a
//! peer's calls, the hub's peer server) runs each call in its agent's scope, and the registry
//! reads it where a request starts, so no hub method needs one more argument to carry it.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bridge::agents::AgentView;
use bridge::{ErrorCode, TabId, WireError};
use tokio::sync::watch;

/// An agent's name, unique among the live agents of the process that named it.
pub type AgentName = Arc<str>;

/// The most characters of a client's name an agent's name keeps.
const MAX_NAME_CHARS: usize = 32;

/// The name of an agent whose client gave none (or only characters we do not keep).
const UNNAMED: &str = "agent";

/// Who a task calls for: the agent's name in this process, and the name it goes by among all
/// agents (the hub's; the same, except in a peer whose session's name was taken at the hub).
#[derive(Clone)]
struct Caller {
    name: AgentName,
    known_as: AgentName,
}

tokio::task_local! {
    static CALLER: Caller;
}

/// Runs `work` as agent `name`: the requests it starts carry that name.
pub async fn as_agent<F: Future>(name: AgentName, work: F) -> F::Output {
    as_agent_known_as(name.clone(), name, work).await
}

/// [`as_agent`] for an agent of this process named `name`, whom the hub calls `known_as`.
pub async fn as_agent_known_as<F: Future>(
    name: AgentName,
    known_as: AgentName,
    work: F,
) -> F::Output {
    CALLER.scope(Caller { name, known_as }, work).await
}

/// The agent the current task calls for, if it runs in one's scope (the popup's and the
/// server's own requests do not).
pub fn caller() -> Option<AgentName> {
    CALLER.try_with(|c| c.name.clone()).ok()
}

/// The name the calling agent goes by among all agents (what a person names it by: in the
/// popup, `tabwire status`, `tabwire allow --agent`).
pub fn caller_known_as() -> Option<AgentName> {
    CALLER.try_with(|c| c.known_as.clone()).ok()
}

/// The frame field a peer's requests carry their agent's name in. Every frame is a JSON
/// object and readers ignore fields they do not know, so the field is added to the encoded
/// frame rather than to each request message of the wire protocol (only hubs read it).
const AGENT_FIELD: &str = "agent";

/// Adds `agent`'s name to the encoded frame `frame` (a JSON object).
pub fn stamp(frame: &mut String, agent: &str) {
    if frame.ends_with('}') {
        frame.pop();
        let name = serde_json::Value::from(agent);
        frame.push_str(&format!(",\"{AGENT_FIELD}\":{name}}}"));
    }
}

/// The agent name a peer's frame carries, if any.
pub fn stamped(frame: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Stamped {
        #[serde(default)]
        agent: Option<String>,
    }
    serde_json::from_str::<Stamped>(frame).ok()?.agent
}

/// What a peer and its hub say about a peer's agents, beside the bridge frames: a peer's
/// session joins (`agent_join`, sent before any request of it, and again to a new hub), and the
/// hub answers the name it gave it among all agents (`agent_named`), which the peer's audit log
/// and answers use; the session ends (`agent_leave`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type")]
pub enum AgentFrame {
    #[serde(rename = "agent_join")]
    Join { local: String },
    #[serde(rename = "agent_named")]
    Named { local: String, name: String },
    /// The peer's session ended: its tabs are shared again.
    #[serde(rename = "agent_leave")]
    Leave { local: String },
}

/// How every [`AgentFrame`] begins (so other frames are told apart without decoding them).
const AGENT_FRAME_PREFIX: &str = r#"{"type":"agent_"#;

impl AgentFrame {
    pub fn encode(&self) -> String {
        serde_json::to_string(self).expect("an agent frame encodes")
    }

    /// `frame` as an agent frame, if it is one.
    pub fn decode(frame: &str) -> Option<AgentFrame> {
        match frame.starts_with(AGENT_FRAME_PREFIX) {
            true => serde_json::from_str(frame).ok(),
            false => None,
        }
    }
}

/// One live agent.
struct Agent {
    /// Its client's `clientInfo` name, as given (capped).
    client: String,
    /// In a peer: the name the hub gave it among all agents, once the hub said.
    named_by_hub: Option<String>,
    /// Raised while the person has stopped it: its running calls end, later ones are refused.
    stopped: watch::Sender<bool>,
    /// Its calls running now (each holds a [`Running`]).
    running: Arc<AtomicUsize>,
}

/// One running call of an agent, counted while it lives.
pub struct Running(Arc<AtomicUsize>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What a call of a live agent holds while it runs: whether the person stopped the agent, and
/// its place in the agent's count of running calls.
pub struct CallOf {
    pub stopped: watch::Receiver<bool>,
    /// Held for its `Drop`, which takes the call off the count.
    #[allow(dead_code)]
    pub running: Running,
}

/// The live agents and the tabs they hold.
#[derive(Default)]
pub struct Agents {
    live: BTreeMap<AgentName, Agent>,
    holds: HashMap<TabId, AgentName>,
    /// The tabs waiting for the person (a hand-off), with the hand-off's id and its agent.
    waiting: HashMap<TabId, (String, AgentName)>,
}

impl Agents {
    /// A new agent for a session of client `client`: its name is the client's (characters a
    /// person reads safely, capped), with `-2`, `-3`, ... when a live agent has it already.
    pub fn join(&mut self, client: &str) -> AgentName {
        let base = readable(client);
        let name: AgentName = (1..)
            .map(|n| match n {
                1 => base.clone(),
                n => format!("{base}-{n}"),
            })
            .find(|name| !self.live.contains_key(name.as_str()))
            .expect("some suffix is free")
            .into();
        let client: String = client.chars().take(MAX_NAME_CHARS * 2).collect();
        let (stopped, _) = watch::channel(false);
        self.live.insert(
            name.clone(),
            Agent {
                client,
                named_by_hub: None,
                stopped,
                running: Arc::default(),
            },
        );
        name
    }

    /// Agent `name`'s session ended: it is forgotten and its tabs become shared again (they
    /// stay open). Answers the tabs it held.
    pub fn leave(&mut self, name: &str) -> Vec<TabId> {
        if let Some(agent) = self.live.remove(name) {
            // Whatever still runs for it ends now.
            agent.stopped.send_replace(true);
        }
        let released = self.tabs_of(name);
        self.holds.retain(|_, holder| holder.as_ref() != name);
        self.waiting.retain(|_, (_, agent)| agent.as_ref() != name);
        released
    }

    /// Whether `caller` may make a request about `tab` (`None`: a request about no tab yet, such
    /// as opening one): not while the person has stopped it, nor on a tab another agent holds.
    /// A request in no agent's scope (the popup's, the server's own) is never refused here.
    pub fn admit(&self, caller: Option<&AgentName>, tab: Option<TabId>) -> Result<(), WireError> {
        let Some(caller) = caller else {
            return Ok(());
        };
        if self.is_stopped(caller) {
            return Err(stopped_error(caller));
        }
        if let Some((tab, (_, agent))) = tab.and_then(|t| Some((t, self.waiting.get(&t)?))) {
            return Err(waiting_error(tab, agent));
        }
        match tab.and_then(|tab| Some((tab, self.holds.get(&tab)?))) {
            Some((tab, holder)) if holder != caller => Err(held_error(tab, holder)),
            Some(_) | None => Ok(()),
        }
    }

    /// `caller` opened `tab`: it holds it from now on (a request in no agent's scope leaves the
    /// tab shared).
    pub fn opened(&mut self, caller: Option<&AgentName>, tab: TabId) {
        if let Some(caller) = caller.filter(|c| self.live.contains_key(c.as_ref())) {
            self.holds.insert(tab, caller.clone());
        }
    }

    /// `caller` claims `tab` (`claim`) or releases it: a shared tab can be claimed, a tab held by
    /// another agent cannot be taken, and only its holder releases a tab.
    pub fn claim(&mut self, caller: &AgentName, tab: TabId, claim: bool) -> Result<(), WireError> {
        self.admit(Some(caller), Some(tab))?;
        if !self.live.contains_key(caller.as_ref()) {
            return Err(WireError::new(
                ErrorCode::Internal,
                format!("agent {caller} is not known to the hub"),
            ));
        }
        if claim {
            self.holds.insert(tab, caller.clone());
        } else {
            self.holds.remove(&tab);
        }
        Ok(())
    }

    /// The person shared `tab` from the popup: no agent holds it any more.
    pub fn share(&mut self, tab: TabId) -> bool {
        self.holds.remove(&tab).is_some()
    }

    /// `tab` closed: nobody holds it, and it waits for nobody.
    pub fn tab_closed(&mut self, tab: TabId) {
        self.holds.remove(&tab);
        self.waiting.remove(&tab);
    }

    /// Agent `caller`'s hand-off `handoff` shows on `tab`: the tab waits for the person, and
    /// every agent's call to it is refused meanwhile (the hand-off's own checks are made in no
    /// agent's scope).
    pub fn handoff_started(&mut self, caller: Option<&AgentName>, tab: TabId, handoff: &str) {
        let agent = caller.cloned().unwrap_or_else(|| UNNAMED.into());
        self.waiting.insert(tab, (handoff.to_owned(), agent));
    }

    /// Hand-off `handoff` is over.
    pub fn handoff_ended(&mut self, handoff: &str) {
        self.waiting.retain(|_, (id, _)| id != handoff);
    }

    /// The agent holding `tab`, if one does.
    pub fn holder(&self, tab: TabId) -> Option<&AgentName> {
        self.holds.get(&tab)
    }

    /// Stops agent `name` (`stop`) or lets it go on; whether it is a live agent.
    pub fn set_stopped(&mut self, name: &str, stop: bool) -> bool {
        match self.live.get(name) {
            Some(agent) => {
                agent.stopped.send_replace(stop);
                true
            }
            None => false,
        }
    }

    /// In a peer: the hub named local agent `local` `name`.
    pub fn named_by_hub(&mut self, local: &str, name: String) {
        if let Some(agent) = self.live.get_mut(local) {
            agent.named_by_hub = Some(name);
        }
    }

    /// The name agent `name` goes by among all agents: the hub's, in a peer that heard it.
    pub fn known_as(&self, name: &AgentName) -> String {
        self.live
            .get(name)
            .and_then(|a| a.named_by_hub.clone())
            .unwrap_or_else(|| name.to_string())
    }

    /// Every live agent's name.
    pub fn names(&self) -> Vec<AgentName> {
        self.live.keys().cloned().collect()
    }

    fn is_stopped(&self, name: &str) -> bool {
        self.live.get(name).is_some_and(|a| *a.stopped.borrow())
    }

    /// A call of agent `name` starts (`None` for an agent not live).
    pub fn call(&self, name: &str) -> Option<CallOf> {
        let agent = self.live.get(name)?;
        agent.running.fetch_add(1, Ordering::Relaxed);
        Some(CallOf {
            stopped: agent.stopped.subscribe(),
            running: Running(agent.running.clone()),
        })
    }

    fn tabs_of(&self, name: &str) -> Vec<TabId> {
        let mut tabs: Vec<TabId> = self
            .holds
            .iter()
            .filter(|(_, holder)| holder.as_ref() == name)
            .map(|(tab, _)| *tab)
            .collect();
        tabs.sort_unstable();
        tabs
    }

    /// Every live agent, by name, with the tabs it holds.
    pub fn list(&self) -> Vec<AgentView> {
        self.live
            .iter()
            .map(|(name, agent)| AgentView {
                name: name.to_string(),
                client: agent.client.clone(),
                stopped: *agent.stopped.borrow(),
                tabs: self.tabs_of(name),
                running: agent.running.load(Ordering::Relaxed),
            })
            .collect()
    }
}

/// Resolves once `stopped` is raised (never, when its sender is gone without raising it).
pub async fn until_stopped(mut stopped: watch::Receiver<bool>) {
    if stopped.wait_for(|stopped| *stopped).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// [`until_stopped`] for a call of an agent that may not be live (then it never resolves).
pub async fn until_stopped_opt(call: Option<&CallOf>) {
    match call {
        Some(call) => until_stopped(call.stopped.clone()).await,
        None => std::future::pending().await,
    }
}

/// A client's name as a person reads it safely (in the popup, a tab group's title, the audit
/// log): letters, digits, `.`, `_` and `-` kept, runs of anything else become one `-`.
fn readable(client: &str) -> String {
    let mut name = String::new();
    for c in client.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_') {
            name.push(c.to_ascii_lowercase());
        } else if !name.ends_with('-') && !name.is_empty() {
            name.push('-');
        }
        if name.len() >= MAX_NAME_CHARS {
            break;
        }
    }
    let name = name.trim_end_matches('-');
    match name.is_empty() {
        true => UNNAMED.to_owned(),
        false => name.to_owned(),
    }
}

/// The TAB_HELD a call to another agent's tab answers.
pub fn held_error(tab: TabId, holder: &str) -> WireError {
    WireError::new(
        ErrorCode::TabHeld,
        format!(
            "tab {tab} is held by agent {holder}: it opened or claimed it. Use another tab \
             (browser_open opens one), or wait until {holder} releases it or the user shares it"
        ),
    )
}

/// The WAITING_FOR_PERSON a call to a tab in a hand-off answers.
pub fn waiting_error(tab: TabId, agent: &str) -> WireError {
    WireError::new(
        ErrorCode::WaitingForPerson,
        format!(
            "tab {tab} waits for the person: agent {agent} handed a step to them \
             (browser_handoff). Call again once the hand-off is over"
        ),
    )
}

/// The AGENT_STOPPED every call of an agent the person stopped answers.
pub fn stopped_error(name: &str) -> WireError {
    WireError::new(
        ErrorCode::AgentStopped,
        format!(
            "the user stopped agent {name} in Tabwire's popup: its calls are refused until the \
             user allows it again there. Ask the user before going on"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamped_frame_still_decodes_and_says_its_agent() {
        let mut frame = bridge::ToExtension::Cancel { id: "x".into() }.encode();
        assert_eq!(stamped(&frame), None);
        stamp(&mut frame, "claude \"code\"");
        assert_eq!(stamped(&frame).as_deref(), Some("claude \"code\""));
        assert!(matches!(
            bridge::ToExtension::decode(&frame),
            Ok(bridge::ToExtension::Cancel { .. })
        ));
    }

    #[test]
    fn names_are_readable_and_unique_among_live_agents() {
        let mut agents = Agents::default();
        let first = agents.join("Claude Code");
        let second = agents.join("claude code");
        assert_eq!(&*first, "claude-code");
        assert_eq!(&*second, "claude-code-2");
        assert_eq!(&*agents.join("\u{1b}[2J"), "2j");
        assert_eq!(&*agents.join(" ☃ "), "agent");
        agents.leave(&first);
        assert_eq!(&*agents.join("Claude Code"), "claude-code");
    }

    #[test]
    fn a_held_tab_refuses_others_until_released_and_leaving_releases() {
        let mut agents = Agents::default();
        let (a, b) = (agents.join("a"), agents.join("b"));
        agents.opened(Some(&a), 7);
        assert_eq!(agents.admit(Some(&a), Some(7)), Ok(()));
        let refused = agents.admit(Some(&b), Some(7)).unwrap_err();
        assert_eq!(refused.code, ErrorCode::TabHeld);
        assert!(refused.message.contains("held by agent a"), "{refused:?}");
        // No agent scope (the popup, the server's own checks): never refused.
        assert_eq!(agents.admit(None, Some(7)), Ok(()));
        assert_eq!(
            agents.claim(&b, 7, true).unwrap_err().code,
            ErrorCode::TabHeld
        );
        agents.claim(&a, 7, false).unwrap();
        agents.claim(&b, 7, true).unwrap();
        assert_eq!(agents.holder(7), Some(&b));
        assert_eq!(agents.leave(&b), vec![7]);
        assert_eq!(agents.admit(Some(&a), Some(7)), Ok(()));
    }

    #[test]
    fn a_stopped_agent_is_refused_until_allowed_again() {
        let mut agents = Agents::default();
        let a = agents.join("a");
        let call = agents.call(&a).unwrap();
        assert_eq!(agents.list()[0].running, 1);
        assert!(agents.set_stopped(&a, true));
        assert!(*call.stopped.borrow());
        drop(call);
        assert_eq!(agents.list()[0].running, 0);
        assert_eq!(
            agents.admit(Some(&a), None).unwrap_err().code,
            ErrorCode::AgentStopped
        );
        assert!(agents.set_stopped(&a, false));
        assert_eq!(agents.admit(Some(&a), None), Ok(()));
        assert!(!agents.set_stopped("nobody", true));
    }
}

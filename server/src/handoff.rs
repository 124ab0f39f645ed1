//! `browser_handoff` (issue 28): a step the person does themselves — a sign-in, a one-time code, a
//! CAPTCHA, a payment. Tabwire brings the tab to the front and shows the agent's message in the
//! extension's own window (`extension/handoff.html`: a page of the extension, which the site's
//! scripts can neither read nor imitate; SECURITY.md), asks through MCP elicitation too where the
//! client can (Done / Cancel), and answers once the person said Done or the call's condition holds
//! (text or an element on the page, or the URL), with the page's URL and title then;
//! `HANDOFF_CANCELLED` on Cancel, `HANDOFF_TIMEOUT` when time runs out. Meanwhile the hub refuses
//! every agent's call to the tab with `WAITING_FOR_PERSON` (`hub::agents`), and Tabwire reads
//! nothing the person types: the condition is checked on the page's text, elements and URL only.
//!
//! The hand-off's own requests (the person's answer, the condition, closing the window) run in no
//! agent's scope (spawned tasks), which is what lets them through while the tab waits.

use std::time::Duration;

use bridge::browser_ops::{BrowserOp, TabList};
use bridge::handoff::{
    HandoffAnswer, MAX_ANSWER_WAIT_MS, MAX_MESSAGE_CHARS, PersonSaid, ShowHandoff,
};
use bridge::page_ops::{PageOp, Target, WaitFor};
use bridge::{ErrorCode, TabId, WireError};
use rmcp::model::{CallToolResult, ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::ElicitationMode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::hub::{CallFiles, Hub};
use crate::mcp::typed::TabIdArgument;
use crate::mcp::{
    About, Call, Failure, Hints, Needs, ReadFrom, Reading, ServerTool, TabwireMcp, success,
};

/// The time the person has when the call names none, and the most it may name.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
const MAX_TIMEOUT: Duration = Duration::from_secs(3600);

/// How long one look for the condition waits on the page.
const CONDITION_LOOK_MS: u64 = 500;

/// What means the person is done, besides their Done.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum DoneWhen {
    /// This text shows on the page.
    Text(String),
    /// An element matching this CSS selector is on the page.
    Selector(String),
    /// The tab's URL matches this pattern (`*` matches any run of characters).
    UrlMatches(String),
}

pub(crate) struct HandoffArgs {
    message: String,
    done_when: Option<DoneWhen>,
    timeout: Duration,
}

/// `browser_handoff`'s arguments as the call gives them (and as `tools/list` shows them).
#[derive(Deserialize, JsonSchema)]
pub(crate) struct GivenArgs {
    #[schemars(length(max = MAX_MESSAGE_CHARS))]
    message: String,
    /// Exactly one of text, selector, url_matches
    done_when: Option<GivenDoneWhen>,
    #[schemars(range(min = 1, max = MAX_TIMEOUT.as_secs()))]
    timeout_s: Option<u64>,
}

/// `done_when` as given: exactly one of its fields, checked by [`done_when`].
#[derive(Deserialize, JsonSchema)]
pub(crate) struct GivenDoneWhen {
    text: Option<String>,
    selector: Option<String>,
    url_matches: Option<String>,
}

/// `browser_handoff`.
pub(crate) struct BrowserHandoff;

impl ServerTool for BrowserHandoff {
    const ABOUT: About = About {
        name: "browser_handoff",
        title: "Hand a step to the person",
        description: "Let the user do a step (sign-in, code, CAPTCHA, payment) instead of typing \
            their secrets: shows them message; answers when they are done or done_when holds.",
        hints: Hints::says(false, false, true),
        tab_id: TabIdArgument::Shown(None),
        needs: Needs::NamedTab,
    };
    type Given = GivenArgs;
    type Args = HandoffArgs;

    /// Looking for text or an element reads the page: the page tools' gate, as for a read.
    fn needs(args: &HandoffArgs) -> Needs {
        match args.done_when {
            Some(DoneWhen::Text(_) | DoneWhen::Selector(_)) => Needs::AllowedPage,
            Some(DoneWhen::UrlMatches(_)) | None => Needs::NamedTab,
        }
    }

    async fn run(mcp: &TabwireMcp, call: Call<HandoffArgs>) -> Result<CallToolResult, Failure> {
        let tab = call.tab();
        let args = &call.args;
        let origin = match &call.page {
            Some(page) => page.origin.clone(),
            None => tab_origin(&mcp.hub, tab).await?,
        };
        let handoff = uuid::Uuid::new_v4().to_string();
        let show = ShowHandoff {
            handoff: handoff.clone(),
            tab,
            message: args.message.clone(),
        };
        // In the agent's scope: the hub refuses another agent's tab, and marks this one waiting.
        mcp.hub.browser(BrowserOp::Handoff(show)).await?;
        let mut end = EndOnDrop {
            hub: mcp.hub.clone(),
            handoff: Some(handoff.clone()),
        };
        let outcome = tokio::select! {
            said = unscoped(person_answer(mcp.hub.clone(), handoff.clone())) => said,
            said = ask_through_elicitation(&call.peer, &args.message) => said,
            () = unscoped(condition_holds(mcp.hub.clone(), tab, origin.clone(), args.done_when.clone())) => {
                Ok(How::Condition)
            }
            () = tokio::time::sleep(args.timeout) => Err(WireError::new(
                ErrorCode::HandoffTimeout,
                format!(
                    "the user was not done within {} s: the hand-off is over and the tab is free again",
                    args.timeout.as_secs()
                ),
            )),
        };
        // Over before the answer: the tab is free when the agent reads it.
        end.now().await;
        let outcome = outcome?;
        let (url, title) = tab_now(mcp.hub.clone(), tab).await?;
        Ok(success(json!({
            "tab_id": tab,
            "done": match outcome {
                How::Person => "the user said done",
                How::Condition => "done_when holds",
            },
            "url": url,
            "title": title,
            "page_content": "the title is the page's own words",
        })))
    }
}

impl ReadFrom<GivenArgs> for HandoffArgs {
    fn read_from(given: GivenArgs, _: &mut Reading<'_>) -> Result<Self, WireError> {
        let message = given.message.trim();
        if message.is_empty() {
            return Err(invalid("`message` must be the words the user reads"));
        }
        Ok(HandoffArgs {
            message: message.to_owned(),
            done_when: given.done_when.map(done_when).transpose()?,
            timeout: given.timeout_s.map_or(DEFAULT_TIMEOUT, Duration::from_secs),
        })
    }
}

/// How the hand-off ended well.
enum How {
    Person,
    Condition,
}

fn done_when(when: GivenDoneWhen) -> Result<DoneWhen, WireError> {
    let given = |text: Option<String>| text.filter(|v| !v.is_empty());
    match (
        given(when.text),
        given(when.selector),
        given(when.url_matches),
    ) {
        (Some(t), None, None) => Ok(DoneWhen::Text(t)),
        (None, Some(s), None) => Ok(DoneWhen::Selector(s)),
        (None, None, Some(u)) => Ok(DoneWhen::UrlMatches(u)),
        _ => Err(invalid(
            "`done_when` takes exactly one of `text`, `selector` or `url_matches`",
        )),
    }
}

/// Runs `work` in a task of its own, in no agent's scope: the hand-off's own requests pass the
/// tab's wait (which refuses every agent).
async fn unscoped<T: Send + 'static>(
    work: impl std::future::Future<Output = T> + Send + 'static,
) -> T {
    let task = tokio::spawn(work);
    let abort = task.abort_handle();
    let _stop = scopeguard(move || abort.abort());
    match task.await {
        Ok(value) => value,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

/// Calls `f` when dropped (so a task ends with the future waiting on it).
fn scopeguard(f: impl FnOnce()) -> impl Drop {
    struct Guard<F: FnOnce()>(Option<F>);
    impl<F: FnOnce()> Drop for Guard<F> {
        fn drop(&mut self) {
            if let Some(f) = self.0.take() {
                f();
            }
        }
    }
    Guard(Some(f))
}

/// The person's Done or Cancel in the extension's window.
async fn person_answer(hub: std::sync::Arc<Hub>, handoff: String) -> Result<How, WireError> {
    loop {
        let op = BrowserOp::HandoffAnswer {
            handoff: handoff.clone(),
            wait_ms: MAX_ANSWER_WAIT_MS,
        };
        let answer: HandoffAnswer = decode(hub.browser(op).await?)?;
        match answer.said {
            PersonSaid::Nothing => continue,
            PersonSaid::Done => return Ok(How::Person),
            PersonSaid::Cancel => return Err(cancelled("the user cancelled in Tabwire's window")),
        }
    }
}

/// The person's Done or Cancel through the MCP client, where it can ask (else never).
async fn ask_through_elicitation(
    peer: &rmcp::Peer<rmcp::RoleServer>,
    message: &str,
) -> Result<How, WireError> {
    if !peer
        .supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
    {
        return std::future::pending().await;
    }
    let schema = ElicitationSchema::builder()
        .optional_bool("done", true)
        .description("Done")
        .build()
        .expect("a one-boolean form is a valid elicitation schema");
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!(
            "{message}\n\n(The tab is in front; accept when you are done, decline to cancel.)"
        ),
        requested_schema: schema,
    };
    match peer
        .create_elicitation_with_timeout(params, Some(MAX_TIMEOUT))
        .await
    {
        Ok(answer) => match answer.action {
            ElicitationAction::Accept
                if answer.content.as_ref().and_then(|c| c.get("done"))
                    != Some(&Value::Bool(false)) =>
            {
                Ok(How::Person)
            }
            _ => Err(cancelled("the user cancelled when asked")),
        },
        // The client could not ask after all: the window still can.
        Err(e) => {
            tracing::info!(error = %e, "the client could not ask its user about a hand-off");
            std::future::pending().await
        }
    }
}

/// Resolves once `done_when` holds on `tab` (never without one). A look that fails (the page is
/// loading after the person's submit) is only "not yet".
async fn condition_holds(
    hub: std::sync::Arc<Hub>,
    tab: TabId,
    origin: String,
    when: Option<DoneWhen>,
) {
    let Some(when) = when else {
        return std::future::pending().await;
    };
    loop {
        let started = tokio::time::Instant::now();
        let holds = match &when {
            DoneWhen::UrlMatches(pattern) => tab_now(hub.clone(), tab)
                .await
                .is_ok_and(|(url, _)| glob_matches(pattern, &url)),
            DoneWhen::Text(text) => look(&hub, tab, &origin, WaitFor::Text(text.clone())).await,
            DoneWhen::Selector(selector) => {
                let element = WaitFor::Element(Target::Selector(selector.clone()));
                look(&hub, tab, &origin, element).await
            }
        };
        if holds {
            return;
        }
        // A look that failed at once (a page loading) is not retried in a tight loop.
        tokio::time::sleep_until(started + Duration::from_millis(CONDITION_LOOK_MS)).await;
    }
}

/// Whether `what` shows on `tab`'s page within a short wait (`page_wait`).
async fn look(hub: &Hub, tab: TabId, origin: &str, what: WaitFor) -> bool {
    let wait = PageOp::Wait {
        what,
        gone: false,
        timeout_ms: CONDITION_LOOK_MS,
    };
    let waited = hub
        .page_op(
            &wait,
            Some(tab),
            None,
            Some(origin.to_owned()),
            false,
            CallFiles::Named(Vec::new()),
        )
        .await;
    waited.is_ok()
}

/// The tab's URL and title now.
async fn tab_now(hub: std::sync::Arc<Hub>, tab: TabId) -> Result<(String, String), WireError> {
    let list: TabList = decode(hub.browser(BrowserOp::ListTabs).await?)?;
    list.tabs
        .into_iter()
        .find(|t| t.id == tab)
        .map(|t| (t.url, t.title))
        .ok_or_else(|| {
            WireError::new(
                ErrorCode::TabClosed,
                format!("tab {tab} closed during the hand-off"),
            )
        })
}

/// The origin `tab` shows (the one a text or element condition reads).
async fn tab_origin(hub: &std::sync::Arc<Hub>, tab: TabId) -> Result<String, WireError> {
    let (url, _) = tab_now(hub.clone(), tab).await?;
    bridge::origin::text_of(&url).ok_or_else(|| {
        invalid(&format!(
            "tab {tab} shows no website ({url}): nothing to hand over there"
        ))
    })
}

/// Whether `url` matches `pattern`, where `*` matches any run of characters (the whole URL).
fn glob_matches(pattern: &str, url: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = url.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// Closes the hand-off's window and frees the tab, however the call ended: at once on an
/// answer ([`EndOnDrop::now`]), else (the client cancelled the call) when dropped.
struct EndOnDrop {
    hub: std::sync::Arc<Hub>,
    handoff: Option<String>,
}

impl EndOnDrop {
    async fn now(&mut self) {
        if let Some(handoff) = self.handoff.take() {
            end(self.hub.clone(), handoff).await;
        }
    }
}

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        if let Some(handoff) = self.handoff.take() {
            tokio::spawn(end(self.hub.clone(), handoff));
        }
    }
}

/// Ends hand-off `handoff` (in no agent's scope: the tab still waits until it is over).
async fn end(hub: std::sync::Arc<Hub>, handoff: String) {
    let ended = unscoped(async move { hub.browser(BrowserOp::EndHandoff { handoff }).await });
    if let Err(e) = ended.await {
        tracing::warn!(error = %e.message, "closing a hand-off's window");
    }
}

fn decode<T: serde::de::DeserializeOwned>(answer: Value) -> Result<T, WireError> {
    serde_json::from_value(answer).map_err(|e| {
        WireError::new(
            ErrorCode::Protocol,
            format!("the extension's answer does not fit: {e}"),
        )
    })
}

fn cancelled(why: &str) -> WireError {
    WireError::new(
        ErrorCode::HandoffCancelled,
        format!("{why}: the step was not done; ask the user how to go on"),
    )
}

fn invalid(problem: &str) -> WireError {
    WireError::new(
        ErrorCode::InvalidArgs,
        format!("browser_handoff: {problem}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_patterns_match_the_whole_url_with_wildcards() {
        for (pattern, url, matches) in [
            ("https://a.example/*", "https://a.example/home", true),
            (
                "*/welcome*",
                "http://127.0.0.1:8/plain/welcome.html?x",
                true,
            ),
            ("https://a.example/", "https://a.example/", true),
            ("https://a.example/", "https://a.example/x", false),
            ("*/welcome", "http://h/welcome/x", false),
            ("*", "anything", true),
        ] {
            assert_eq!(glob_matches(pattern, url), matches, "{pattern} on {url}");
        }
    }

    #[test]
    fn a_condition_is_exactly_one_of_its_kinds() {
        let when = |v: Value| done_when(serde_json::from_value(v).unwrap());
        assert_eq!(
            when(json!({"text": "Welcome"})),
            Ok(DoneWhen::Text("Welcome".into()))
        );
        assert_eq!(when(json!({})).unwrap_err().code, ErrorCode::InvalidArgs);
        assert_eq!(
            when(json!({"text": "a", "selector": "b"}))
                .unwrap_err()
                .code,
            ErrorCode::InvalidArgs
        );
    }
}

//! The requests sent to the browser and not answered yet, by id, each with the connection it went
//! to (only that connection may answer it) and a typed waiter: a call and a state request wait for
//! a value, `open_tab` for the tab it opened, a `browser` request for its op's answer, and an answer of another kind fails the request
//! with `PROTOCOL` instead of reaching the wrong waiter.

use std::collections::HashMap;

use bridge::protocol::{LoadedPage, RequestId};
use bridge::{ErrorCode, TabId, WireError};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::ConnId;

/// A page's report on a long request (`progress` frame).
#[derive(Debug, Clone, PartialEq)]
pub struct PageProgress {
    pub message: Option<String>,
    pub progress: Option<f64>,
    pub total: Option<f64>,
}

/// A tab `open_tab` opened, and what the extension saw of its page once it had loaded (`None`:
/// not loaded within the wait, or an extension that does not tell).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpenedTab {
    pub tab: TabId,
    pub loaded: Option<LoadedPage>,
}

type Reply<T> = oneshot::Sender<Result<T, WireError>>;

/// A call's result, and where the page landed when its last action loaded another one.
#[derive(Debug, Clone, PartialEq)]
pub struct CallDone {
    pub result: Value,
    pub navigated: Option<String>,
}

/// Who waits for a request, and for what.
#[derive(Debug)]
pub enum Waiter {
    Call(Reply<CallDone>),
    State(Reply<Value>),
    OpenTab(Reply<OpenedTab>),
    Browser(Reply<Value>),
}

/// An answer from the browser.
#[derive(Debug)]
pub enum Answer {
    Call(Result<CallDone, WireError>),
    State(Result<Value, WireError>),
    OpenTab(Result<OpenedTab, WireError>),
    Browser(Result<Value, WireError>),
    /// A failure that answers any request (an `error` frame, an undecodable answer).
    Failed(WireError),
}

impl Waiter {
    fn kind(&self) -> &'static str {
        match self {
            Waiter::Call(_) => "call_tool",
            Waiter::State(_) => "request_state",
            Waiter::OpenTab(_) => "open_tab",
            Waiter::Browser(_) => "browser",
        }
    }

    /// Hands `answer` over, or fails the request when the answer is of another kind.
    fn deliver(self, answer: Answer) {
        let mismatch = |waiter: &Waiter, answer: &Answer| {
            let answered = match answer {
                Answer::Call(_) => "call_tool",
                Answer::State(_) => "request_state",
                Answer::OpenTab(_) => "open_tab",
                Answer::Browser(_) => "browser",
                Answer::Failed(_) => "error",
            };
            WireError::new(
                ErrorCode::Protocol,
                format!(
                    "the extension answered a {} request with a {answered} answer",
                    waiter.kind()
                ),
            )
        };
        // A waiter that gave up (its caller went away) cannot be told: nothing to do then.
        match (self, answer) {
            (Waiter::Call(reply), Answer::Call(outcome)) => drop(reply.send(outcome)),
            (Waiter::State(reply), Answer::State(outcome)) => drop(reply.send(outcome)),
            (Waiter::Browser(reply), Answer::Browser(outcome)) => drop(reply.send(outcome)),
            (Waiter::OpenTab(reply), Answer::OpenTab(outcome)) => drop(reply.send(outcome)),
            (waiter, Answer::Failed(error)) => waiter.fail(error),
            (waiter, answer) => {
                let error = mismatch(&waiter, &answer);
                waiter.fail(error);
            }
        }
    }

    pub fn fail(self, error: WireError) {
        match self {
            Waiter::Call(reply) => drop(reply.send(Err(error))),
            Waiter::State(reply) => drop(reply.send(Err(error))),
            Waiter::Browser(reply) => drop(reply.send(Err(error))),
            Waiter::OpenTab(reply) => drop(reply.send(Err(error))),
        }
    }
}

/// How to wait for one kind of request: `Waiter::Call`, `Waiter::State`, `Waiter::OpenTab` or
/// `Waiter::Browser`.
pub type Kind<T> = fn(Reply<T>) -> Waiter;

/// What a started request waits on.
pub struct Started<T> {
    pub id: RequestId,
    pub answer: oneshot::Receiver<Result<T, WireError>>,
    pub progress: mpsc::UnboundedReceiver<PageProgress>,
}

pub struct Pending {
    pub conn: ConnId,
    pub tab: Option<TabId>,
    waiter: Waiter,
    /// Where the page's `progress` frames for this request go.
    progress: mpsc::UnboundedSender<PageProgress>,
}

/// What became of an answer.
#[derive(Debug, PartialEq, Eq)]
pub enum Resolution {
    Delivered,
    /// No such request (it finished already, e.g. after a timeout).
    Unknown,
    /// The request went to another connection: not this one's to answer.
    WrongConnection,
}

#[derive(Default)]
pub struct PendingTable {
    requests: HashMap<RequestId, Pending>,
}

impl PendingTable {
    /// Registers request `id`, sent to `conn` (about `tab`), waited for as `kind`.
    pub fn insert<T>(
        &mut self,
        id: RequestId,
        conn: ConnId,
        tab: Option<TabId>,
        kind: Kind<T>,
    ) -> Started<T> {
        let (reply, answer) = oneshot::channel();
        let (progress_tx, progress) = mpsc::unbounded_channel();
        self.requests.insert(
            id.clone(),
            Pending {
                conn,
                tab,
                waiter: kind(reply),
                progress: progress_tx,
            },
        );
        Started {
            id,
            answer,
            progress,
        }
    }

    /// `conn` answered request `id`.
    pub fn resolve(&mut self, conn: ConnId, id: &str, answer: Answer) -> Resolution {
        match self.requests.get(id) {
            None => Resolution::Unknown,
            Some(pending) if pending.conn != conn => Resolution::WrongConnection,
            Some(_) => {
                if let Some(pending) = self.requests.remove(id) {
                    pending.waiter.deliver(answer);
                }
                Resolution::Delivered
            }
        }
    }

    /// Passes a page's progress report on to whoever waits for `id`, if `conn` owes it.
    pub fn progress(&self, conn: ConnId, id: &str, report: PageProgress) -> bool {
        match self.requests.get(id) {
            Some(pending) if pending.conn == conn => pending.progress.send(report).is_ok(),
            _ => false,
        }
    }

    /// Forgets request `id` (its waiter gave up); the connection it went to, if it was pending.
    pub fn remove(&mut self, id: &str) -> Option<ConnId> {
        self.requests.remove(id).map(|p| p.conn)
    }

    /// Fails every request `which` selects with `error`; how many there were.
    pub fn fail_where(&mut self, which: impl Fn(&Pending) -> bool, error: &WireError) -> usize {
        let ids: Vec<RequestId> = self
            .requests
            .iter()
            .filter(|(_, p)| which(p))
            .map(|(id, _)| id.clone())
            .collect();
        for id in &ids {
            if let Some(pending) = self.requests.remove(id) {
                pending.waiter.fail(error.clone());
            }
        }
        ids.len()
    }

    #[cfg_attr(not(test), allow(dead_code))] // For tests, and the bound on pending requests.
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn done(result: Value) -> CallDone {
        CallDone {
            result,
            navigated: None,
        }
    }

    #[test]
    fn an_answer_reaches_its_typed_waiter_from_its_own_connection_only() {
        let mut table = PendingTable::default();
        let mut call = table.insert("c".into(), 1, Some(7), Waiter::Call);
        let mut open = table.insert("o".into(), 1, None, Waiter::OpenTab);
        assert_eq!(
            table.resolve(2, "c", Answer::Call(Ok(done(json!("forged"))))),
            Resolution::WrongConnection
        );
        assert_eq!(
            table.resolve(1, "c", Answer::Call(Ok(done(json!(1))))),
            Resolution::Delivered
        );
        assert_eq!(call.answer.try_recv().unwrap(), Ok(done(json!(1))));
        let opened = OpenedTab {
            tab: 5,
            loaded: None,
        };
        table.resolve(1, "o", Answer::OpenTab(Ok(opened)));
        assert_eq!(open.answer.try_recv().unwrap(), Ok(opened));
        // Late: answered once only.
        assert_eq!(
            table.resolve(1, "c", Answer::Call(Ok(done(json!(2))))),
            Resolution::Unknown
        );
        assert!(table.is_empty());
    }

    #[test]
    fn an_answer_of_another_kind_fails_the_request() {
        let mut table = PendingTable::default();
        let mut state = table.insert("s".into(), 1, Some(7), Waiter::State);
        table.resolve(1, "s", Answer::Call(Ok(done(json!(1)))));
        let error = state.answer.try_recv().unwrap().unwrap_err();
        assert_eq!(error.code, ErrorCode::Protocol);
        assert_eq!(
            error.message,
            "the extension answered a request_state request with a call_tool answer"
        );
        let mut call = table.insert("c".into(), 1, None, Waiter::Call);
        let failed = WireError::new(ErrorCode::Protocol, "malformed");
        table.resolve(1, "c", Answer::Failed(failed.clone()));
        assert_eq!(call.answer.try_recv().unwrap(), Err(failed));
    }

    #[test]
    fn progress_goes_to_the_waiter_and_failures_reach_every_selected_request() {
        let mut table = PendingTable::default();
        let mut on_tab_7 = table.insert("a".into(), 1, Some(7), Waiter::Call);
        let mut on_tab_8 = table.insert("b".into(), 1, Some(8), Waiter::Call);
        let report = PageProgress {
            message: Some("half".into()),
            progress: Some(0.5),
            total: None,
        };
        assert!(
            !table.progress(2, "a", report.clone()),
            "another connection"
        );
        assert!(table.progress(1, "a", report.clone()));
        assert_eq!(on_tab_7.progress.try_recv().unwrap(), report);
        let closed = WireError::new(ErrorCode::TabClosed, "gone");
        assert_eq!(table.fail_where(|p| p.tab == Some(7), &closed), 1);
        assert_eq!(on_tab_7.answer.try_recv().unwrap(), Err(closed));
        assert!(on_tab_8.answer.try_recv().is_err(), "still waiting");
        assert_eq!(table.remove("b"), Some(1));
        assert_eq!(table.len(), 0);
    }
}

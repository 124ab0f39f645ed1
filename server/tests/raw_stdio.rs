//! The real `tabwire` binary fed raw JSON-RPC lines on stdin, the way clients nobody on the team wrote
//! may send them: requests before `initialize`, unknown methods, malformed lines and old protocol
//! versions get JSON-RPC answers (errors where due) and never a crash or a closed pipe.

mod support;

use support::*;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{ChildStdin, ChildStdout};

struct Raw {
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    child: tokio::process::Child,
    _setup: Setup,
}

impl Raw {
    fn start() -> Raw {
        let setup = Setup::new();
        let mut child = setup
            .command(&[])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Raw {
            stdin,
            lines,
            child,
            _setup: setup,
        }
    }

    async fn send(&mut self, line: &str) {
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }

    /// The next message with this `id` (notifications in between are skipped).
    async fn answer(&mut self, id: Value) -> Value {
        loop {
            let line = tokio::time::timeout(DEADLINE, self.lines.next_line())
                .await
                .expect("an answer within the deadline")
                .unwrap()
                .expect("stdout stays open");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    async fn initialize(&mut self, id: u64, version: &str) -> Value {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"}}})
            .to_string(),
        )
        .await;
        self.answer(json!(id)).await
    }
}

#[tokio::test]
async fn early_unknown_and_malformed_requests_get_json_rpc_errors() {
    let mut raw = Raw::start();
    // A line that is not JSON-RPC at all must not end the session.
    raw.send("this is not json").await;
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .await;
    let early = raw.answer(json!(1)).await;
    assert!(early["error"]["code"].is_i64(), "{early}");
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"no/such_method","params":{}}"#)
        .await;
    let unknown = raw.answer(json!(2)).await;
    assert!(unknown["error"]["code"].is_i64(), "{unknown}");

    // The session still starts and works after all that.
    let init = raw.initialize(3, "2025-06-18").await;
    assert_eq!(init["result"]["serverInfo"]["name"], "tabwire", "{init}");
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","id":4,"method":"no/such_method"}"#)
        .await;
    assert_eq!(raw.answer(json!(4)).await["error"]["code"], -32601);
    raw.send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#)
        .await;
    let listed = raw.answer(json!(5)).await;
    assert_eq!(
        listed["result"]["tools"][3]["name"], "site_state",
        "{listed}"
    );
    assert!(
        raw.child.try_wait().unwrap().is_none(),
        "tabwire must still run"
    );
}

#[tokio::test]
async fn older_protocol_versions_are_negotiated_down() {
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut raw = Raw::start();
        let init = raw.initialize(1, version).await;
        assert_eq!(init["result"]["protocolVersion"], version, "{init}");
        assert_eq!(
            init["result"]["capabilities"]["resources"]["subscribe"], true,
            "{init}"
        );
    }
    // A version from the future gets one the server speaks.
    let mut raw = Raw::start();
    let init = raw.initialize(1, "2099-01-01").await;
    let chosen = init["result"]["protocolVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(chosen.as_str() < "2099-01-01", "{init}");
}

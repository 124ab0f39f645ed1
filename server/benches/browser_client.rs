//! Benchmark (not a test): rmcp's own client (this program, release build) driving the real
//! browser that `scripts/bench.py` set up, so that the Python client is not what limits the
//! throughput. It starts its own `tabwire mcp`, which joins bench.py's as a peer. Run by bench.py
//! (`cargo bench -p server --bench browser_client`) with TABWIRE_BIN, TABWIRE_BENCH_ARGS (the
//! `tabwire` arguments, JSON) and TABWIRE_BENCH_TABS (the tab ids, JSON); prints one line.

#[path = "../tests/support/mod.rs"]
mod support;

use support::*;

const SEQUENTIAL: usize = 1000;
const CONCURRENT: usize = 4000;
const IN_FLIGHT: usize = 16;

fn from_env<T: serde::de::DeserializeOwned>(name: &str) -> T {
    let text =
        std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: run scripts/bench.py"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    use futures_util::stream::{self, StreamExt as _};
    let binary = std::env::var("TABWIRE_BIN").expect("TABWIRE_BIN");
    let args: Vec<String> = from_env("TABWIRE_BENCH_ARGS");
    let tabs: Vec<i64> = from_env("TABWIRE_BENCH_TABS");
    let mut command = tokio::process::Command::new(binary);
    command.args(&args).env("RUST_LOG", "warn");
    let (transport, _stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let client = Arc::new(Counter::default().serve(transport).await.unwrap());
    let list = |i: usize| json!({"tab_id": tabs[i % tabs.len()]});
    let deadline = Instant::now() + Duration::from_secs(30);
    // A peer has the browser's tools once the hub relayed them.
    let ready = |out: Result<CallToolResult, _>| out.is_ok_and(|o| o.is_error == Some(false));
    while !ready(
        client
            .call_tool(
                CallToolRequestParams::new("todomvc_list_todos")
                    .with_arguments(serde_json::from_value(list(0)).unwrap()),
            )
            .await,
    ) {
        assert!(
            Instant::now() < deadline,
            "the peer never got the page's tools"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for i in 0..200 {
        call(&client, "todomvc_list_todos", list(i)).await;
    }
    let mut latencies = Vec::new();
    for _ in 0..SEQUENTIAL {
        let started = Instant::now();
        let out = call(&client, "todomvc_list_todos", list(0)).await;
        latencies.push(started.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(out.is_error, Some(false));
    }
    latencies.sort_by(f64::total_cmp);
    let at = |q: f64| latencies[((latencies.len() as f64) * q) as usize];
    let started = Instant::now();
    let errors = stream::iter(0..CONCURRENT)
        .map(|i| {
            let client = client.clone();
            let args = list(i);
            async move { call(&client, "todomvc_list_todos", args).await }
        })
        .buffer_unordered(IN_FLIGHT)
        .filter(|out| std::future::ready(out.is_error != Some(false)))
        .count()
        .await;
    let rate = CONCURRENT as f64 / started.elapsed().as_secs_f64();
    assert_eq!(errors, 0);
    println!(
        "sequential p50 {:.2} ms  p90 {:.2} ms  p99 {:.2} ms; {rate:.0} calls/s with {IN_FLIGHT} in flight over {} tabs ({CONCURRENT} calls)",
        at(0.5),
        at(0.9),
        at(0.99),
        tabs.len()
    );
}

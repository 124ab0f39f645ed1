//! Benchmark (not a test): round trips through the real `tabwire` binary with an instant fake
//! page — latency of sequential calls, throughput with 16 in flight over 4 tabs, and the server's
//! RSS. Run: `cargo bench -p server --bench round_trip` (TABWIRE_BIN picks another binary).

#[path = "../tests/support/mod.rs"]
mod support;

use support::*;

/// The client (this program) is part of the measurement; it is built with the bench profile.
#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    use futures_util::stream::{self, StreamExt as _};
    let setup = Setup::new();
    let (transport, _stderr) = TokioChildProcess::builder(setup.command(&[]))
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let pid = transport.id().unwrap();
    let client = Arc::new(Counter::default().serve(transport).await.unwrap());
    let mut socket = setup.extension().await;
    offer_todomvc_tabs(&mut socket, 4).await;
    let page = tokio::spawn(play_page(socket));
    client.list_all_tools().await.unwrap();
    let idle_rss = rss_kib(pid);

    for _ in 0..300 {
        call(&client, "todomvc_list_todos", json!({})).await;
    }
    let mut latencies = Vec::new();
    for _ in 0..3000 {
        let started = Instant::now();
        let out = call(&client, "todomvc_list_todos", json!({})).await;
        latencies.push(started.elapsed());
        assert_eq!(out.is_error, Some(false));
    }
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() as f64) * q) as usize];

    let total = 10_000;
    let started = Instant::now();
    let errors = stream::iter(0..total)
        .map(|i| {
            let client = client.clone();
            async move {
                let tab = (i % 4) + 1;
                call(&client, "todomvc_list_todos", json!({"tab_id": tab})).await
            }
        })
        .buffer_unordered(16)
        .filter(|out| std::future::ready(out.is_error != Some(false)))
        .count()
        .await;
    let elapsed = started.elapsed();
    assert_eq!(errors, 0);
    eprintln!(
        "sequential: p50 {:?} p90 {:?} p99 {:?}; 16 in flight: {:.0} calls/s; RSS idle {} KiB, after {} KiB",
        at(0.5),
        at(0.9),
        at(0.99),
        total as f64 / elapsed.as_secs_f64(),
        idle_rss,
        rss_kib(pid)
    );
    page.abort();
}

//! Many agents on the 2026-07-28 revision (no sessions), each following
//! the hints it gets, so each threads its own trail: one server keeping
//! trails in process, against two replicas sharing them in Redis.
//!
//! Every agent makes sessions of up to 12 calls: a search, then the first
//! actionable hint of each result, as sent (trail included), then a new
//! search. Configurations, in one run so they compare as ratios:
//!
//! 1. one server, trails in process;
//! 2. two replicas and Redis, each agent's calls alternating between them
//!    (no affinity: every call reads the trail another replica wrote);
//! 3. two replicas and Redis, each agent kept on one replica (affinity).
//!
//! Run: `cargo bench --bench trails` (needs `redis-server` on PATH; on
//! Debian, `apt-get install redis-server`). Knobs: `SIGNPOST_BENCH_AGENTS`
//! (32), `SIGNPOST_BENCH_SECS` (10 per configuration). Results:
//! BENCHMARKS.md.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_signpost");
const QUERIES: [&str; 6] = ["refund", "order", "payment", "customer", "invoice", "cart"];
const SESSION_CALLS: usize = 12;

struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

fn redis() -> (Process, String) {
    let port = free_port();
    let mut child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server on PATH (Debian: apt-get install redis-server)");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    assert!(lines.by_ref().map_while(Result::ok).any(|l| l.contains("Ready to accept")), "redis-server did not start");
    std::thread::spawn(move || for _ in lines {});
    (Process(child), format!("redis://127.0.0.1:{port}"))
}

fn server(args: &[&str]) -> (Process, String) {
    let mut child = Command::new(BIN)
        .args(["--http", "127.0.0.1:0", "--no-watch"])
        .args(args)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the signpost binary");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let url = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| l.strip_prefix("signpost: listening on ").map(|u| u.trim().to_owned()))
        .expect("the server listens");
    std::thread::spawn(move || for _ in lines {});
    (Process(child), url)
}

/// One sessionless `tools/call`: its result.
async fn call(client: &reqwest::Client, url: &str, tool: &str, args: &Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": args,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let text = client
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", tool)
        .json(&body)
        .send()
        .await
        .expect("the server answers")
        .text()
        .await
        .expect("a body");
    let message = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .chain(std::iter::once(text.as_str()))
        .find_map(|l| serde_json::from_str::<Value>(l.trim()).ok().filter(|v| v.get("id").is_some()))
        .expect("a JSON-RPC response");
    message["result"].clone()
}

#[derive(Default)]
struct Tally {
    latencies: Vec<Duration>,
    /// Calls whose trail was refused or not kept (should be none).
    notices: u64,
    /// Calls that followed a hint (on a trail).
    followed: u64,
}

/// One agent for `secs`: `pick(i)` is the server of its i-th call.
async fn agent(agent: usize, urls: Vec<String>, affinity: bool, until: Instant) -> Tally {
    let client = reqwest::Client::new();
    let mut tally = Tally::default();
    let mut next: Option<(String, Value)> = None;
    let mut steps = 0;
    let mut i = agent;
    while Instant::now() < until {
        let (tool, args) = match next.take() {
            Some(hint) if steps < SESSION_CALLS => hint,
            _ => {
                steps = 0;
                ("search".to_owned(), json!({"query": QUERIES[i % QUERIES.len()]}))
            }
        };
        let url = if affinity { &urls[agent % urls.len()] } else { &urls[i % urls.len()] };
        let started = Instant::now();
        let result = call(&client, url, &tool, &args).await;
        tally.latencies.push(started.elapsed());
        tally.notices += u64::from(result["structuredContent"].get("trail_notice").is_some());
        tally.followed += u64::from(args.get("trail").is_some());
        next = result["structuredContent"]["hints"]
            .as_array()
            .and_then(|hints| hints.iter().find(|h| h["actionable"] == true))
            .map(|h| (h["tool"].as_str().unwrap_or_default().to_owned(), h["args"].clone()));
        steps += 1;
        i += 1;
    }
    tally
}

async fn run(name: &str, urls: &[String], affinity: bool, agents: usize, secs: u64) -> (f64, Duration) {
    // Warm up: compiled policy, connections, allocator.
    let warm = Instant::now() + Duration::from_secs(1);
    let mut set = tokio::task::JoinSet::new();
    for a in 0..agents {
        set.spawn(agent(a, urls.to_vec(), affinity, warm));
    }
    set.join_all().await;
    let started = Instant::now();
    let until = started + Duration::from_secs(secs);
    let mut set = tokio::task::JoinSet::new();
    for a in 0..agents {
        set.spawn(agent(a, urls.to_vec(), affinity, until));
    }
    let tallies = set.join_all().await;
    let elapsed = started.elapsed().as_secs_f64();
    let mut latencies: Vec<Duration> = tallies.iter().flat_map(|t| t.latencies.iter().copied()).collect();
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    let calls = latencies.len() as f64;
    let throughput = calls / elapsed;
    let (notices, followed) = tallies.iter().fold((0, 0), |(n, f), t| (n + t.notices, f + t.followed));
    println!(
        "{name:<44} {throughput:>8.0} calls/s  p50 {:>7.2} ms  p99 {:>7.2} ms  ({} calls, {followed} on a trail, \
         {notices} trail notices)",
        at(0.5).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        calls,
    );
    (throughput, at(0.99))
}

fn main() {
    let agents = std::env::var("SIGNPOST_BENCH_AGENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(32);
    let secs = std::env::var("SIGNPOST_BENCH_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(10);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    println!("{agents} agents following hints on trails, {secs} s per configuration");
    let (_one, one) = server(&[]);
    let (_redis, store) = redis();
    let (_a, a) = server(&["--state", &store]);
    let (_b, b) = server(&["--state", &store]);
    runtime.block_on(async {
        let (t1, p1) = run("one server, trails in process", std::slice::from_ref(&one), false, agents, secs).await;
        let replicas = [a.clone(), b.clone()];
        let (t2, p2) = run("two replicas + Redis, calls alternate", &replicas, false, agents, secs).await;
        let (t3, p3) = run("two replicas + Redis, each agent on one", &replicas, true, agents, secs).await;
        let ratio =
            |t: f64, p: Duration| format!("{:.2}× throughput, {:.2}× p99", t / t1, p.as_secs_f64() / p1.as_secs_f64());
        println!("alternating / in process: {}", ratio(t2, p2));
        println!("affinity / in process:    {}", ratio(t3, p3));
    });
}

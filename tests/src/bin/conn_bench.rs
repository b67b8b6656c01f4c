//! `conn_bench`: connection and round-trip throughput of MySQL-protocol
//! servers, measured side by side.
//!
//! ```text
//! conn_bench --target basalt=127.0.0.1:3306 --target mariadb=127.0.0.1:13306 \
//!            --user bench --password bench --rounds 3 --seconds 3 --connections 1,4,16 \
//!            [--workload connect --workload select1]
//! ```
//!
//! Two workloads, each at every connection count:
//! * `connect`: every client thread loops connect + authenticate +
//!   `SELECT 1` + quit; the rate is completed cycles per second.
//! * `select1`: every client thread keeps one connection and loops
//!   `SELECT 1`; the rate is round trips per second.
//!
//! Targets are measured interleaved (round 1: A, B; round 2: A, B; ...) so
//! that drift on the machine affects both alike; the report gives the
//! median of the rounds per target and the ratio of each target to the
//! first one. Clients use the `mysql` crate's text protocol.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

#[derive(Debug, Clone)]
struct Target {
    name: String,
    host: String,
    port: u16,
}

#[derive(Debug, Clone)]
struct Config {
    targets: Vec<Target>,
    user: String,
    password: String,
    rounds: usize,
    seconds: f64,
    connections: Vec<usize>,
    workloads: Vec<Workload>,
}

fn usage() -> ! {
    eprintln!(
        "usage: conn_bench --target NAME=HOST:PORT [--target ...] [--user U] [--password P] \
         [--rounds N] [--seconds S] [--connections 1,4,16] [--workload connect|select1 ...]"
    );
    std::process::exit(2);
}

fn parse_args() -> Config {
    let mut cfg = Config {
        targets: Vec::new(),
        user: "root".into(),
        password: String::new(),
        rounds: 3,
        seconds: 3.0,
        connections: vec![1, 4, 16],
        workloads: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--target" => {
                let v = value();
                let (name, addr) = v.split_once('=').unwrap_or_else(|| usage());
                let (host, port) = addr.rsplit_once(':').unwrap_or_else(|| usage());
                cfg.targets.push(Target {
                    name: name.into(),
                    host: host.into(),
                    port: port.parse().unwrap_or_else(|_| usage()),
                });
            }
            "--user" => cfg.user = value(),
            "--password" => cfg.password = value(),
            "--rounds" => cfg.rounds = value().parse().unwrap_or_else(|_| usage()),
            "--seconds" => cfg.seconds = value().parse().unwrap_or_else(|_| usage()),
            "--connections" => {
                cfg.connections = value()
                    .split(',')
                    .map(|n| n.trim().parse().unwrap_or_else(|_| usage()))
                    .collect()
            }
            "--workload" => cfg.workloads.push(match value().as_str() {
                "connect" => Workload::Connect,
                "select1" => Workload::Select1,
                _ => usage(),
            }),
            _ => usage(),
        }
    }
    if cfg.targets.is_empty() || cfg.rounds == 0 || cfg.connections.is_empty() {
        usage();
    }
    if cfg.workloads.is_empty() {
        cfg.workloads = vec![Workload::Connect, Workload::Select1];
    }
    cfg
}

fn opts(cfg: &Config, t: &Target) -> mysql::Opts {
    mysql::OptsBuilder::new()
        .ip_or_hostname(Some(t.host.clone()))
        .tcp_port(t.port)
        .user(Some(cfg.user.clone()))
        .pass(if cfg.password.is_empty() {
            None
        } else {
            Some(cfg.password.clone())
        })
        .prefer_socket(false)
        .into()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Workload {
    Connect,
    Select1,
}

impl Workload {
    fn name(self) -> &'static str {
        match self {
            Workload::Connect => "connect+auth+SELECT 1+quit",
            Workload::Select1 => "SELECT 1 round trip",
        }
    }
}

/// Operations per second of `workload` with `clients` threads.
fn measure(cfg: &Config, t: &Target, workload: Workload, clients: usize) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let counting = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let failures = Arc::new(AtomicU64::new(0));
    let o = opts(cfg, t);
    let handles: Vec<_> = (0..clients)
        .map(|_| {
            let (stop, counting, done, failures, o) = (
                stop.clone(),
                counting.clone(),
                done.clone(),
                failures.clone(),
                o.clone(),
            );
            thread::spawn(move || {
                let mut conn = match workload {
                    Workload::Select1 => Some(mysql::Conn::new(o.clone()).expect("connect")),
                    Workload::Connect => None,
                };
                while !stop.load(Ordering::Relaxed) {
                    let ok = match (&mut conn, workload) {
                        (Some(c), Workload::Select1) => c.query_drop("SELECT 1").is_ok(),
                        _ => match mysql::Conn::new(o.clone()) {
                            Ok(mut c) => c.query_drop("SELECT 1").is_ok(),
                            Err(_) => false,
                        },
                    };
                    if !ok {
                        failures.fetch_add(1, Ordering::Relaxed);
                    } else if counting.load(Ordering::Relaxed) {
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    // Warm up, then count for the configured time.
    thread::sleep(Duration::from_millis(500));
    counting.store(true, Ordering::Relaxed);
    let start = Instant::now();
    thread::sleep(Duration::from_secs_f64(cfg.seconds));
    counting.store(false, Ordering::Relaxed);
    let elapsed = start.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        let _ = h.join();
    }
    let failed = failures.load(Ordering::Relaxed);
    if failed > 0 {
        eprintln!(
            "warning: {} {} x{clients}: {failed} failed operations",
            t.name,
            workload.name()
        );
    }
    done.load(Ordering::Relaxed) as f64 / elapsed
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    let cfg = parse_args();
    for t in &cfg.targets {
        let mut c = mysql::Conn::new(opts(&cfg, t)).unwrap_or_else(|e| {
            eprintln!("cannot connect to {} at {}:{}: {e}", t.name, t.host, t.port);
            std::process::exit(1);
        });
        let version: Option<String> = c.query_first("SELECT VERSION()").unwrap_or(None);
        println!(
            "# {}: {}:{} version {}",
            t.name,
            t.host,
            t.port,
            version.unwrap_or_default()
        );
    }
    println!(
        "# rounds={} seconds={} connections={:?} user={}",
        cfg.rounds, cfg.seconds, cfg.connections, cfg.user
    );
    for &workload in &cfg.workloads {
        for &n in &cfg.connections {
            let mut samples: Vec<Vec<f64>> = vec![Vec::new(); cfg.targets.len()];
            for round in 0..cfg.rounds {
                for (i, t) in cfg.targets.iter().enumerate() {
                    let rate = measure(&cfg, t, workload, n);
                    println!(
                        "#   round {} {} {} x{n}: {rate:.0}/s",
                        round + 1,
                        t.name,
                        workload.name()
                    );
                    samples[i].push(rate);
                }
            }
            let medians: Vec<f64> = samples.iter_mut().map(|s| median(s)).collect();
            let mut line = format!("{:<28} conns={n:>2}", workload.name());
            for (t, m) in cfg.targets.iter().zip(&medians) {
                line.push_str(&format!("  {}={m:>9.0}/s", t.name));
            }
            for (t, m) in cfg.targets.iter().zip(&medians).skip(1) {
                line.push_str(&format!(
                    "  {}/{}={:.2}",
                    cfg.targets[0].name,
                    t.name,
                    medians[0] / m
                ));
            }
            println!("{line}");
        }
    }
}

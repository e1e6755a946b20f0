//! `docker compose --profile try up` without Docker: each jobwire service of the profile runs
//! as a local process with the command and environment the file gives it. Service names
//! become 127.0.0.1, each port a service listens on becomes a free local port, paths the
//! Dockerfile copies into the image become the repository's files, and each service's
//! working directory (its volume) a temporary directory.

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::model::{Compose, Dockerfile, Service, repo_root};

/// Where the processes' output goes, to show when the check fails.
struct Running {
    children: Vec<(String, Child)>,
    dir: tempfile::TempDir,
}

impl Drop for Running {
    fn drop(&mut self) {
        for (_, child) in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Running {
    fn logs(&self) -> String {
        self.children
            .iter()
            .map(|(name, _)| {
                let log = std::fs::read_to_string(self.dir.path().join(format!("{name}.log")))
                    .unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(15).collect();
                format!(
                    "--- {name} (last lines)\n{}",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free local port")
}

/// Ports a service listens on inside its container: `0.0.0.0:PORT` in its command or
/// environment.
fn listen_ports(s: &Service) -> Vec<u16> {
    let values = s
        .jobwire_args()
        .into_iter()
        .chain(s.environment.values().flatten().cloned());
    values
        .filter_map(|v| v.strip_prefix("0.0.0.0:").and_then(|p| p.parse().ok()))
        .collect()
}

struct Mapping {
    /// `(service, container port)` → local port.
    ports: BTreeMap<(String, u16), u16>,
    /// Image path → repository path, from the Dockerfile's copies out of the build stage
    /// (which copied the whole repository to its working directory, /src).
    copies: Vec<(String, String)>,
}

impl Mapping {
    fn apply(&self, own: &str, workdir: &str, local_workdir: &str, value: &str) -> String {
        let mut v = value.to_owned();
        for ((svc, port), local) in &self.ports {
            if svc == own {
                v = v.replace(&format!("0.0.0.0:{port}"), &format!("127.0.0.1:{local}"));
            }
            v = v.replace(&format!("{svc}:{port}"), &format!("127.0.0.1:{local}"));
        }
        for (image_path, repo_path) in &self.copies {
            v = v.replace(image_path, repo_path);
        }
        v.replace(workdir, local_workdir)
    }
}

/// Runs the `try` profile until the stand-in Telegram holds dozens of cards, and returns what
/// the pipeline's `/metrics` shows then.
pub async fn delivers(compose: &Compose, dockerfile: &Dockerfile) -> String {
    let services: Vec<&Service> = compose
        .started(Some("try"))
        .into_iter()
        .filter(|s| s.jobwire)
        .collect();
    let workdir = dockerfile
        .workdir
        .clone()
        .expect("the Dockerfile's final stage sets WORKDIR");
    let root = repo_root();
    let mapping = Mapping {
        ports: services
            .iter()
            .flat_map(|s| {
                listen_ports(s)
                    .into_iter()
                    .map(|p| ((s.name.clone(), p), free_port()))
            })
            .collect(),
        copies: dockerfile
            .copies
            .iter()
            .filter_map(|(src, dest)| {
                let rel = src.strip_prefix("/src/")?;
                Some((dest.clone(), root.join(rel).display().to_string()))
            })
            .collect(),
    };
    let Some(fake_telegram) = services.iter().find(|s| {
        s.jobwire_args()
            .first()
            .is_some_and(|a| a == "fake-telegram")
    }) else {
        panic!("`docker compose --profile try up` starts no fake-telegram: nothing to deliver to")
    };
    let telegram_port = listen_ports(fake_telegram)
        .first()
        .and_then(|p| {
            mapping
                .ports
                .get(&(fake_telegram.name.clone(), *p))
                .copied()
        })
        .expect("fake-telegram listens on 0.0.0.0:PORT");

    let metrics_port = services
        .iter()
        .filter(|s| s.is_pipeline())
        .flat_map(|s| {
            listen_ports(s)
                .into_iter()
                .filter(|p| *p == 9464)
                .map(|p| mapping.ports[&(s.name.clone(), p)])
        })
        .next()
        .expect("the try profile's pipeline serves /metrics on 0.0.0.0:9464");

    let mut running = Running {
        children: vec![],
        dir: tempfile::tempdir().expect("a temporary directory"),
    };
    // The stand-ins first (the pipeline depends on them), then the pipeline.
    let (pipelines, stand_ins): (Vec<&Service>, Vec<&Service>) =
        services.into_iter().partition(|s| s.is_pipeline());
    for group in [stand_ins, pipelines] {
        for s in &group {
            let local_workdir = running.dir.path().join(&s.name);
            std::fs::create_dir_all(&local_workdir).expect("a working directory");
            let local = local_workdir.display().to_string();
            let map = |v: &str| mapping.apply(&s.name, &workdir, &local, v);
            let log = std::fs::File::create(running.dir.path().join(format!("{}.log", s.name)))
                .expect("a log file");
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_jobwire"));
            cmd.args(s.jobwire_args().iter().map(|a| map(a)))
                .env_clear()
                .current_dir(&local_workdir)
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("log file"))
                .stderr(log);
            for (k, v) in &s.environment {
                if let Some(v) = v {
                    cmd.env(k, map(v));
                }
            }
            let child = cmd.spawn().expect("jobwire starts");
            running.children.push((s.name.clone(), child));
        }
        for s in &group {
            for p in listen_ports(s) {
                let local = mapping.ports[&(s.name.clone(), p)];
                wait_for_port(local, &running).await;
            }
        }
    }

    // The demo delivers 174 messages to 7 chats at Telegram's pace (1 per chat per second):
    // well before the deadline, dozens have arrived in several chats.
    let client = reqwest012::Client::new();
    let url = format!("http://127.0.0.1:{telegram_port}/__testkit/messages");
    let deadline = Instant::now() + Duration::from_secs(120);
    let (mut count, mut chats) = (0, 0);
    while Instant::now() < deadline {
        if let Ok(resp) = client.get(&url).send().await
            && let Ok(messages) = resp.json::<Vec<serde_json::Value>>().await
        {
            count = messages.len();
            chats = messages
                .iter()
                .filter_map(|m| m["chat_id"].as_i64())
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            if count >= 30 && chats >= 4 {
                break;
            }
        }
        let exited = running
            .children
            .iter_mut()
            .find_map(|(name, child)| Some((name.clone(), child.try_wait().ok()??)));
        if let Some((name, status)) = exited {
            panic!(
                "`docker compose --profile try up`: service `{name}` exited ({status})\n{}",
                running.logs()
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(
        count >= 30 && chats >= 4,
        "`docker compose --profile try up` delivers (almost) nothing: after 120 s the stand-in \
         Telegram holds {count} message(s) to {chats} chat(s)\n{}",
        running.logs()
    );
    let metrics = client
        .get(format!("http://127.0.0.1:{metrics_port}/metrics"))
        .send()
        .await
        .and_then(|r| r.error_for_status());
    match metrics {
        Ok(resp) => resp.text().await.expect("/metrics answers text"),
        Err(e) => panic!(
            "/metrics of the try profile's pipeline: {e}\n{}",
            running.logs()
        ),
    }
}

async fn wait_for_port(port: u16, running: &Running) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "nothing listens on 127.0.0.1:{port} after 30 s\n{}",
        running.logs()
    );
}

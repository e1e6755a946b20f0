//! docker-compose.yml, checked without a Docker engine: the file is read as Compose reads it
//! (profiles, anchors, merge keys) and held against what the binary itself reads and accepts
//! (its roles, the environment variables its configuration asks for). The `try` profile is
//! also run for real: its jobwire services as local processes, with the service names and
//! image paths mapped to this machine.

#[path = "compose/model.rs"]
mod model;
#[path = "compose/observe.rs"]
mod observe;
#[path = "compose/try_profile.rs"]
mod try_profile;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use jobwire::config::{Config, Environment, UpdatesMode};
use model::{Compose, Dockerfile, Service, all_roles, repo_root};

fn compose() -> Compose {
    Compose::load(&repo_root().join("docker-compose.yml"))
}

/// The profiles a user can pass, and none.
fn profiles(c: &Compose) -> Vec<Option<String>> {
    std::iter::once(None)
        .chain(c.profiles().into_iter().map(Some))
        .collect()
}

fn up(profile: Option<&str>) -> String {
    match profile {
        Some(p) => format!("`docker compose --profile {p} up`"),
        None => "`docker compose up`".to_owned(),
    }
}

/// The host part of an `http://host:port/…` value.
fn url_host(value: &str) -> Option<String> {
    url::Url::parse(value)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
}

/// A service whose jobwire command is `name` (`fake-telegram`, `fake-llm`).
fn runs(c: &Compose, host: &str, name: &str) -> bool {
    c.get(host)
        .is_some_and(|s| s.jobwire && s.jobwire_args().first().is_some_and(|a| a == name))
}

/// A pipeline pointed at the local Bot API stand-in: its made-up tokens never reach Telegram.
fn uses_stand_ins(c: &Compose, s: &Service) -> bool {
    s.env("JOBWIRE__TELEGRAM__API_URL")
        .and_then(url_host)
        .is_some_and(|h: String| runs(c, &h, "fake-telegram"))
}

#[test]
fn no_pipeline_starts_without_its_profile() {
    let c = compose();
    for s in c.services.iter().filter(|s| s.is_pipeline()) {
        assert!(
            !s.profiles.is_empty(),
            "service `{}` runs `jobwire run` and has no profile, so it also starts under every \
             --profile: a second pipeline on the same bot tokens and database",
            s.name
        );
    }
}

#[test]
fn each_profile_runs_one_pipeline() {
    let c = compose();
    for profile in profiles(&c) {
        let p = profile.as_deref();
        let pipelines: Vec<&Service> = c
            .started(p)
            .into_iter()
            .filter(|s| s.is_pipeline())
            .collect();
        let whole: Vec<&str> = pipelines
            .iter()
            .filter(|s| s.roles() == all_roles())
            .map(|s| s.name.as_str())
            .collect();
        let split: Vec<&str> = pipelines
            .iter()
            .filter(|s| s.roles() != all_roles())
            .map(|s| s.name.as_str())
            .collect();
        assert!(
            whole.len() <= 1 && (whole.is_empty() || split.is_empty()),
            "{} starts several pipelines at once (every role in {whole:?}, single roles in \
             {split:?}): each job would be delivered twice, through the same bot tokens",
            up(p)
        );
    }
}

#[test]
fn distributed_profile_has_a_service_for_every_role() {
    let c = compose();
    let started = c.started(Some("distributed"));
    // Services started with --role (a whole pipeline here is the other test's failure).
    let covered: BTreeSet<String> = started
        .iter()
        .filter(|s| s.is_pipeline() && s.roles() != all_roles())
        .flat_map(|s| s.roles())
        .collect();
    let missing: Vec<String> = all_roles().difference(&covered).cloned().collect();
    assert!(
        missing.is_empty(),
        "`docker compose --profile distributed up` runs no process with the role(s) \
         {missing:?} (`jobwire run --role` accepts {:?}): that part of the service never runs",
        all_roles()
    );
    let parsers: Vec<&&Service> = started
        .iter()
        .filter(|s| s.is_pipeline() && s.roles().contains("parser"))
        .collect();
    assert!(
        parsers.len() == 1 && parsers[0].replicas.unwrap_or(1) == 1,
        "the distributed profile must run exactly one parser per Telegram account, runs {:?}: \
         two readers of one account conflict",
        parsers
            .iter()
            .map(|s| (&s.name, s.replicas))
            .collect::<Vec<_>>()
    );
}

#[test]
fn try_profile_runs_the_pipeline_on_the_stand_ins_only() {
    let c = compose();
    let pipelines: Vec<&Service> = c
        .started(Some("try"))
        .into_iter()
        .filter(|s| s.is_pipeline())
        .collect();
    assert_eq!(
        pipelines.len(),
        1,
        "`docker compose --profile try up` should run one pipeline, runs {:?}",
        pipelines.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    let s = pipelines[0];
    assert!(
        uses_stand_ins(&c, s),
        "the try pipeline `{}` does not send to the fake-telegram service: it would try the \
         real Telegram with made-up tokens",
        s.name
    );
    assert!(
        s.env("JOBWIRE__LLM__BASE_URL")
            .and_then(url_host)
            .is_some_and(|h: String| runs(&c, &h, "fake-llm")
                && c.get(&h).is_some_and(|f| f.starts_under(Some("try")))),
        "the try pipeline `{}` is not wired to the fake-llm service: the LLM path is never shown",
        s.name
    );
    for stand_in in ["fake-telegram", "fake-llm"] {
        assert!(
            s.depends_on.iter().any(|d| runs(&c, d, stand_in)),
            "the try pipeline `{}` does not wait for {stand_in}: it may start first and stop \
             at its start-up check",
            s.name
        );
    }
    assert!(
        s.jobwire_args().iter().any(|a| a == "--replay"),
        "the try pipeline `{}` has no posts source (--replay): it delivers nothing",
        s.name
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn try_profile_delivers_sample_jobs_end_to_end() {
    let metrics = try_profile::delivers(&compose(), &Dockerfile::load()).await;
    observe::check_exposition(&metrics);
}

/// Hands out plausible values and records which variables were asked for.
struct Recording {
    asked: RefCell<BTreeSet<String>>,
    missing: Option<String>,
}

impl Recording {
    fn new(missing: Option<&str>) -> Self {
        Self {
            asked: RefCell::default(),
            missing: missing.map(str::to_owned),
        }
    }
}

impl Environment for Recording {
    fn var(&self, name: &str) -> Option<String> {
        self.asked.borrow_mut().insert(name.to_owned());
        if self.missing.as_deref() == Some(name) {
            return None;
        }
        Some(if name.contains("HASH") {
            "0123456789abcdef0123456789abcdef".to_owned()
        } else if name.contains("TOKEN") {
            "123456:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA".to_owned()
        } else {
            "a_plausible_secret_value_0123456789".to_owned()
        })
    }
}

/// The configuration the compose file mounts (jobwire.example.toml copied to jobwire.toml),
/// with every optional part that reads a secret switched on: an LLM, a Telegram account,
/// webhooks.
fn full_example_config() -> Config {
    let mut text = std::fs::read_to_string(repo_root().join("jobwire.example.toml"))
        .expect("jobwire.example.toml");
    text.push_str(
        "\n[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n\n\
         [mtproto]\n[[mtproto.accounts]]\nid = \"parser1\"\napi_id = 12345\n",
    );
    let mut config = Config::from_toml(&text).expect("the example configuration parses");
    config.telegram.updates = UpdatesMode::Webhook;
    config.telegram.webhook_public_url = url::Url::parse("https://bots.example.com/").ok();
    config
}

/// Which secrets each role's process reads, asked of the binary's own configuration code.
struct Secrets {
    /// Read at start-up by every process; a missing one stops it.
    every_process: BTreeSet<String>,
    /// Read at start-up but optional: the LLM's keys, used by the classifier.
    classifier: BTreeSet<String>,
    admin: BTreeSet<String>,
    parser: BTreeSet<String>,
}

fn secrets() -> Secrets {
    let config = full_example_config();
    let all = Recording::new(None);
    config.resolve(&all).expect("resolves with every secret");
    let asked = all.asked.into_inner();
    let (every_process, classifier) = asked
        .into_iter()
        .partition(|name| config.resolve(&Recording::new(Some(name))).is_err());
    let mtproto = Recording::new(None);
    config
        .mtproto
        .as_ref()
        .expect("[mtproto] in the test configuration")
        .settings()
        .expect("the section resolves")
        .account_configs(&mtproto)
        .expect("the account resolves");
    Secrets {
        every_process,
        classifier,
        admin: [jobwire::admin_api::TOKEN_ENV.to_owned()].into(),
        parser: mtproto.asked.into_inner(),
    }
}

#[test]
fn every_service_gets_the_secrets_and_state_its_roles_need() {
    let c = compose();
    let secrets = secrets();
    assert!(
        secrets
            .every_process
            .iter()
            .any(|n| n.starts_with("JOBWIRE_BOT_"))
            && secrets.parser.contains("JOBWIRE_TELEGRAM_API_HASH"),
        "the test's picture of the configuration is off: {:?} / {:?}",
        secrets.every_process,
        secrets.parser
    );
    let workdir = Dockerfile::load()
        .workdir
        .expect("the Dockerfile's final stage sets WORKDIR");
    for s in c
        .services
        .iter()
        .filter(|s| s.is_pipeline() && !uses_stand_ins(&c, s))
    {
        let roles = s.roles();
        let mut needed: Vec<(&String, &str)> = secrets
            .every_process
            .iter()
            .map(|n| {
                (
                    n,
                    "it stops at start-up: \"environment variable … is not set\"",
                )
            })
            .collect();
        if roles.contains("classifier") {
            needed.extend(
                secrets
                    .classifier
                    .iter()
                    .map(|n| (n, "the LLM is called without its API key (401)")),
            );
        }
        if roles.contains("admin") {
            needed.extend(
                secrets
                    .admin
                    .iter()
                    .map(|n| (n, "the admin API stays disabled (503)")),
            );
        }
        if roles.contains("parser") {
            needed.extend(
                secrets
                    .parser
                    .iter()
                    .map(|n| (n, "the Telegram reader cannot sign in")),
            );
        }
        for (name, consequence) in needed {
            assert!(
                s.environment.contains_key(name.as_str()),
                "service `{}` (roles {roles:?}) is never given {name}: {consequence}",
                s.name
            );
        }
        if roles.contains("parser") {
            assert!(
                s.volumes
                    .iter()
                    .any(|v| v.target == workdir && !v.read_only && !v.source.is_empty()),
                "service `{}` runs the parser without a volume on {workdir} (where the \
                 Telegram session files `jobwire login` writes live): every restart of the \
                 container logs the account out",
                s.name
            );
        }
    }
}

fn secret_like(name: &str) -> bool {
    ["PASSWORD", "PASS", "TOKEN", "SECRET", "API_HASH", "API_KEY"]
        .iter()
        .any(|w| name.to_ascii_uppercase().contains(w))
}

/// `${NAME}`, `${NAME:-default}`, `${NAME-default}`… in a string: `(NAME, default)`.
fn interpolations(value: &str) -> Vec<(String, Option<String>)> {
    let mut out = vec![];
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let inner = &rest[start + 2..];
        let Some(end) = inner.find('}') else { break };
        let body = &inner[..end];
        let name_end = body
            .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
            .unwrap_or(body.len());
        let (name, op) = body.split_at(name_end);
        let default = op
            .strip_prefix(":-")
            .or_else(|| op.strip_prefix('-'))
            .map(str::to_owned);
        // `$${…}` is a literal for Compose, not an interpolation.
        if !rest[..start].ends_with('$') {
            out.push((name.to_owned(), default));
        }
        rest = &inner[end + 1..];
    }
    out
}

#[test]
fn no_secret_or_password_is_written_in_the_file() {
    let c = compose();
    for (at, value) in &c.strings {
        for (name, default) in interpolations(value) {
            assert!(
                !(secret_like(&name) && default.as_deref().is_some_and(|d| !d.is_empty())),
                "{at} gives {name} the default {:?}: anyone who has read \
                 docker-compose.yml knows it",
                default.unwrap_or_default()
            );
        }
        if let Ok(u) = url::Url::parse(value)
            && let Some(pass) = u.password()
        {
            assert!(
                pass.starts_with("$%7B") || pass.starts_with("${"),
                "{at} has a password written into its URL: anyone who has read \
                 docker-compose.yml knows it"
            );
        }
    }
    let secrets = secrets();
    let names: BTreeSet<&String> = secrets
        .every_process
        .iter()
        .chain(&secrets.classifier)
        .chain(&secrets.admin)
        .chain(&secrets.parser)
        .collect();
    for s in c.services.iter().filter(|s| !uses_stand_ins(&c, s)) {
        for (name, value) in &s.environment {
            let Some(value) = value else { continue };
            if !(names.contains(&name) || secret_like(name)) {
                continue;
            }
            let interpolated = interpolations(value);
            let only_interpolation = interpolated.len() == 1
                && value.starts_with("${")
                && value.ends_with('}')
                && interpolated[0].1.as_deref().is_none_or(str::is_empty);
            assert!(
                only_interpolation,
                "service `{}` sets {name} to a value written in docker-compose.yml: a real \
                 secret would be committed (leave the value out, so it comes from the \
                 environment or .env)",
                s.name
            );
        }
    }
}

#[test]
fn nothing_is_published_beyond_loopback() {
    let c = compose();
    for s in &c.services {
        for p in &s.ports {
            let loopback = p.host_ip.as_deref().is_some_and(|ip| {
                ip.parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
            });
            assert!(
                loopback,
                "service `{}` publishes {:?} on every network interface: anyone who can reach \
                 the machine reaches it (bind it to 127.0.0.1 and put a TLS proxy in front)",
                s.name, p.spec
            );
        }
    }
}

#[test]
fn images_are_supported_releases() {
    let c = compose();
    // Oldest major still supported by its maintainers.
    let oldest = [("rabbitmq", 4), ("postgres", 14), ("redis", 7)];
    for s in &c.services {
        let Some(image) = s.image.as_deref() else {
            continue;
        };
        if s.jobwire {
            continue;
        }
        let (name, tag) = image.rsplit_once(':').unwrap_or((image, ""));
        assert!(
            !tag.is_empty() && tag != "latest",
            "service `{}` uses {image} without a pinned version: an upgrade to a new major \
             version can come with any `docker compose pull` and not start on the old data",
            s.name
        );
        let major: Option<u32> = tag
            .split(|ch: char| !ch.is_ascii_digit())
            .next()
            .and_then(|m| m.parse().ok());
        for (known, min) in oldest {
            if name.rsplit('/').next() == Some(known) {
                assert!(
                    major.is_some_and(|m| m >= min),
                    "service `{}` uses {image}: {known} before {min} gets no security fixes",
                    s.name
                );
            }
        }
    }
}

#[test]
fn the_dashboard_and_the_alert_rules_name_only_metrics_jobwire_exports() {
    let root = repo_root();
    let files = [
        root.join("deploy/grafana/dashboards/jobwire.json"),
        root.join("deploy/prometheus/alerts.yml"),
    ];
    for file in &files {
        let names = observe::named_in(file);
        assert!(names.len() >= 10, "{}: only {names:?}", file.display());
        for name in names {
            assert!(
                jobwire::telemetry::find(&name).is_some(),
                "{} names {name}, which jobwire does not export",
                file.display()
            );
        }
    }
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&files[0]).expect("the dashboard is readable"),
    )
    .expect("the dashboard is JSON");
    let panels = dashboard["panels"].as_array().map_or(0, Vec::len);
    assert!(panels >= 10, "the dashboard has {panels} panels");
}

#[test]
fn the_observe_profile_runs_prometheus_and_grafana_provisioned_from_deploy() {
    let c = compose();
    let started: Vec<String> = c
        .started(Some("observe"))
        .into_iter()
        .map(|s| s.name.clone())
        .collect();
    for want in ["prometheus", "grafana"] {
        assert!(
            started.iter().any(|s| s == want),
            "`--profile observe` starts {started:?}"
        );
    }
    let root = repo_root();
    for name in ["prometheus", "grafana"] {
        let s = c.get(name).expect("the service exists");
        for v in &s.volumes {
            if let Some(local) = v.source.strip_prefix("./") {
                assert!(
                    root.join(local).exists(),
                    "{name} mounts ./{local}, which does not exist"
                );
            }
        }
    }
    // Every image is pinned to a version, not a moving tag.
    for s in c.services.iter().filter(|s| !s.jobwire) {
        let image = s.image.as_deref().unwrap_or_default();
        let tag = image.rsplit_once(':').map(|(_, t)| t).unwrap_or_default();
        assert!(
            tag.contains('.') && tag.starts_with(|c: char| c.is_ascii_digit() || c == 'v'),
            "service `{}`: image {image:?} is not pinned to a version (major.minor at least)",
            s.name
        );
    }
    // Prometheus scrapes every role's service name.
    let scrape = std::fs::read_to_string(root.join("deploy/prometheus/prometheus.yml"))
        .expect("prometheus.yml is readable");
    for s in c.services.iter().filter(|s| s.is_pipeline()) {
        if s.profiles.iter().any(|p| p == "try") {
            continue;
        }
        assert!(
            scrape.contains(&s.name),
            "deploy/prometheus/prometheus.yml does not scrape `{}`",
            s.name
        );
    }
}

#[test]
fn only_the_try_profile_runs_an_image_with_the_test_bed() {
    let dockerfile = std::fs::read_to_string(repo_root().join("Dockerfile")).expect("Dockerfile");
    // Continued lines joined, so each RUN is one line.
    let dockerfile = dockerfile.replace("\\\n", " ");
    assert!(
        dockerfile
            .lines()
            .any(|l| l.trim() == "ARG JOBWIRE_FEATURES=\"\""),
        "the Dockerfile's build stage should default JOBWIRE_FEATURES to none"
    );
    for step in ["cargo chef cook", "cargo build"] {
        let line = dockerfile
            .lines()
            .find(|l| l.trim_start().starts_with("RUN") && l.contains(step))
            .unwrap_or_else(|| panic!("the Dockerfile runs no `{step}`"));
        assert!(
            line.contains("--no-default-features")
                && line.contains("--features \"${JOBWIRE_FEATURES}\""),
            "`{step}` should build without default features plus JOBWIRE_FEATURES, or the \
             production image carries the stand-ins and the test bed: {line}"
        );
    }
    let c = compose();
    let mut tags: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in c.services.iter().filter(|s| s.jobwire) {
        let testbed = s.features.iter().any(|f| f == "testbed");
        let first = s.jobwire_args().first().cloned().unwrap_or_default();
        if ["demo", "bench", "fake-telegram", "fake-llm"].contains(&first.as_str()) {
            assert!(
                testbed,
                "service `{}` runs `jobwire {first}`, which only an image built with the \
                 testbed feature has",
                s.name
            );
        }
        if !s.profiles.iter().any(|p| p == "try") {
            assert!(
                !testbed,
                "service `{}` runs outside the try profile from an image with the test bed",
                s.name
            );
        }
        if let Some(tag) = &s.image {
            let seen = tags
                .entry(tag.clone())
                .or_insert_with(|| s.features.clone());
            assert_eq!(
                *seen, s.features,
                "image `{tag}` is built with two feature sets: one build overwrites the other"
            );
        }
    }
}

#[test]
fn jobwire_has_time_to_stop_before_compose_kills_it() {
    let c = compose();
    let grace = jobwire::supervisor::Backoff::default().shutdown_grace;
    for s in c.services.iter().filter(|s| s.jobwire) {
        let allowed = s.stop_grace_period.unwrap_or(Duration::from_secs(10));
        assert!(
            allowed > grace,
            "service `{}`: Compose kills it after {allowed:?}, jobwire's own grace is {grace:?}",
            s.name
        );
    }
}

#[cfg(jobwire_promtool_tests)]
#[test]
fn promtool_accepts_the_rules_and_the_scrape_configuration() {
    let root = repo_root();
    let rules = root.join("deploy/prometheus/alerts.yml");
    let out = observe::promtool(&["check", "rules", &rules.display().to_string()]);
    assert!(out.contains("SUCCESS"), "{out}");
    let config = root.join("deploy/prometheus/prometheus.yml");
    observe::promtool(&["check", "config", &config.display().to_string()]);
}

//! docker-compose.yml read the way Compose reads it, as far as the tests need: anchors and
//! `<<` merge keys resolved, services with their profiles, commands, environment, ports and
//! volumes; and the Dockerfile's final working directory and copies.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use yaml_rust2::{Yaml, YamlLoader, yaml::Hash};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The roles `jobwire run --role` accepts, by their command-line names.
pub fn all_roles() -> BTreeSet<String> {
    use clap::ValueEnum;
    jobwire::roles::Role::ALL
        .iter()
        .filter_map(|r| r.to_possible_value())
        .map(|v| v.get_name().to_owned())
        .collect()
}

#[derive(Debug, Clone)]
pub struct Service {
    pub name: String,
    pub profiles: Vec<String>,
    /// Built from this repository (the jobwire image).
    pub jobwire: bool,
    pub image: Option<String>,
    /// `None`: the image's CMD.
    pub command: Option<Vec<String>>,
    /// Name → value; `None` for a name passed through from the host without a value.
    pub environment: BTreeMap<String, Option<String>>,
    pub ports: Vec<Port>,
    pub volumes: Vec<Volume>,
    pub replicas: Option<i64>,
    pub depends_on: Vec<String>,
    /// `stop_grace_period` (`40s`, `1m30s`); `None`: Compose's default of 10 s.
    pub stop_grace_period: Option<std::time::Duration>,
    /// The cargo features the image is built with (`build.args.JOBWIRE_FEATURES`); empty
    /// for a plain `build: .`.
    pub features: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Port {
    /// As written, for messages.
    pub spec: String,
    /// The host address it is published on; `None`: every interface.
    pub host_ip: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Volume {
    pub source: String,
    pub target: String,
    pub read_only: bool,
}

impl Service {
    /// Whether `docker compose [--profile P] up` starts it: a service without profiles
    /// always starts.
    pub fn starts_under(&self, profile: Option<&str>) -> bool {
        self.profiles.is_empty() || profile.is_some_and(|p| self.profiles.iter().any(|q| q == p))
    }

    /// The jobwire command line, with the image's CMD (`run`) when none is given.
    pub fn jobwire_args(&self) -> Vec<String> {
        self.command
            .clone()
            .unwrap_or_else(|| vec!["run".to_owned()])
    }

    /// A `jobwire run` process: a pipeline.
    pub fn is_pipeline(&self) -> bool {
        self.jobwire && self.jobwire_args().first().is_some_and(|c| c == "run")
    }

    /// The roles of a pipeline service (`--role a,b`; every role without it).
    pub fn roles(&self) -> BTreeSet<String> {
        let args = self.jobwire_args();
        let mut roles = BTreeSet::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let value = if a == "--role" {
                it.next().cloned()
            } else {
                a.strip_prefix("--role=").map(str::to_owned)
            };
            if let Some(v) = value {
                roles.extend(v.split(',').map(|r| r.trim().to_owned()));
            }
        }
        if roles.is_empty() { all_roles() } else { roles }
    }

    pub fn env(&self, name: &str) -> Option<&str> {
        self.environment.get(name).and_then(|v| v.as_deref())
    }
}

pub struct Compose {
    pub services: Vec<Service>,
    /// Every string scalar of the file, with where it is.
    pub strings: Vec<(String, String)>,
}

impl Compose {
    pub fn load(path: &Path) -> Compose {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        Self::parse(&text)
    }

    pub fn parse(text: &str) -> Compose {
        let docs = YamlLoader::load_from_str(text).expect("docker-compose.yml is valid YAML");
        let doc = resolve_merges(docs.into_iter().next().expect("one YAML document"));
        let mut strings = Vec::new();
        collect_strings(&doc, "", &mut strings);
        let services = doc["services"]
            .as_hash()
            .expect("docker-compose.yml has services")
            .iter()
            .map(|(k, v)| service(k.as_str().expect("service names are strings"), v))
            .collect();
        Compose { services, strings }
    }

    pub fn started(&self, profile: Option<&str>) -> Vec<&Service> {
        self.services
            .iter()
            .filter(|s| s.starts_under(profile))
            .collect()
    }

    pub fn get(&self, name: &str) -> Option<&Service> {
        self.services.iter().find(|s| s.name == name)
    }

    /// Every profile named in the file.
    pub fn profiles(&self) -> BTreeSet<String> {
        self.services
            .iter()
            .flat_map(|s| s.profiles.iter().cloned())
            .collect()
    }
}

/// YAML merge keys (`<<: *a` or `<<: [*a, *b]`), as Compose applies them: the node's own
/// keys win, then the merged maps in order.
fn resolve_merges(y: Yaml) -> Yaml {
    match y {
        Yaml::Array(a) => Yaml::Array(a.into_iter().map(resolve_merges).collect()),
        Yaml::Hash(h) => {
            let merge_key = Yaml::String("<<".to_owned());
            let mut out = Hash::new();
            let sources: Vec<Yaml> = match h.get(&merge_key) {
                Some(Yaml::Array(list)) => list.clone(),
                Some(one) => vec![one.clone()],
                None => vec![],
            };
            for (k, v) in h {
                if k != merge_key {
                    out.insert(k, resolve_merges(v));
                }
            }
            for source in sources {
                if let Yaml::Hash(src) = resolve_merges(source) {
                    for (k, v) in src {
                        out.entry(k).or_insert(v);
                    }
                }
            }
            Yaml::Hash(out)
        }
        other => other,
    }
}

fn collect_strings(y: &Yaml, at: &str, out: &mut Vec<(String, String)>) {
    match y {
        Yaml::String(s) => out.push((at.to_owned(), s.clone())),
        Yaml::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                collect_strings(v, &format!("{at}[{i}]"), out);
            }
        }
        Yaml::Hash(h) => {
            for (k, v) in h {
                let key = scalar(k).unwrap_or_default();
                collect_strings(v, &format!("{at}.{key}"), out);
            }
        }
        _ => {}
    }
}

fn scalar(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

fn strings(y: &Yaml) -> Vec<String> {
    match y {
        Yaml::Array(a) => a.iter().filter_map(scalar).collect(),
        other => scalar(other).into_iter().collect(),
    }
}

fn service(name: &str, y: &Yaml) -> Service {
    let image = scalar(&y["image"]);
    let jobwire =
        !y["build"].is_badvalue() || image.as_deref().is_some_and(|i| i.starts_with("jobwire"));
    let command = match &y["command"] {
        Yaml::BadValue | Yaml::Null => None,
        // A string command is split by Compose like a shell would; none here needs quoting.
        Yaml::String(s) => Some(s.split_whitespace().map(str::to_owned).collect()),
        other => Some(strings(other)),
    };
    let mut environment = BTreeMap::new();
    match &y["environment"] {
        Yaml::Hash(h) => {
            for (k, v) in h {
                if let Some(k) = scalar(k) {
                    environment.insert(k, scalar(v));
                }
            }
        }
        Yaml::Array(a) => {
            for item in a.iter().filter_map(scalar) {
                match item.split_once('=') {
                    Some((k, v)) => environment.insert(k.to_owned(), Some(v.to_owned())),
                    None => environment.insert(item, None),
                };
            }
        }
        _ => {}
    }
    let ports = match &y["ports"] {
        Yaml::Array(a) => a.iter().map(port).collect(),
        _ => vec![],
    };
    let volumes = match &y["volumes"] {
        Yaml::Array(a) => a.iter().filter_map(volume).collect(),
        _ => vec![],
    };
    let depends_on = match &y["depends_on"] {
        Yaml::Hash(h) => h.keys().filter_map(scalar).collect(),
        other => strings(other),
    };
    Service {
        name: name.to_owned(),
        profiles: strings(&y["profiles"]),
        jobwire,
        image,
        command,
        environment,
        ports,
        volumes,
        replicas: y["deploy"]["replicas"].as_i64(),
        depends_on,
        stop_grace_period: scalar(&y["stop_grace_period"]).map(|v| compose_duration(&v)),
        features: scalar(&y["build"]["args"]["JOBWIRE_FEATURES"])
            .map(|f| {
                f.split([',', ' '])
                    .filter(|w| !w.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// A Compose duration: `40s`, `1m30s`, `2m`, `500ms`.
fn compose_duration(v: &str) -> std::time::Duration {
    let mut total = std::time::Duration::ZERO;
    let mut number = String::new();
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            number.push(c);
            continue;
        }
        let n: f64 = number
            .parse()
            .unwrap_or_else(|_| panic!("stop_grace_period {v:?}: not a duration"));
        number.clear();
        let unit = match (c, chars.peek()) {
            ('m', Some('s')) => {
                chars.next();
                0.001
            }
            ('h', _) => 3600.0,
            ('m', _) => 60.0,
            ('s', _) => 1.0,
            _ => panic!("stop_grace_period {v:?}: unknown unit {c:?}"),
        };
        total += std::time::Duration::from_secs_f64(n * unit);
    }
    assert!(
        number.is_empty(),
        "stop_grace_period {v:?}: a number without a unit"
    );
    total
}

/// `[HOST_IP:][HOST_PORT:]CONTAINER_PORT[/PROTO]`, or the long form with `host_ip`.
fn port(y: &Yaml) -> Port {
    if let Yaml::Hash(_) = y {
        return Port {
            spec: format!("{y:?}"),
            host_ip: scalar(&y["host_ip"]),
        };
    }
    let spec = scalar(y).unwrap_or_default();
    let host_ip = if let Some(rest) = spec.strip_prefix('[') {
        rest.split_once(']').map(|(ip, _)| ip.to_owned())
    } else {
        let parts: Vec<&str> = spec.split(':').collect();
        (parts.len() == 3).then(|| parts[0].to_owned())
    };
    Port { spec, host_ip }
}

/// `SOURCE:TARGET[:MODE]` or the long form.
fn volume(y: &Yaml) -> Option<Volume> {
    if let Yaml::Hash(_) = y {
        return Some(Volume {
            source: scalar(&y["source"]).unwrap_or_default(),
            target: scalar(&y["target"])?,
            read_only: y["read_only"].as_bool().unwrap_or(false),
        });
    }
    let spec = scalar(y)?;
    let parts: Vec<&str> = spec.split(':').collect();
    match parts.as_slice() {
        [target] => Some(Volume {
            source: String::new(),
            target: (*target).to_owned(),
            read_only: false,
        }),
        [source, target] => Some(Volume {
            source: (*source).to_owned(),
            target: (*target).to_owned(),
            read_only: false,
        }),
        [source, target, mode, ..] => Some(Volume {
            source: (*source).to_owned(),
            target: (*target).to_owned(),
            read_only: mode.split(',').any(|m| m == "ro"),
        }),
        [] => None,
    }
}

/// The Dockerfile's final stage: its working directory and what it copies where.
pub struct Dockerfile {
    pub workdir: Option<String>,
    /// `(source, destination)` of each COPY of the final stage.
    pub copies: Vec<(String, String)>,
}

impl Dockerfile {
    pub fn load() -> Dockerfile {
        let text = std::fs::read_to_string(repo_root().join("Dockerfile"))
            .expect("the repository has a Dockerfile");
        let mut out = Dockerfile {
            workdir: None,
            copies: vec![],
        };
        for line in text.lines().map(str::trim) {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.first().map(|w| w.to_ascii_uppercase()).as_deref() {
                Some("FROM") => {
                    out = Dockerfile {
                        workdir: None,
                        copies: vec![],
                    }
                }
                Some("WORKDIR") => out.workdir = words.get(1).map(|w| (*w).to_owned()),
                Some("COPY") => {
                    let paths: Vec<&str> = words[1..]
                        .iter()
                        .copied()
                        .filter(|w| !w.starts_with("--"))
                        .collect();
                    if let [source, dest] = paths.as_slice() {
                        out.copies.push(((*source).to_owned(), (*dest).to_owned()));
                    }
                }
                _ => {}
            }
        }
        out
    }
}

//! The shipped example configuration parses and resolves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use jobwire::config::{Config, Environment};

struct Env;
impl Environment for Env {
    fn var(&self, name: &str) -> Option<String> {
        name.starts_with("JOBWIRE_BOT_")
            .then(|| "42:abcdefghijklmnopqrstuvwxyz".to_owned())
    }
}

#[test]
fn the_example_configuration_is_valid() {
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../jobwire.example.toml"
    ));
    let settings = Config::load(Some(path)).unwrap().resolve(&Env).unwrap();
    assert_eq!(settings.bots.len(), 2);
    assert_eq!(settings.categories.len(), 3);
    assert_eq!(settings.channels.len(), 2);
    assert!(!settings.billing.enabled);
    let plans: Vec<_> = settings
        .billing
        .plans
        .iter()
        .map(|p| p.id.as_str())
        .collect();
    assert_eq!(plans, ["month", "week", "design-month"]);
    assert!(settings.billing.plan("month").is_some_and(|p| p.renews()));
}

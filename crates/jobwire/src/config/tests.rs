//! Tests of loading and resolving: unknown keys, missing tokens, bad references and
//! values, and a good configuration with its secrets hidden.

use std::collections::HashMap;

use super::*;

struct FakeEnv(HashMap<&'static str, &'static str>);
impl Environment for FakeEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.0.get(name).map(|v| (*v).to_owned())
    }
}

const TOKEN: &str = "123456:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

fn check_err(doc: &str, env: &[(&'static str, &'static str)], expected: &str) {
    let env = FakeEnv(env.iter().copied().collect());
    let err = Config::from_toml(doc)
        .and_then(|c| c.resolve(&env).map(|_| ()))
        .expect_err("config should be refused");
    let msg = err.to_string();
    assert!(!msg.contains('\n'), "one line: {msg}");
    assert!(
        msg.contains(expected),
        "{msg:?} should mention {expected:?}"
    );
}

#[test]
fn unknown_keys_are_named() {
    check_err("[database]\nurll = \"x\"\n", &[], "urll");
    check_err("[telegram]\nper_chat = 3\n", &[], "per_chat");
    check_err("colour = 1\n", &[], "colour");
}

#[test]
fn a_missing_token_names_the_bot_and_variable() {
    check_err("[[bots]]\nname = \"dev\"\n", &[], "JOBWIRE_BOT_DEV_TOKEN");
    check_err(
        "[[bots]]\nname = \"dev\"\n",
        &[("JOBWIRE_BOT_DEV_TOKEN", "nonsense")],
        "does not look like a bot token",
    );
}

#[test]
fn references_and_values_are_checked() {
    let env = [("JOBWIRE_BOT_DEV_TOKEN", TOKEN)];
    check_err(
        "[[bots]]\nname = \"dev\"\n[[categories]]\nslug = \"web\"\nname = \"Web\"\nbot = \"nobody\"\n",
        &env,
        "categories[0].bot",
    );
    check_err(
        "[[bots]]\nname = \"dev\"\n[[categories]]\nslug = \"Web!\"\nname = \"Web\"\nbot = \"dev\"\n",
        &env,
        "categories[0].slug",
    );
    check_err("[classifier]\nkind = \"llm\"\n", &env, "classifier.kind");
    check_err("[telegram]\napi_url = \"not a url\"\n", &env, "api_url");
    check_err("[database]\nurl = \"mysql://x\"\n", &env, "database.url");
    check_err("[queue]\nurl = \"kafka://x\"\n", &env, "queue.url");
    check_err("[redis]\nurl = \"http://x\"\n", &env, "redis.url");
    check_err(
        "[[channels]]\nhandle = \"@x\"\ninclude = [\"\"]\nexclude = [\"#\"]\n",
        &env,
        "channels[0]",
    );
}

#[test]
fn the_digest_is_checked_key_by_key() {
    let env = [("JOBWIRE_BOT_DEV_TOKEN", TOKEN)];
    let base = "[[bots]]\nname = \"dev\"\n[telegram]\nmain_bot = \"dev\"\n";
    check_err(
        "[digest]\nenabled = true\nchannel = \"@jobs_digest\"\n",
        &[],
        "telegram.main_bot",
    );
    check_err(
        &format!("{base}[digest]\nenabled = true\nchannel = \"jobs digest\"\n"),
        &env,
        "digest.channel",
    );
    check_err(
        &format!("{base}[digest]\nenabled = true\nchannel = \"@jobs_digest\"\ntime = \"25:00\"\n"),
        &env,
        "digest.time",
    );
    check_err(
        &format!(
            "{base}[digest]\nenabled = true\nchannel = \"@jobs_digest\"\ntime_zone = \"Mars/Base\"\n"
        ),
        &env,
        "digest.time_zone",
    );
    check_err(
        &format!("{base}[digest]\nenabled = true\nchannel = \"@jobs_digest\"\nlanguage = \"de\"\n"),
        &env,
        "digest.language",
    );
    let env = FakeEnv(env.iter().copied().collect());
    let ok = Config::from_toml(&format!(
        "{base}[digest]\nenabled = true\nchannel = \"-1001234567\"\ntime = \"08:30\"\n"
    ))
    .and_then(|c| c.resolve(&env))
    .expect("a good digest resolves");
    let d = ok.digest.expect("on");
    assert_eq!(
        (d.channel.as_str(), d.at.to_string().as_str()),
        ("-1001234567", "08:30:00")
    );
}

#[test]
fn placements_are_checked_key_by_key() {
    let env = [("JOBWIRE_BOT_DEV_TOKEN", TOKEN)];
    let base = "[[bots]]\nname = \"dev\"\n[telegram]\nmain_bot = \"dev\"\n";
    check_err(
        "[placements]\nenabled = true\nstars = 100\n",
        &[],
        "telegram.main_bot",
    );
    check_err(
        &format!("{base}[placements]\nenabled = true\n"),
        &env,
        "placements.stars",
    );
    check_err(
        &format!("{base}[placements]\nenabled = true\nstars = 0\n"),
        &env,
        "placements.stars",
    );
    check_err(
        &format!("{base}[placements]\nenabled = true\n[placements.category_stars]\nnope = 10\n"),
        &env,
        "placements.category_stars.nope",
    );
    check_err(
        &format!("{base}[placements]\nenabled = true\n[placements.category_stars]\nweb = 200000\n"),
        &env,
        "placements.category_stars.web",
    );
    check_err(
        &format!("{base}[placements]\nenabled = true\nstars = 4000\n"),
        &env,
        "placements.category_stars",
    );
    let env = FakeEnv(env.iter().copied().collect());
    let resolve = |extra: &str| {
        Config::from_toml(&format!("{base}{extra}"))
            .and_then(|c| c.resolve(&env))
            .expect("good placements resolve")
            .placements
    };
    assert!(resolve("").is_none(), "off by default");
    let only_web =
        resolve("[placements]\nenabled = true\n[placements.category_stars]\nweb = 150\n")
            .expect("on");
    assert_eq!(
        only_web.prices.len(),
        1,
        "only priced categories are offered"
    );
    assert!(!only_web.approval);
    let all = resolve(
        "[placements]\nenabled = true\napproval = true\nstars = 100\n[placements.category_stars]\nweb = 150\n",
    )
    .expect("on");
    assert!(all.approval);
    let web = jobwire_core::CategorySlug::parse("web").expect("a valid slug");
    let design = jobwire_core::CategorySlug::parse("design").expect("a valid slug");
    assert_eq!(all.price(std::slice::from_ref(&web)), Some(150));
    assert_eq!(all.price(&[web, design]), Some(250));
    assert_eq!(all.price(&[]), None);
}

#[test]
fn a_good_config_resolves_with_defaults_and_hides_secrets() {
    let env = FakeEnv(
        [
            ("JOBWIRE_BOT_DEV_TOKEN", TOKEN),
            ("JOBWIRE_LLM_API_KEY", "sk-secret"),
        ]
        .into_iter()
        .collect(),
    );
    let cfg = Config::from_toml(
        "[[bots]]\nname = \"dev\"\n[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n",
    )
    .expect("parses");
    let s = cfg.resolve(&env).expect("resolves");
    assert_eq!(s.categories.len(), 12);
    assert!(s.categories.iter().all(|c| c.bot == "dev"));
    assert_eq!(s.limits.per_chat_per_sec, 1);
    let printed = format!("{s:?}");
    assert!(!printed.contains("sk-secret"), "{printed}");
    assert!(!printed.contains("AAAAAAAAAAAAAAAAAAAA"), "{printed}");
}

#[test]
fn the_settings_print_without_the_passwords_of_their_urls() {
    let env = FakeEnv([("JOBWIRE_BOT_DEV_TOKEN", TOKEN)].into_iter().collect());
    let doc = "[database]\nurl = \"postgres://app:pg-s3cr/et@db:5432/jobwire\"\n\
               [queue]\nurl = \"amqp://app:mq-s3cr?et@rabbit:5672/%2f\"\n\
               [redis]\nurl = \"redis://:rd-s3cret@cache:6379/\"\n\
               [[bots]]\nname = \"dev\"\n";
    let config = Config::from_toml(doc).expect("the config parses");
    let settings = config.resolve(&env).expect("the config resolves");
    for shown in [
        format!("{config:?}"),
        format!("{settings:?}"),
        format!("{settings:#?}"),
    ] {
        for secret in ["pg-s3cr", "mq-s3cr", "rd-s3cret", "AAAAAAAAAAAAAAAA"] {
            assert!(!shown.contains(secret), "{secret} shown in {shown}");
        }
        assert!(shown.contains("db:5432/jobwire"), "the host stays readable");
    }
    assert_eq!(
        settings.database_url.expose(),
        "postgres://app:pg-s3cr/et@db:5432/jobwire"
    );
}

#[test]
#[allow(clippy::unwrap_used)]
fn the_webhook_secret_must_be_long_enough_to_not_be_guessed() {
    let doc = "[[bots]]\nname = \"dev\"\n[telegram]\nupdates = \"webhook\"\n\
               webhook_public_url = \"https://bots.example.com/\"\n";
    for short in ["x", "s3cret_Token-for-tests", &"a".repeat(31)] {
        let short: &'static str = Box::leak(short.to_owned().into_boxed_str());
        check_err(
            doc,
            &[
                ("JOBWIRE_BOT_DEV_TOKEN", TOKEN),
                (WEBHOOK_SECRET_ENV, short),
            ],
            "JOBWIRE_TELEGRAM_WEBHOOK_SECRET: must be 32-256 characters",
        );
    }
    let env = FakeEnv(
        [
            ("JOBWIRE_BOT_DEV_TOKEN", TOKEN),
            (WEBHOOK_SECRET_ENV, "0123456789abcdef0123456789abcdef"),
        ]
        .into_iter()
        .collect(),
    );
    let settings = Config::from_toml(doc).unwrap().resolve(&env).unwrap();
    assert!(settings.bot_role.webhook.is_some());
}

#[test]
#[allow(clippy::unwrap_used)]
fn secure_cookies_are_the_default_and_trusted_proxies_are_checked() {
    let env = FakeEnv([("JOBWIRE_BOT_DEV_TOKEN", TOKEN)].into_iter().collect());
    let base = "[[bots]]\nname = \"dev\"\n";
    let settings = Config::from_toml(base).unwrap().resolve(&env).unwrap();
    assert!(settings.admin_secure_cookies);
    assert!(settings.admin_trusted_proxies.is_empty());
    let doc = format!(
        "{base}[admin]\nsecure_cookies = false\ntrusted_proxies = [\"10.0.0.0/8\", \"::1\"]\n"
    );
    let settings = Config::from_toml(&doc).unwrap().resolve(&env).unwrap();
    assert!(!settings.admin_secure_cookies);
    let proxies: Vec<String> = settings
        .admin_trusted_proxies
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(proxies, ["10.0.0.0/8", "::1/128"]);
    check_err(
        &format!("{base}[admin]\ntrusted_proxies = [\"10.0.0.1\", \"proxy.local\"]\n"),
        &[("JOBWIRE_BOT_DEV_TOKEN", TOKEN)],
        "admin.trusted_proxies[1]",
    );
}

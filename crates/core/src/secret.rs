//! Secrets that never print: [`Secret`] for tokens, keys and passwords, [`SecretUrl`] for
//! connection URLs that may carry a password (printed as [`redact_url`] shows them), and
//! [`redact_url`] itself. Every crate uses these; none has its own.

use std::fmt;

use serde::Deserialize;

/// A token, key or password. `Debug` and `Display` print `***`, whatever the value; the
/// value is reached only by [`Secret::expose`], so every place that uses it is visible.
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself: for the one call that needs it (an HTTP header, a login).
    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Its length in characters (for minimum-length checks), not its content.
    pub fn len(&self) -> usize {
        self.0.chars().count()
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// A database, broker or Redis URL, which may carry a password. `Debug` and `Display` show it
/// through [`redact_url`] (scheme, user and host stay readable); the URL itself is reached
/// only by [`SecretUrl::expose`].
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct SecretUrl(String);

impl SecretUrl {
    pub fn new(url: impl Into<String>) -> Self {
        Self(url.into())
    }

    /// The URL itself: for the one call that connects with it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for SecretUrl {
    fn from(url: String) -> Self {
        Self(url)
    }
}

impl From<&str> for SecretUrl {
    fn from(url: &str) -> Self {
        Self(url.to_owned())
    }
}

impl fmt::Debug for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&redact_url(&self.0), f)
    }
}

impl fmt::Display for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redact_url(&self.0))
    }
}

/// `url` fit for a log line or an error message: the password of its user info
/// (`scheme://user:password@host`) becomes `***`, and so does the value of any `password=`
/// parameter. It does not need to parse: a password holding `/`, `#`, `?` or `@` is hidden
/// too, since everything between `://` and the **last** `@` is user info.
pub fn redact_url(url: &str) -> String {
    let mut out = match url.split_once("://") {
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((user_info, host)) => match user_info.split_once(':') {
                Some((user, _password)) => format!("{scheme}://{user}:***@{host}"),
                None => url.to_owned(),
            },
            None => url.to_owned(),
        },
        None => url.to_owned(),
    };
    redact_parameter(&mut out, "password=");
    out
}

/// Replaces the value of every `name…` parameter (up to `&`, `;` or `#`) with `***`,
/// matching the name case-insensitively.
fn redact_parameter(url: &mut String, name: &str) {
    let mut from = 0;
    while let Some(found) = url[from..].to_ascii_lowercase().find(name) {
        let start = from + found + name.len();
        let end = url[start..]
            .find(['&', ';', '#'])
            .map_or(url.len(), |e| start + e);
        url.replace_range(start..end, "***");
        from = start + 3;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_never_prints() {
        let s = Secret::new("123456:ABC-token");
        assert_eq!(format!("{s:?}"), "Secret(***)");
        assert_eq!(format!("{s}"), "***");
        assert_eq!(format!("{:?}", Some(&s)), "Some(Secret(***))");
        assert_eq!(s.expose(), "123456:ABC-token");
        let parsed: Secret = serde_json::from_str("\"k\"").expect("a JSON string");
        assert_eq!(parsed.expose(), "k");
    }

    #[test]
    fn a_secret_url_prints_without_its_password() {
        let url = SecretUrl::from("postgres://app:s3cr/et@db:5432/jobwire?password=p2");
        for shown in [
            format!("{url:?}"),
            format!("{url}"),
            format!("{:?}", Some(&url)),
        ] {
            assert!(!shown.contains("s3cr") && !shown.contains("p2"), "{shown}");
            assert!(shown.contains("db:5432/jobwire"), "{shown}");
        }
        assert_eq!(
            url.expose(),
            "postgres://app:s3cr/et@db:5432/jobwire?password=p2"
        );
    }

    #[test]
    fn redact_url_hides_the_password_only() {
        assert_eq!(
            redact_url("postgres://app:s3cret@db.example:5432/jobwire?sslmode=require"),
            "postgres://app:***@db.example:5432/jobwire?sslmode=require"
        );
        assert_eq!(
            redact_url("postgres://app@db/jobwire"),
            "postgres://app@db/jobwire"
        );
        assert_eq!(redact_url("amqp://host:5672"), "amqp://host:5672");
        assert_eq!(redact_url("sqlite://jobwire.db"), "sqlite://jobwire.db");
        assert_eq!(
            redact_url("redis://:pw@127.0.0.1/"),
            "redis://:***@127.0.0.1/"
        );
    }

    #[test]
    fn redact_url_hides_passwords_that_break_url_syntax() {
        for url in [
            "postgres://jobwire:s3cr/et@db:5432/x",
            "postgres://jobwire:s3#cr?et@db/x",
            "amqps://u:p@w@host/vh?x=1",
            "postgres://jobwire:a:b@db/x",
        ] {
            let shown = redact_url(url);
            assert!(
                shown.ends_with("@db:5432/x") || shown.contains("***@"),
                "{shown}"
            );
            for fragment in ["s3cr", "et@db", "p@w", "a:b"] {
                assert!(!shown.contains(fragment), "{url} -> {shown}");
            }
        }
        assert_eq!(
            redact_url("postgres://db/x?user=a&password=hunter2&sslmode=require"),
            "postgres://db/x?user=a&password=***&sslmode=require"
        );
        assert_eq!(
            redact_url("postgres://db/x?PASSWORD=hunter2"),
            "postgres://db/x?PASSWORD=***"
        );
    }
}

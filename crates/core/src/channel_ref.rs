//! [`ChannelRef`]: how an admin names a channel (`@username`, `t.me/name`, an invite link).

use std::fmt;

/// A channel or chat as the admin named it: a public username or a private invite.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ChannelRef {
    /// A public channel or group, by username (without `@`, lowercased: usernames are
    /// case-insensitive).
    Username(String),
    /// A private channel or group, by the hash of its invite link (`t.me/+HASH`,
    /// `t.me/joinchat/HASH`). Hashes are case-sensitive.
    Invite(String),
}

/// Why a channel reference could not be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChannelRefError {
    /// Nothing was given.
    #[error("empty channel reference")]
    Empty,
    /// A link to a host that is not Telegram's.
    #[error("{0:?} is not a t.me link")]
    NotTelegram(String),
    /// A `t.me/c/...` link: it points at a message of a private channel and cannot be joined.
    #[error(
        "{0:?} is a link to a message in a private channel; use the channel's invite link (t.me/+...) instead"
    )]
    PrivateMessageLink(String),
    /// The username has characters or a length Telegram does not allow.
    #[error(
        "{0:?} is not a valid username (4-32 letters, digits or underscores, starting with a letter)"
    )]
    BadUsername(String),
    /// The invite hash is empty or has characters invite links never have.
    #[error("{0:?} is not a valid invite link")]
    BadInvite(String),
}

const HOSTS: [&str; 5] = [
    "t.me",
    "telegram.me",
    "telegram.dog",
    "www.t.me",
    "www.telegram.me",
];

impl ChannelRef {
    /// Parses `@username`, `username`, `t.me/name` (with or without `https://`, a message
    /// number or a query), `t.me/s/name`, `t.me/+HASH` and `t.me/joinchat/HASH`.
    pub fn parse(raw: &str) -> Result<Self, ChannelRefError> {
        let s = raw.trim();
        if s.is_empty() {
            return Err(ChannelRefError::Empty);
        }
        if let Some(name) = s.strip_prefix('@') {
            return username(name, s);
        }
        let without_scheme = s
            .strip_prefix("https://")
            .or_else(|| s.strip_prefix("http://"))
            .unwrap_or(s);
        let (host, path) = match without_scheme.split_once('/') {
            Some((h, p)) => (h, p),
            None if without_scheme.contains('.') || without_scheme.len() != s.len() => {
                return Err(ChannelRefError::NotTelegram(s.to_string()));
            }
            None => return username(s, s),
        };
        if !HOSTS.contains(&host.to_ascii_lowercase().as_str()) {
            return Err(ChannelRefError::NotTelegram(s.to_string()));
        }
        let path = path.split(['?', '#']).next().unwrap_or_default();
        let mut parts = path.split('/').filter(|p| !p.is_empty());
        let first = parts.next().ok_or(ChannelRefError::Empty)?;
        if let Some(hash) = first.strip_prefix('+') {
            return invite(hash, s);
        }
        match first.to_ascii_lowercase().as_str() {
            "joinchat" => invite(parts.next().unwrap_or_default(), s),
            "c" => Err(ChannelRefError::PrivateMessageLink(s.to_string())),
            "s" => username(parts.next().unwrap_or_default(), s),
            _ => username(first, s),
        }
    }

    /// The stable key jobwire stores this reference under: `@username` or `+HASH`.
    pub fn key(&self) -> String {
        match self {
            Self::Username(u) => format!("@{u}"),
            Self::Invite(h) => format!("+{h}"),
        }
    }

    /// The reference stored under `key` ([`Self::key`]): `@username` or `+HASH`.
    pub fn from_key(key: &str) -> Option<Self> {
        if let Some(hash) = key.strip_prefix('+') {
            invite(hash, key).ok()
        } else {
            key.strip_prefix('@')
                .and_then(|name| username(name, key).ok())
        }
    }

    /// How posts name their channel ([`crate::IncomingPost::channel`]): `@username`
    /// for public channels, the invite link for private ones.
    pub fn handle(&self) -> String {
        match self {
            Self::Username(u) => format!("@{u}"),
            Self::Invite(h) => format!("https://t.me/+{h}"),
        }
    }
}

impl fmt::Display for ChannelRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.handle())
    }
}

impl std::str::FromStr for ChannelRef {
    type Err = ChannelRefError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

fn username(name: &str, raw: &str) -> Result<ChannelRef, ChannelRefError> {
    let ok = (4..=32).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.ends_with('_');
    if ok {
        Ok(ChannelRef::Username(name.to_ascii_lowercase()))
    } else {
        Err(ChannelRefError::BadUsername(raw.to_string()))
    }
}

fn invite(hash: &str, raw: &str) -> Result<ChannelRef, ChannelRefError> {
    let ok = hash.len() >= 5
        && hash.len() <= 64
        && hash
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(ChannelRef::Invite(hash.to_string()))
    } else {
        Err(ChannelRefError::BadInvite(raw.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(s: &str) -> ChannelRef {
        ChannelRef::Username(s.into())
    }

    #[test]
    fn every_public_form_names_the_same_channel() {
        for raw in [
            "@RemoteJobs",
            "remotejobs",
            "t.me/remotejobs",
            "https://t.me/RemoteJobs",
            "http://telegram.me/remotejobs/",
            "https://t.me/remotejobs/1234",
            "https://t.me/s/remotejobs",
            "https://t.me/remotejobs?single",
            "  @remotejobs  ",
        ] {
            assert_eq!(ChannelRef::parse(raw), Ok(user("remotejobs")), "{raw}");
        }
        assert_eq!(user("remotejobs").key(), "@remotejobs");
        assert_eq!(user("remotejobs").handle(), "@remotejobs");
    }

    #[test]
    fn invite_links_keep_their_case_sensitive_hash() {
        for raw in [
            "https://t.me/+AbCdEf123_-x",
            "t.me/+AbCdEf123_-x",
            "https://t.me/joinchat/AbCdEf123_-x",
            "https://telegram.me/joinchat/AbCdEf123_-x/",
        ] {
            assert_eq!(
                ChannelRef::parse(raw),
                Ok(ChannelRef::Invite("AbCdEf123_-x".into())),
                "{raw}"
            );
        }
        let r = ChannelRef::Invite("AbCdEf123_-x".into());
        assert_eq!(r.key(), "+AbCdEf123_-x");
        assert_eq!(ChannelRef::from_key(&r.key()), Some(r.clone()));
        assert_eq!(
            ChannelRef::from_key("@remotejobs"),
            Some(user("remotejobs"))
        );
        assert_eq!(ChannelRef::from_key("remotejobs"), None);
        assert_eq!(r.handle(), "https://t.me/+AbCdEf123_-x");
    }

    #[test]
    fn junk_is_refused_with_a_reason() {
        assert_eq!(ChannelRef::parse("  "), Err(ChannelRefError::Empty));
        assert!(matches!(
            ChannelRef::parse("https://example.com/jobs"),
            Err(ChannelRefError::NotTelegram(_))
        ));
        assert!(matches!(
            ChannelRef::parse("https://t.me/c/123456/7"),
            Err(ChannelRefError::PrivateMessageLink(_))
        ));
        let refused_as = |bad: &[&str], why: fn(String) -> ChannelRefError| {
            for raw in bad {
                assert_eq!(ChannelRef::parse(raw), Err(why(raw.to_string())), "{raw}");
            }
        };
        refused_as(
            &[
                "@ab",
                "@1jobs",
                "@jobs-now",
                "@jobs_",
                "jobs now",
                "@работа",
            ],
            ChannelRefError::BadUsername,
        );
        refused_as(
            &[
                "https://t.me/+",
                "t.me/joinchat/",
                "t.me/+ab",
                "t.me/+a b c d e",
            ],
            ChannelRefError::BadInvite,
        );
        assert!(ChannelRef::parse("https://t.me/").is_err());
    }
}

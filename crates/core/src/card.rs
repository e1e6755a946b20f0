//! What sits around a delivered vacancy: the author a subscriber can hide, the line naming
//! every channel the vacancy appeared in, what a subscriber wants and a vacancy's merit. (The
//! buttons under a card are the bot crate's, `jobwire_bot::card_buttons`, beside what a tap
//! on them does.)

use crate::format::{MAX_MESSAGE_CHARS, safe_url, visible_len};

/// Who a post is from, as a subscriber can hide it: `key` is compared, `label` shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Author {
    pub key: String,
    pub label: String,
}

/// The `@username` a contact or author names (`@Name`, `t.me/Name`, `https://t.me/Name`),
/// lower-cased; `None` for anything else (a phone, an e-mail, a name).
fn username(raw: &str) -> Option<String> {
    let s = raw.trim();
    let name = if let Some(n) = s.strip_prefix('@') {
        n
    } else {
        let no_scheme = s
            .strip_prefix("https://")
            .or_else(|| s.strip_prefix("http://"))
            .unwrap_or(s);
        no_scheme
            .strip_prefix("t.me/")
            .or_else(|| no_scheme.strip_prefix("telegram.me/"))?
            .split(['/', '?'])
            .next()?
    };
    let ok = (3..=32).contains(&name.len())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    ok.then(|| format!("@{}", name.to_ascii_lowercase()))
}

/// Every author key a post carries: the contact it names, the user who posted it (in a
/// chat) and its channel. A subscriber who hid any of them does not get the post.
pub fn author_keys(channel: &str, author: Option<&str>, contact: Option<&str>) -> Vec<String> {
    let mut keys = Vec::with_capacity(3);
    if let Some(k) = contact.and_then(username) {
        keys.push(k);
    }
    if let Some(k) = author.and_then(username)
        && !keys.contains(&k)
    {
        keys.push(k);
    }
    let ch = channel_key(channel);
    if !keys.contains(&ch) {
        keys.push(ch);
    }
    keys
}

fn channel_key(channel: &str) -> String {
    username(channel).unwrap_or_else(|| format!("src:{}", channel.trim().to_lowercase()))
}

/// The author "Hide this author" hides: the contact the post names (the employer, wherever
/// they post), else the user who posted it in a chat, else the channel itself. An author
/// that is only a display name (a channel's signature) is not specific enough; the channel
/// is hidden instead.
pub fn author_to_hide(
    channel: &str,
    channel_title: Option<&str>,
    author: Option<&str>,
    contact: Option<&str>,
) -> Author {
    if let Some(key) = contact
        .and_then(username)
        .or_else(|| author.and_then(username))
    {
        return Author {
            label: key.clone(),
            key,
        };
    }
    let label = match channel_title {
        Some(t) if !t.trim().is_empty() && !channel.starts_with('@') => t.trim().to_owned(),
        _ => channel.trim().to_owned(),
    };
    Author {
        key: channel_key(channel),
        label: label.chars().take(64).collect(),
    }
}

/// How good a job is to recommend (catching up after a pause, the daily digest), compared
/// in order: no complaints, a stated budget, more subscribers matched, newer. Larger is
/// better.
pub type Merit = (bool, bool, u32, chrono::DateTime<chrono::Utc>);

/// The [`Merit`] of a job.
pub fn merit(
    complaints: u32,
    has_budget: bool,
    matched: u32,
    received_at: chrono::DateTime<chrono::Utc>,
) -> Merit {
    (complaints == 0, has_budget, matched, received_at)
}

/// What a subscriber asked to receive. Vacancies and résumés are never mixed for one who
/// asked for one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Wants {
    /// Vacancies only (the default).
    #[default]
    Jobs,
    /// Résumés only: someone looking for freelancers.
    Resumes,
    /// Both.
    Both,
}

impl Wants {
    pub const ALL: [Wants; 3] = [Self::Jobs, Self::Resumes, Self::Both];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Jobs => "jobs",
            Self::Resumes => "resumes",
            Self::Both => "both",
        }
    }

    pub fn parse(raw: &str) -> Option<Wants> {
        Self::ALL.into_iter().find(|w| w.as_str() == raw)
    }

    /// Whether a post of this kind goes to the subscriber: vacancies, or résumés.
    pub fn takes(self, resume: bool) -> bool {
        match self {
            Self::Jobs => !resume,
            Self::Resumes => resume,
            Self::Both => true,
        }
    }
}

/// One channel a vacancy appeared in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// `@username`, a chat's title or a feed URL.
    pub handle: String,
    pub title: Option<String>,
    /// The post in that channel.
    pub url: Option<String>,
    /// When jobwire received the post from that channel.
    pub received_at: chrono::DateTime<chrono::Utc>,
}

/// At most this many sources are named; more are counted ("+3").
pub const MAX_SOURCES_SHOWN: usize = 8;

/// The line naming every channel a vacancy appeared in (`📢 @a · @b · Chat`), for a
/// vacancy seen in two or more; `None` for one. Channel names are escaped and linked to
/// the post in that channel where the link is safe.
pub fn sources_line(sources: &[Source]) -> Option<String> {
    let mut seen: Vec<&str> = Vec::new();
    let mut unique: Vec<&Source> = Vec::new();
    for s in sources {
        if !seen.contains(&s.handle.as_str()) {
            seen.push(&s.handle);
            unique.push(s);
        }
    }
    if unique.len() < 2 {
        return None;
    }
    let shown: Vec<String> = unique
        .iter()
        .take(MAX_SOURCES_SHOWN)
        .map(|s| {
            let name = if s.handle.starts_with('@') {
                s.handle.clone()
            } else {
                s.title.clone().unwrap_or_else(|| s.handle.clone())
            };
            let name: String = name.chars().take(48).collect();
            let name = html_escape::encode_text(&name).into_owned();
            match s.url.as_deref().and_then(safe_url) {
                Some(url) => format!(
                    "<a href=\"{}\">{name}</a>",
                    html_escape::encode_double_quoted_attribute(url)
                ),
                None => name,
            }
        })
        .collect();
    let mut line = format!("📢 {}", shown.join(" · "));
    if unique.len() > MAX_SOURCES_SHOWN {
        line.push_str(&format!(" +{}", unique.len() - MAX_SOURCES_SHOWN));
    }
    Some(line)
}

/// The card's last part with the sources line added: above the part's last line when that
/// is the "Open original" link, else at its end. When the line would push the part past
/// Telegram's limit, only the count of channels is added.
pub fn with_sources(last_part: &str, line: &str, count: usize) -> String {
    let place = |line: &str| match last_part.rfind("\n🔗 ") {
        Some(at) => format!("{}\n{line}{}", &last_part[..at], &last_part[at..]),
        None => format!("{last_part}\n\n{line}"),
    };
    let full = place(line);
    if visible_len(&full) <= MAX_MESSAGE_CHARS {
        return full;
    }
    let short = place(&format!("📢 ×{count}"));
    if visible_len(&short) <= MAX_MESSAGE_CHARS {
        short
    } else {
        last_part.to_owned()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_author_hidden_is_the_most_specific_one() {
        let a = author_to_hide(
            "@jobs",
            None,
            Some("@Poster"),
            Some("https://t.me/Client_1"),
        );
        assert_eq!(a.key, "@client_1");
        let a = author_to_hide("@jobs", None, Some("Ivan Petrov"), None);
        assert_eq!(a.key, "@jobs");
        let a = author_to_hide("Freelance chat", Some("Freelance chat"), Some("@Bob"), None);
        assert_eq!(a.key, "@bob");
        let a = author_to_hide(
            "https://example.com/feed",
            Some("Example"),
            None,
            Some("+7 999"),
        );
        assert_eq!(a.key, "src:https://example.com/feed");
        assert_eq!(a.label, "Example");
        // Hiding @bob as a contact hides his posts in a chat too.
        assert!(author_keys("Chat", Some("@BOB"), None).contains(&"@bob".to_owned()));
        assert_eq!(
            author_keys("@jobs", Some("@jobs"), Some("@jobs")),
            vec!["@jobs".to_owned()]
        );
    }

    #[test]
    fn sources_line_names_each_channel_once_escaped() {
        let s = |h: &str, url: Option<&str>| Source {
            handle: h.into(),
            title: Some("<b>T</b>".into()),
            url: url.map(Into::into),
            received_at: chrono::DateTime::UNIX_EPOCH,
        };
        assert_eq!(sources_line(&[s("@a", None), s("@a", None)]), None);
        let line = sources_line(&[
            s("@a", Some("https://t.me/a/1")),
            s("Chat <x>", None),
            s("@a", None),
        ])
        .unwrap();
        assert_eq!(
            line,
            "📢 <a href=\"https://t.me/a/1\">@a</a> · &lt;b&gt;T&lt;/b&gt;"
        );
        let many: Vec<Source> = (0..12).map(|i| s(&format!("@ch{i}"), None)).collect();
        assert!(sources_line(&many).unwrap().ends_with(" +4"));
    }

    #[test]
    fn wants_never_mix_for_those_who_asked_for_one() {
        assert!(Wants::Jobs.takes(false) && !Wants::Jobs.takes(true));
        assert!(Wants::Resumes.takes(true) && !Wants::Resumes.takes(false));
        assert!(Wants::Both.takes(true) && Wants::Both.takes(false));
        for w in Wants::ALL {
            assert_eq!(Wants::parse(w.as_str()), Some(w));
        }
        assert_eq!(Wants::default(), Wants::Jobs);
    }

    #[test]
    fn sources_go_above_the_link_and_never_past_the_limit() {
        let part = "head\n\ntext\n\n🔗 <a href=\"https://t.me/a/1\">Open original</a>";
        let out = with_sources(part, "📢 @a · @b", 2);
        assert!(out.contains("text\n\n📢 @a · @b\n🔗 "), "{out}");
        let long = "x".repeat(MAX_MESSAGE_CHARS - 5);
        assert_eq!(with_sources(&long, "📢 @a · @b", 2), long);
        assert!(with_sources("short", "📢 @a · @b", 2).ends_with("\n\n📢 @a · @b"));
    }
}

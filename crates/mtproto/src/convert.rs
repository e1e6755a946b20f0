//! From jobwire's neutral [`RawMessage`] to the [`IncomingPost`] the pipeline reads.

use jobwire_core::IncomingPost;

use crate::account::{EntityKind, RawMessage};

/// The channel a post was read from, as the conversion needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostChannel {
    /// [`crate::ChannelRef::handle`]: `@username` or the invite link.
    pub handle: String,
    /// The public username (without `@`), for `t.me/name/id` links.
    pub username: Option<String>,
    /// Telegram's bare id, for `t.me/c/id/msg` links of private channels.
    pub peer_id: i64,
}

/// Builds one post from a message or an album (its messages in any order).
///
/// - The album's post is its first message id, with the caption (the first non-empty text
///   by id) and the caption's entities.
/// - Hidden links (`[Apply](https://...)`) whose URL is not in the text are appended on
///   their own lines, so subscribers see where to apply.
/// - A forward keeps its origin: the author is the original channel or author and the link
///   points at the original post when it is known.
/// - Returns `None` for service messages and posts without any text (media only): there is
///   nothing to classify.
///
/// The text is bounded by [`IncomingPost::bound_text`].
pub fn post_from_parts(
    channel: &PostChannel,
    parts: &[RawMessage],
    origin_username: &dyn Fn(i64) -> Option<String>,
) -> Option<IncomingPost> {
    let first = parts
        .iter()
        .filter(|m| !m.is_service)
        .min_by_key(|m| m.id)?;
    let caption = parts
        .iter()
        .filter(|m| !m.is_service && !m.text.trim().is_empty())
        .min_by_key(|m| m.id)?;
    let mut text = caption.text.clone();
    let mut links: Vec<String> = Vec::new();
    for e in &caption.entities {
        if let EntityKind::TextUrl(url) = &e.kind {
            if caption.text.contains(url.as_str()) || links.iter().any(|l| l.ends_with(url)) {
                continue;
            }
            let label = utf16_slice(&caption.text, e.offset, e.length)
                .map(str::trim)
                .filter(|l| !l.is_empty());
            links.push(match label {
                Some(l) => format!("{l}: {url}"),
                None => url.clone(),
            });
        }
    }
    if !links.is_empty() {
        text.push_str("\n\n");
        text.push_str(&links.join("\n"));
    }

    let own_url = message_url(channel.username.as_deref(), channel.peer_id, first.id);
    let (author, url) = match &first.forward_from {
        Some(origin) => {
            let username = origin
                .channel_username
                .clone()
                .or_else(|| origin.channel_id.and_then(origin_username));
            let url = match (origin.channel_id, origin.message_id) {
                (Some(c), Some(m)) => message_url(username.as_deref(), c, m),
                _ => own_url,
            };
            let author = origin
                .name
                .clone()
                .or_else(|| username.map(|u| format!("@{u}")))
                .or_else(|| first.author.clone());
            (author, url)
        }
        None => (first.author.clone(), own_url),
    };

    let mut post = IncomingPost {
        channel: channel.handle.clone(),
        external_id: first.id.to_string(),
        text,
        author,
        url: Some(url),
        posted_at: first.date,
    };
    post.bound_text();
    Some(post)
}

/// `https://t.me/name/id` for public channels, `https://t.me/c/peer/id` otherwise.
pub fn message_url(username: Option<&str>, peer_id: i64, message_id: i64) -> String {
    match username {
        Some(u) => format!("https://t.me/{u}/{message_id}"),
        None => format!("https://t.me/c/{peer_id}/{message_id}"),
    }
}

/// The part of `text` an entity covers (offsets in UTF-16 code units).
pub(crate) fn utf16_slice(text: &str, offset: i32, length: i32) -> Option<&str> {
    let (offset, length) = (usize::try_from(offset).ok()?, usize::try_from(length).ok()?);
    let (mut start, mut end) = (None, None);
    let mut units = 0usize;
    for (byte, ch) in text.char_indices() {
        if units == offset {
            start = Some(byte);
        }
        if units == offset + length {
            end = Some(byte);
            break;
        }
        units += ch.len_utf16();
    }
    if units == offset + length && end.is_none() {
        end = Some(text.len());
    }
    if start.is_none() && offset == units && length == 0 {
        start = Some(text.len());
    }
    text.get(start?..end?)
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, TimeZone, Utc};

    use super::*;
    use crate::account::{Entity, ForwardOrigin};

    fn at(secs: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_700_000_000 + secs, 0)
            .single()
            .expect("valid")
    }

    fn msg(id: i64, text: &str) -> RawMessage {
        RawMessage {
            id,
            peer: 1001,
            text: text.into(),
            entities: vec![],
            grouped_id: None,
            forward_from: None,
            author: None,
            date: at(id),
            edit_date: None,
            is_service: false,
        }
    }

    fn public() -> PostChannel {
        PostChannel {
            handle: "@jobs".into(),
            username: Some("jobs".into()),
            peer_id: 1001,
        }
    }

    fn none(_: i64) -> Option<String> {
        None
    }

    #[test]
    fn a_text_post_links_to_its_message_and_keeps_the_author() {
        let mut m = msg(42, "Rust developer wanted, remote");
        m.author = Some("Anna HR".into());
        let post = post_from_parts(&public(), &[m], &none).expect("post");
        assert_eq!(post.channel, "@jobs");
        assert_eq!(post.external_id, "42");
        assert_eq!(post.text, "Rust developer wanted, remote");
        assert_eq!(post.author.as_deref(), Some("Anna HR"));
        assert_eq!(post.url.as_deref(), Some("https://t.me/jobs/42"));
        assert_eq!(post.posted_at, at(42));
    }

    #[test]
    fn a_private_channel_links_through_t_me_c() {
        let channel = PostChannel {
            handle: "https://t.me/+Hash12345".into(),
            username: None,
            peer_id: 1001,
        };
        let post = post_from_parts(&channel, &[msg(7, "job")], &none).expect("post");
        assert_eq!(post.url.as_deref(), Some("https://t.me/c/1001/7"));
        assert_eq!(post.channel, "https://t.me/+Hash12345");
    }

    #[test]
    fn hidden_links_are_appended_with_their_label() {
        // "Откликнуться" is 12 UTF-16 units; the emoji before it takes 2.
        let text = "Senior Go 🚀 Откликнуться https://visible.example";
        let label_start = "Senior Go 🚀 ".encode_utf16().count() as i32;
        let mut m = msg(5, text);
        m.entities = vec![
            Entity {
                kind: EntityKind::TextUrl("https://hh.example/apply/1".into()),
                offset: label_start,
                length: 12,
            },
            Entity {
                kind: EntityKind::TextUrl("https://visible.example".into()),
                offset: 0,
                length: 6,
            },
            Entity {
                kind: EntityKind::Other,
                offset: 0,
                length: 6,
            },
        ];
        let post = post_from_parts(&public(), &[m], &none).expect("post");
        assert_eq!(
            post.text,
            format!("{text}\n\nОткликнуться: https://hh.example/apply/1")
        );
    }

    #[test]
    fn an_album_is_one_post_with_its_caption_and_first_id() {
        let mut parts = vec![msg(12, ""), msg(10, ""), msg(11, "Designer wanted")];
        for p in &mut parts {
            p.grouped_id = Some(777);
        }
        parts[2].entities = vec![Entity {
            kind: EntityKind::TextUrl("https://apply.example".into()),
            offset: 0,
            length: 8,
        }];
        let post = post_from_parts(&public(), &parts, &none).expect("post");
        assert_eq!(post.external_id, "10");
        assert_eq!(post.url.as_deref(), Some("https://t.me/jobs/10"));
        assert_eq!(post.posted_at, at(10));
        assert_eq!(
            post.text,
            "Designer wanted\n\nDesigner: https://apply.example"
        );
    }

    #[test]
    fn a_forward_keeps_its_origin() {
        let mut m = msg(9, "QA engineer, Berlin");
        m.author = Some("reposter".into());
        m.forward_from = Some(ForwardOrigin {
            channel_id: Some(555),
            channel_username: None,
            message_id: Some(314),
            name: None,
        });
        let known = |id: i64| (id == 555).then(|| "origin_jobs".to_string());
        let post = post_from_parts(&public(), &[m.clone()], &known).expect("post");
        assert_eq!(post.url.as_deref(), Some("https://t.me/origin_jobs/314"));
        assert_eq!(post.author.as_deref(), Some("@origin_jobs"));
        assert_eq!(
            post.external_id, "9",
            "the id stays the one in the read channel"
        );

        // Unknown private origin: a t.me/c link; a hidden-sender forward: their name.
        let post = post_from_parts(&public(), &[m.clone()], &none).expect("post");
        assert_eq!(post.url.as_deref(), Some("https://t.me/c/555/314"));
        m.forward_from = Some(ForwardOrigin {
            name: Some("Ivan Petrov".into()),
            ..ForwardOrigin::default()
        });
        let post = post_from_parts(&public(), &[m], &none).expect("post");
        assert_eq!(post.author.as_deref(), Some("Ivan Petrov"));
        assert_eq!(post.url.as_deref(), Some("https://t.me/jobs/9"));
    }

    #[test]
    fn service_and_empty_messages_make_no_post() {
        let mut service = msg(3, "");
        service.is_service = true;
        assert_eq!(post_from_parts(&public(), &[service], &none), None);
        assert_eq!(post_from_parts(&public(), &[msg(4, "  ")], &none), None);
    }

    #[test]
    fn huge_posts_are_bounded() {
        let big = "x".repeat(jobwire_core::post::MAX_POST_BYTES + 10);
        let post = post_from_parts(&public(), &[msg(1, &big)], &none).expect("post");
        assert!(post.text.len() <= jobwire_core::post::MAX_POST_BYTES + 3);
    }

    #[test]
    fn utf16_slices_follow_telegram_offsets() {
        assert_eq!(utf16_slice("a😀bc", 1, 2), Some("😀"));
        assert_eq!(utf16_slice("a😀bc", 3, 2), Some("bc"));
        assert_eq!(utf16_slice("abc", 2, 5), None);
        assert_eq!(utf16_slice("abc", -1, 1), None);
    }
}

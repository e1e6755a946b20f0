//! grammers' raw messages (as they come in updates and history) as [`RawMessage`]s, with
//! their authors named from the users and chats that came with them.

use std::collections::HashMap;

use chrono::{DateTime, TimeZone, Utc};
use grammers_client::peer::Peer;
use grammers_session::types::PeerId;
use grammers_tl_types as tl;

use crate::account::{Entity, EntityKind, ForwardOrigin, RawMessage};

/// Display names of the users and chats that came with a response.
#[derive(Debug, Default, Clone)]
pub(super) struct Names(HashMap<PeerId, (Option<String>, String)>);

impl Names {
    pub(super) fn from_raw(users: &[tl::enums::User], chats: &[tl::enums::Chat]) -> Self {
        let mut map = HashMap::new();
        for u in users {
            if let tl::enums::User::User(u) = u {
                let name = [u.first_name.as_deref(), u.last_name.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(" ");
                map.insert(PeerId::user_unchecked(u.id), (u.username.clone(), name));
            }
        }
        for c in chats {
            match c {
                tl::enums::Chat::Channel(c) => {
                    map.insert(
                        PeerId::channel_unchecked(c.id),
                        (c.username.clone(), c.title.clone()),
                    );
                }
                tl::enums::Chat::Chat(c) => {
                    map.insert(PeerId::chat_unchecked(c.id), (None, c.title.clone()));
                }
                _ => {}
            }
        }
        Self(map)
    }

    pub(super) fn from_peers(peers: &grammers_client::peer::PeerMap) -> Self {
        let map = peers
            .iter()
            .map(|(id, p): (PeerId, &Peer)| {
                (
                    id,
                    (
                        p.username().map(str::to_string),
                        p.name().unwrap_or_default().to_string(),
                    ),
                )
            })
            .collect();
        Self(map)
    }

    fn username(&self, id: PeerId) -> Option<String> {
        self.0.get(&id).and_then(|(u, _)| u.clone())
    }

    /// `@username`, else the display name.
    fn author(&self, id: PeerId) -> Option<String> {
        let (u, name) = self.0.get(&id)?;
        match u {
            Some(u) => Some(format!("@{u}")),
            None => (!name.trim().is_empty()).then(|| name.clone()),
        }
    }
}

fn bare_id(peer: &tl::enums::Peer) -> i64 {
    match peer {
        tl::enums::Peer::User(p) => p.user_id,
        tl::enums::Peer::Chat(p) => p.chat_id,
        tl::enums::Peer::Channel(p) => p.channel_id,
    }
}

fn date(unix: i32) -> DateTime<Utc> {
    Utc.timestamp_opt(i64::from(unix), 0)
        .single()
        .unwrap_or(DateTime::UNIX_EPOCH)
}

fn entity(e: &tl::enums::MessageEntity) -> Option<Entity> {
    use tl::enums::MessageEntity as E;
    let (kind, offset, length) = match e {
        E::Url(x) => (EntityKind::Url, x.offset, x.length),
        E::TextUrl(x) => (EntityKind::TextUrl(x.url.clone()), x.offset, x.length),
        E::Mention(x) => (EntityKind::Mention, x.offset, x.length),
        E::MentionName(x) => (EntityKind::MentionName(x.user_id), x.offset, x.length),
        E::Hashtag(x) => (EntityKind::Hashtag, x.offset, x.length),
        E::Email(x) => (EntityKind::Email, x.offset, x.length),
        E::Phone(x) => (EntityKind::Phone, x.offset, x.length),
        _ => return None,
    };
    Some(Entity {
        kind,
        offset,
        length,
    })
}

/// Converts one of grammers' raw messages (as they come in updates and history) to a
/// [`RawMessage`], naming authors from the users and chats that came with it. `None` for
/// empty messages.
pub fn raw_from_tl(
    message: &tl::enums::Message,
    users: &[tl::enums::User],
    chats: &[tl::enums::Chat],
) -> Option<RawMessage> {
    convert_tl(message, &Names::from_raw(users, chats))
}

/// [`raw_from_tl`] with the names already gathered (from a response or an update).
pub(super) fn convert_tl(message: &tl::enums::Message, names: &Names) -> Option<RawMessage> {
    match message {
        tl::enums::Message::Empty(_) => None,
        tl::enums::Message::Service(s) => Some(RawMessage {
            id: i64::from(s.id),
            peer: bare_id(&s.peer_id),
            text: String::new(),
            entities: Vec::new(),
            grouped_id: None,
            forward_from: None,
            author: None,
            date: date(s.date),
            edit_date: None,
            is_service: true,
        }),
        tl::enums::Message::Message(m) => {
            let forward_from = m
                .fwd_from
                .as_ref()
                .map(|tl::enums::MessageFwdHeader::Header(h)| {
                    let from = h.from_id.as_ref().map(PeerId::from);
                    let channel_id = match &h.from_id {
                        Some(tl::enums::Peer::Channel(c)) => Some(c.channel_id),
                        _ => None,
                    };
                    ForwardOrigin {
                        channel_id,
                        channel_username: channel_id.and(from).and_then(|id| names.username(id)),
                        message_id: h.channel_post.map(i64::from),
                        name: h
                            .post_author
                            .clone()
                            .or_else(|| h.from_name.clone())
                            .or_else(|| {
                                from.filter(|_| channel_id.is_none())
                                    .and_then(|id| names.author(id))
                            }),
                    }
                });
            let author = m.post_author.clone().or_else(|| {
                m.from_id
                    .as_ref()
                    .and_then(|f| names.author(PeerId::from(f)))
            });
            Some(RawMessage {
                id: i64::from(m.id),
                peer: bare_id(&m.peer_id),
                text: m.message.clone(),
                entities: m
                    .entities
                    .as_deref()
                    .unwrap_or_default()
                    .iter()
                    .filter_map(entity)
                    .collect(),
                grouped_id: m.grouped_id,
                forward_from,
                author,
                date: date(m.date),
                edit_date: m.edit_date.map(date),
                is_service: false,
            })
        }
    }
}

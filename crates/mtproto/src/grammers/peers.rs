//! Channels and groups between grammers' types and [`ResolvedPeer`].

use grammers_session::types::{ChannelKind, PeerAuth, PeerId, PeerInfo, PeerRef};
use grammers_tl_types as tl;

use crate::account::{AccountError, PeerKind, ResolvedPeer};

/// How grammers addresses `p` in a request.
pub(super) fn peer_ref(p: &ResolvedPeer) -> PeerRef {
    let id = match p.kind {
        PeerKind::Group => PeerId::chat_unchecked(p.id),
        PeerKind::Channel | PeerKind::Supergroup => PeerId::channel_unchecked(p.id),
    };
    PeerRef {
        id,
        auth: PeerAuth::from_hash(p.access_hash),
    }
}

/// What the session caches about `peer`, so grammers can address it later.
pub(crate) fn peer_info(peer: &ResolvedPeer) -> PeerInfo {
    match peer.kind {
        PeerKind::Group => PeerInfo::Chat { id: peer.id },
        PeerKind::Channel | PeerKind::Supergroup => PeerInfo::Channel {
            id: peer.id,
            auth: Some(PeerAuth::from_hash(peer.access_hash)),
            kind: Some(if peer.kind == PeerKind::Channel {
                ChannelKind::Broadcast
            } else {
                ChannelKind::Megagroup
            }),
        },
    }
}

/// A channel or group as a member sees it (`None` for chats the account is banned from).
pub(super) fn peer_from_chat(chat: &tl::enums::Chat) -> Option<ResolvedPeer> {
    match chat {
        tl::enums::Chat::Channel(c) => Some(ResolvedPeer {
            id: c.id,
            access_hash: c.access_hash.unwrap_or(0),
            kind: if c.broadcast {
                PeerKind::Channel
            } else {
                PeerKind::Supergroup
            },
            username: c.username.clone().map(|u| u.to_ascii_lowercase()),
            title: c.title.clone(),
            invite_hash: None,
            joined: !c.left,
        }),
        tl::enums::Chat::Chat(c) => Some(ResolvedPeer {
            id: c.id,
            access_hash: 0,
            kind: PeerKind::Group,
            username: None,
            title: c.title.clone(),
            invite_hash: None,
            joined: !c.left,
        }),
        _ => None,
    }
}

/// The chat an invite leads to, as far as the invite tells (id 0 when the account is not
/// a member and the invite does not show the chat). The invite hash is left to the caller.
pub(super) fn peer_from_invite(
    invite: tl::enums::ChatInvite,
) -> Result<ResolvedPeer, AccountError> {
    Ok(match invite {
        tl::enums::ChatInvite::Already(a) => {
            peer_from_chat(&a.chat).ok_or(AccountError::NotFound)?
        }
        tl::enums::ChatInvite::Peek(p) => {
            let mut peer = peer_from_chat(&p.chat).ok_or(AccountError::NotFound)?;
            peer.joined = false;
            peer
        }
        tl::enums::ChatInvite::Invite(i) => ResolvedPeer {
            id: 0,
            access_hash: 0,
            kind: if i.broadcast {
                PeerKind::Channel
            } else if i.channel || i.megagroup {
                PeerKind::Supergroup
            } else {
                PeerKind::Group
            },
            username: None,
            title: i.title,
            invite_hash: None,
            joined: false,
        },
    })
}

/// The chats that came with an answer to a join.
pub(super) fn chats_of(updates: &tl::enums::Updates) -> &[tl::enums::Chat] {
    match updates {
        tl::enums::Updates::Updates(u) => &u.chats,
        tl::enums::Updates::Combined(u) => &u.chats,
        _ => &[],
    }
}

//! The small trait the reader drives a Telegram user account through, and the neutral
//! message type it reads.
//!
//! [`crate::GrammersAccount`] implements [`Account`] over MTProto; [`crate::ScriptedAccount`]
//! implements it in memory for tests.

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::ChannelRef;

/// What kind of conversation a peer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PeerKind {
    /// A broadcast channel.
    Channel,
    /// A supergroup (megagroup or gigagroup).
    Supergroup,
    /// A small legacy group (message ids are per account there).
    Group,
}

/// A channel as one account knows it. Access hashes are per account: a peer resolved by
/// one account cannot be used by another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedPeer {
    /// Telegram's bare id of the channel; `0` for an invite that was not joined yet.
    pub id: i64,
    /// The access hash this account uses for the channel.
    pub access_hash: i64,
    /// Channel, supergroup or small group.
    pub kind: PeerKind,
    /// The public username, if any (without `@`).
    pub username: Option<String>,
    /// The channel's title.
    pub title: String,
    /// The invite hash to join with, for private channels.
    pub invite_hash: Option<String>,
    /// Whether the account is already a member.
    pub joined: bool,
}

/// A text entity of a message. Offsets and lengths count UTF-16 code units, as Telegram's do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entity {
    /// What the entity marks.
    pub kind: EntityKind,
    /// Start, in UTF-16 code units.
    pub offset: i32,
    /// Length, in UTF-16 code units.
    pub length: i32,
}

/// The entity kinds jobwire cares about; the rest are [`EntityKind::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum EntityKind {
    /// A visible URL.
    Url,
    /// A text with a hidden link (`[Apply](https://...)`).
    TextUrl(String),
    /// `@username`.
    Mention,
    /// A link to a user without a username.
    MentionName(i64),
    /// `#hashtag`.
    Hashtag,
    /// An e-mail address.
    Email,
    /// A phone number.
    Phone,
    /// Bold, italic, code and other formatting.
    Other,
}

/// Where a forwarded message came from.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ForwardOrigin {
    /// The original channel's bare id, when forwarded from a channel.
    pub channel_id: Option<i64>,
    /// The original channel's username, when the account knows it.
    pub channel_username: Option<String>,
    /// The original message id in that channel.
    pub message_id: Option<i64>,
    /// The original author: a hidden user's name, a signature or a user's name.
    pub name: Option<String>,
}

/// One message as jobwire reads it, independent of grammers' types.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawMessage {
    /// The message id inside its channel.
    pub id: i64,
    /// The bare id of the channel or group it was posted in.
    pub peer: i64,
    /// The text or media caption (empty for media without caption and service messages).
    pub text: String,
    /// Text entities.
    pub entities: Vec<Entity>,
    /// Albums: every message of one album shares this id.
    pub grouped_id: Option<i64>,
    /// Set when the message is a forward.
    pub forward_from: Option<ForwardOrigin>,
    /// The author: a channel signature, or the sender's `@username` or name in groups.
    pub author: Option<String>,
    /// When it was posted.
    pub date: DateTime<Utc>,
    /// When it was last edited.
    pub edit_date: Option<DateTime<Utc>>,
    /// Service messages (joins, pins, title changes) carry no post.
    pub is_service: bool,
}

/// An event from an account's update stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountUpdate {
    /// A new message.
    New(RawMessage),
    /// A message was edited; the message carries its new text.
    Edited(RawMessage),
}

/// Why an account operation failed. `Clone` so scripts can replay errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccountError {
    /// Telegram asks to wait this long before the same kind of request.
    #[error("flood wait of {}s", .0.as_secs())]
    FloodWait(Duration),
    /// The invite link expired, was revoked or never existed.
    #[error("the invite link has expired or is invalid")]
    InviteExpired,
    /// The channel needs an admin to approve joins; a request was sent.
    #[error("the channel approves members by hand; a join request was sent")]
    JoinRequestSent,
    /// The account is in too many channels (about 500, more with Premium).
    #[error("the account is in too many channels (Telegram's limit is about 500)")]
    ChannelsTooMuch,
    /// The account (or its phone number) is banned.
    #[error("the account is banned")]
    Banned,
    /// The session was revoked, expired or logged out: `jobwire login` is needed.
    #[error("the session is no longer valid (revoked or logged out); run `jobwire login` again")]
    SessionDead,
    /// No such username, or the channel is private or gone.
    #[error("no such channel, or it is private")]
    NotFound,
    /// Anything else (network, unexpected answer).
    #[error("{0}")]
    Other(String),
}

/// The operations the reader needs from one Telegram user account.
#[async_trait]
pub trait Account: Send + Sync {
    /// A short stable name for logs, alerts and the assignment table.
    fn id(&self) -> &str;

    /// Looks a channel up (`contacts.resolveUsername` / `messages.checkChatInvite`).
    /// Expensive: the reader caches the result and never asks twice.
    async fn resolve(&self, r: &ChannelRef) -> Result<ResolvedPeer, AccountError>;

    /// Joins the channel and returns it as a member sees it (for invites, the first time
    /// its id is known).
    async fn join(&self, p: &ResolvedPeer) -> Result<ResolvedPeer, AccountError>;

    /// Up to `limit` messages with an id greater than `after_id`, oldest first. `after_id`
    /// 0 is a cursor like any other: the channel's first messages.
    async fn history_since(
        &self,
        p: &ResolvedPeer,
        after_id: i64,
        limit: usize,
    ) -> Result<Vec<RawMessage>, AccountError>;

    /// The newest `limit` messages, oldest first: where a channel without a cursor starts.
    async fn newest(&self, p: &ResolvedPeer, limit: usize)
    -> Result<Vec<RawMessage>, AccountError>;

    /// Waits for the next new or edited message in any chat the account is in.
    async fn next_update(&self) -> Result<AccountUpdate, AccountError>;

    /// Whether this account's update stream brings on its own what channel `channel_id`
    /// posted before the stream started: the session kept the channel's update state (its
    /// pts) and its peer, so the stream asks `updates.getChannelDifference` from that pts
    /// when it starts. The reader then does not poll the channel's history after a restart.
    /// The default says no.
    fn catches_up(&self, channel_id: i64) -> bool {
        let _ = channel_id;
        false
    }
}

//! The thin layer over grammers: [`GrammersAccount`] (an [`Account`] over MTProto), the
//! conversion of grammers' raw messages ([`raw_from_tl`]), and the login flow ([`login`],
//! [`check_session`]).
//!
//! No local server can stand in for Telegram's MTProto, so everything above this layer is
//! tested through [`crate::ScriptedAccount`], and this layer is kept to conversions and error
//! mapping; [`raw_from_tl`] is tested on constructed TL messages.

use std::collections::HashMap;
use std::future::Future;
use std::num::{NonZeroU32, NonZeroUsize};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, TimeZone, Utc};
use grammers_client::Client;
use grammers_client::SignInError;
use grammers_client::client::PasswordToken;
use grammers_client::client::UpdateStream;
use grammers_client::peer::Peer;
use grammers_mtsender::{
    AutoSleep, ConnectionParams, InvocationError, SenderPool, SenderPoolHandle,
    UpdatesConfiguration,
};
use grammers_session::Session;
use grammers_session::types::{ChannelKind, PeerAuth, PeerId, PeerInfo, PeerRef};
use grammers_tl_types as tl;
use tokio::task::JoinHandle;
use tracing::{debug, warn};

use crate::ChannelRef;
use crate::account::{
    Account, AccountError, AccountUpdate, Entity, EntityKind, ForwardOrigin, PeerKind, RawMessage,
    ResolvedPeer,
};
use crate::session::{FileSession, SessionFileError};

/// One configured user account. `Debug` hides the API hash (a secret).
#[derive(Clone)]
pub struct AccountConfig {
    /// A short name for logs and the assignment table (`"parser1"`).
    pub id: String,
    /// The developer API id from my.telegram.org.
    pub api_id: i32,
    /// The developer API hash from my.telegram.org.
    pub api_hash: String,
    /// Where the session file lives (written with mode 0600).
    pub session_path: PathBuf,
    /// Updates buffered between the network and the reader; grammers drops updates when
    /// this is full (the reader's polling then catches up). Default 2000.
    pub updates_capacity: usize,
}

impl std::fmt::Debug for AccountConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountConfig")
            .field("id", &self.id)
            .field("api_id", &self.api_id)
            .field("api_hash", &"<redacted>")
            .field("session_path", &self.session_path)
            .field("updates_capacity", &self.updates_capacity)
            .finish()
    }
}

impl AccountConfig {
    /// A config with the default update buffer.
    pub fn new(id: &str, api_id: i32, api_hash: &str, session_path: PathBuf) -> Self {
        Self {
            id: id.to_string(),
            api_id,
            api_hash: api_hash.to_string(),
            session_path,
            updates_capacity: 2000,
        }
    }
}

struct Connection {
    client: Client,
    session: Arc<FileSession>,
    thin: SenderPoolHandle,
    updates: Option<tokio::sync::mpsc::Receiver<grammers_session::updates::UpdatesLike>>,
    runner: JoinHandle<()>,
}

fn connect(config: &AccountConfig, session: Arc<FileSession>) -> Connection {
    let params = ConnectionParams {
        // grammers sleeps through tiny flood waits and retries I/O errors; longer waits come
        // back to the reader, which decides.
        retry_policy: Box::new(AutoSleep {
            tries: NonZeroU32::new(2).unwrap_or(NonZeroU32::MIN),
            threshold: Duration::from_secs(5),
            io_errors_as_flood_of: Some(Duration::from_secs(1)),
        }),
        updates_channel_capacity: NonZeroUsize::new(config.updates_capacity.max(1))
            .unwrap_or(NonZeroUsize::MIN),
        ..ConnectionParams::default()
    };
    let pool = SenderPool::with_configuration(Arc::clone(&session), config.api_id, params);
    let thin = pool.handle.thin.clone();
    let client = Client::new(pool.handle);
    let runner = tokio::spawn(pool.runner.run());
    Connection {
        client,
        session,
        thin,
        updates: Some(pool.updates),
        runner,
    }
}

/// An [`Account`] over a logged-in grammers client.
pub struct GrammersAccount {
    id: String,
    client: Client,
    session: Arc<FileSession>,
    updates: tokio::sync::Mutex<UpdateStream>,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for GrammersAccount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrammersAccount")
            .field("id", &self.id)
            .field("session", &self.session.path())
            .finish_non_exhaustive()
    }
}

impl Drop for GrammersAccount {
    fn drop(&mut self) {
        self.client.disconnect();
        for t in &self.tasks {
            t.abort();
        }
        if let Err(e) = self.session.flush() {
            warn!(error = %e, "could not write the session file");
        }
    }
}

impl GrammersAccount {
    /// Connects with the session at `config.session_path`. Fails with
    /// [`AccountError::SessionDead`] when there is no valid login (run `jobwire login`).
    pub async fn connect(config: &AccountConfig) -> Result<Self, AccountError> {
        let session = Arc::new(
            FileSession::open(&config.session_path)
                .map_err(|e| AccountError::Other(e.to_string()))?,
        );
        if !session.has_auth_key() {
            return Err(AccountError::SessionDead);
        }
        let mut conn = connect(config, session);
        match conn.client.is_authorized().await {
            Ok(true) => {}
            Ok(false) => return Err(AccountError::SessionDead),
            Err(e) => return Err(map_error(&e)),
        }
        let receiver = conn
            .updates
            .take()
            .ok_or_else(|| AccountError::Other("update receiver missing".into()))?;
        let stream = conn
            .client
            .stream_updates(receiver, UpdatesConfiguration { catch_up: true })
            .await
            .map_err(|e| AccountError::Other(e.to_string()))?;
        let flusher = {
            let session = Arc::clone(&conn.session);
            tokio::spawn(async move {
                let mut every = tokio::time::interval(Duration::from_secs(10));
                loop {
                    every.tick().await;
                    if let Err(e) = session.flush() {
                        warn!(error = %e, "could not write the session file");
                    }
                }
            })
        };
        Ok(Self {
            id: config.id.clone(),
            client: conn.client,
            session: conn.session,
            updates: tokio::sync::Mutex::new(stream),
            tasks: vec![conn.runner, flusher],
        })
    }

    async fn remember(&self, peer: &ResolvedPeer) {
        let info = match peer.kind {
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
        };
        if let Err(e) = self.session.cache_peer(info).await {
            warn!(error = %e, "could not cache a peer in the session");
        }
    }
}

fn peer_ref(p: &ResolvedPeer) -> PeerRef {
    let id = match p.kind {
        PeerKind::Group => PeerId::chat_unchecked(p.id),
        PeerKind::Channel | PeerKind::Supergroup => PeerId::channel_unchecked(p.id),
    };
    PeerRef {
        id,
        auth: PeerAuth::from_hash(p.access_hash),
    }
}

/// A channel or group as a member sees it (`None` for chats the account is banned from).
fn peer_from_chat(chat: &tl::enums::Chat) -> Option<ResolvedPeer> {
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

fn chats_of(updates: &tl::enums::Updates) -> &[tl::enums::Chat] {
    match updates {
        tl::enums::Updates::Updates(u) => &u.chats,
        tl::enums::Updates::Combined(u) => &u.chats,
        _ => &[],
    }
}

/// Maps grammers' errors to the reader's.
pub(crate) fn map_error(e: &InvocationError) -> AccountError {
    let InvocationError::Rpc(rpc) = e else {
        return AccountError::Other(e.to_string());
    };
    let name = rpc.name.as_str();
    let secs = |v: Option<u32>| Duration::from_secs(u64::from(v.unwrap_or(60)));
    match name {
        "FLOOD_WAIT" | "FLOOD_PREMIUM_WAIT" | "SLOWMODE_WAIT" | "TAKEOUT_INIT_DELAY" => {
            AccountError::FloodWait(secs(rpc.value))
        }
        // Account-wide spam limit of unknown length: treat as a long flood.
        "PEER_FLOOD" => AccountError::FloodWait(Duration::from_secs(12 * 3600)),
        "INVITE_HASH_EXPIRED" | "INVITE_HASH_INVALID" | "INVITE_HASH_EMPTY" => {
            AccountError::InviteExpired
        }
        "INVITE_REQUEST_SENT" => AccountError::JoinRequestSent,
        "CHANNELS_TOO_MUCH" => AccountError::ChannelsTooMuch,
        "USER_DEACTIVATED_BAN" | "PHONE_NUMBER_BANNED" | "USER_BANNED_IN_CHANNEL" => {
            AccountError::Banned
        }
        "AUTH_KEY_UNREGISTERED"
        | "SESSION_REVOKED"
        | "SESSION_EXPIRED"
        | "USER_DEACTIVATED"
        | "AUTH_KEY_INVALID"
        | "AUTH_KEY_PERM_EMPTY" => AccountError::SessionDead,
        "USERNAME_NOT_OCCUPIED"
        | "USERNAME_INVALID"
        | "CHANNEL_INVALID"
        | "CHANNEL_PRIVATE"
        | "CHAT_INVALID"
        | "PEER_ID_INVALID" => AccountError::NotFound,
        _ if rpc.code == 401 => AccountError::SessionDead,
        _ => AccountError::Other(e.to_string()),
    }
}

/// Display names of the users and chats that came with a response.
#[derive(Debug, Default, Clone)]
pub(crate) struct Names(HashMap<PeerId, (Option<String>, String)>);

impl Names {
    fn from_raw(users: &[tl::enums::User], chats: &[tl::enums::Chat]) -> Self {
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

    fn from_peers(peers: &grammers_client::peer::PeerMap) -> Self {
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

fn convert_tl(message: &tl::enums::Message, names: &Names) -> Option<RawMessage> {
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

#[async_trait]
impl Account for GrammersAccount {
    fn id(&self) -> &str {
        &self.id
    }

    async fn resolve(&self, r: &ChannelRef) -> Result<ResolvedPeer, AccountError> {
        let peer = match r {
            ChannelRef::Username(name) => {
                let tl::enums::contacts::ResolvedPeer::Peer(resolved) = self
                    .client
                    .invoke(&tl::functions::contacts::ResolveUsername {
                        username: name.clone(),
                        referer: None,
                    })
                    .await
                    .map_err(|e| map_error(&e))?;
                let tl::enums::Peer::Channel(c) = &resolved.peer else {
                    return Err(AccountError::Other(format!(
                        "@{name} is a user or bot, not a channel or group"
                    )));
                };
                resolved
                    .chats
                    .iter()
                    .filter_map(peer_from_chat)
                    .find(|p| p.id == c.channel_id)
                    .ok_or(AccountError::NotFound)?
            }
            ChannelRef::Invite(hash) => {
                let invite = self
                    .client
                    .invoke(&tl::functions::messages::CheckChatInvite { hash: hash.clone() })
                    .await
                    .map_err(|e| map_error(&e))?;
                let mut peer = match invite {
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
                };
                peer.invite_hash = Some(hash.clone());
                peer
            }
        };
        if peer.id != 0 {
            self.remember(&peer).await;
        }
        Ok(peer)
    }

    async fn join(&self, p: &ResolvedPeer) -> Result<ResolvedPeer, AccountError> {
        let result = match &p.invite_hash {
            Some(hash) => {
                self.client
                    .invoke(&tl::functions::messages::ImportChatInvite { hash: hash.clone() })
                    .await
            }
            None => {
                self.client
                    .invoke(&tl::functions::channels::JoinChannel {
                        channel: (&peer_ref(p)).into(),
                    })
                    .await
            }
        };
        let joined = match result {
            Ok(tl::enums::messages::ChatInviteJoinResult::Ok(ok)) => chats_of(&ok.updates)
                .iter()
                .filter_map(peer_from_chat)
                .find(|c| p.id == 0 || c.id == p.id),
            Ok(tl::enums::messages::ChatInviteJoinResult::WebView(_)) => {
                return Err(AccountError::Other(
                    "joining this chat needs a bot's web app; join it by hand".into(),
                ));
            }
            Err(e) if e.is("USER_ALREADY_PARTICIPANT") => None,
            Err(e) => return Err(map_error(&e)),
        };
        let mut peer = match joined {
            Some(peer) => peer,
            None if p.invite_hash.is_some() => {
                // Already a member, or the answer did not carry the chat: ask the invite.
                let mut again = self
                    .resolve(&ChannelRef::Invite(
                        p.invite_hash.clone().unwrap_or_default(),
                    ))
                    .await?;
                again.joined = true;
                again
            }
            None => p.clone(),
        };
        peer.joined = true;
        peer.invite_hash = p.invite_hash.clone();
        if peer.username.is_none() {
            peer.username = p.username.clone();
        }
        self.remember(&peer).await;
        Ok(peer)
    }

    async fn history_since(
        &self,
        p: &ResolvedPeer,
        after_id: i64,
        limit: usize,
    ) -> Result<Vec<RawMessage>, AccountError> {
        let limit = i32::try_from(limit.clamp(1, 100)).unwrap_or(100);
        let after = i32::try_from(after_id).unwrap_or(i32::MAX);
        // After an id: the `limit` oldest messages newer than it (add_offset walks forward
        // from offset_id; min_id drops the rest). Without: the newest `limit`.
        let (offset_id, add_offset, min_id) = if after > 0 {
            (after, -limit, after)
        } else {
            (0, 0, 0)
        };
        let answer = self
            .client
            .invoke(&tl::functions::messages::GetHistory {
                peer: (&peer_ref(p)).into(),
                offset_id,
                offset_date: 0,
                add_offset,
                limit,
                max_id: 0,
                min_id,
                hash: 0,
            })
            .await
            .map_err(|e| map_error(&e))?;
        let (messages, users, chats) = match answer {
            tl::enums::messages::Messages::Messages(m) => (m.messages, m.users, m.chats),
            tl::enums::messages::Messages::Slice(m) => (m.messages, m.users, m.chats),
            tl::enums::messages::Messages::ChannelMessages(m) => (m.messages, m.users, m.chats),
            tl::enums::messages::Messages::NotModified(_) => return Ok(Vec::new()),
        };
        let names = Names::from_raw(&users, &chats);
        let mut out: Vec<RawMessage> = messages
            .iter()
            .filter_map(|m| convert_tl(m, &names))
            .filter(|m| m.id > after_id)
            .collect();
        out.sort_by_key(|m| m.id);
        Ok(out)
    }

    async fn next_update(&self) -> Result<AccountUpdate, AccountError> {
        let mut stream = self.updates.lock().await;
        loop {
            let (update, _state, peers) = stream.next_raw().await.map_err(|e| map_error(&e))?;
            let (message, edited) = match update {
                tl::enums::Update::NewChannelMessage(u) => (u.message, false),
                tl::enums::Update::NewMessage(u) => (u.message, false),
                tl::enums::Update::EditChannelMessage(u) => (u.message, true),
                tl::enums::Update::EditMessage(u) => (u.message, true),
                _ => continue,
            };
            let Some(raw) = convert_tl(&message, &Names::from_peers(&peers)) else {
                continue;
            };
            debug!(peer = raw.peer, id = raw.id, edited, "update");
            return Ok(if edited {
                AccountUpdate::Edited(raw)
            } else {
                AccountUpdate::New(raw)
            });
        }
    }
}

// ---------------------------------------------------------------------------------------
// Login
// ---------------------------------------------------------------------------------------

/// Asks the person at the terminal. `jobwire login` implements it over stdin (hiding the
/// password).
pub trait LoginPrompts: Send {
    /// The phone number in international format (`+49...`).
    fn phone(&mut self) -> std::io::Result<String>;
    /// The login code Telegram sent (to the app, or by SMS).
    fn code(&mut self) -> std::io::Result<String>;
    /// The 2FA password; `hint` is the hint the user set, if any.
    fn password(&mut self, hint: Option<&str>) -> std::io::Result<String>;
    /// Tells the person something before asking again ("That code is wrong; try again.").
    fn notice(&mut self, message: &str) {
        eprintln!("{message}");
    }
}

/// Why a login or session check failed; each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// Reading from the terminal failed.
    #[error("could not read the answer: {0}")]
    Prompt(#[from] std::io::Error),
    /// The session file could not be read or written.
    #[error(transparent)]
    Session(#[from] SessionFileError),
    /// No login was done yet with this session file, or it was revoked.
    #[error("not logged in (session {0}); run `jobwire login`")]
    NotLoggedIn(String),
    /// Telegram does not accept the phone number.
    #[error(
        "Telegram does not accept this phone number; use the international format, e.g. +491701234567"
    )]
    InvalidPhone,
    /// The phone number is banned.
    #[error("this phone number is banned by Telegram")]
    PhoneBanned,
    /// The code was wrong (after the allowed attempts).
    #[error("the login code is wrong")]
    InvalidCode,
    /// The code expired before it was entered.
    #[error(
        "the login code has expired; run `jobwire login` again and enter the new code within a few minutes"
    )]
    ExpiredCode,
    /// The 2FA password was wrong (after the allowed attempts).
    #[error("the two-step verification password is wrong")]
    InvalidPassword,
    /// The account has 2FA but no password was given.
    #[error("this account has two-step verification: a password is needed")]
    PasswordRequired,
    /// No Telegram account exists for this number.
    #[error("no Telegram account uses this number; sign up with an official Telegram app first")]
    SignUpRequired,
    /// Too many attempts: Telegram asks to wait.
    #[error("Telegram asks to wait {} before trying again (too many attempts)", human_wait(*.0))]
    FloodWait(Duration),
    /// Network or any other Telegram error.
    #[error("Telegram: {0}")]
    Telegram(String),
    /// grammers failed on an answer it did not expect (caught, not a crash).
    #[error("Telegram sent an answer the client does not understand ({0}); try again later")]
    Unexpected(String),
}

fn human_wait(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{} h {} min", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{} min {} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}

fn login_error(e: &InvocationError) -> LoginError {
    if let InvocationError::Rpc(rpc) = e {
        match rpc.name.as_str() {
            "PHONE_NUMBER_INVALID" => return LoginError::InvalidPhone,
            "PHONE_NUMBER_BANNED" => return LoginError::PhoneBanned,
            "PHONE_CODE_INVALID" | "PHONE_CODE_EMPTY" => return LoginError::InvalidCode,
            "PHONE_CODE_EXPIRED" => return LoginError::ExpiredCode,
            "PASSWORD_HASH_INVALID" => return LoginError::InvalidPassword,
            "FLOOD_WAIT" | "FLOOD_PREMIUM_WAIT" => {
                return LoginError::FloodWait(Duration::from_secs(u64::from(
                    rpc.value.unwrap_or(60),
                )));
            }
            "PHONE_NUMBER_FLOOD" | "PHONE_PASSWORD_FLOOD" => {
                return LoginError::FloodWait(Duration::from_secs(24 * 3600));
            }
            _ => {}
        }
    }
    LoginError::Telegram(e.to_string())
}

/// Runs a network step on its own task so a panic inside grammers (it panics on some
/// unusual answers) becomes [`LoginError::Unexpected`] instead of a crash.
async fn guarded<T, F>(step: &str, fut: F) -> Result<T, LoginError>
where
    T: Send + 'static,
    F: Future<Output = Result<T, LoginError>> + Send + 'static,
{
    match tokio::spawn(fut).await {
        Ok(r) => r,
        Err(e) if e.is_panic() => Err(LoginError::Unexpected(format!("{step} failed"))),
        Err(e) => Err(LoginError::Unexpected(format!("{step}: {e}"))),
    }
}

/// Who a session is logged in as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStatus {
    /// Telegram user id.
    pub user_id: i64,
    /// `@username`, if set.
    pub username: Option<String>,
    /// First and last name.
    pub name: String,
    /// Whether the session file was already logged in (no code was asked).
    pub already_logged_in: bool,
}

async fn me(client: &Client, already: bool) -> Result<SessionStatus, LoginError> {
    let client = client.clone();
    guarded("get_me", async move {
        let user = client.get_me().await.map_err(|e| login_error(&e))?;
        Ok(SessionStatus {
            user_id: user.id().bare_id().unwrap_or_default(),
            username: user.username().map(|u| format!("@{u}")),
            name: user.full_name(),
            already_logged_in: already,
        })
    })
    .await
}

const ATTEMPTS: usize = 3;

/// Signs the account in once: asks for the phone, the code and (when 2FA is on) the
/// password, and stores the session at `config.session_path` (mode 0600). An already
/// logged-in session is left as is.
pub async fn login(
    config: &AccountConfig,
    prompts: &mut dyn LoginPrompts,
) -> Result<SessionStatus, LoginError> {
    let session = Arc::new(FileSession::open(&config.session_path)?);
    let conn = connect(config, Arc::clone(&session));
    let result = login_inner(config, &conn, prompts).await;
    conn.client.disconnect();
    conn.runner.abort();
    session.save()?;
    result
}

async fn login_inner(
    config: &AccountConfig,
    conn: &Connection,
    prompts: &mut dyn LoginPrompts,
) -> Result<SessionStatus, LoginError> {
    let client = conn.client.clone();
    let authorized = guarded("is_authorized", async move {
        client.is_authorized().await.map_err(|e| login_error(&e))
    })
    .await?;
    if authorized {
        return me(&conn.client, true).await;
    }
    let phone = prompts.phone()?.trim().replace([' ', '-', '(', ')'], "");
    let code_hash = send_code(config, conn, &phone).await?;
    let mut attempts = 0;
    let auth = loop {
        attempts += 1;
        let code = prompts.code()?.trim().to_string();
        let client = conn.client.clone();
        let request = tl::functions::auth::SignIn {
            phone_number: phone.clone(),
            phone_code_hash: code_hash.clone(),
            phone_code: Some(code),
            email_verification: None,
        };
        let answer = guarded("sign in", async move {
            match client.invoke(&request).await {
                Ok(a) => Ok(Some(a)),
                Err(e) if e.is("SESSION_PASSWORD_NEEDED") => Ok(None),
                Err(e) => Err(login_error(&e)),
            }
        })
        .await;
        match answer {
            Ok(Some(tl::enums::auth::Authorization::Authorization(a))) => break Some(a),
            Ok(Some(tl::enums::auth::Authorization::SignUpRequired(_))) => {
                return Err(LoginError::SignUpRequired);
            }
            Ok(None) => break None,
            Err(LoginError::InvalidCode) if attempts < ATTEMPTS => {
                prompts.notice("That code is wrong; try again.");
            }
            Err(e) => return Err(e),
        }
    };
    match auth {
        Some(a) => complete_login(conn, a.user).await?,
        None => check_password(conn, prompts).await?,
    }
    me(&conn.client, false).await
}

async fn send_code(
    config: &AccountConfig,
    conn: &Connection,
    phone: &str,
) -> Result<String, LoginError> {
    let request = tl::functions::auth::SendCode {
        phone_number: phone.to_string(),
        api_id: config.api_id,
        api_hash: config.api_hash.clone(),
        settings: tl::types::CodeSettings {
            allow_flashcall: false,
            current_number: false,
            allow_app_hash: false,
            allow_missed_call: false,
            allow_firebase: false,
            unknown_number: false,
            logout_tokens: None,
            token: None,
            app_sandbox: None,
        }
        .into(),
    };
    let client = conn.client.clone();
    let session = Arc::clone(&conn.session);
    let thin = conn.thin.clone();
    let sent = guarded("send code", async move {
        match client.invoke(&request).await {
            Ok(s) => Ok(s),
            Err(InvocationError::Rpc(e)) if e.code == 303 => {
                // The number lives in another datacenter: move there and ask again.
                let new_dc = e
                    .value
                    .and_then(|v| i32::try_from(v).ok())
                    .ok_or_else(|| LoginError::Telegram("migration without a DC".into()))?;
                let old_dc = session.home_dc_id()?;
                thin.disconnect_from_dc(old_dc);
                session.set_home_dc_id(new_dc).await?;
                client.invoke(&request).await.map_err(|e| login_error(&e))
            }
            Err(e) => Err(login_error(&e)),
        }
    })
    .await?;
    match sent {
        tl::enums::auth::SentCode::Code(c) => Ok(c.phone_code_hash),
        tl::enums::auth::SentCode::Success(_) => Err(LoginError::Unexpected(
            "Telegram reported a login before a code was entered".into(),
        )),
        tl::enums::auth::SentCode::PaymentRequired(_) => Err(LoginError::Telegram(
            "Telegram requires a payment to send the login code to this number".into(),
        )),
    }
}

/// What grammers' private `complete_login` does: remember the logged-in user and the
/// update state in the session.
async fn complete_login(conn: &Connection, user: tl::enums::User) -> Result<(), LoginError> {
    if let tl::enums::User::User(u) = &user {
        conn.session
            .cache_peer(PeerInfo::User {
                id: u.id,
                auth: u.access_hash.map(PeerAuth::from_hash),
                bot: Some(u.bot),
                is_self: Some(true),
            })
            .await?;
    }
    let client = conn.client.clone();
    let state = guarded("get state", async move {
        Ok(client
            .invoke(&tl::functions::updates::GetState {})
            .await
            .ok())
    })
    .await?;
    if let Some(tl::enums::updates::State::State(s)) = state {
        conn.session
            .set_update_state(grammers_session::types::UpdateState::All(
                grammers_session::types::UpdatesState {
                    pts: s.pts,
                    qts: s.qts,
                    date: s.date,
                    seq: s.seq,
                    channels: Vec::new(),
                },
            ))
            .await?;
    }
    conn.session.save()?;
    Ok(())
}

async fn check_password(
    conn: &Connection,
    prompts: &mut dyn LoginPrompts,
) -> Result<(), LoginError> {
    for attempt in 1..=ATTEMPTS {
        let client = conn.client.clone();
        let token: PasswordToken = guarded("get password", async move {
            let tl::enums::account::Password::Password(p) = client
                .invoke(&tl::functions::account::GetPassword {})
                .await
                .map_err(|e| login_error(&e))?;
            Ok(PasswordToken::new(p))
        })
        .await?;
        let password = prompts.password(token.hint())?;
        if password.is_empty() {
            return Err(LoginError::PasswordRequired);
        }
        let client = conn.client.clone();
        let result = guarded("check password", async move {
            match client
                .check_password(token, password.trim_end_matches(['\r', '\n']))
                .await
            {
                Ok(_) => Ok(()),
                Err(SignInError::InvalidPassword(_)) => Err(LoginError::InvalidPassword),
                Err(SignInError::Other(e)) => Err(login_error(&e)),
                Err(e) => Err(LoginError::Telegram(e.to_string())),
            }
        })
        .await;
        match result {
            Ok(()) => {
                conn.session.save()?;
                return Ok(());
            }
            Err(LoginError::InvalidPassword) if attempt < ATTEMPTS => {
                prompts.notice("That password is wrong; try again.");
            }
            Err(e) => return Err(e),
        }
    }
    Err(LoginError::InvalidPassword)
}

/// For `jobwire doctor`: checks that the session file exists, is private and still logged
/// in, and says as whom. Connects to Telegram.
pub async fn check_session(config: &AccountConfig) -> Result<SessionStatus, LoginError> {
    let path = config.session_path.display().to_string();
    if !config.session_path.exists() {
        return Err(LoginError::NotLoggedIn(format!("{path} does not exist")));
    }
    let session = Arc::new(FileSession::open(&config.session_path)?);
    if !session.has_auth_key() || session.self_user_id().is_none() {
        return Err(LoginError::NotLoggedIn(path));
    }
    let conn = connect(config, Arc::clone(&session));
    let client = conn.client.clone();
    let authorized = guarded("is_authorized", async move {
        client.is_authorized().await.map_err(|e| login_error(&e))
    })
    .await;
    let result = match authorized {
        Ok(true) => me(&conn.client, true).await,
        Ok(false) => Err(LoginError::NotLoggedIn(format!(
            "{path} was revoked or logged out"
        ))),
        Err(e) => Err(e),
    };
    conn.client.disconnect();
    conn.runner.abort();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tl_message(id: i32, text: &str) -> tl::types::Message {
        tl::types::Message {
            out: false,
            mentioned: false,
            media_unread: false,
            silent: false,
            post: true,
            from_scheduled: false,
            legacy: false,
            edit_hide: false,
            pinned: false,
            noforwards: false,
            video_processing_pending: false,
            paid_suggested_post_stars: false,
            invert_media: false,
            id,
            from_id: None,
            from_boosts_applied: None,
            from_rank: None,
            peer_id: tl::types::PeerChannel { channel_id: 1001 }.into(),
            saved_peer_id: None,
            fwd_from: None,
            via_bot_id: None,
            reply_to: None,
            date: 1_700_000_000,
            message: text.to_string(),
            media: None,
            reply_markup: None,
            entities: None,
            views: None,
            forwards: None,
            replies: None,
            edit_date: None,
            post_author: None,
            grouped_id: None,
            restriction_reason: None,
            ttl_period: None,
            reactions: None,
            quick_reply_shortcut_id: None,
            via_business_bot_id: None,
            guestchat_via_from: None,
            offline: false,
            effect: None,
            factcheck: None,
            report_delivery_until_date: None,
            paid_message_stars: None,
            paid_suggested_post_ton: false,
            suggested_post: None,
            schedule_repeat_period: None,
            summary_from_language: None,
            rich_message: None,
        }
    }

    fn user(id: i64, username: Option<&str>, first: &str) -> tl::enums::User {
        let mut u = tl::types::User {
            is_self: false,
            contact: false,
            mutual_contact: false,
            deleted: false,
            bot: false,
            bot_chat_history: false,
            bot_nochats: false,
            verified: false,
            restricted: false,
            min: false,
            bot_inline_geo: false,
            support: false,
            scam: false,
            apply_min_photo: false,
            fake: false,
            bot_attach_menu: false,
            premium: false,
            attach_menu_enabled: false,
            bot_can_edit: false,
            close_friend: false,
            stories_hidden: false,
            stories_unavailable: false,
            contact_require_premium: false,
            bot_business: false,
            bot_has_main_app: false,
            bot_forum_view: false,
            bot_forum_can_manage_topics: false,
            bot_can_manage_bots: false,
            bot_guestchat: false,
            bot_guard: false,
            id,
            access_hash: None,
            first_name: Some(first.to_string()),
            last_name: None,
            username: None,
            phone: None,
            photo: None,
            status: None,
            bot_info_version: None,
            restriction_reason: None,
            bot_inline_placeholder: None,
            lang_code: None,
            emoji_status: None,
            usernames: None,
            stories_max_id: None,
            color: None,
            profile_color: None,
            bot_active_users: None,
            bot_verification_icon: None,
            send_paid_messages_stars: None,
            linked_community_id: None,
        };
        u.username = username.map(str::to_string);
        tl::enums::User::User(u)
    }

    #[test]
    fn a_channel_post_with_entities_and_signature_converts() {
        let mut m = tl_message(42, "Apply here");
        m.post_author = Some("Anna".into());
        m.edit_date = Some(1_700_000_100);
        m.entities = Some(vec![
            tl::types::MessageEntityTextUrl {
                offset: 0,
                length: 5,
                url: "https://apply.example".into(),
            }
            .into(),
            tl::types::MessageEntityBold {
                offset: 0,
                length: 5,
            }
            .into(),
        ]);
        let raw = raw_from_tl(&tl::enums::Message::Message(m), &[], &[]).expect("message");
        assert_eq!(raw.id, 42);
        assert_eq!(raw.peer, 1001);
        assert_eq!(raw.text, "Apply here");
        assert_eq!(raw.author.as_deref(), Some("Anna"));
        assert_eq!(raw.date.timestamp(), 1_700_000_000);
        assert_eq!(raw.edit_date.map(|d| d.timestamp()), Some(1_700_000_100));
        assert_eq!(
            raw.entities,
            vec![Entity {
                kind: EntityKind::TextUrl("https://apply.example".into()),
                offset: 0,
                length: 5
            }]
        );
        assert!(!raw.is_service);
    }

    #[test]
    fn a_group_message_names_its_sender_and_album_parts_keep_their_group() {
        let mut m = tl_message(7, "caption");
        m.from_id = Some(tl::types::PeerUser { user_id: 5 }.into());
        m.grouped_id = Some(99);
        let users = [user(5, Some("hr_anna"), "Anna"), user(6, None, "Bob")];
        let raw =
            raw_from_tl(&tl::enums::Message::Message(m.clone()), &users, &[]).expect("message");
        assert_eq!(raw.author.as_deref(), Some("@hr_anna"));
        assert_eq!(raw.grouped_id, Some(99));
        m.from_id = Some(tl::types::PeerUser { user_id: 6 }.into());
        let raw = raw_from_tl(&tl::enums::Message::Message(m), &users, &[]).expect("message");
        assert_eq!(raw.author.as_deref(), Some("Bob"));
    }

    #[test]
    fn a_forward_keeps_its_origin_channel_and_post() {
        let mut m = tl_message(8, "fwd");
        m.fwd_from = Some(
            tl::types::MessageFwdHeader {
                imported: false,
                saved_out: false,
                from_id: Some(tl::types::PeerChannel { channel_id: 2002 }.into()),
                from_name: None,
                date: 1_699_000_000,
                channel_post: Some(314),
                post_author: None,
                saved_from_peer: None,
                saved_from_msg_id: None,
                saved_from_id: None,
                saved_from_name: None,
                saved_date: None,
                psa_type: None,
            }
            .into(),
        );
        let raw = raw_from_tl(&tl::enums::Message::Message(m), &[], &[]).expect("message");
        assert_eq!(
            raw.forward_from,
            Some(ForwardOrigin {
                channel_id: Some(2002),
                channel_username: None,
                message_id: Some(314),
                name: None,
            })
        );
    }

    #[test]
    fn service_messages_are_marked_and_empty_ones_dropped() {
        let service = tl::types::MessageService {
            out: false,
            mentioned: false,
            media_unread: false,
            reactions_are_possible: false,
            silent: false,
            post: true,
            legacy: false,
            id: 9,
            from_id: None,
            peer_id: tl::types::PeerChannel { channel_id: 1001 }.into(),
            saved_peer_id: None,
            reply_to: None,
            date: 1_700_000_000,
            action: tl::enums::MessageAction::PinMessage,
            reactions: None,
            ttl_period: None,
        };
        let raw = raw_from_tl(&tl::enums::Message::Service(service), &[], &[]).expect("service");
        assert!(raw.is_service);
        assert_eq!(raw.id, 9);
        let empty = tl::types::MessageEmpty {
            id: 10,
            peer_id: None,
        };
        assert_eq!(
            raw_from_tl(&tl::enums::Message::Empty(empty), &[], &[]),
            None
        );
    }

    #[test]
    fn telegram_errors_map_to_what_the_reader_acts_on() {
        let rpc = |code, name: &str, value| {
            InvocationError::Rpc(grammers_mtsender::RpcError {
                code,
                name: name.into(),
                value,
                caused_by: None,
            })
        };
        assert_eq!(
            map_error(&rpc(420, "FLOOD_WAIT", Some(3600))),
            AccountError::FloodWait(Duration::from_secs(3600))
        );
        assert_eq!(
            map_error(&rpc(400, "INVITE_HASH_EXPIRED", None)),
            AccountError::InviteExpired
        );
        assert_eq!(
            map_error(&rpc(400, "INVITE_REQUEST_SENT", None)),
            AccountError::JoinRequestSent
        );
        assert_eq!(
            map_error(&rpc(400, "CHANNELS_TOO_MUCH", None)),
            AccountError::ChannelsTooMuch
        );
        assert_eq!(
            map_error(&rpc(401, "AUTH_KEY_UNREGISTERED", None)),
            AccountError::SessionDead
        );
        assert_eq!(
            map_error(&rpc(401, "SOMETHING_NEW", None)),
            AccountError::SessionDead
        );
        assert_eq!(
            map_error(&rpc(403, "USER_DEACTIVATED_BAN", None)),
            AccountError::Banned
        );
        assert_eq!(
            map_error(&rpc(400, "USERNAME_NOT_OCCUPIED", None)),
            AccountError::NotFound
        );
        assert!(matches!(
            map_error(&rpc(500, "INTERNAL", None)),
            AccountError::Other(_)
        ));
        assert!(matches!(
            login_error(&rpc(400, "PHONE_CODE_EXPIRED", None)),
            LoginError::ExpiredCode
        ));
        assert!(matches!(
            login_error(&rpc(400, "PHONE_CODE_INVALID", None)),
            LoginError::InvalidCode
        ));
        let e = login_error(&rpc(420, "FLOOD_WAIT", Some(125)));
        assert_eq!(
            e.to_string(),
            "Telegram asks to wait 2 min 5 s before trying again (too many attempts)"
        );
    }
}

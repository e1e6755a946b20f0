//! [`GrammersAccount`]: the [`Account`] calls over MTProto, kept to requests, conversions
//! and error mapping.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use grammers_client::Client;
use grammers_client::client::UpdateStream;
use grammers_mtsender::UpdatesConfiguration;
use grammers_session::Session;
use grammers_tl_types as tl;
use tokio::task::JoinHandle;
use tracing::{debug, warn};

use super::connection::{AccountConfig, connect};
use super::errors::map_error;
use super::messages::{Names, convert_tl};
use super::peers::{chats_of, peer_from_chat, peer_from_invite, peer_info, peer_ref};
use crate::ChannelRef;
use crate::account::{Account, AccountError, AccountUpdate, RawMessage, ResolvedPeer};
use crate::session::{FileSession, ready_now};

/// How often the session file is written while updates mark it dirty.
const SESSION_FLUSH: Duration = Duration::from_secs(10);

/// An [`Account`] over a logged-in grammers client.
///
/// The update stream's state (the account's pts, and each channel's) is written to the
/// session after every update it hands on, and once more when the account is dropped, so the
/// next start asks `updates.getDifference` and `updates.getChannelDifference` from where this
/// run stopped. grammers neither does this itself nor saves it on drop.
pub struct GrammersAccount {
    id: String,
    client: Client,
    session: Arc<FileSession>,
    updates: tokio::sync::Mutex<UpdateStream>,
    /// The channels the stream catches up on its own ([`FileSession::channels_to_catch_up`]
    /// when it started).
    catching_up: HashSet<i64>,
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
        // Once more before disconnecting: the state of the last updates goes to the session.
        sync_now(self.updates.get_mut());
        self.client.disconnect();
        for t in &self.tasks {
            t.abort();
        }
        self.session.flush_or_warn();
    }
}

/// Writes the stream's update state into the session (marking it dirty for the next flush),
/// where nothing can be awaited.
fn sync_now(stream: &UpdateStream) {
    match ready_now(stream.sync_update_state()) {
        Some(Ok(())) => {}
        Some(Err(e)) => warn!(error = %e, "could not save the update state"),
        None => warn!("the update state could not be saved at once"),
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
        // What the stream will catch up from the saved state, read before it starts.
        let catching_up = conn.session.channels_to_catch_up();
        let stream = conn
            .client
            .stream_updates(receiver, UpdatesConfiguration { catch_up: true })
            .await
            .map_err(|e| AccountError::Other(e.to_string()))?;
        let flusher = FileSession::flush_every(Arc::clone(&conn.session), SESSION_FLUSH);
        Ok(Self {
            id: config.id.clone(),
            client: conn.client,
            session: conn.session,
            updates: tokio::sync::Mutex::new(stream),
            catching_up,
            tasks: vec![conn.runner, flusher],
        })
    }

    async fn remember(&self, peer: &ResolvedPeer) {
        if let Err(e) = self.session.cache_peer(peer_info(peer)).await {
            warn!(error = %e, "could not cache a peer in the session");
        }
    }

    /// A `messages.getHistory` page from `offset_id` shifted by `add_offset`, keeping the
    /// messages newer than `after`. Telegram is not asked to apply `min_id` itself: it answers
    /// nothing when that lies much further back than the newest messages (Telethon found this
    /// and filters on its side, as here).
    async fn get_history(
        &self,
        p: &ResolvedPeer,
        (offset_id, add_offset): (i32, i32),
        limit: i32,
        after: i64,
    ) -> Result<Vec<RawMessage>, AccountError> {
        let answer = self
            .client
            .invoke(&tl::functions::messages::GetHistory {
                peer: (&peer_ref(p)).into(),
                offset_id,
                offset_date: 0,
                add_offset,
                limit,
                max_id: 0,
                min_id: 0,
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
            .filter(|m| m.id > after)
            .collect();
        out.sort_by_key(|m| m.id);
        Ok(out)
    }
}

/// A history page's size as Telegram takes it (1 to 100).
fn page(limit: usize) -> i32 {
    i32::try_from(limit.clamp(1, 100)).unwrap_or(100)
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
                let mut peer = peer_from_invite(invite)?;
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
        let limit = page(limit);
        let after = after_id.max(0);
        // The `limit` oldest messages newer than `after`: a negative add_offset walks forward
        // from offset_id, which is itself included, hence `after + 1` (1 for the channel's
        // very first message).
        let offset_id = i32::try_from(after + 1).unwrap_or(i32::MAX);
        self.get_history(p, (offset_id, -limit), limit, after).await
    }

    async fn newest(
        &self,
        p: &ResolvedPeer,
        limit: usize,
    ) -> Result<Vec<RawMessage>, AccountError> {
        self.get_history(p, (0, 0), page(limit), 0).await
    }

    fn catches_up(&self, channel_id: i64) -> bool {
        self.catching_up.contains(&channel_id)
    }

    async fn next_update(&self) -> Result<AccountUpdate, AccountError> {
        let mut stream = self.updates.lock().await;
        loop {
            let (update, _state, peers) = stream.next_raw().await.map_err(|e| map_error(&e))?;
            // Here, not from the flusher: this call holds the stream while it waits. It marks
            // the session dirty; the flusher writes it within `SESSION_FLUSH`.
            if let Err(e) = stream.sync_update_state().await {
                warn!(error = %e, "could not save the update state");
            }
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

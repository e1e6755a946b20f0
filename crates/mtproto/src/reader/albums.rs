//! Messages into posts: album parts arriving within the window become one post, posts are
//! handed on and remembered, and edits of them are passed on when their text changed.

use std::collections::HashMap;

use jobwire_core::IncomingPost;
use tokio::time::Instant;

use super::{Album, Closed, Reader, ReaderError, ReaderEvent};
use crate::account::RawMessage;
use crate::convert::{PostChannel, post_from_parts};

const RECENT_PER_CHANNEL: usize = 300;
const EWMA_ALPHA: f64 = 0.2;

impl Reader {
    /// Hands on one message of channel `i` (ids at or below the cursor are skipped).
    pub(super) async fn ingest(
        &mut self,
        i: usize,
        msg: RawMessage,
    ) -> Result<(), Result<Closed, ReaderError>> {
        let c = &mut self.channels[i];
        if c.cursor.is_some_and(|cur| msg.id <= cur) {
            return Ok(());
        }
        if let Some(album) = &mut c.album {
            if album.parts.iter().any(|p| p.id == msg.id) {
                return Ok(());
            }
            if msg.grouped_id == Some(album.grouped_id) {
                album.parts.push(msg);
                album.deadline = Instant::now() + self.config.album_window;
                return Ok(());
            }
            self.flush_album(i).await?;
        }
        if msg.is_service {
            return self.set_cursor(i, msg.id).await;
        }
        if let Some(g) = msg.grouped_id {
            self.channels[i].album = Some(Album {
                grouped_id: g,
                parts: vec![msg],
                deadline: Instant::now() + self.config.album_window,
            });
            return Ok(());
        }
        let id = msg.id;
        self.post(i, vec![msg]).await?;
        self.set_cursor(i, id).await
    }

    pub(super) async fn flush_album(
        &mut self,
        i: usize,
    ) -> Result<(), Result<Closed, ReaderError>> {
        let Some(album) = self.channels[i].album.take() else {
            return Ok(());
        };
        let last = album.parts.iter().map(|p| p.id).max().unwrap_or(0);
        self.post(i, album.parts).await?;
        self.set_cursor(i, last).await
    }

    fn post_channel(&self, i: usize) -> PostChannel {
        let c = &self.channels[i];
        PostChannel {
            handle: c.reference.handle(),
            username: c.peer.as_ref().and_then(|p| p.username.clone()),
            peer_id: c.peer.as_ref().map_or(0, |p| p.id),
        }
    }

    fn build(&self, i: usize, parts: &[RawMessage]) -> Option<IncomingPost> {
        let known: HashMap<i64, String> = self
            .channels
            .iter()
            .filter_map(|c| c.peer.as_ref())
            .filter_map(|p| p.username.clone().map(|u| (p.id, u)))
            .collect();
        post_from_parts(&self.post_channel(i), parts, &|id| known.get(&id).cloned())
    }

    /// Sends a post made of `parts`, remembers it for edits and feeds the watchdog.
    async fn post(
        &mut self,
        i: usize,
        parts: Vec<RawMessage>,
    ) -> Result<(), Result<Closed, ReaderError>> {
        let Some(post) = self.build(i, &parts) else {
            return Ok(());
        };
        let post_id = parts.iter().map(|p| p.id).min().unwrap_or(0);
        let hash = text_hash(&post.text);
        let date = post.posted_at;
        let c = &mut self.channels[i];
        for p in &parts {
            c.recent.push_back((p.id, post_id, hash));
        }
        while c.recent.len() > RECENT_PER_CHANNEL {
            c.recent.pop_front();
        }
        if let Some(prev) = c.last_post_date
            && date > prev
        {
            let gap = (date - prev).num_seconds() as f64;
            c.gap_ewma = Some(match c.gap_ewma {
                Some(e) => EWMA_ALPHA * gap + (1.0 - EWMA_ALPHA) * e,
                None => gap,
            });
        }
        if c.last_post_date.is_none_or(|prev| date > prev) {
            c.last_post_date = Some(date);
        }
        c.silence_alerted = false;
        if let Some(a) = c.account {
            crate::events::post_read(&self.accounts[a].id, &c.key, date, self.clock.now());
        }
        self.emit(ReaderEvent::Post(post)).await
    }

    pub(super) async fn on_edit(
        &mut self,
        i: usize,
        msg: RawMessage,
    ) -> Result<(), Result<Closed, ReaderError>> {
        let c = &mut self.channels[i];
        if let Some(album) = &mut c.album
            && let Some(part) = album.parts.iter_mut().find(|p| p.id == msg.id)
        {
            *part = msg;
            return Ok(());
        }
        let known = c.recent.iter().find(|(id, _, _)| *id == msg.id).copied();
        let post_id = known.map_or(msg.id, |(_, post_id, _)| post_id);
        if post_id != msg.id && msg.text.trim().is_empty() {
            // A captionless album part changed (its media): nothing to tell.
            return Ok(());
        }
        let mut as_post = msg.clone();
        as_post.id = post_id;
        let Some(post) = self.build(i, &[as_post]) else {
            return Ok(());
        };
        let hash = text_hash(&post.text);
        if known.is_some_and(|(_, _, h)| h == hash) {
            return Ok(());
        }
        let c = &mut self.channels[i];
        c.recent.retain(|(id, _, _)| *id != msg.id);
        c.recent.push_back((msg.id, post_id, hash));
        self.emit(ReaderEvent::Edited(post)).await
    }
}

fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

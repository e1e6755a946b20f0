//! What the bots do with one update: the main bot's menus and dialogues, the category
//! bots' subscribe/unsubscribe and reports.
//!
//! Every handler is safe to run again for the same update: settings are written as explicit
//! target values (a toggle's callback data carries the state it sets), and the one write
//! that is not idempotent, filing a report, is the last thing that can fail — after it,
//! errors are logged and not returned, so the caller's retry never files it twice.
//!
//! This module dispatches: it claims an update, picks the handler by its kind and command,
//! and holds what every handler shares (the Telegram calls, the conversation `Turn`).
//! The rest lives in `callbacks` (button data and taps), `keyboards` (the inline menus),
//! `main_bot` (the main bot's menus and dialogues) and `category_bot` (the category bots).

mod billing;
mod callbacks;
mod cards;
mod category_bot;
mod keyboards;
mod main_bot;
mod placements;

use jobwire_core::CategorySlug;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use jobwire_store::SubscriberSpec;
use teloxide::prelude::*;
use teloxide::types::{
    ChatId, InlineKeyboardMarkup, LinkPreviewOptions, MessageEntityKind, MessageId, MessageOrigin,
    ParseMode, UpdateKind,
};
use teloxide::{ApiError, RequestError};

use crate::BotError;
use crate::dialogue::DialogueState;
use crate::runtime::{BotRuntime, Inner};
use crate::texts::{self, Lang};
pub(crate) use billing::{PaymentFacts, apply_payment, notify};
use callbacks::{Screen, on_callback};
use category_bot::on_my_chat_member;
pub(crate) use placements::apply_placement_payment;

/// What became of an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Processed {
    /// Handled (including updates that need no answer).
    Handled,
    /// The same update was handled before (a redelivery): skipped.
    Duplicate,
    /// Handling failed after retries; the user was told to try again.
    Failed,
}

/// The metrics label of an update.
pub(crate) fn update_kind(update: &Update) -> &'static str {
    match &update.kind {
        UpdateKind::Message(m) if m.text().is_some_and(|t| t.starts_with('/')) => "command",
        UpdateKind::Message(_) => "message",
        UpdateKind::CallbackQuery(_) => "callback",
        UpdateKind::MyChatMember(_) => "my_chat_member",
        UpdateKind::PreCheckoutQuery(_) => "pre_checkout_query",
        UpdateKind::Error(_) => "unparsed",
        _ => "other",
    }
}

/// The chat an update belongs to, to keep one chat's updates in order.
pub(crate) fn update_chat(update: &Update) -> Option<i64> {
    match &update.kind {
        UpdateKind::Message(m) | UpdateKind::EditedMessage(m) => Some(m.chat.id.0),
        UpdateKind::CallbackQuery(q) => Some(
            q.message
                .as_ref()
                .map_or_else(|| user_chat(q.from.id.0), |m| m.chat().id.0),
        ),
        UpdateKind::MyChatMember(u) => Some(u.chat.id.0),
        UpdateKind::PreCheckoutQuery(q) => Some(user_chat(q.from.id.0)),
        _ => None,
    }
}

fn user_chat(user_id: u64) -> i64 {
    i64::try_from(user_id).unwrap_or(i64::MAX)
}

/// Claims, handles (retrying transient failures) and records one update.
pub(crate) async fn process_update(
    inner: Arc<Inner>,
    rt: Arc<BotRuntime>,
    update: Update,
) -> Processed {
    let kind = update_kind(&update);
    let bot = rt.name.clone();
    metrics::counter!(crate::events::UPDATES_TOTAL, "bot" => bot.clone(), "kind" => kind)
        .increment(1);
    match inner.dedup.claim(&rt.name, update.id.0).await {
        Ok(true) => {}
        Ok(false) => {
            metrics::counter!(crate::events::DUPLICATE_UPDATES_TOTAL, "bot" => bot).increment(1);
            tracing::debug!(bot = %rt.name, update_id = update.id.0, "update handled before; skipped");
            return Processed::Duplicate;
        }
        Err(e) => {
            // Losing the user's input is worse than the rare double handling.
            tracing::warn!(bot = %rt.name, update_id = update.id.0, error = %e, "update dedup unavailable; handling anyway");
        }
    }
    let started = Instant::now();
    let chat = update_chat(&update);
    if let (Some(chat_id), Some(code)) = (chat, update_language(&update))
        && chat_id > 0
    {
        inner
            .note_language(chat_id, Lang::from_code(Some(code)))
            .await;
    }
    let _turn = match chat {
        Some(c) => Some(inner.chat_locks.lock(c).await),
        None => None,
    };
    let mut attempt: u32 = 0;
    let outcome = loop {
        match handle(&inner, &rt, &update).await {
            Ok(()) => break Processed::Handled,
            Err(e) if attempt < 2 && e.is_transient() => {
                attempt += 1;
                tracing::warn!(bot = %rt.name, chat_id = ?chat, attempt, error = %e, "handling an update failed; retrying");
                tokio::time::sleep(Duration::from_millis(200 * 4u64.pow(attempt - 1))).await;
            }
            Err(e) => {
                tracing::error!(bot = %rt.name, chat_id = ?chat, update_id = update.id.0, error = %e, "handling an update failed");
                metrics::counter!(crate::events::UPDATE_FAILURES_TOTAL, "bot" => bot.clone())
                    .increment(1);
                // Tell a user who wrote or tapped (not one who just blocked the bot).
                let from_user = matches!(
                    update.kind,
                    UpdateKind::Message(_) | UpdateKind::CallbackQuery(_)
                );
                if let Some(chat_id) = chat.filter(|c| *c > 0 && from_user) {
                    let lang = Lang::from_code(update_language(&update));
                    send(&rt, chat_id, texts::temporary_error(lang), None).await;
                }
                break Processed::Failed;
            }
        }
    };
    metrics::histogram!(crate::events::UPDATE_DURATION_SECONDS, "bot" => bot)
        .record(started.elapsed().as_secs_f64());
    outcome
}

fn update_language(update: &Update) -> Option<&str> {
    match &update.kind {
        UpdateKind::Message(m) => m.from.as_ref()?.language_code.as_deref(),
        UpdateKind::CallbackQuery(q) => q.from.language_code.as_deref(),
        _ => None,
    }
}

async fn handle(inner: &Inner, rt: &BotRuntime, update: &Update) -> Result<(), BotError> {
    match &update.kind {
        UpdateKind::Message(m) => on_message(inner, rt, m).await,
        UpdateKind::CallbackQuery(q) => on_callback(inner, rt, q).await,
        UpdateKind::MyChatMember(u) => on_my_chat_member(inner, rt, u).await,
        UpdateKind::PreCheckoutQuery(q) => billing::on_pre_checkout(inner, rt, q).await,
        UpdateKind::Error(raw) => {
            tracing::warn!(bot = %rt.name, update_id = update.id.0, bytes = raw.to_string().len(), "update teloxide could not parse; ignored");
            Ok(())
        }
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------
// Telegram calls

/// Renders a teloxide error without the token (reqwest errors carry the request URL,
/// which contains it).
pub fn describe(err: &RequestError, token: &str) -> String {
    // With the causes: "error sending request: … Connection refused" says what to fix.
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    if token.is_empty() {
        text
    } else {
        text.replace(token, "<token>")
    }
}

fn no_preview() -> LinkPreviewOptions {
    LinkPreviewOptions {
        is_disabled: true,
        url: None,
        prefer_small_media: false,
        prefer_large_media: false,
        show_above_text: false,
    }
}

/// Sends an HTML message; waits out a 429 (up to twice, at most 10 s each). Failures are
/// logged (the user cannot be told anyway) and give `None`.
pub(crate) async fn send(
    rt: &BotRuntime,
    chat_id: i64,
    text: String,
    keyboard: Option<InlineKeyboardMarkup>,
) -> Option<MessageId> {
    let mut attempt = 0;
    loop {
        let mut req = rt
            .bot
            .send_message(ChatId(chat_id), text.clone())
            .parse_mode(ParseMode::Html)
            .link_preview_options(no_preview());
        if let Some(kb) = &keyboard {
            req = req.reply_markup(kb.clone());
        }
        match req.await {
            Ok(m) => return Some(m.id),
            Err(RequestError::RetryAfter(wait)) if attempt < 2 => {
                attempt += 1;
                tokio::time::sleep(wait.duration().min(Duration::from_secs(10))).await;
            }
            Err(e) => {
                tracing::warn!(bot = %rt.name, chat_id, error = %describe(&e, &rt.token), "sending a reply failed");
                return None;
            }
        }
    }
}

/// Replaces a message's text and keyboard (a menu screen); sends a new message when there
/// is none to edit or it cannot be edited. "Not modified" (a redelivered tap) is success.
async fn show(
    rt: &BotRuntime,
    chat_id: i64,
    edit: Option<MessageId>,
    text: String,
    keyboard: InlineKeyboardMarkup,
) {
    if let Some(message_id) = edit {
        let res = rt
            .bot
            .edit_message_text(ChatId(chat_id), message_id, text.clone())
            .parse_mode(ParseMode::Html)
            .link_preview_options(no_preview())
            .reply_markup(keyboard.clone())
            .await;
        match res {
            Ok(_) | Err(RequestError::Api(ApiError::MessageNotModified)) => return,
            Err(e) => {
                tracing::debug!(bot = %rt.name, chat_id, error = %describe(&e, &rt.token), "editing a menu failed; sending it anew");
            }
        }
    }
    send(rt, chat_id, text, Some(keyboard)).await;
}

// ---------------------------------------------------------------------------------------
// One conversation turn

/// The chat, bot and user an update is about.
struct Turn<'a> {
    inner: &'a Inner,
    rt: &'a BotRuntime,
    chat_id: i64,
    lang: Lang,
    /// How the user is called (`@username` or first and last name).
    user_name: Option<String>,
}

fn display_name(user: &teloxide::types::User) -> String {
    match &user.username {
        Some(u) => format!("@{u}"),
        None => match &user.last_name {
            Some(l) => format!("{} {l}", user.first_name),
            None => user.first_name.clone(),
        },
    }
}

/// The subscriber as stored (or a fresh one) to change, and whether it is blocked.
struct Loaded {
    spec: SubscriberSpec,
    /// As stored, `None` for a new subscriber.
    stored: Option<SubscriberSpec>,
    blocked: bool,
    /// Category bots that cannot write to the user (blocked, or never started).
    unreachable: Vec<(String, jobwire_store::BlockScope)>,
}

impl Loaded {
    fn exists(&self) -> bool {
        self.stored.is_some()
    }
}

impl Turn<'_> {
    async fn load(&self) -> Result<Loaded, BotError> {
        let row = self.inner.store.subscriber_by_chat(self.chat_id).await?;
        Ok(match row {
            Some(row) => {
                let stored = row.to_spec();
                let mut spec = stored.clone();
                if spec.name.is_none() {
                    spec.name.clone_from(&self.user_name);
                }
                let unreachable = self
                    .inner
                    .store
                    .bot_blocks(Some(self.chat_id))
                    .await?
                    .into_iter()
                    .map(|b| (b.bot, b.scope))
                    .collect();
                Loaded {
                    spec,
                    stored: Some(stored),
                    blocked: row.blocked,
                    unreachable,
                }
            }
            None => Loaded {
                spec: SubscriberSpec {
                    chat_id: self.chat_id,
                    name: self.user_name.clone(),
                    categories: Vec::new(),
                    include: Vec::new(),
                    exclude: Vec::new(),
                    paused: false,
                    quiet_hours: None,
                    min_budget: None,
                },
                stored: None,
                blocked: false,
                unreachable: Vec::new(),
            },
        })
    }

    /// Writes the subscriber when it is new or changed. (Every write makes the dispatchers
    /// rebuild their subscriber index, so writes that change nothing are skipped.)
    async fn save(&self, loaded: &Loaded) -> Result<(), BotError> {
        if loaded.stored.as_ref() != Some(&loaded.spec) {
            self.inner
                .store
                .upsert_subscriber(&loaded.spec, Utc::now())
                .await?;
        }
        Ok(())
    }

    /// Saves the subscriber after a `/start` and, since the user just wrote to the bot,
    /// clears a block noted earlier.
    async fn save_started(&self, loaded: &mut Loaded) -> Result<(), BotError> {
        self.save(loaded).await?;
        // This bot may write to them now, whatever it could not do before.
        if loaded
            .unreachable
            .iter()
            .any(|(bot, _)| bot == &self.rt.name)
        {
            self.inner
                .store
                .set_bot_block(self.chat_id, &self.rt.name, None, Utc::now())
                .await?;
            loaded.unreachable.retain(|(bot, _)| bot != &self.rt.name);
        }
        if loaded.blocked {
            self.inner
                .store
                .set_subscriber_blocked(self.chat_id, false, Utc::now())
                .await?;
            loaded.blocked = false;
        }
        Ok(())
    }

    async fn send(&self, text: String, keyboard: Option<InlineKeyboardMarkup>) {
        send(self.rt, self.chat_id, text, keyboard).await;
    }

    /// Keeps the categories in the configured order (unknown ones last).
    fn sort_categories(&self, list: &mut [CategorySlug]) {
        list.sort_by_key(|slug| {
            self.inner
                .views
                .get()
                .iter()
                .position(|v| &v.slug == slug)
                .unwrap_or(usize::MAX)
        });
    }

    /// Takes one report from the chat's hourly allowance; when it is used up, says so and
    /// gives `false` (the report must not be filed).
    async fn report_allowed(&self) -> bool {
        if self.inner.reports.allow(self.chat_id) {
            return true;
        }
        let per_hour = self.inner.options.max_reports_per_hour;
        tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, per_hour, "report refused: the chat's hourly limit is used up");
        self.send(texts::report_limited(self.lang, per_hour), None)
            .await;
        false
    }

    async fn clear_dialogue(&self) -> Result<Option<DialogueState>, BotError> {
        let d = &self.inner.dialogues;
        let state = d.get(&self.rt.name, self.chat_id).await?;
        if state.is_some() {
            d.clear(&self.rt.name, self.chat_id).await?;
        }
        Ok(state)
    }
}

/// The text (or caption) of a message, if it has any non-blank one.
fn message_text(m: &Message) -> Option<&str> {
    m.text()
        .or_else(|| m.caption())
        .filter(|t| !t.trim().is_empty())
}

/// Cuts `text` to `max` characters.
fn truncate(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((i, _)) => text[..i].to_owned(),
        None => text.to_owned(),
    }
}

/// A link to the original of a message: the channel post it was forwarded from, a link
/// under its text, or the first URL in it.
fn link_of(m: &Message) -> Option<String> {
    if let Some(MessageOrigin::Channel {
        chat, message_id, ..
    }) = m.forward_origin()
        && let Some(username) = chat.username()
    {
        return Some(format!("https://t.me/{username}/{}", message_id.0));
    }
    let entities = m.entities().or_else(|| m.caption_entities()).unwrap_or(&[]);
    for e in entities {
        if let MessageEntityKind::TextLink { url } = &e.kind {
            return Some(url.to_string());
        }
    }
    let text = m.text().or_else(|| m.caption())?;
    text.split_whitespace()
        .find(|w| w.starts_with("https://") || w.starts_with("http://"))
        .map(|w| {
            w.trim_end_matches([')', ']', '.', ',', ';', '!', '?', '»', '"'])
                .to_owned()
        })
}

/// Splits `/cmd@bot args` into the lower-cased command and the rest. Commands addressed
/// to another bot are not ours.
fn parse_command<'t>(text: &'t str, username: &str) -> Option<(String, &'t str)> {
    let rest = text.strip_prefix('/')?;
    let (head, args) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    let (cmd, target) = match head.split_once('@') {
        Some((c, t)) => (c, Some(t)),
        None => (head, None),
    };
    if target.is_some_and(|t| !t.eq_ignore_ascii_case(username)) {
        return None;
    }
    if cmd.is_empty()
        || cmd.len() > 32
        || !cmd.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return None;
    }
    Some((cmd.to_ascii_lowercase(), args))
}

// ---------------------------------------------------------------------------------------
// Update kinds

async fn on_message(inner: &Inner, rt: &BotRuntime, m: &Message) -> Result<(), BotError> {
    if !m.chat.is_private() {
        return Ok(());
    }
    let from = m.from.as_ref();
    let turn = Turn {
        inner,
        rt,
        chat_id: m.chat.id.0,
        lang: Lang::from_code(from.and_then(|u| u.language_code.as_deref())),
        user_name: from.map(display_name),
    };
    // Payments come as service messages; only the main bot sells.
    if let Some(p) = m.successful_payment() {
        return turn.successful_payment(m, p).await;
    }
    if let teloxide::types::MessageKind::RefundedPayment(r) = &m.kind {
        return turn.refunded_payment(m, &r.refunded_payment).await;
    }
    let serves_categories = !inner.categories_of(&rt.name).is_empty();
    if let Some((cmd, args)) = m.text().and_then(|t| parse_command(t, &rt.username)) {
        tracing::debug!(bot = %rt.name, chat_id = turn.chat_id, command = %cmd, "command");
        if cmd == "cancel" {
            let was = if rt.is_main {
                turn.clear_dialogue().await?
            } else {
                None
            };
            turn.send(texts::cancelled(turn.lang, was.is_some()), None)
                .await;
            return Ok(());
        }
        // Any other command ends a pending question.
        if rt.is_main {
            turn.clear_dialogue().await?;
        }
        let is_reply = m.reply_to_message().is_some();
        return match (cmd.as_str(), rt.is_main) {
            ("start", true) => turn.main_start(args).await,
            ("start", false) => turn.category_start(args).await,
            ("stop", _) if serves_categories => turn.category_stop(args).await,
            ("stop" | "pause", true) => turn.set_paused(true, None).await.map(drop),
            ("resume", true) => turn.set_paused(false, None).await.map(drop),
            ("menu", true) => turn.screen(Screen::Main, None).await,
            ("categories", true) => turn.screen(Screen::Categories, None).await,
            ("filters", true) => turn.screen(Screen::Filters, None).await,
            ("status" | "settings", true) => turn.screen(Screen::Status, None).await,
            ("include", true) => turn.ask(DialogueState::Include).await,
            ("exclude", true) => turn.ask(DialogueState::Exclude).await,
            ("budget", true) => turn.ask(DialogueState::MinBudget).await,
            ("quiet", true) => turn.ask(DialogueState::QuietHours).await,
            ("wrong", _) => turn.report_wrong(m, args).await,
            ("report", _) if is_reply || !rt.is_main => turn.report_wrong(m, args).await,
            ("report", true) => turn.ask(DialogueState::Report).await,
            ("help", true) => turn.screen(Screen::Help, None).await,
            ("plans" | "subscription", true) => turn.plans(None).await,
            ("buy", true) => turn.buy(args, false).await,
            ("post", true) => turn.place_start().await,
            ("paysupport", _) => {
                turn.paysupport().await;
                Ok(())
            }
            ("terms", _) => {
                turn.terms().await;
                Ok(())
            }
            (_, true) => {
                turn.send(texts::unknown_input(turn.lang), None).await;
                Ok(())
            }
            (_, false) => {
                turn.send(turn.category_help(), None).await;
                Ok(())
            }
        };
    }
    if rt.is_main {
        if let Some(state) = inner.dialogues.get(&rt.name, turn.chat_id).await? {
            return turn.input(state, m).await;
        }
        turn.send(texts::unknown_input(turn.lang), None).await;
    } else {
        turn.send(turn.category_help(), None).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn commands_are_split_and_addressed() {
        assert_eq!(parse_command("/start", "b"), Some(("start".into(), "")));
        assert_eq!(
            parse_command("/Start web", "b"),
            Some(("start".into(), "web"))
        );
        assert_eq!(
            parse_command("/wrong@B  not a job ", "b"),
            Some(("wrong".into(), "not a job"))
        );
        assert_eq!(parse_command("/wrong@other", "b"), None);
        assert_eq!(parse_command("hello", "b"), None);
        assert_eq!(parse_command("/ hi", "b"), None);
        assert_eq!(parse_command("/путь", "b"), None);
    }

    #[test]
    fn truncation_counts_characters() {
        assert_eq!(truncate("  привет мир ", 6), "привет");
        assert_eq!(truncate("abc", 10), "abc");
    }
}

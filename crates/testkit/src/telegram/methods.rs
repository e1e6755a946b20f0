//! The Bot API methods with dedicated behaviour: sending (with blocks and rate limits),
//! editing and deleting messages, callback answers and bot commands.

use std::time::{Duration, Instant};

use chrono::Utc;
use serde_json::{Value, json};

use super::{
    RecordedMessage, TelegramState,
    checks::{
        CAPTION_RULES, Content, EDIT_RULES, MESSAGE_RULES, TextRules, check_markup, parse_content,
    },
    errors::{ApiError, ApiResult, bad, err},
    params::{Params, ParamsExt},
    spec::MethodSpec,
    state::{BotState, SendState, lock},
};

/// Per-bot ceiling when a send passes `allow_paid_broadcast=true`.
const PAID_BROADCAST_PER_SEC: u32 = 1000;

fn bot_user_json(bot_id: u64) -> Value {
    json!({
        "id": bot_id,
        "is_bot": true,
        "first_name": format!("Test Bot {bot_id}"),
        "username": format!("test{bot_id}_bot"),
    })
}

pub(super) fn me_json(bot_id: u64) -> Value {
    let mut me = bot_user_json(bot_id);
    if let Some(obj) = me.as_object_mut() {
        for (k, v) in [
            ("can_join_groups", true),
            ("can_read_all_group_messages", false),
            ("supports_inline_queries", false),
            ("can_connect_to_business", false),
            ("has_main_web_app", false),
        ] {
            obj.insert(k.into(), json!(v));
        }
    }
    me
}

fn chat_json(chat_id: i64) -> Value {
    if chat_id > 0 {
        json!({"id": chat_id, "type": "private", "first_name": format!("User {chat_id}")})
    } else {
        json!({"id": chat_id, "type": "supergroup", "title": format!("Group {chat_id}")})
    }
}

/// Maps `@username` chat ids to a stable negative id (channels/supergroups).
pub(super) fn resolve_chat(p: &Params) -> Result<i64, ApiError> {
    if let Some(id) = p.int("chat_id") {
        return Ok(id);
    }
    match p.string("chat_id") {
        Some(name) if name.starts_with('@') && name.len() > 1 => {
            // FNV-1a of the lower-cased username.
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for b in name.to_ascii_lowercase().bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
            let h = i64::try_from(h % 1_000_000_000).unwrap_or(0);
            Ok(-1_000_000_000_000 - h)
        }
        Some(_) => Err(bad("Bad Request: chat not found")),
        None => Err(bad("Bad Request: chat_id is empty")),
    }
}

fn message_json(rec: &RecordedMessage, extra: Option<&Value>) -> Value {
    let mut m = json!({
        "message_id": rec.message_id,
        "from": bot_user_json(rec.bot_id),
        "chat": chat_json(rec.chat_id),
        "date": rec.received_at.timestamp(),
    });
    let Some(obj) = m.as_object_mut() else {
        return m;
    };
    if let Some(t) = rec.edited_at {
        obj.insert("edit_date".into(), json!(t.timestamp()));
    }
    if rec.method == "sendMessage" {
        obj.insert("text".into(), json!(rec.visible_text));
        if !rec.entities.is_empty() {
            obj.insert("entities".into(), json!(rec.entities));
        }
    } else if let Some(Value::Object(extra)) = extra {
        for (k, v) in extra {
            obj.insert(k.clone(), v.clone());
        }
    } else {
        // Other send methods: keep the message parseable by clients that expect text.
        obj.insert("text".into(), json!(rec.visible_text));
    }
    if let Some(markup) = &rec.reply_markup
        && markup.get("inline_keyboard").is_some()
    {
        obj.insert("reply_markup".into(), markup.clone());
    }
    m
}
/// What a send method wants recorded, before the message id is known.
struct Pending {
    method: &'static str,
    chat_id: i64,
    text: String,
    parse_mode: Option<String>,
    content: Result<(Content, Option<Value>), String>,
    paid: bool,
    extra: Option<Value>,
}

impl Pending {
    /// A send to the chat `p` names: its text (or caption) from `text_field` with entities
    /// from `entities_field`, checked by `rules`, and its keyboard. The checks' verdict
    /// waits in `content`: it counts only after the block and rate-limit steps.
    fn new(
        p: &Params,
        method: &'static str,
        text_field: &str,
        entities_field: &str,
        rules: &TextRules,
    ) -> Result<Self, ApiError> {
        let chat_id = resolve_chat(p)?;
        let text = p.string(text_field).unwrap_or_default();
        let parse_mode = p.string("parse_mode");
        let content = parse_content(&text, parse_mode.as_deref(), p.json(entities_field), rules)
            .and_then(|c| Ok((c, check_markup(p)?)));
        Ok(Pending {
            method,
            chat_id,
            text,
            parse_mode,
            content,
            paid: p.boolean("allow_paid_broadcast").unwrap_or(false),
            extra: None,
        })
    }
}

/// Refuses a send or an edit into a chat whose user blocked the bot.
fn check_not_blocked(send: &SendState, chat_id: i64) -> Result<(), ApiError> {
    if send.blocked.contains(&chat_id) {
        return Err(err(403, "Forbidden: bot was blocked by the user"));
    }
    Ok(())
}

/// Steps 4–7 of the check order (blocked, injected faults, rate limit, content) and recording, under the
/// bot's lock; returns the sent `Message`.
fn accept(st: &TelegramState, bot: &BotState, pending: Pending) -> ApiResult {
    let limits = st.limits();
    let now = Instant::now();
    let chat_id = pending.chat_id;
    let recorded = {
        let mut send = lock(&bot.send);
        check_not_blocked(&send, chat_id)?;
        if let Some((code, description)) = send.faults.pop_front() {
            return Err(err(code, &description));
        }
        if let Some(l) = limits {
            let global_limit = if pending.paid {
                PAID_BROADCAST_PER_SEC
            } else {
                l.global_per_sec
            };
            let (chat_limit, chat_span) = if chat_id < 0 {
                (l.per_group_per_min, Duration::from_secs(60))
            } else {
                (l.per_chat_per_sec, Duration::from_secs(1))
            };
            let global_wait = send.global.check(now, global_limit, Duration::from_secs(1));
            let chat = send.chats.entry(chat_id).or_default();
            let chat_wait = chat.window.check(now, chat_limit, chat_span);
            if let Some(wait) = global_wait.max(chat_wait) {
                return Err(ApiError {
                    code: 429,
                    description: format!("Too Many Requests: retry after {wait}"),
                    retry_after: Some(wait),
                });
            }
            if pending.content.is_ok() {
                chat.window.record(now, chat_limit);
                send.global.record(now, global_limit);
            }
        }
        let (content, markup) = pending.content.map_err(bad)?;
        let chat = send.chats.entry(chat_id).or_default();
        let rec = RecordedMessage {
            seq: st.next_seq(),
            bot_id: bot.id,
            chat_id,
            message_id: i64::try_from(chat.messages.len()).unwrap_or(i64::MAX - 1) + 1,
            method: pending.method.to_owned(),
            text: pending.text,
            parse_mode: pending.parse_mode,
            visible_text: content.visible,
            entities: content.entities,
            reply_markup: markup,
            received_at: Utc::now(),
            edited_at: None,
            deleted: false,
        };
        chat.messages.push(rec.clone());
        rec
    };
    st.inner.stats.accepted_at(recorded.received_at);
    Ok(message_json(&recorded, pending.extra.as_ref()))
}

pub(super) fn send_message(st: &TelegramState, bot: &BotState, p: &Params) -> ApiResult {
    let pending = Pending::new(p, "sendMessage", "text", "entities", &MESSAGE_RULES)?;
    accept(st, bot, pending)
}

/// Other `send*` methods returning a `Message`: caption checks, rate limits, recording.
pub(super) fn send_other(
    st: &TelegramState,
    bot: &BotState,
    spec: &'static MethodSpec,
    p: &Params,
) -> ApiResult {
    let pending = Pending::new(
        p,
        spec.name.as_str(),
        "caption",
        "caption_entities",
        &CAPTION_RULES,
    )?;
    let result = accept(st, bot, pending);
    if result.is_ok() {
        st.record_call(bot.id, &spec.name, p.clone());
    }
    result
}

/// A send whose content the caller checked (`sendInvoice`): `verdict` is the content step's
/// answer, `text` the recorded text and `extra` the fields merged into the returned `Message`.
pub(super) fn send_checked(
    st: &TelegramState,
    bot: &BotState,
    method: &'static str,
    p: &Params,
    text: String,
    verdict: Result<(), String>,
    extra: Value,
) -> ApiResult {
    let chat_id = resolve_chat(p)?;
    let content = verdict.and_then(|()| {
        let markup = check_markup(p)?;
        Ok((
            Content {
                visible: text.clone(),
                entities: Vec::new(),
            },
            markup,
        ))
    });
    let pending = Pending {
        method,
        chat_id,
        text,
        parse_mode: None,
        content,
        paid: p.boolean("allow_paid_broadcast").unwrap_or(false),
        extra: Some(extra),
    };
    accept(st, bot, pending)
}

fn find_message(
    send: &mut SendState,
    chat_id: i64,
    message_id: i64,
) -> Option<&mut RecordedMessage> {
    let chat = send.chats.get_mut(&chat_id)?;
    let idx = usize::try_from(message_id.checked_sub(1)?).ok()?;
    chat.messages.get_mut(idx).filter(|m| !m.deleted)
}

const NOT_MODIFIED: &str = "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message";

/// The chat and message an edit names.
fn edit_target(p: &Params) -> Result<(i64, i64), ApiError> {
    let chat_id = resolve_chat(p)?;
    let message_id = p
        .int("message_id")
        .ok_or_else(|| bad("Bad Request: message identifier is not specified"))?;
    Ok((chat_id, message_id))
}

/// Applies `change` to the message an edit names; answers the edited `Message`.
fn apply_edit(
    send: &mut SendState,
    chat_id: i64,
    message_id: i64,
    change: impl FnOnce(&mut RecordedMessage) -> Result<(), ApiError>,
) -> ApiResult {
    let rec = find_message(send, chat_id, message_id)
        .ok_or_else(|| bad("Bad Request: message to edit not found"))?;
    change(rec)?;
    rec.edited_at = Some(Utc::now());
    Ok(message_json(rec, None))
}

pub(super) fn edit_text(bot: &BotState, p: &Params) -> ApiResult {
    let text = p.string("text").unwrap_or_default();
    let parse_mode = p.string("parse_mode");
    let content = parse_content(
        &text,
        parse_mode.as_deref(),
        p.json("entities"),
        &EDIT_RULES,
    );
    if p.string("inline_message_id").is_some() {
        content.map_err(bad)?;
        check_markup(p).map_err(bad)?;
        return Ok(json!(true));
    }
    let (chat_id, message_id) = edit_target(p)?;
    let mut send = lock(&bot.send);
    check_not_blocked(&send, chat_id)?;
    let content = content.map_err(bad)?;
    let markup = check_markup(p).map_err(bad)?;
    apply_edit(&mut send, chat_id, message_id, |rec| {
        if rec.method != "sendMessage" {
            return Err(bad("Bad Request: there is no text in the message to edit"));
        }
        if rec.visible_text == content.visible
            && rec.entities == content.entities
            && rec.reply_markup == markup
        {
            return Err(bad(NOT_MODIFIED));
        }
        rec.text = text;
        rec.parse_mode = parse_mode;
        rec.visible_text = content.visible;
        rec.entities = content.entities;
        rec.reply_markup = markup;
        Ok(())
    })
}

pub(super) fn edit_markup(bot: &BotState, p: &Params) -> ApiResult {
    let markup = check_markup(p).map_err(bad)?;
    if p.string("inline_message_id").is_some() {
        return Ok(json!(true));
    }
    let (chat_id, message_id) = edit_target(p)?;
    let mut send = lock(&bot.send);
    check_not_blocked(&send, chat_id)?;
    apply_edit(&mut send, chat_id, message_id, |rec| {
        if rec.reply_markup == markup {
            return Err(bad(NOT_MODIFIED));
        }
        rec.reply_markup = markup;
        Ok(())
    })
}

pub(super) fn delete_messages(bot: &BotState, p: &Params, many: bool) -> ApiResult {
    let chat_id = resolve_chat(p)?;
    let ids: Vec<i64> = if many {
        p.json("message_ids")
            .and_then(|v| {
                v.as_array()
                    .map(|a| a.iter().filter_map(Value::as_i64).collect())
            })
            .unwrap_or_default()
    } else {
        vec![
            p.int("message_id")
                .ok_or_else(|| bad("Bad Request: message identifier is not specified"))?,
        ]
    };
    let mut send = lock(&bot.send);
    let mut any = false;
    for id in ids {
        if let Some(rec) = find_message(&mut send, chat_id, id) {
            rec.deleted = true;
            any = true;
        }
    }
    if !any {
        return Err(bad("Bad Request: message to delete not found"));
    }
    Ok(json!(true))
}

pub(super) fn answer_callback(p: &Params) -> ApiResult {
    if p.string("callback_query_id").is_none_or(|s| s.is_empty()) {
        return Err(bad("Bad Request: QUERY_ID_INVALID"));
    }
    if p.string("text").is_some_and(|t| t.chars().count() > 200) {
        return Err(bad("Bad Request: MESSAGE_TOO_LONG"));
    }
    Ok(json!(true))
}

pub(super) fn commands_key(p: &Params) -> String {
    let scope = p
        .json("scope")
        .map_or_else(|| r#"{"type":"default"}"#.to_owned(), |s| s.to_string());
    format!("{scope}|{}", p.string("language_code").unwrap_or_default())
}

pub(super) fn set_commands(bot: &BotState, p: &Params) -> ApiResult {
    let commands = p.json("commands").unwrap_or_else(|| json!([]));
    let list = commands.as_array().cloned().unwrap_or_default();
    if list.len() > 100 {
        return Err(bad("Bad Request: too many commands"));
    }
    for c in &list {
        let cmd = c.get("command").and_then(Value::as_str).unwrap_or("");
        let ok = (1..=32).contains(&cmd.len())
            && cmd
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !ok {
            return Err(bad("Bad Request: BOT_COMMAND_INVALID"));
        }
        let desc = c.get("description").and_then(Value::as_str).unwrap_or("");
        if !(1..=256).contains(&desc.chars().count()) {
            return Err(bad("Bad Request: command description must be non-empty"));
        }
    }
    lock(&bot.commands).insert(commands_key(p), json!(list));
    Ok(json!(true))
}

pub(super) fn get_commands(bot: &BotState, p: &Params) -> Value {
    lock(&bot.commands)
        .get(&commands_key(p))
        .cloned()
        .unwrap_or_else(|| json!([]))
}

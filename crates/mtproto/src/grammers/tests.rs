//! Tests of the grammers layer: message conversion on constructed TL messages, and error
//! mapping.

use std::time::Duration;

use grammers_mtsender::InvocationError;
use grammers_tl_types as tl;

use super::errors::map_error;
use super::login_error::{LoginError, login_error};
use super::raw_from_tl;
use crate::account::{AccountError, Entity, EntityKind, ForwardOrigin};

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
    let raw = raw_from_tl(&tl::enums::Message::Message(m.clone()), &users, &[]).expect("message");
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
    for (code, name, value, expected) in [
        (
            420,
            "FLOOD_WAIT",
            Some(3600),
            AccountError::FloodWait(Duration::from_secs(3600)),
        ),
        (
            400,
            "INVITE_HASH_EXPIRED",
            None,
            AccountError::InviteExpired,
        ),
        (
            400,
            "INVITE_REQUEST_SENT",
            None,
            AccountError::JoinRequestSent,
        ),
        (
            400,
            "CHANNELS_TOO_MUCH",
            None,
            AccountError::ChannelsTooMuch,
        ),
        (
            401,
            "AUTH_KEY_UNREGISTERED",
            None,
            AccountError::SessionDead,
        ),
        (401, "SOMETHING_NEW", None, AccountError::SessionDead),
        (403, "USER_DEACTIVATED_BAN", None, AccountError::Banned),
        (400, "USERNAME_NOT_OCCUPIED", None, AccountError::NotFound),
    ] {
        assert_eq!(map_error(&rpc(code, name, value)), expected, "{name}");
    }
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

//! The buttons under a delivered card (report it as not a vacancy or in the wrong category,
//! hide its author, open the original) and their callback data, beside what a tap on them
//! does (the cards room, `cards.rs`). The send stage draws them through the
//! [`card_keyboard`] the binary hands it (`jobwire_deliver::SendStageConfig::keyboard`), so a
//! new button is written in this crate only. Callback data names the delivery
//! (`card:n:<delivery id>`), never the post's text, and fits Telegram's 64 bytes.

use jobwire_core::format::safe_url;
use teloxide::types::{InlineKeyboardButton, InlineKeyboardMarkup};

/// A button under a card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CardAction {
    /// "Not a vacancy".
    NotJob,
    /// "Wrong category".
    WrongCategory,
    /// "Hide this author".
    HideAuthor,
}

impl CardAction {
    pub const ALL: [CardAction; 3] = [Self::NotJob, Self::WrongCategory, Self::HideAuthor];

    fn code(self) -> &'static str {
        match self {
            Self::NotJob => "n",
            Self::WrongCategory => "c",
            Self::HideAuthor => "h",
        }
    }

    /// `card:<n|c|h>:<delivery id>`.
    pub fn encode(self, delivery_id: i64) -> String {
        format!("card:{}:{delivery_id}", self.code())
    }

    /// The action and delivery id of callback data made by [`CardAction::encode`].
    pub fn decode(data: &str) -> Option<(CardAction, i64)> {
        let rest = data.strip_prefix("card:")?;
        let (code, id) = rest.split_once(':')?;
        let action = Self::ALL.into_iter().find(|a| a.code() == code)?;
        let id: i64 = id.parse().ok().filter(|id| *id > 0)?;
        Some((action, id))
    }

    /// The button's label; `done` shows that the user already pressed it.
    pub fn label(self, english: bool, done: bool) -> &'static str {
        match (self, english, done) {
            (Self::NotJob, false, false) => "🚫 Не вакансия",
            (Self::NotJob, false, true) => "✓ Не вакансия: отмечено",
            (Self::NotJob, true, false) => "🚫 Not a vacancy",
            (Self::NotJob, true, true) => "✓ Not a vacancy: reported",
            (Self::WrongCategory, false, false) => "🗂 Не та категория",
            (Self::WrongCategory, false, true) => "✓ Не та категория: отмечено",
            (Self::WrongCategory, true, false) => "🗂 Wrong category",
            (Self::WrongCategory, true, true) => "✓ Wrong category: reported",
            (Self::HideAuthor, false, false) => "🙈 Скрыть автора",
            (Self::HideAuthor, false, true) => "✓ Автор скрыт",
            (Self::HideAuthor, true, false) => "🙈 Hide this author",
            (Self::HideAuthor, true, true) => "✓ Author hidden",
        }
    }
}

/// Whether a stored language code (`ru`, `en`, or none) reads English; Russian otherwise,
/// as the bots default.
pub fn reads_english(lang: Option<&str>) -> bool {
    lang.is_some_and(|l| l.eq_ignore_ascii_case("en"))
}

/// One button of a card's keyboard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CardButton {
    Callback { text: String, data: String },
    Url { text: String, url: String },
}

/// The keyboard under a card: the three report buttons (those in `done` marked as pressed)
/// and "Open original" when the post has a safe link.
pub fn keyboard(
    english: bool,
    delivery_id: i64,
    original_url: Option<&str>,
    done: &[CardAction],
) -> Vec<Vec<CardButton>> {
    let button = |a: CardAction| CardButton::Callback {
        text: a.label(english, done.contains(&a)).to_owned(),
        data: a.encode(delivery_id),
    };
    let mut second = vec![button(CardAction::HideAuthor)];
    if let Some(url) = original_url.and_then(safe_url) {
        second.push(CardButton::Url {
            text: if english {
                "🔗 Open original"
            } else {
                "🔗 Оригинал"
            }
            .to_owned(),
            url: url.to_owned(),
        });
    }
    vec![
        vec![
            button(CardAction::NotJob),
            button(CardAction::WrongCategory),
        ],
        second,
    ]
}

/// The keyboard under the card of delivery `delivery_id`, in the language the card was sent
/// in (`lang`, the delivery's), the buttons in `done` shown as pressed, "Open original" when
/// `original_url` is a safe link.
pub fn card_keyboard(
    lang: Option<&str>,
    delivery_id: i64,
    original_url: Option<&str>,
    done: &[CardAction],
) -> InlineKeyboardMarkup {
    let rows = keyboard(reads_english(lang), delivery_id, original_url, done);
    InlineKeyboardMarkup::new(rows.into_iter().map(|row| {
        row.into_iter()
            .filter_map(|b| match b {
                CardButton::Callback { text, data } => {
                    Some(InlineKeyboardButton::callback(text, data))
                }
                // A URL that does not parse is left out.
                CardButton::Url { text, url } => url::Url::parse(&url)
                    .ok()
                    .map(|url| InlineKeyboardButton::url(text, url)),
            })
            .collect::<Vec<_>>()
    }))
}

/// [`card_keyboard`] for a card just sent (no button pressed yet): what the send stage draws.
pub fn fresh_card_keyboard(
    lang: Option<&str>,
    delivery_id: i64,
    original_url: Option<&str>,
) -> InlineKeyboardMarkup {
    card_keyboard(lang, delivery_id, original_url, &[])
}

#[cfg(test)]
mod tests {
    use teloxide::types::InlineKeyboardButtonKind;

    use super::*;

    #[test]
    fn callback_data_names_the_delivery_and_fits() {
        for a in CardAction::ALL {
            let data = a.encode(i64::MAX);
            assert!(data.len() <= 64, "{data}");
            assert_eq!(CardAction::decode(&data), Some((a, i64::MAX)));
        }
        assert_eq!(CardAction::NotJob.encode(42), "card:n:42");
        for bad in [
            "card:x:1",
            "card:n:",
            "card:n:-1",
            "card:n:0",
            "cat:n:1",
            "card:n:1:2",
        ] {
            assert_eq!(CardAction::decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn keyboard_has_four_buttons_and_marks_what_was_pressed() {
        let kb = keyboard(true, 7, Some("https://t.me/c/1"), &[CardAction::NotJob]);
        let flat: Vec<&CardButton> = kb.iter().flatten().collect();
        assert_eq!(flat.len(), 4);
        assert!(
            matches!(flat[0], CardButton::Callback { text, data } if text.starts_with('✓') && data == "card:n:7")
        );
        assert!(matches!(flat[1], CardButton::Callback { text, .. } if text == "🗂 Wrong category"));
        assert!(matches!(flat[3], CardButton::Url { url, .. } if url == "https://t.me/c/1"));
        // No link, or an unsafe one: no "Open original".
        for url in [None, Some("javascript:alert(1)")] {
            assert_eq!(keyboard(false, 7, url, &[]).iter().flatten().count(), 3);
        }
    }

    /// Each button as `(text, callback data or URL)`, row by row.
    fn buttons(k: &InlineKeyboardMarkup) -> Vec<Vec<(String, String)>> {
        k.inline_keyboard
            .iter()
            .map(|row| {
                row.iter()
                    .map(|b| {
                        let target = match &b.kind {
                            InlineKeyboardButtonKind::CallbackData(d) => d.clone(),
                            InlineKeyboardButtonKind::Url(u) => u.to_string(),
                            other => format!("{other:?}"),
                        };
                        (b.text.clone(), target)
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_card_keyboard_has_the_report_buttons_and_the_original() {
        let s = |a: &str, b: &str| (a.to_owned(), b.to_owned());
        let fresh = card_keyboard(None, 7, Some("https://t.me/jobs/5"), &[]);
        assert_eq!(
            buttons(&fresh),
            vec![
                vec![
                    s("🚫 Не вакансия", "card:n:7"),
                    s("🗂 Не та категория", "card:c:7"),
                ],
                vec![
                    s("🙈 Скрыть автора", "card:h:7"),
                    s("🔗 Оригинал", "https://t.me/jobs/5"),
                ],
            ]
        );
        // In English, after a tap on "Not a vacancy"; no link without a safe URL.
        let tapped = card_keyboard(
            Some("en"),
            7,
            Some("javascript:alert(1)"),
            &[CardAction::NotJob],
        );
        assert_eq!(
            buttons(&tapped),
            vec![
                vec![
                    s("✓ Not a vacancy: reported", "card:n:7"),
                    s("🗂 Wrong category", "card:c:7"),
                ],
                vec![s("🙈 Hide this author", "card:h:7")],
            ]
        );
    }
}

//! The keyboard under a card, in Telegram's form: the one place both the send stage (a new
//! card) and the bots (a card redrawn after a tap) build it. The buttons themselves, their
//! labels and callback data are [`jobwire_core::card`]'s; this adds only teloxide's types.

use jobwire_core::card::{self, CardAction, CardButton};
use teloxide::types::{InlineKeyboardButton, InlineKeyboardMarkup};

/// The keyboard under the card of delivery `delivery_id`, in the language the card was sent
/// in (`lang`, the delivery's), the buttons in `done` shown as pressed, "Open original" when
/// `original_url` is a safe link.
pub fn card_keyboard(
    lang: Option<&str>,
    delivery_id: i64,
    original_url: Option<&str>,
    done: &[CardAction],
) -> InlineKeyboardMarkup {
    let rows = card::keyboard(card::reads_english(lang), delivery_id, original_url, done);
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

#[cfg(test)]
mod tests {
    use teloxide::types::InlineKeyboardButtonKind;

    use super::*;

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

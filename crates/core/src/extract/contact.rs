//! How to reach the client: `@username`s, `t.me/…` and `wa.me/…` links and e-mail
//! addresses found in a post's text; the first one after a contact word (`пишите`, `DM`,
//! `apply`, `→`, …) wins, else the first one at all. Post links, inline bots (`via @gif`) and
//! forwarding sources are not contacts.

use std::sync::LazyLock;

use regex::Regex;

use super::text::regex;

static HANDLE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?:^|[^\w@./])@([A-Za-z][A-Za-z0-9_]{4,31})"));
static TG_LINK: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)(?:https?://)?(?:www\.)?(?:t|telegram)\.me/([A-Za-z][A-Za-z0-9_]{4,31})")
});
static WA_LINK: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)(?:https?://)?wa\.me/(\+?\d{6,15})"));
static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?:^|[^\w.+-])([A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24})",
    )
});
static CONTACT_CUE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(?:пиш|писать|напиш|контакт|связ|\bлс\b|л/с|личк|в личн|отклик|резюме|присыл|кидай|скидыв|обращ|заявк|\bdm\b|\bpm\b|contact|apply|reach|message|send|write|\btg\b|telegram:|→|👉|📩|✉|➡|📞|☎)",
    )
});
static VIA_BEFORE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)(?:via|forwarded from|переслано от|from)\s*$"));

pub(super) fn contact_of(text: &str) -> Option<String> {
    // (position, contact)
    let mut found: Vec<(usize, String)> = Vec::new();
    for c in HANDLE.captures_iter(text) {
        let Some(name) = c.get(1) else { continue };
        let after = text[name.end()..].chars().next();
        if after.is_some_and(|a| a.is_ascii_alphanumeric() || a == '_' || a == '@') {
            continue;
        }
        let at = name.start() - 1;
        if VIA_BEFORE.is_match(&text[..at]) {
            continue;
        }
        found.push((at, format!("@{}", name.as_str())));
    }
    for c in TG_LINK.captures_iter(text) {
        let (Some(whole), Some(name)) = (c.get(0), c.get(1)) else {
            continue;
        };
        let rest = &text[name.end()..];
        // A post link (`t.me/channel/42`) or an over-long name is not a contact.
        if rest.starts_with(|a: char| a.is_ascii_alphanumeric() || a == '_')
            || rest
                .strip_prefix('/')
                .is_some_and(|r| r.starts_with(|a: char| a.is_ascii_digit()))
            || ["joinchat", "addstickers", "share"]
                .contains(&name.as_str().to_ascii_lowercase().as_str())
        {
            continue;
        }
        found.push((whole.start(), format!("https://t.me/{}", name.as_str())));
    }
    for c in WA_LINK.captures_iter(text) {
        let (Some(whole), Some(number)) = (c.get(0), c.get(1)) else {
            continue;
        };
        found.push((whole.start(), format!("https://wa.me/{}", number.as_str())));
    }
    for c in EMAIL.captures_iter(text) {
        let Some(address) = c.get(1) else { continue };
        found.push((address.start(), address.as_str().to_owned()));
    }
    found.sort_by_key(|(at, _)| *at);
    let cued = found.iter().find(|(at, _)| {
        let before: String = {
            let head = &text[..*at];
            let chars: Vec<char> = head.chars().rev().take(60).collect();
            chars.into_iter().rev().collect()
        };
        CONTACT_CUE.is_match(&before)
    });
    cued.or(found.first()).map(|(_, c)| c.clone())
}

#[cfg(test)]
mod tests {
    use crate::extract::extract_contact;

    #[test]
    fn contacts() {
        let c = |t: &str| extract_contact(t);
        assert_eq!(
            c("Бюджет 5к. Пишите @anna_design").as_deref(),
            Some("@anna_design")
        );
        assert_eq!(
            c("Для канала @big_channel_name нужен дизайнер. Контакт: @hr_olga").as_deref(),
            Some("@hr_olga")
        );
        assert_eq!(
            c("DM @lena_hires with GitHub").as_deref(),
            Some("@lena_hires")
        );
        assert_eq!(
            c("Отклики через бота: t.me/zernoipar_hr_bot").as_deref(),
            Some("https://t.me/zernoipar_hr_bot")
        );
        assert_eq!(
            c("WhatsApp: https://wa.me/79123456789").as_deref(),
            Some("https://wa.me/79123456789")
        );
        assert_eq!(
            c("Send CV to jobs@studio.io").as_deref(),
            Some("jobs@studio.io")
        );
        // Too short, part of an address, a post link, an inline bot: not contacts.
        assert_eq!(c("/extend @user 30d"), None);
        assert_eq!(c("https://t.me/channel/42"), None);
        assert_eq!(c("via @gif"), None);
        assert_eq!(c("пишите в лс"), None);
    }
}

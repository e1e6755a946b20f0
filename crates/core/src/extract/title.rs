//! A one-line title for a post: the first line that says what the job is, with markup,
//! hashtags, links, emoji, greetings and channel boilerplate removed, a lead-in line
//! (`Ищу` / `дизайнера логотипа`) joined to the next, cut to its first sentence, shouting
//! turned into sentence case and shortened to [`MAX_TITLE_CHARS`].

use std::sync::LazyLock;

use regex::Regex;

use super::MAX_TITLE_CHARS;
use super::text::{is_forward_header, regex, short_phrase};

static HTML_TAG: LazyLock<Regex> = LazyLock::new(|| regex(r"</?[A-Za-z][^<>]{0,60}>"));
static MD_LINK: LazyLock<Regex> = LazyLock::new(|| regex(r"\[([^\]\n]{1,200})\]\([^)\s]{1,500}\)"));
static HASHTAG: LazyLock<Regex> = LazyLock::new(|| regex(r"#[\w-]+"));
static URL: LazyLock<Regex> = LazyLock::new(|| regex(r"(?i)\b(?:https?://|www\.)\S+|\bt\.me/\S+"));
/// Lines that only announce: channel and exchange boilerplate.
static ANNOUNCEMENT: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^(?:(?:new job on|new project on|новый заказ на|новый проект на|заказ с|job from)\b.*|(?:репост(?:\s+из)?|repost|still hiring|актуально|we'?re hiring|hiring now|вакансия|vacancy|заказ|order|job|hiring|upd|update|обновлено|срочно|urgent|важно|внимание)\W*)$",
    )
});
/// Lines that only start a sentence the next line finishes ("Ищу" / "дизайнера логотипа").
static LEAD_IN: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^(?:ищу|ищем|требуется|требуются|нужен|нужна|нужно|нужны|в поиске|looking for|we are looking for|we're looking for|wanted|need|needed|задача|task|описание|description)\W*$",
    )
});
/// A greeting before the first real sentence.
static GREETING: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^(?:здравствуйте|добрый день|добрый вечер|доброе утро|всем привет|привет(?:ствую)?|hi|hello|hey)(?:\s+(?:all|everyone|всем|друзья|коллеги))?\s*[!,.]+\s*",
    )
});
/// Lines about pay or contact make poor titles when a better line follows.
static WEAK_TITLE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)^(?:оплата|бюджет|budget|pay|rate|зп|цена|контакт|contact|писать|пишите|dm)\b")
});

/// Where a run of emoji stood between words: a possible sentence break.
const BREAK_MARK: char = '\u{1F}';

/// A line with markup, hashtags, links and decoration removed; emoji runs between words
/// become [`BREAK_MARK`].
fn clean_line(line: &str) -> String {
    let line = HTML_TAG.replace_all(line, "");
    let line = MD_LINK.replace_all(&line, "$1");
    let line = URL.replace_all(&line, "");
    let line = HASHTAG.replace_all(&line, "");
    let line = line.replace("**", "").replace("__", "").replace("~~", "");
    let mut kept = String::with_capacity(line.len());
    let mut in_decoration = false;
    for c in line.chars() {
        if is_decoration(c) || c == BREAK_MARK {
            if !in_decoration {
                kept.push(' ');
                kept.push(BREAK_MARK);
                kept.push(' ');
            }
            in_decoration = true;
            continue;
        }
        in_decoration = false;
        kept.push(if c == '`' { ' ' } else { c });
    }
    let joined = kept.split_whitespace().collect::<Vec<_>>().join(" ");
    let trimmed = joined.trim_matches(|c: char| {
        matches!(
            c,
            '-' | '–' | '—' | '•' | '·' | '>' | '|' | ':' | ',' | ';' | '.' | '=' | '+' | '/' | '*'
        ) || ('\u{2190}'..='\u{21FF}').contains(&c)
            || c == BREAK_MARK
            || c.is_whitespace()
    });
    let trimmed = GREETING.replace(trimmed, "");
    trimmed.into_owned()
}

/// The line without [`BREAK_MARK`]s.
fn unmarked(line: &str) -> String {
    line.split(BREAK_MARK)
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Emoji, pictographs, arrows, dingbats, joiners and variation selectors.
fn is_decoration(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}'
        | '\u{2022}'
        | '\u{203C}' | '\u{2049}'
        | '\u{20E3}'
        | '\u{2300}'..='\u{23FF}'
        | '\u{2460}'..='\u{24FF}'
        | '\u{25A0}'..='\u{27BF}'
        | '\u{2900}'..='\u{297F}'
        | '\u{2B00}'..='\u{2BFF}'
        | '\u{3030}' | '\u{303D}'
        | '\u{FE00}'..='\u{FE0F}'
        | '\u{1F000}'..='\u{1FAFF}'
        | '\u{E0020}'..='\u{E007F}')
}

pub(super) fn title_of(text: &str) -> Option<String> {
    let mut lead_in: Option<String> = None;
    let mut weak: Option<String> = None;
    for raw in text.lines().take(40) {
        if is_forward_header(raw) {
            continue;
        }
        let line = clean_line(raw);
        let plain = unmarked(&line);
        if plain.chars().filter(|c| c.is_alphabetic()).count() < 3 || ANNOUNCEMENT.is_match(&plain)
        {
            continue;
        }
        if LEAD_IN.is_match(&plain) {
            if lead_in.is_none() {
                lead_in = Some(plain);
            }
            continue;
        }
        if WEAK_TITLE.is_match(&plain) && lead_in.is_none() {
            weak.get_or_insert(line);
            continue;
        }
        let line = match lead_in.take() {
            Some(lead) => format!("{lead} {}", lowercase_first(&line)),
            None => line,
        };
        return Some(title_line(&line));
    }
    lead_in.or(weak).map(|l| title_line(&l))
}

/// `Дизайнера логотипа` after `Ищу` reads `Ищу дизайнера логотипа`; an acronym stays.
fn lowercase_first(s: &str) -> String {
    let mut chars = s.chars();
    match (chars.next(), chars.clone().next()) {
        (Some(first), Some(second)) if first.is_uppercase() && !second.is_uppercase() => {
            first.to_lowercase().chain(chars).collect()
        }
        _ => s.to_owned(),
    }
}

/// The first sentence when the line has more than one, in sentence case, at most
/// [`MAX_TITLE_CHARS`].
fn title_line(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut end = chars.len();
    let mut depth = 0i32;
    for i in 0..chars.len() {
        match chars[i] {
            '(' | '[' | '«' => depth += 1,
            ')' | ']' | '»' => depth -= 1,
            _ => {}
        }
        if i < 12 || depth > 0 {
            continue;
        }
        let next = chars.get(i + 1).copied();
        let after = chars.get(i + 2).copied();
        let starts_sentence =
            |c: Option<char>| c.is_some_and(|c| c.is_uppercase() || c.is_ascii_digit());
        let cut = match chars[i] {
            // Not after an abbreviation such as `м.` or `т.е.`.
            '.' => {
                let token: Vec<char> = chars[..i]
                    .iter()
                    .rev()
                    .take_while(|c| !c.is_whitespace())
                    .copied()
                    .collect();
                // A capital after a word of 3+ characters (`м. Белорусская` is not a break),
                // or any letter after a word of 4+ (`руб. в месяц` is not one either).
                next == Some(' ')
                    && !token.contains(&'.')
                    && ((starts_sentence(after)
                        && (token.len() >= 3 || token.iter().all(char::is_ascii_digit)))
                        || (after.is_some_and(char::is_alphabetic) && token.len() >= 4))
            }
            '!' | '?' => next == Some(' ') && after.is_some_and(|c| c.is_alphanumeric()),
            BREAK_MARK => next == Some(' ') && starts_sentence(after),
            _ => false,
        };
        if cut {
            end = if chars[i] == '!' || chars[i] == '?' {
                i + 1
            } else {
                i
            };
            break;
        }
    }
    let sentence = unmarked(&chars[..end].iter().collect::<String>());
    let sentence = sentence.trim_end_matches([':', ',', ';', '-', '—']);
    let sentence = if shouting(sentence) {
        let lower = sentence.to_lowercase();
        let mut out = String::with_capacity(lower.len());
        let mut first = true;
        for c in lower.chars() {
            if first && c.is_alphabetic() {
                out.extend(c.to_uppercase());
                first = false;
            } else {
                out.push(c);
            }
        }
        out
    } else {
        sentence.to_owned()
    };
    let mut title = short_phrase(&sentence, MAX_TITLE_CHARS);
    if let Some(first) = title.chars().next()
        && first.is_lowercase()
    {
        title = first.to_uppercase().chain(title.chars().skip(1)).collect();
    }
    title
}

/// Mostly capital letters (`ИЩУ ИЛЛЮСТРАТОРА`), not a short acronym.
fn shouting(s: &str) -> bool {
    let letters: Vec<char> = s.chars().filter(|c| c.is_alphabetic()).collect();
    letters.len() >= 8
        && letters.iter().filter(|c| c.is_uppercase()).count() * 10 >= letters.len() * 8
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::extract::extract_title;

    #[test]
    fn titles() {
        let t = |text: &str| extract_title(text);
        assert_eq!(
            t("#вакансия #дизайн\nИщу\nдизайнера логотипа для кофейни ☕️\nБюджет 8000₽").as_deref(),
            Some("Ищу дизайнера логотипа для кофейни")
        );
        assert_eq!(
            t("Требуется:\nSMM-специалист в салон красоты").as_deref(),
            Some("Требуется SMM-специалист в салон красоты")
        );
        assert_eq!(
            t("Forwarded from Remote IT Jobs\n**Senior React dev** wanted 🚀 Remote, $50/h")
                .as_deref(),
            Some("Senior React dev wanted")
        );
        assert_eq!(
            t("🟢 New job on Upwork\n<b>Localize SaaS app into German &amp; French</b>\n💵 Fixed price: $900")
                .as_deref(),
            Some("Localize SaaS app into German & French")
        );
        assert_eq!(
            t("📌 Новый заказ на Kwork\nМакрос в Excel для сводной по складам").as_deref(),
            Some("Макрос в Excel для сводной по складам")
        );
        assert_eq!(
            t("🔥🔥 ИЩУ ИЛЛЮСТРАТОРА 🔥🔥").as_deref(),
            Some("Ищу иллюстратора")
        );
        assert_eq!(
            t("Здравствуйте! Нужен бот для записи в барбершоп. Бюджет 30к").as_deref(),
            Some("Нужен бот для записи в барбершоп")
        );
        assert_eq!(
            t("Салон красоты (Москва, м. Белорусская) ищет SMM-специалиста").as_deref(),
            Some("Салон красоты (Москва, м. Белорусская) ищет SMM-специалиста")
        );
        assert_eq!(
            t("need a [landing page](https://x.io) built. budget $300").as_deref(),
            Some("Need a landing page built")
        );
        assert_eq!(t("#вакансия #remote"), None);
        assert_eq!(t("🔥🔥🔥"), None);
        let long = format!("Нужен {} разработчик", "очень ".repeat(60));
        let title = t(&long).unwrap();
        assert!(title.chars().count() <= MAX_TITLE_CHARS, "{title}");
        assert!(title.ends_with("очень…"), "{title}");
    }
}

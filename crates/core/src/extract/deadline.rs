//! Finding the deadline in a post's text: a labeled value (`Срок: 3 дня`, `Deadline:
//! Friday`) that speaks about time, else the first phrase such as `до пятницы`, `within 2
//! weeks`, `this week` or `срочно` that is not about starting, answering or paying. The
//! phrase is kept as written, shortened to [`MAX_DEADLINE_CHARS`].

use std::sync::LazyLock;

use regex::Regex;

use super::MAX_DEADLINE_CHARS;
use super::text::{regex, short_phrase};

/// `Срок: 3 дня`, `дедлайн 10 декабря`, `Deadline: Friday`, `сдача в течение 48ч`.
static DEADLINE_LABELED: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(?:\bсрок(?:и|а|ов)?(?:\s+(?:выполнения|сдачи|исполнения|работы|реализации))?|\bдедлайн|\bdeadline|\bdue(?:\s+date)?|\btimeline|\bturnaround|\bсдача)\b\s*(?:[:\-–—]\s*)?(?P<v>[^\n.;!?,]{1,80})",
    )
});
/// The value of a labeled deadline must say something about time.
static TIME_HINT: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\d|сегодня|завтра|недел|месяц|\bдн[яеи]|день|сут|\bчас|понедельник|вторник|\bсред[уыа]\b|четверг|пятниц|суббот|воскресень|январ|феврал|\bмарт|апрел|\bма[йя]\b|\bиюн|\bиюл|август|сентябр|октябр|ноябр|декабр|\bконц|срочн|горит|горят|asap|urgent|today|tomorrow|tonight|week|month|\bdays?\b|hour|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|\bmay\b|june|july|august|september|october|november|december|end of|\beod\b|\beow\b",
    )
});
/// A labeled value that denies a deadline: `сроки не горят`, `deadline flexible`.
static NO_DEADLINE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^(?:не\b|нет\b|no\b|not\b|none|flexible|гибк|обсужда|любы|открыт|tbd|negotiable|свобод|на ваше|by agreement|по договор)",
    )
});
const MONTHS_RU: &str =
    r"(?:январ|феврал|март|апрел|ма[яй]|июн|июл|август|сентябр|октябр|ноябр|декабр)\w*";
const MONTHS_EN: &str = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?";
const WEEKDAYS: &str = r"(?:понедельник\w*|вторник\w*|сред[уыа]|четверг\w*|пятниц\w*|суббот\w*|воскресень\w*|monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|wed|thu|fri)";
/// `до пятницы`, `к 10 декабря`, `by Friday`, `до конца недели`, `до 15.12`.
static DEADLINE_BY: LazyLock<Regex> = LazyLock::new(|| {
    regex(&format!(
        r"(?i)\b(?:до|к|by|until|till|before|не позднее|no later than)\s+(?:(?:конц\w*|end\s+of(?:\s+the)?)\s+\w+|(?:this|next|этой|следующей|следующего|ближайш\w*)?\s*{WEEKDAYS}\b|завтра\w*|послезавтра|вечера|утра|утру|обеда|выходных|tomorrow|tonight|eod|eow|\d{{1,2}}(?:-?го)?\s+{MONTHS_RU}|\d{{1,2}}\.\d{{2}}(?:\.\d{{2,4}})?|{MONTHS_EN}\s+\d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTHS_EN}|\d{{1,2}}(?:-?го)?\s+числа)"
    ))
});
/// `within 2 weeks`, `в течение 48ч`, `за 3 дня`, `in 10 days`.
static DEADLINE_WITHIN: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(?:(?:(?:within|в течение|в течении)\s+(?:\d+(?:[.,]\d+)?(?:\s*[-–]\s*\d+)?\s*|одн\w+\s+|пар[ыу]\s+|an?\s+|one\s+|two\s+|a couple of\s+)?|(?:in|не более|не дольше|no more than)\s+(?:\d+(?:[.,]\d+)?(?:\s*[-–]\s*\d+)?\s*|одн\w+\s+|пар[ыу]\s+|a couple of\s+|one\s+|two\s+))(?:час(?:а|ов)?|ч|h|hrs?|hours?|дн(?:я|ей)|день|сут(?:ки|ок)|недел[иьюя]|weeks?|days?|месяц(?:а|ев)?|months?)|за\s+(?:\d+(?:\s*[-–]\s*\d+)?\s*|одн\w+\s+|пар[ыу]\s+)(?:дн(?:я|ей)|день|сут(?:ки|ок)|недел[иьюя]))\b",
    )
});
/// `this week`, `на этой неделе`.
static DEADLINE_THIS: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(?:this week(?:end)?|на этой неделе|на этих выходных|в течение дня|end of (?:the )?(?:day|week))\b",
    )
});
/// Time phrases about something other than the delivery: starting, answering, paying.
static NOT_DUE_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(?:start|begin|onboard|reply|respond|answer|get back|hear back|paid|pay|начать|начало|приступ|старт|ответ|отвеча|свяж|связыв|оплат|выплат|напомина|reminder)\W*(?:\w+\W+){0,3}$",
    )
});
/// A labeled timeline that is about starting, not finishing (`Timeline: start within 2 weeks`).
static NOT_DUE_VALUE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)\b(?:start|begin|начать|начало|приступ|старт)"));
/// `срочно`, `ASAP`, `нужно сегодня`.
static DEADLINE_URGENT: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(?:срочн\w*|asap|urgent\w*|as soon as possible|сегодня|today|tonight|горит|на завтра)\b",
    )
});

pub(super) fn deadline_of(text: &str) -> Option<String> {
    for m in DEADLINE_LABELED.captures_iter(text) {
        let Some(v) = m.name("v") else { continue };
        let value = v
            .as_str()
            .trim()
            .trim_matches(|c: char| matches!(c, '(' | ')' | '[' | ']' | '"' | '«' | '»'))
            .trim();
        if value.is_empty()
            || NO_DEADLINE.is_match(value)
            || !TIME_HINT.is_match(value)
            || NOT_DUE_VALUE.is_match(value)
        {
            continue;
        }
        return Some(short_phrase(value, MAX_DEADLINE_CHARS));
    }
    for pattern in [
        &DEADLINE_BY,
        &DEADLINE_WITHIN,
        &DEADLINE_THIS,
        &DEADLINE_URGENT,
    ] {
        for m in pattern.find_iter(text) {
            // `до 15.12` must not be the start of `до 15.123`.
            if text[m.end()..].starts_with(|c: char| c.is_ascii_digit()) {
                continue;
            }
            // `start within 2 weeks`, `ответим в течение недели`: not when the work is due.
            let before: String = {
                let rev: Vec<char> = text[..m.start()].chars().rev().take(30).collect();
                rev.into_iter().rev().collect()
            };
            if NOT_DUE_BEFORE.is_match(&before) {
                continue;
            }
            return Some(short_phrase(m.as_str().trim(), MAX_DEADLINE_CHARS));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::extract::extract_deadline;

    #[test]
    fn deadlines() {
        let d = |t: &str| extract_deadline(t);
        assert_eq!(d("Срок: 3 дня, бюджет 5к").as_deref(), Some("3 дня"));
        assert_eq!(d("Сроки — неделя").as_deref(), Some("неделя"));
        assert_eq!(d("Нужно до пятницы, пишите").as_deref(), Some("до пятницы"));
        assert_eq!(d("дедлайн 10 декабря").as_deref(), Some("10 декабря"));
        assert_eq!(d("Сдать к 15.12, оплата сразу").as_deref(), Some("к 15.12"));
        assert_eq!(d("Нужно сегодня!").as_deref(), Some("сегодня"));
        assert_eq!(d("СРОЧНО нужен дизайнер").as_deref(), Some("СРОЧНО"));
        assert_eq!(d("Deadline: Friday").as_deref(), Some("Friday"));
        assert_eq!(
            d("Need it done within 2 weeks.").as_deref(),
            Some("within 2 weeks")
        );
        assert_eq!(
            d("script ready, need it within 48h").as_deref(),
            Some("within 48h")
        );
        assert_eq!(d("need it this week").as_deref(), Some("this week"));
        assert_eq!(d("site is down, need a fix asap").as_deref(), Some("asap"));
        assert_eq!(
            d("Срок — до конца недели").as_deref(),
            Some("до конца недели")
        );
        // Not deadlines.
        for text in [
            "Бюджет 8000₽, сроки не горят",
            "Бюджет до 50 тыс.",
            "Deadline: flexible",
            "напоминание клиенту за 2 часа",
            "Timeline: ideally start within 2 weeks",
            "We reply to everyone within 5 working days",
            "Ответим всем в течение недели",
            "Оплата 2 раза в месяц",
        ] {
            assert_eq!(d(text), None, "{text}");
        }
        let long = format!("Срок: до 15 декабря {}", "очень ".repeat(30));
        assert!(d(&long).unwrap().chars().count() <= MAX_DEADLINE_CHARS);
    }
}

//! Finding the budget in a post's text (see the parent module's docs for what counts as a
//! budget): every amount or range is read with its multiplier and currency (by the shared
//! money tokenizer, [`crate::amount`]), amounts that are not pay (ad spend, audience sizes,
//! rates per word) are dropped, the rest are scored by currency and pay words, and the best
//! one becomes the [`Budget`] with its [`BudgetBasis`].

use std::sync::LazyLock;

use regex::Regex;

use super::money::{Budget, BudgetBasis};
use super::text::{lower, mostly_cyrillic, regex};
use crate::amount::{Reading, is_letter, letters_end, starts_with};

/// One side of an amount: the number, its multiplier and a currency written after it.
#[derive(Debug, Clone, Copy)]
struct Side {
    value: f64,
    mult: Option<f64>,
    currency: Option<&'static str>,
    end: usize,
}

/// An amount or range found in the text, before deciding whether it is a budget.
#[derive(Debug, Clone)]
struct Candidate {
    start: usize,
    end: usize,
    min: f64,
    max: Option<f64>,
    currency: Option<&'static str>,
    has_mult: bool,
}

/// Words that may follow a bare amount that is still money (`Бюджет 5000 за всё`).
const AFTER_BARE_OK: &[&str] = &[
    "за",
    "в",
    "на",
    "и",
    "или",
    "per",
    "for",
    "fixed",
    "total",
    "all",
    "each",
    "or",
    "and",
    "a",
    "an",
    "net",
    "gross",
    "+",
    "до",
    "to",
    "фикс",
    "всего",
    "нетто",
];

static PAY_WORD: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(?:бюджет|оплат|оплач|плачу|платим|заплат|\bзп\b|з/п|зарплат|оклад|гонорар|стоимост|\bцена|ценник|ставк|вознагражд|ориентир|\bдоход|\bpay|budget|\brate\b|salary|\bprice|compensation|\bfee\b|\bфикс\b|💰|💵|💸)[^\d\n]{0,24}$",
    )
});
static NOT_PAY_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(?:оборот|выручк|revenue|turnover|ad spend|ads? budget|рекламн\w* бюджет|бюджет\w* на рекламу|на рекламу|инвестиц|raised|тестов\w*|test task|paid test|средний чек|average (?:order|check))",
    )
});
static NOT_PAY_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^\s*(?:(?:/|per\b|an?\b|в\b|за\b)\s*(?:month|mo|мес\w*|hour|hr|h|час|week|нед\w*)\b\.?)?\W{0,3}(?:ad spend|spend|на рекламу|рекламн|оборот|выручк|revenue|turnover|подписчик|followers|subs\b|subscribers|просмотр|views|mrr|arr\b|gmv|слов|words?\b|знак|символ|chars?\b|users|пользовател|участник|members)",
    )
});
static PER_VOLUME_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^\s*(?:/|за\b|per\b|an?\b|за каждые|for every|for each)\s*(?:\d[\d ]*|тыс\.?|k\b|к\b)?\s*(?:зн|знак|символ|сим\b|слов|word|char|мин|min|стр\b|страниц|page|лист|строк|line)",
    )
});
static WEEKLY_AFTER: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)^\s*(?:/|per\b|в\b|за\b|an?\b)\s*(?:нед|week|wk\b)|^\s*weekly"));
static HOURLY_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^\s*(?:(?:/|per\b|в\b|за\b|an?\b|p/)\s*(?:1\s*)?(?:час|ч\b|h\b|hrs?\b|hour)|hourly|ph\b)",
    )
});
static MONTHLY_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)^\s*(?:(?:/|per\b|в\b|за\b|an?\b)\s*(?:мес|month|mo\b|mth)|monthly|ежемесячно)")
});
static HOURLY_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)(?:почасов|hourly|в час\b|per hour|ставка за час)[^\d\n.,;]{0,15}$")
});
static MONTHLY_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(?:\bзп\b|з/п|зарплат|оклад|salary|monthly|ежемесячн|в месяц|per month)[^\d\n.,;]{0,15}$",
    )
});

fn skip_spaces(lc: &[char], mut at: usize, max: usize) -> usize {
    let mut n = 0;
    while n < max && lc.get(at) == Some(&' ') {
        at += 1;
        n += 1;
    }
    at
}

/// One side of an amount starting at the digit `lc[at]`. A number glued to letters that
/// are neither a multiplier nor a currency (`20h`, `3d`, `9am`) is not an amount.
fn side(lc: &[char], at: usize) -> Option<Side> {
    let amount = Reading::BUDGET.amount_at(lc, at)?;
    if amount.multiplier.is_none() && amount.currency.is_none() && amount.glued_word_end.is_some() {
        return None;
    }
    // The head and the decimals are parsed apart and added, as the extractor always has
    // (a few amounts differ from the decimal parse in the last bit).
    let mut value: f64 = amount.numeral.int.parse().ok()?;
    if !amount.numeral.frac.is_empty() {
        value += format!("0.{}", amount.numeral.frac).parse::<f64>().ok()?;
    }
    Some(Side {
        value,
        mult: amount.multiplier.map(|m| m as f64),
        currency: amount.currency,
        end: amount.end,
    })
}

/// The amount or range starting at the digit `lc[at]`.
fn candidate(lc: &[char], at: usize) -> Option<Candidate> {
    let a = side(lc, at)?;
    let before = Reading::BUDGET.currency_before(lc, at);
    let mut cand = Candidate {
        start: before.map_or(at, |(_, s)| s),
        end: a.end,
        min: a.value * a.mult.unwrap_or(1.0),
        max: None,
        currency: a.currency.or(before.map(|(c, _)| c)),
        has_mult: a.mult.is_some(),
    };
    // A range: `X-Y`, `X – Y`, `X до Y`, `X to Y`, with the currency on either end.
    let mut p = skip_spaces(lc, a.end, 2);
    let dash = matches!(lc.get(p), Some('-' | '–' | '—' | '−'));
    let word = ["до ", "to "].iter().find(|w| starts_with(lc, p, w));
    if dash {
        p += 1;
    } else if let Some(w) = word {
        p += w.chars().count();
    } else {
        return Some(cand);
    }
    p = skip_spaces(lc, p, 2);
    let mut b_currency = None;
    if let Some((code, end)) = Reading::BUDGET.sign_at(lc, p) {
        b_currency = Some(code);
        p = skip_spaces(lc, end, 1);
    }
    if !lc.get(p).is_some_and(|c| c.is_ascii_digit()) {
        return Some(cand);
    }
    let Some(b) = side(lc, p) else {
        return Some(cand);
    };
    let mut low = a.value * a.mult.unwrap_or(1.0);
    let mut high = b.value * b.mult.unwrap_or(1.0);
    if a.mult.is_none() && b.mult.is_some() && a.value < b.value {
        low = a.value * b.mult.unwrap_or(1.0);
    }
    if dash && b.mult.is_none() && a.mult.is_some() && b.value > a.value {
        high = b.value * a.mult.unwrap_or(1.0);
    }
    if high <= low {
        return Some(cand);
    }
    cand.min = low;
    cand.max = Some(high);
    cand.end = b.end;
    cand.currency = cand.currency.or(b.currency).or(b_currency);
    cand.has_mult |= b.mult.is_some();
    Some(cand)
}

/// `lc[from..to]` as a string.
fn slice(lc: &[char], from: usize, to: usize) -> String {
    lc[from.min(lc.len())..to.min(lc.len())].iter().collect()
}

/// The same line's text before `at`, at most `max` characters.
fn line_before(lc: &[char], at: usize, max: usize) -> String {
    let mut from = at;
    while from > 0 && at - from < max && lc[from - 1] != '\n' {
        from -= 1;
    }
    slice(lc, from, at)
}

/// The same line's text after `at`, at most `max` characters.
fn line_after(lc: &[char], at: usize, max: usize) -> String {
    let mut to = at;
    while to < lc.len() && to - at < max && lc[to] != '\n' {
        to += 1;
    }
    slice(lc, at, to)
}

/// Whether what follows a bare amount (no currency) still allows it to be money: the end,
/// punctuation or a slash, or one of [`AFTER_BARE_OK`] — not a noun (`3 концепта`, `180к
/// подписчиков`) and not a percentage or a time.
fn bare_amount_ends_well(lc: &[char], end: usize) -> bool {
    let p = skip_spaces(lc, end, 3);
    match lc.get(p) {
        None => true,
        Some('%' | ':' | '°' | '×' | 'x') => false,
        Some('-') if is_letter(lc.get(p + 1)) => false,
        Some(c) if c.is_ascii_digit() => false,
        Some(c) if c.is_alphabetic() => {
            let word = slice(lc, p, letters_end(lc, p));
            AFTER_BARE_OK.contains(&word.as_str())
        }
        Some(_) => true,
    }
}

pub(super) fn budget_of(text: &str) -> Option<Budget> {
    let chars: Vec<char> = text.chars().collect();
    let lc: Vec<char> = chars.iter().map(|&c| lower(c)).collect();
    let cyrillic = mostly_cyrillic(&chars);

    // (score, candidate, basis, context before)
    let mut found: Vec<(u8, Candidate, BudgetBasis, String)> = Vec::new();
    let mut i = 0;
    while i < lc.len() {
        if !lc[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let glued = i > 0
            && (lc[i - 1].is_alphanumeric()
                || matches!(lc[i - 1], '_' | '+' | '#' | '№' | '/' | '.' | ','));
        let cand = if glued { None } else { candidate(&lc, i) };
        let Some(cand) = cand else {
            while i < lc.len() && lc[i].is_ascii_digit() {
                i += 1;
            }
            continue;
        };
        i = cand.end.max(i + 1);
        if let Some(scored) = judge(&lc, cyrillic, cand) {
            found.push(scored);
        }
    }

    let best = found
        .iter()
        .enumerate()
        .max_by(|(ia, a), (ib, b)| a.0.cmp(&b.0).then(ib.cmp(ia)))
        .map(|(i, _)| i)?;
    let (_, cand, basis, before) = &found[best];
    let currency = cand
        .currency
        .unwrap_or(if cyrillic { "RUB" } else { "USD" });
    let mut budget = Budget {
        min: cand.min,
        max: cand.max,
        currency: currency.to_owned(),
        basis: *basis,
    };
    // Exchanges' "desired budget: up to X / acceptable: up to Y" is the range X–Y.
    if budget.max.is_none() && (before.contains("желаем") || before.contains("desired")) {
        let upper = found[best + 1..].iter().find(|(_, c, b, ctx)| {
            (ctx.contains("допустим") || ctx.contains("max"))
                && c.currency.unwrap_or(currency) == currency
                && *b == budget.basis
                && c.max.is_none()
                && c.min > budget.min
        });
        if let Some((_, upper, _, _)) = upper {
            budget.max = Some(upper.min);
        }
    }
    Some(budget)
}

/// Decides whether a candidate amount is a budget and how strongly: 2 points for a
/// currency, 3 for a pay word before it on its line, 1 for a bare `30к` in Russian text.
fn judge(
    lc: &[char],
    cyrillic: bool,
    cand: Candidate,
) -> Option<(u8, Candidate, BudgetBasis, String)> {
    if !(cand.min.is_finite() && cand.min > 0.0 && cand.min < 1e12) {
        return None;
    }
    let before = line_before(lc, cand.start, 40);
    // The clause right before the amount: `ad spend. $2,000` is not about ad spend.
    let near_before = {
        let near = line_before(lc, cand.start, 30);
        match near.rfind(['.', '!', '?', ';']) {
            Some(at) => near[at + 1..].to_owned(),
            None => near,
        }
    };
    let after = line_after(lc, cand.end, 30);
    if NOT_PAY_AFTER.is_match(&after)
        || NOT_PAY_BEFORE.is_match(&near_before)
        || PER_VOLUME_AFTER.is_match(&after)
        || WEEKLY_AFTER.is_match(&after)
    {
        return None;
    }
    let pay_word = PAY_WORD.is_match(&before);
    let mut score = 0;
    if cand.currency.is_some() {
        score += 2;
    }
    if pay_word {
        score += 3;
    }
    // `Бюджет 5к пишите в лс` is money; `Оплата 2 раза в месяц` and `180к подписчиков` are not.
    if cand.currency.is_none() {
        if !(bare_amount_ends_well(lc, cand.end) || (pay_word && cand.has_mult)) {
            return None;
        }
        if !pay_word {
            if !(cyrillic && cand.has_mult) {
                return None;
            }
            score += 1;
        }
    }
    let basis = if HOURLY_AFTER.is_match(&after) {
        BudgetBasis::Hourly
    } else if MONTHLY_AFTER.is_match(&after) {
        BudgetBasis::Monthly
    } else if HOURLY_BEFORE.is_match(&before) {
        BudgetBasis::Hourly
    } else if MONTHLY_BEFORE.is_match(&before) {
        BudgetBasis::Monthly
    } else {
        BudgetBasis::Fixed
    };
    Some((score, cand, basis, before))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::tests::b;
    use crate::extract::{budget_matches, extract_budget};
    use BudgetBasis::{Fixed, Hourly, Monthly};

    #[track_caller]
    fn budget_is(text: &str, expected: Option<Budget>) {
        let got = extract_budget(text);
        match (&expected, &got) {
            (None, None) => {}
            (Some(e), Some(g)) if budget_matches(e, g) => {}
            _ => panic!("{text:?}: expected {expected:?}, got {got:?}"),
        }
    }
    #[test]
    fn russian_budgets() {
        budget_is("Бюджет: 15 000 ₽", b(15_000.0, None, "RUB", Fixed));
        budget_is(
            "Бюджет: 15\u{a0}000\u{a0}₽, срок неделя",
            b(15_000.0, None, "RUB", Fixed),
        );
        budget_is(
            "Оплата от 30к руб за проект",
            b(30_000.0, None, "RUB", Fixed),
        );
        budget_is("Бюджет до 50 тыс.", b(50_000.0, None, "RUB", Fixed));
        budget_is("заплачу до 50 тыс. рублей", b(50_000.0, None, "RUB", Fixed));
        budget_is(
            "Бюджет от 20 до 35 тыс. руб.",
            b(20_000.0, Some(35_000.0), "RUB", Fixed),
        );
        budget_is(
            "Бюджет 30-40 тыс, зависит от сроков",
            b(30_000.0, Some(40_000.0), "RUB", Fixed),
        );
        budget_is(
            "Бюджет 15 000–20 000 ₽",
            b(15_000.0, Some(20_000.0), "RUB", Fixed),
        );
        budget_is(
            "зп 80к/мес, офис в центре",
            b(80_000.0, None, "RUB", Monthly),
        );
        budget_is(
            "Оплата 25 000₽/мес на старте",
            b(25_000.0, None, "RUB", Monthly),
        );
        budget_is(
            "Оклад 60 000 рублей + премии",
            b(60_000.0, None, "RUB", Monthly),
        );
        budget_is("Ставка 600₽/час", b(600.0, None, "RUB", Hourly));
        budget_is(
            "1200–1800 ₽ в час по итогам тестового",
            b(1200.0, Some(1800.0), "RUB", Hourly),
        );
        budget_is("Оплата 3000 грн за лендинг", b(3000.0, None, "UAH", Fixed));
        budget_is("Бюджет 50 000 тг", b(50_000.0, None, "KZT", Fixed));
        budget_is(
            "Заплачу 500 звёзд за стикерпак",
            b(500.0, None, "XTR", Fixed),
        );
        budget_is("Оплата 100 USDT, крипта", b(100.0, None, "USDT", Fixed));
        budget_is("Нужен логотип, 3к", b(3000.0, None, "RUB", Fixed));
        budget_is(
            "кто сделает парсер отзывов? 5к",
            b(5000.0, None, "RUB", Fixed),
        );
        budget_is(
            "Оплата 700₽ за ролик, на постоянку",
            b(700.0, None, "RUB", Fixed),
        );
        budget_is(
            "Текст на главную, 2500р. срочно",
            b(2500.0, None, "RUB", Fixed),
        );
        budget_is("Оплата 1,5к за баннер", b(1500.0, None, "RUB", Fixed));
    }

    #[test]
    fn english_budgets() {
        budget_is("Budget: $500", b(500.0, None, "USD", Fixed));
        budget_is(
            "budget 500$ for the whole thing",
            b(500.0, None, "USD", Fixed),
        );
        budget_is("Paying 500 usd", b(500.0, None, "USD", Fixed));
        budget_is("Rate: 20-30$/час", b(20.0, Some(30.0), "USD", Hourly));
        budget_is("$25/hr, 20h/week", b(25.0, None, "USD", Hourly));
        budget_is(
            "$35-50/h depending on experience",
            b(35.0, Some(50.0), "USD", Hourly),
        );
        budget_is("Pay: $6-8 per hour", b(6.0, Some(8.0), "USD", Hourly));
        budget_is("€1,200 for the full set", b(1200.0, None, "EUR", Fixed));
        budget_is("Budget $3-4k total", b(3000.0, Some(4000.0), "USD", Fixed));
        budget_is(
            "$2,000/mo retainer + bonus",
            b(2000.0, None, "USD", Monthly),
        );
        budget_is(
            "Monthly retainer $700, 3-month trial",
            b(700.0, None, "USD", Monthly),
        );
        budget_is("salary $3000 per month", b(3000.0, None, "USD", Monthly));
        budget_is(
            "budget <$100, need it this week",
            b(100.0, None, "USD", Fixed),
        );
        budget_is(
            "💵 Hourly: $20.00-$35.00",
            b(20.0, Some(35.0), "USD", Hourly),
        );
        budget_is("$25 each, 3 per week", b(25.0, None, "USD", Fixed));
    }

    #[test]
    fn amounts_that_are_not_budgets() {
        for text in [
            "оплата договорная",
            "Бюджет обсуждается, 3 экрана",
            "Оплата 2 раза в месяц",
            "Фитнес-блогер, 180к подписчиков, ищу монтажёра",
            "Нужно 3 тг-бота и 2 лендинга",
            "Proofreader for a 60k-word manuscript",
            "8 статей по 5-7к знаков",
            "Rate: $0.05/word, natives only",
            "Оплата 120₽ за 1000 зн. б/п",
            "Оплата 1500₽/10 мин готового звука",
            "~$20k/month ad spend, ROAS 1.6",
            "Рекламный бюджет 100к/мес",
            "Part-time, 20h/week, 9am-1pm EST",
            "Связь: +7 912 345-67-89",
            "iOS 17, Next.js 13+, 2 года опыта",
            "Тестовое оплачиваем 3000 ₽",
            "",
        ] {
            budget_is(text, None);
        }
        // The pay for the job, not the ad spend or the test task, is the budget.
        budget_is(
            "Бюджет на рекламу 60к/мес, з/п специалиста 20к + бонус",
            b(20_000.0, None, "RUB", Monthly),
        );
        budget_is(
            "Тестовое оплачиваем 2 000 ₽.\nУсловия: фикс 45 000 ₽/мес",
            b(45_000.0, None, "RUB", Monthly),
        );
        budget_is(
            "~$20k/month ad spend. $2,000/mo retainer",
            b(2000.0, None, "USD", Monthly),
        );
    }

    #[test]
    fn exchange_desired_and_acceptable_budgets_make_a_range() {
        budget_is(
            "Макрос в Excel\n💰 Желаемый бюджет: до 3 000 ₽\nДопустимый: до 9 000 ₽\n👀 Предложений: 11",
            b(3000.0, Some(9000.0), "RUB", Fixed),
        );
    }
}

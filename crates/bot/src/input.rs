//! Parsing and validating what subscribers type: keyword lists, quiet hours, a minimum
//! budget. Pure functions; the errors are rendered for the user by [`crate::texts`].

use std::str::FromStr;

use chrono::NaiveTime;
use chrono_tz::Tz;
use jobwire_core::extract::BudgetBasis;
use jobwire_core::quiet::QuietHours;
use jobwire_core::rules::Term;
use jobwire_core::subscriber::MinBudget;
use jobwire_store::QuietHoursSpec;

/// Why an input was refused. Each variant is explained to the user with an example.
#[derive(Debug, Clone, PartialEq)]
pub enum InputError {
    /// Nothing usable was typed.
    Empty,
    /// More keywords than allowed.
    TooManyKeywords { given: usize, max: usize },
    /// A keyword longer than allowed.
    KeywordTooLong { keyword: String, max: usize },
    /// A keyword the matcher cannot use (e.g. `#foo bar`).
    BadKeyword { keyword: String },
    /// Not `HH:MM-HH:MM Zone`.
    QuietFormat,
    /// A time that is not a time of day.
    QuietTime(String),
    /// An unknown time zone.
    QuietZone(String),
    /// No time zone given and none known from before.
    QuietNoZone,
    /// Start and end are the same time: the window would be empty.
    QuietEmpty,
    /// Not an amount with an optional currency and basis.
    BudgetFormat,
    /// A currency jobwire does not know.
    BudgetCurrency(String),
    /// Zero, negative or absurdly large.
    BudgetAmount,
}

/// Whether the text asks to clear a setting: `0`, `-`, `нет`, `off`, …
pub fn is_clear(text: &str) -> bool {
    let t = text.trim().to_lowercase();
    let t = t.trim_end_matches(['.', '!']);
    matches!(
        t,
        "0" | "-"
            | "—"
            | "нет"
            | "не надо"
            | "выкл"
            | "выключить"
            | "сброс"
            | "сбросить"
            | "очистить"
            | "убрать"
            | "удалить"
            | "no"
            | "none"
            | "off"
            | "clear"
            | "reset"
            | "remove"
    )
}

/// Parses a comma-separated keyword list (commas, semicolons or new lines). `Ok(None)`
/// clears the list. Keywords equal after normalization are kept once (the first spelling).
pub fn parse_keywords(
    text: &str,
    max: usize,
    max_chars: usize,
) -> Result<Option<Vec<String>>, InputError> {
    if is_clear(text) {
        return Ok(None);
    }
    let mut out: Vec<String> = Vec::new();
    let mut terms: Vec<Term> = Vec::new();
    for raw in text.split([',', ';', '\n']) {
        let word = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        if word.is_empty() {
            continue;
        }
        if word.chars().count() > max_chars {
            return Err(InputError::KeywordTooLong {
                keyword: word,
                max: max_chars,
            });
        }
        let term = Term::parse(&word).map_err(|_| InputError::BadKeyword {
            keyword: word.clone(),
        })?;
        if terms.contains(&term) {
            continue;
        }
        terms.push(term);
        out.push(word);
    }
    if out.is_empty() {
        return Err(InputError::Empty);
    }
    if out.len() > max {
        return Err(InputError::TooManyKeywords {
            given: out.len(),
            max,
        });
    }
    Ok(Some(out))
}

/// Zone names people type instead of IANA names.
const ZONE_ALIASES: &[(&str, &str)] = &[
    ("msk", "Europe/Moscow"),
    ("мск", "Europe/Moscow"),
    ("moscow", "Europe/Moscow"),
    ("москва", "Europe/Moscow"),
    ("kyiv", "Europe/Kyiv"),
    ("kiev", "Europe/Kyiv"),
    ("киев", "Europe/Kyiv"),
    ("київ", "Europe/Kyiv"),
    ("minsk", "Europe/Minsk"),
    ("минск", "Europe/Minsk"),
    ("almaty", "Asia/Almaty"),
    ("алматы", "Asia/Almaty"),
    ("tashkent", "Asia/Tashkent"),
    ("ташкент", "Asia/Tashkent"),
    ("gmt", "UTC"),
    ("utc", "UTC"),
];

/// An IANA zone name in its canonical spelling, matched case-insensitively, or an alias.
pub fn resolve_zone(raw: &str) -> Option<Tz> {
    let raw = raw.trim();
    if let Ok(tz) = Tz::from_str(raw) {
        return Some(tz);
    }
    let lower = raw.to_lowercase();
    if let Some((_, name)) = ZONE_ALIASES.iter().find(|(a, _)| *a == lower) {
        return Tz::from_str(name).ok();
    }
    chrono_tz::TZ_VARIANTS
        .iter()
        .find(|tz| tz.name().eq_ignore_ascii_case(raw))
        .copied()
}

/// `H`, `HH`, `H:MM`, `HH:MM` or `HH.MM` → `HH:MM`.
fn parse_time(raw: &str) -> Result<NaiveTime, InputError> {
    let bad = || InputError::QuietTime(raw.to_owned());
    let (h, m) = match raw.split_once([':', '.']) {
        Some((h, m)) => (h, m),
        None => (raw, "0"),
    };
    if h.is_empty() || m.is_empty() || h.len() > 2 || m.len() > 2 {
        return Err(bad());
    }
    let h: u32 = h.parse().map_err(|_| bad())?;
    let m: u32 = m.parse().map_err(|_| bad())?;
    // 24:00 means midnight.
    let h = if h == 24 && m == 0 { 0 } else { h };
    NaiveTime::from_hms_opt(h, m, 0).ok_or_else(bad)
}

/// Parses `23:00-08:00 Europe/Moscow` (en or em dashes, `23-8`, spaces around the dash and
/// `MSK`-style aliases allowed). Without a zone, `previous_zone` (the one set before) is
/// used. `Ok(None)` switches quiet hours off.
pub fn parse_quiet_hours(
    text: &str,
    previous_zone: Option<&str>,
) -> Result<Option<QuietHoursSpec>, InputError> {
    if is_clear(text) {
        return Ok(None);
    }
    let mut zone: Option<&str> = None;
    let mut range = String::new();
    for token in text.split_whitespace() {
        if token.chars().any(char::is_alphabetic) {
            if zone.is_some() {
                return Err(InputError::QuietFormat);
            }
            zone = Some(token);
        } else {
            range.push_str(token);
        }
    }
    if range.is_empty() {
        return Err(InputError::QuietFormat);
    }
    let range = range.replace(['–', '—'], "-");
    let (start, end) = range.split_once('-').ok_or(InputError::QuietFormat)?;
    if end.contains('-') {
        return Err(InputError::QuietFormat);
    }
    let start = parse_time(start)?;
    let end = parse_time(end)?;
    if start == end {
        return Err(InputError::QuietEmpty);
    }
    let tz = match zone {
        Some(z) => resolve_zone(z).ok_or_else(|| InputError::QuietZone(z.to_owned()))?,
        None => previous_zone
            .and_then(resolve_zone)
            .ok_or(InputError::QuietNoZone)?,
    };
    let spec = QuietHoursSpec {
        start: start.format("%H:%M").to_string(),
        end: end.format("%H:%M").to_string(),
        time_zone: tz.name().to_owned(),
    };
    // The same check fan-out applies when it reads the setting back.
    QuietHours::parse(&format!("{}-{}", spec.start, spec.end), &spec.time_zone)
        .map_err(|_| InputError::QuietFormat)?;
    Ok(Some(spec))
}

/// Currency words and signs, longest first within a family so `usdt` wins over `usd`.
const CURRENCIES: &[(&str, &str)] = &[
    ("usdt", "USDT"),
    ("usd", "USD"),
    ("$", "USD"),
    ("долларов", "USD"),
    ("доллара", "USD"),
    ("доллар", "USD"),
    ("долл", "USD"),
    ("dollars", "USD"),
    ("dollar", "USD"),
    ("eur", "EUR"),
    ("€", "EUR"),
    ("евро", "EUR"),
    ("rub", "RUB"),
    ("rur", "RUB"),
    ("₽", "RUB"),
    ("рублей", "RUB"),
    ("рубля", "RUB"),
    ("рубль", "RUB"),
    ("руб", "RUB"),
    ("р", "RUB"),
    ("uah", "UAH"),
    ("₴", "UAH"),
    ("грн", "UAH"),
    ("гривен", "UAH"),
    ("kzt", "KZT"),
    ("₸", "KZT"),
    ("тенге", "KZT"),
    ("тг", "KZT"),
    ("gbp", "GBP"),
    ("£", "GBP"),
];

/// Per-hour and per-month markers; everything else is per job.
const HOURLY: &[&str] = &[
    "/h",
    "/hr",
    "/hour",
    "/ч",
    "/час",
    "в час",
    "per hour",
    "an hour",
    "hourly",
    "/hourly",
    "час",
];
const MONTHLY: &[&str] = &[
    "/mo",
    "/month",
    "/мес",
    "/месяц",
    "в месяц",
    "per month",
    "a month",
    "monthly",
    "месяц",
    "мес",
];

/// The largest amount accepted (anything above is a typo).
const MAX_AMOUNT: f64 = 1e9;

/// Parses `5000 RUB`, `5 000 ₽`, `300 usd`, `$300`, `50 $/h`, `50 usd в час`,
/// `150k руб/мес`, `от 5000`. Without a currency, `default_currency` is assumed.
/// `Ok(None)` clears the minimum. Jobs without a stated budget still pass the floor.
pub fn parse_min_budget(
    text: &str,
    default_currency: &'static str,
) -> Result<Option<MinBudget>, InputError> {
    if is_clear(text) {
        return Ok(None);
    }
    let mut t = text.trim().to_lowercase();
    for prefix in ["от ", "from ", "min ", "мин ", "минимум ", "≥", ">="] {
        if let Some(rest) = t.strip_prefix(prefix) {
            t = rest.trim().to_owned();
        }
    }
    let mut basis = BudgetBasis::Fixed;
    'basis: for (markers, b) in [
        (HOURLY, BudgetBasis::Hourly),
        (MONTHLY, BudgetBasis::Monthly),
    ] {
        for m in markers {
            if let Some(rest) = t.strip_suffix(m) {
                t = rest.trim_end().trim_end_matches(['/', ' ']).to_owned();
                basis = b;
                break 'basis;
            }
        }
    }
    // The amount: digits with spaces or thin spaces between groups, a decimal separator,
    // and a `k`/`к` multiplier.
    let chars: Vec<char> = t.chars().collect();
    let first_digit = chars
        .iter()
        .position(char::is_ascii_digit)
        .ok_or(InputError::BudgetFormat)?;
    let mut end = first_digit;
    let mut number = String::new();
    while end < chars.len() {
        let c = chars[end];
        if c.is_ascii_digit() {
            number.push(c);
        } else if (c == ' ' || c == '\u{a0}' || c == '\u{202f}' || c == '\'')
            && chars.get(end + 1).is_some_and(char::is_ascii_digit)
        {
        } else if (c == '.' || c == ',') && chars.get(end + 1).is_some_and(char::is_ascii_digit) {
            // `5,000` and `5.000` group thousands; `12,5` and `1.5` are decimals.
            let digits_after = chars[end + 1..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            if digits_after != 3 || number.contains('.') {
                number.push('.');
            }
        } else {
            break;
        }
        end += 1;
    }
    let mut amount: f64 = number.parse().map_err(|_| InputError::BudgetFormat)?;
    let mut rest: String = chars[end..].iter().collect();
    let mut before: String = chars[..first_digit].iter().collect();
    let trimmed_rest = rest.trim_start();
    for (suffix, factor) in [
        ("k", 1e3),
        ("к", 1e3),
        ("тыс", 1e3),
        ("m", 1e6),
        ("млн", 1e6),
    ] {
        if let Some(after) = trimmed_rest.strip_prefix(suffix)
            && !after.starts_with(|c: char| c.is_alphabetic() && suffix != "тыс")
        {
            amount *= factor;
            rest = after.trim_start_matches('.').to_owned();
            break;
        }
    }
    before = before.trim().to_owned();
    let rest = rest.trim().trim_end_matches('.').to_owned();
    let currency_word = match (before.is_empty(), rest.is_empty()) {
        (true, true) => None,
        (false, true) => Some(before),
        (true, false) => Some(rest),
        (false, false) => return Err(InputError::BudgetFormat),
    };
    let currency = match currency_word {
        None => default_currency.to_owned(),
        Some(w) => {
            let w = w.trim();
            CURRENCIES
                .iter()
                .find(|(k, _)| *k == w)
                .map(|(_, code)| (*code).to_owned())
                .ok_or_else(|| InputError::BudgetCurrency(w.to_owned()))?
        }
    };
    if !(amount.is_finite() && amount > 0.0 && amount <= MAX_AMOUNT) {
        return Err(InputError::BudgetAmount);
    }
    Ok(Some(MinBudget::new(amount, currency, basis)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn keywords_are_split_validated_and_deduplicated() {
        assert_eq!(
            parse_keywords(" Python, django;\n#Remote , PYTHON ,, ", 30, 50).unwrap(),
            Some(vec!["Python".into(), "django".into(), "#Remote".into()])
        );
        assert_eq!(parse_keywords("нет", 30, 50).unwrap(), None);
        assert_eq!(parse_keywords(" , ,", 30, 50), Err(InputError::Empty));
        assert!(matches!(
            parse_keywords("a, b, c", 2, 50),
            Err(InputError::TooManyKeywords { given: 3, max: 2 })
        ));
        assert!(matches!(
            parse_keywords(&"x".repeat(51), 30, 50),
            Err(InputError::KeywordTooLong { max: 50, .. })
        ));
        assert!(matches!(
            parse_keywords("#not a tag", 30, 50),
            Err(InputError::BadKeyword { .. })
        ));
        assert_eq!(
            parse_keywords("landing   page", 30, 50).unwrap(),
            Some(vec!["landing page".into()])
        );
    }

    fn qh(s: &str, e: &str, z: &str) -> Option<QuietHoursSpec> {
        Some(QuietHoursSpec {
            start: s.into(),
            end: e.into(),
            time_zone: z.into(),
        })
    }

    #[test]
    fn quiet_hours_forms() {
        assert_eq!(
            parse_quiet_hours("23:00-08:00 Europe/Moscow", None).unwrap(),
            qh("23:00", "08:00", "Europe/Moscow")
        );
        assert_eq!(
            parse_quiet_hours("23 – 8 мск", None).unwrap(),
            qh("23:00", "08:00", "Europe/Moscow")
        );
        assert_eq!(
            parse_quiet_hours("22.30-7.15 europe/berlin", None).unwrap(),
            qh("22:30", "07:15", "Europe/Berlin")
        );
        assert_eq!(
            parse_quiet_hours("1:00-6:00", Some("Asia/Almaty")).unwrap(),
            qh("01:00", "06:00", "Asia/Almaty")
        );
        assert_eq!(parse_quiet_hours("off", None).unwrap(), None);
        assert_eq!(
            parse_quiet_hours("23:00-08:00 Mars/Olympus", None),
            Err(InputError::QuietZone("Mars/Olympus".into()))
        );
        assert_eq!(
            parse_quiet_hours("25:00-08:00 UTC", None),
            Err(InputError::QuietTime("25:00".into()))
        );
        assert_eq!(
            parse_quiet_hours("23:00-08:00", None),
            Err(InputError::QuietNoZone)
        );
        assert_eq!(
            parse_quiet_hours("8:00-8:00 UTC", None),
            Err(InputError::QuietEmpty)
        );
        assert_eq!(
            parse_quiet_hours("tonight please", None),
            Err(InputError::QuietFormat)
        );
    }

    fn b(amount: f64, currency: &'static str, basis: BudgetBasis) -> Option<MinBudget> {
        Some(MinBudget::new(amount, currency, basis))
    }

    #[test]
    fn every_currency_can_be_compared_by_fan_out() {
        for (_, code) in CURRENCIES {
            assert!(
                jobwire_core::extract::DEFAULT_RATES
                    .iter()
                    .any(|(c, _)| c == code),
                "{code} has no exchange rate: a floor in it would never filter"
            );
        }
    }

    #[test]
    fn budgets_in_the_usual_spellings() {
        use BudgetBasis::*;
        let p = |s| parse_min_budget(s, "RUB").unwrap();
        assert_eq!(p("5000 RUB"), b(5000.0, "RUB", Fixed));
        assert_eq!(p("5 000 ₽"), b(5000.0, "RUB", Fixed));
        assert_eq!(p("5000р"), b(5000.0, "RUB", Fixed));
        assert_eq!(p("от 5000"), b(5000.0, "RUB", Fixed));
        assert_eq!(p("300 usd"), b(300.0, "USD", Fixed));
        assert_eq!(p("$300"), b(300.0, "USD", Fixed));
        assert_eq!(p("50 $/h"), b(50.0, "USD", Hourly));
        assert_eq!(p("50$/ч"), b(50.0, "USD", Hourly));
        assert_eq!(p("50 usd в час"), b(50.0, "USD", Hourly));
        assert_eq!(p("150k руб/мес"), b(150_000.0, "RUB", Monthly));
        assert_eq!(p("150 тыс руб в месяц"), b(150_000.0, "RUB", Monthly));
        assert_eq!(p("12,5 eur/hour"), b(12.5, "EUR", Hourly));
        assert_eq!(p("5,000 USD"), b(5000.0, "USD", Fixed));
        assert_eq!(p("1.5k $"), b(1500.0, "USD", Fixed));
        assert_eq!(p("100 usdt"), b(100.0, "USDT", Fixed));
        assert_eq!(p("100 gbp"), b(100.0, "GBP", Fixed));
        assert_eq!(p("нет"), None);
        assert_eq!(p("0"), None);
        assert_eq!(
            parse_min_budget("5000 dogecoins", "RUB"),
            Err(InputError::BudgetCurrency("dogecoins".into()))
        );
        assert_eq!(
            parse_min_budget("a lot", "RUB"),
            Err(InputError::BudgetFormat)
        );
        assert_eq!(
            parse_min_budget("0.0 usd", "RUB"),
            Err(InputError::BudgetAmount)
        );
        assert_eq!(
            parse_min_budget("$ 300 usd", "RUB"),
            Err(InputError::BudgetFormat)
        );
    }
}

//! The tokenizer on its own: notations, multipliers and currencies of each reading.

use super::*;

fn chars(text: &str) -> Vec<char> {
    text.chars().collect()
}

/// What a reading reads at the start of a text: (int digits, decimals, multiplier,
/// currency, the text after the amount).
type Read = (String, String, Option<u64>, Option<&'static str>, String);

fn read(reading: &Reading, text: &str) -> Option<Read> {
    let cs = chars(text);
    let a = reading.amount_at(&cs, 0)?;
    let rest = cs[a.end..].iter().collect();
    Some((
        a.numeral.int,
        a.numeral.frac,
        a.multiplier,
        a.currency,
        rest,
    ))
}

#[track_caller]
fn reads(
    reading: &Reading,
    text: &str,
    (int, frac): (&str, &str),
    mult: Option<u64>,
    cur: Option<&str>,
    rest: &str,
) {
    let expected = (int.to_owned(), frac.to_owned(), mult, cur, rest.to_owned());
    assert_eq!(read(reading, text), Some(expected), "{text:?}");
}

#[test]
fn digit_groups_and_decimals() {
    for reading in [&Reading::BUDGET, &Reading::FINGERPRINT] {
        reads(
            reading,
            "15 000 за всё",
            ("15000", ""),
            None,
            None,
            " за всё",
        );
        reads(reading, "1,200", ("1200", ""), None, None, "");
        reads(reading, "1.200.000", ("1200000", ""), None, None, "");
        reads(reading, "2.5", ("2", "5"), None, None, "");
        reads(reading, "0,05", ("0", "05"), None, None, "");
        reads(reading, "1,200,50", ("1200", ""), None, None, ",50");
        reads(reading, "25 0000", ("25", ""), None, None, " 0000");
    }
    // The readings differ in what they accept around the groups.
    reads(&Reading::BUDGET, "1,200.50", ("1200", "50"), None, None, "");
    reads(
        &Reading::FINGERPRINT,
        "1,200.50",
        ("1200", ""),
        None,
        None,
        ".50",
    );
    reads(&Reading::BUDGET, "0,500", ("0", ""), None, None, ",500");
    reads(&Reading::FINGERPRINT, "0,500", ("0500", ""), None, None, "");
    reads(&Reading::BUDGET, "1,2345", ("1", ""), None, None, ",2345");
    reads(
        &Reading::FINGERPRINT,
        "1,2345",
        ("1", "2345"),
        None,
        None,
        "",
    );
    assert_eq!(read(&Reading::BUDGET, &"9".repeat(13)), None);
    assert!(read(&Reading::FINGERPRINT, &"9".repeat(40)).is_some());
    assert_eq!(read(&Reading::BUDGET, "x"), None);
}

#[test]
fn multipliers_and_currencies_after() {
    let b = &Reading::BUDGET;
    reads(
        b,
        "30к руб за проект",
        ("30", ""),
        Some(1000),
        Some("RUB"),
        " за проект",
    );
    reads(b, "50 тыс. рублей", ("50", ""), Some(1000), Some("RUB"), "");
    reads(b, "2 млн", ("2", ""), Some(1_000_000), None, "");
    reads(
        b,
        "500 звёзд⭐\u{fe0f}",
        ("500", ""),
        None,
        Some("XTR"),
        "⭐\u{fe0f}",
    );
    reads(b, "100 ⭐\u{fe0f}!", ("100", ""), None, Some("XTR"), "!");
    reads(b, "3 тг-бота", ("3", ""), None, None, " тг-бота");
    reads(b, "5$k", ("5", ""), None, Some("USD"), "k");
    let glued = b.amount_at(&chars("20h/week"), 0);
    assert_eq!(glued.and_then(|a| a.glued_word_end), Some(3));

    let f = &Reading::FINGERPRINT;
    reads(f, "25 тыс. руб", ("25", ""), Some(1000), Some("RUB"), "");
    reads(f, "25кк", ("25", ""), Some(1_000_000), None, "");
    reads(
        f,
        "50т.р. в месяц",
        ("50", ""),
        Some(1000),
        Some("RUB"),
        " в месяц",
    );
    reads(f, "5$k", ("5", ""), Some(1000), Some("USD"), "");
    reads(f, "3 тг-бота", ("3", ""), None, Some("KZT"), "-бота");
    reads(f, "25 рублями", ("25", ""), None, None, " рублями");
}

#[test]
fn currencies_before() {
    let cs = chars("budget us$ 500, €20, xusd40");
    let at = |needle: &str| text_index(&cs, needle);
    assert_eq!(
        Reading::BUDGET.currency_before(&cs, at("500")),
        Some(("USD", at("us$")))
    );
    assert_eq!(
        Reading::BUDGET.currency_before(&cs, at("20")),
        Some(("EUR", at("€")))
    );
    // A word glued to a longer one is not a currency.
    assert_eq!(Reading::BUDGET.currency_before(&cs, at("40")), None);
    assert_eq!(
        Reading::FINGERPRINT.currency_before(&cs, at("500")),
        Some(("USD", at("$")))
    );
    assert_eq!(
        Reading::BUDGET.sign_at(&cs, at("€")),
        Some(("EUR", at("€") + 1))
    );
    assert_eq!(Reading::BUDGET.sign_at(&cs, at("us$")), None);
}

fn text_index(cs: &[char], needle: &str) -> usize {
    (0..cs.len())
        .find(|&i| starts_with(cs, i, needle))
        .unwrap_or(usize::MAX)
}

#[test]
fn feed_prices() {
    let p = |text: &str| price(text).map(|p| (p.value, p.currency));
    assert_eq!(p("$65,000"), Some((65_000.0, Some("USD".into()))));
    assert_eq!(p(" $15.00 "), Some((15.0, Some("USD".into()))));
    assert_eq!(p("US$1,234.56"), Some((1234.56, Some("USD".into()))));
    assert_eq!(p("€ 20"), Some((20.0, Some("EUR".into()))));
    assert_eq!(p("1,000 EUR"), Some((1000.0, Some("EUR".into()))));
    assert_eq!(p("500"), Some((500.0, None)));
    for bad in [
        "",
        "$",
        "negotiable",
        "$500 USD",
        "500 usd",
        "1 000",
        "5k",
        "x5",
    ] {
        assert_eq!(p(bad), None, "{bad:?}");
    }
}

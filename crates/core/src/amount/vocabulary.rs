//! Every multiplier and currency spelling the readings know, once, with how each reading
//! takes it: the budget extractor's column first, the fingerprint's second (`NO`: that
//! reading does not know the spelling). Spellings are lowercase and tried in table order.

use super::spelling::Form::{Exact, ExactDot, Stem};
use super::spelling::Place::{Any, Glued, Spaced};
use super::spelling::{Spelling, Way, spelled};

/// Not known to this reading.
const NO: Option<Way> = None;
/// The sign or the whole word, glued or after a space: `$`, `usd`.
const EXACT: Option<Way> = Some(Way::new(Exact, Any));
/// A word starting with it, and an abbreviation dot: `руб`, `рублей`, `руб.`.
const STEM: Option<Way> = Some(Way::new(Stem, Any));
/// The whole word right after the number: `5k`.
const GLUED: Option<Way> = Some(Way::new(Exact, Glued));
/// The whole word right after the number, and an abbreviation dot: `5т.`.
const GLUED_DOT: Option<Way> = Some(Way::new(ExactDot, Glued));
/// The whole word, glued or after a space, and an abbreviation dot: `5 млн.`.
const DOT: Option<Way> = Some(Way::new(ExactDot, Any));
/// A word starting with it after a space, and an abbreviation dot: `5 тысяч`.
const SPACED_STEM: Option<Way> = Some(Way::new(Stem, Spaced));

const THOUSAND: u64 = 1_000;
const MILLION: u64 = 1_000_000;

/// Multipliers written after a number, with their factor.
pub(crate) const MULTIPLIERS: &[Spelling<u64>] = &[
    spelled("k", THOUSAND, GLUED, GLUED_DOT),
    spelled("к", THOUSAND, GLUED, GLUED_DOT),
    spelled("т", THOUSAND, NO, GLUED_DOT),
    spelled("тыс", THOUSAND, STEM, GLUED_DOT),
    spelled("тыс", THOUSAND, NO, SPACED_STEM),
    spelled("тысяч", THOUSAND, NO, GLUED_DOT),
    spelled("тысячи", THOUSAND, NO, GLUED_DOT),
    spelled("тыщ", THOUSAND, STEM, NO),
    spelled("thousand", THOUSAND, STEM, NO),
    spelled("млн", MILLION, STEM, DOT),
    spelled("mln", MILLION, STEM, NO),
    spelled("million", MILLION, STEM, NO),
    spelled("кк", MILLION, NO, DOT),
    spelled("kk", MILLION, NO, DOT),
];

/// Currencies written after a number, with their code.
pub(crate) const CURRENCIES_AFTER: &[Spelling<&str>] = &[
    spelled("₽", "RUB", EXACT, EXACT),
    spelled("руб", "RUB", STEM, EXACT),
    spelled("рубль", "RUB", NO, EXACT),
    spelled("рублей", "RUB", NO, EXACT),
    spelled("рубля", "RUB", NO, EXACT),
    // Before `р`, which would stop at the dot.
    spelled("р.", "RUB", EXACT, NO),
    spelled("р", "RUB", EXACT, EXACT),
    spelled("rub", "RUB", STEM, EXACT),
    spelled("rur", "RUB", EXACT, NO),
    spelled("$", "USD", EXACT, EXACT),
    spelled("usdt", "USDT", EXACT, EXACT),
    spelled("usdc", "USDT", EXACT, NO),
    spelled("usd", "USD", EXACT, EXACT),
    spelled("долл", "USD", STEM, EXACT),
    spelled("долларов", "USD", NO, EXACT),
    spelled("бакс", "USD", STEM, EXACT),
    spelled("баксов", "USD", NO, EXACT),
    spelled("dollar", "USD", STEM, NO),
    spelled("dollars", "USD", NO, EXACT),
    spelled("€", "EUR", EXACT, EXACT),
    spelled("eur", "EUR", STEM, EXACT),
    spelled("евро", "EUR", EXACT, EXACT),
    spelled("£", "GBP", EXACT, EXACT),
    spelled("gbp", "GBP", EXACT, NO),
    spelled("¥", "JPY", NO, EXACT),
    spelled("грн", "UAH", STEM, EXACT),
    spelled("гривн", "UAH", STEM, NO),
    spelled("гривен", "UAH", EXACT, NO),
    spelled("uah", "UAH", EXACT, NO),
    spelled("₴", "UAH", EXACT, NO),
    spelled("тенге", "KZT", EXACT, NO),
    spelled("тг", "KZT", EXACT, EXACT),
    spelled("kzt", "KZT", EXACT, NO),
    spelled("₸", "KZT", EXACT, NO),
    spelled("stars", "XTR", EXACT, NO),
    spelled("star", "XTR", EXACT, NO),
    spelled("звезд", "XTR", STEM, NO),
    spelled("звёзд", "XTR", STEM, NO),
    spelled("xtr", "XTR", EXACT, NO),
    spelled("⭐", "XTR", EXACT, NO),
];

/// Currencies written before a number, with their code; `us$` before `$`, its tail.
pub(crate) const CURRENCIES_BEFORE: &[Spelling<&str>] = &[
    spelled("us$", "USD", EXACT, NO),
    spelled("$", "USD", EXACT, EXACT),
    spelled("€", "EUR", EXACT, EXACT),
    spelled("£", "GBP", EXACT, EXACT),
    spelled("₽", "RUB", EXACT, EXACT),
    spelled("¥", "JPY", NO, EXACT),
    spelled("₴", "UAH", EXACT, NO),
    spelled("₸", "KZT", EXACT, NO),
    spelled("usdt", "USDT", EXACT, NO),
    spelled("usd", "USD", EXACT, NO),
    spelled("eur", "EUR", EXACT, NO),
    spelled("rub", "RUB", EXACT, NO),
];

/// Currency signs job feeds write before a price (case matters: `US$`).
pub(crate) const FEED_SIGNS: &[(&str, &str)] =
    &[("$", "USD"), ("US$", "USD"), ("€", "EUR"), ("£", "GBP")];

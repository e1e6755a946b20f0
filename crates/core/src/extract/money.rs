//! The budget as a value: [`Budget`] and [`BudgetBasis`], how a budget is shown
//! (`15 000–20 000 ₽`), how two budgets are compared ([`budget_matches`]) and how amounts in
//! different currencies are converted with approximate exchange [`Rates`]. Finding a budget
//! in a post's text is the job of the sibling `budget` module.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A stated budget: an amount or a range, in a currency, per job or per unit of time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// The amount, or the lower end of a range.
    pub min: f64,
    /// The upper end of a range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// ISO 4217 code (`RUB`, `USD`, `EUR`, `UAH`, `KZT`, …) or `USDT`/`XTR`.
    pub currency: String,
    /// Per job, per hour or per month.
    pub basis: BudgetBasis,
}

/// What a budget amount is paid for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetBasis {
    /// The whole job.
    Fixed,
    /// Per hour.
    Hourly,
    /// Per month (a salary).
    Monthly,
}

impl BudgetBasis {
    /// A short lowercase label: `fixed`, `hourly`, `monthly`.
    pub fn label(self) -> &'static str {
        match self {
            BudgetBasis::Fixed => "fixed",
            BudgetBasis::Hourly => "hourly",
            BudgetBasis::Monthly => "monthly",
        }
    }
}

/// Whether `got` is the same budget as `expected`: same currency and basis, and both ends
/// within 1% (a missing upper end must be missing in both).
pub fn budget_matches(expected: &Budget, got: &Budget) -> bool {
    let close = |a: f64, b: f64| (a - b).abs() <= 0.01 * a.abs().max(b.abs());
    expected.currency.eq_ignore_ascii_case(&got.currency)
        && expected.basis == got.basis
        && close(expected.min, got.min)
        && match (expected.max, got.max) {
            (None, None) => true,
            (Some(a), Some(b)) => close(a, b),
            _ => false,
        }
}

// ---------------------------------------------------------------------------------------
// Currency conversion
// ---------------------------------------------------------------------------------------

impl Budget {
    /// The amount a minimum-budget filter compares: the upper end of a range, else the
    /// amount.
    pub fn top(&self) -> f64 {
        self.max.unwrap_or(self.min)
    }

    /// [`Budget::top`] converted to `currency` with `rates`; `None` when either currency has
    /// no rate.
    pub fn amount_in(&self, currency: &str, rates: &Rates) -> Option<f64> {
        rates.convert(self.top(), &self.currency, currency)
    }

    /// [`Budget::top`] in the rates' base currency; `None` when the currency has no rate.
    pub fn top_in_base(&self, rates: &Rates) -> Option<f64> {
        rates.to_base(self.top(), &self.currency)
    }
}

/// Approximate exchange rates for comparing budgets in different currencies: the value of
/// one unit of each currency in a common base currency.
///
/// [`Rates::default`] is a hard-coded, **approximate** table with the rouble as base (USD ≈
/// 90, EUR ≈ 98, GBP ≈ 114, UAH ≈ 2.2, KZT ≈ 0.18, USDT = USD, XTR — a Telegram Star — ≈ 1.3).
/// It is good enough to tell a 500-rouble job from a $500 one, not for accounting; the
/// daemon's configuration can replace it ([`Rates::from_pairs`]) or override single rates
/// ([`Rates::with_rate`]). Currency codes are compared case-insensitively.
#[derive(Debug, Clone, PartialEq)]
pub struct Rates {
    /// (upper-case code, value of one unit in the base currency), each code once.
    entries: Vec<(String, f64)>,
}

/// The default table: (code, value of one unit in roubles).
pub const DEFAULT_RATES: &[(&str, f64)] = &[
    ("RUB", 1.0),
    ("USD", 90.0),
    ("USDT", 90.0),
    ("EUR", 98.0),
    ("GBP", 114.0),
    ("UAH", 2.2),
    ("KZT", 0.18),
    ("XTR", 1.3),
];

/// A rate that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RatesError {
    /// The currency code is not 2–10 ASCII letters.
    #[error("bad currency code {0:?}: expected 2-10 ASCII letters")]
    BadCode(String),
    /// The value is not a positive finite number.
    #[error("bad rate {value} for {code}: expected a positive finite number")]
    BadRate {
        /// The currency.
        code: String,
        /// The rejected value.
        value: f64,
    },
}

impl Default for Rates {
    fn default() -> Self {
        Rates {
            entries: DEFAULT_RATES
                .iter()
                .map(|&(code, value)| (code.to_owned(), value))
                .collect(),
        }
    }
}

impl Rates {
    /// No rates at all: nothing can be converted (every comparison is skipped).
    pub const fn empty() -> Rates {
        Rates {
            entries: Vec::new(),
        }
    }

    /// Rates from `(code, value of one unit in the base currency)` pairs, e.g. from the
    /// daemon's configuration. The base currency is whichever has value 1 (it need not be
    /// listed; a currency missing from the list simply cannot be converted). A code listed
    /// twice keeps its last value.
    pub fn from_pairs<S: AsRef<str>>(
        pairs: impl IntoIterator<Item = (S, f64)>,
    ) -> Result<Rates, RatesError> {
        pairs
            .into_iter()
            .try_fold(Rates::empty(), |rates, (code, value)| {
                rates.with_rate(code.as_ref(), value)
            })
    }

    /// These rates with `code` set to `value` (added or replaced).
    pub fn with_rate(mut self, code: &str, value: f64) -> Result<Rates, RatesError> {
        let code = code.trim();
        if !(2..=10).contains(&code.len()) || !code.chars().all(|c| c.is_ascii_alphabetic()) {
            return Err(RatesError::BadCode(code.to_owned()));
        }
        let code = code.to_ascii_uppercase();
        if !(value.is_finite() && value > 0.0) {
            return Err(RatesError::BadRate { code, value });
        }
        match self.entries.iter_mut().find(|(c, _)| *c == code) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((code, value)),
        }
        Ok(self)
    }

    /// The value of one unit of `currency` in the base currency.
    pub fn rate(&self, currency: &str) -> Option<f64> {
        let currency = currency.trim();
        self.entries
            .iter()
            .find(|(c, _)| c.eq_ignore_ascii_case(currency))
            .map(|&(_, v)| v)
    }

    /// `amount` of `currency` in the base currency.
    pub fn to_base(&self, amount: f64, currency: &str) -> Option<f64> {
        Some(amount * self.rate(currency)?)
    }

    /// `amount` of `from` in `to`.
    pub fn convert(&self, amount: f64, from: &str, to: &str) -> Option<f64> {
        if from.trim().eq_ignore_ascii_case(to.trim()) {
            return Some(amount);
        }
        Some(self.to_base(amount, from)? / self.rate(to)?)
    }

    /// The `(code, value)` pairs, in insertion order.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, f64)> {
        self.entries.iter().map(|(c, v)| (c.as_str(), *v))
    }
}

impl fmt::Display for Budget {
    /// `15 000–20 000 ₽`, `$35–50`, `500 USDT` (no basis).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let amount = match self.max {
            Some(max) if max != self.min => {
                format!("{}–{}", format_amount(self.min), format_amount(max))
            }
            _ => format_amount(self.min),
        };
        let code = self.currency.trim().to_ascii_uppercase();
        match code.as_str() {
            "USD" => write!(f, "${amount}"),
            "EUR" => write!(f, "€{amount}"),
            "GBP" => write!(f, "£{amount}"),
            "RUB" => write!(f, "{amount} ₽"),
            "UAH" => write!(f, "{amount} ₴"),
            "KZT" => write!(f, "{amount} ₸"),
            "XTR" => write!(f, "{amount} ⭐"),
            _ => write!(f, "{amount} {code}"),
        }
    }
}

/// `15000` → `15 000`, `1200.5` → `1 200.50`, `0.05` → `0.05`.
fn format_amount(value: f64) -> String {
    if !value.is_finite() {
        return "?".to_owned();
    }
    let rounded = (value * 100.0).round() / 100.0;
    let whole = rounded.trunc().abs();
    let cents = ((rounded.abs() - whole) * 100.0).round() as u64;
    let digits = format!("{whole:.0}");
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 && digits.len() > 4 {
            grouped.push(' ');
        }
        grouped.push(c);
    }
    if rounded < 0.0 {
        grouped.insert(0, '-');
    }
    if cents > 0 {
        grouped.push_str(&format!(".{cents:02}"));
    }
    grouped
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::extract::tests::b;
    use BudgetBasis::{Fixed, Hourly};

    #[test]
    fn budget_matching_tolerates_one_percent() {
        let e = b(1000.0, Some(2000.0), "USD", Fixed).unwrap();
        assert!(budget_matches(
            &e,
            &b(1005.0, Some(1990.0), "usd", Fixed).unwrap()
        ));
        assert!(!budget_matches(
            &e,
            &b(1050.0, Some(2000.0), "USD", Fixed).unwrap()
        ));
        assert!(!budget_matches(&e, &b(1000.0, None, "USD", Fixed).unwrap()));
        assert!(!budget_matches(
            &e,
            &b(1000.0, Some(2000.0), "EUR", Fixed).unwrap()
        ));
        assert!(!budget_matches(
            &e,
            &b(1000.0, Some(2000.0), "USD", Hourly).unwrap()
        ));
    }

    #[test]
    fn rates_convert_and_can_be_configured() {
        let rates = Rates::default();
        let usd = b(500.0, Some(700.0), "USD", Fixed).unwrap();
        assert_eq!(usd.top(), 700.0);
        assert_eq!(usd.amount_in("RUB", &rates), Some(63_000.0));
        assert_eq!(usd.amount_in("usdt", &rates), Some(700.0));
        let eur = usd.amount_in("EUR", &rates).unwrap();
        assert!((eur - 700.0 * 90.0 / 98.0).abs() < 1e-9);
        assert_eq!(usd.amount_in("BTC", &rates), None);
        assert_eq!(rates.rate("xtr"), Some(1.3));

        let custom = Rates::from_pairs([("RUB", 1.0), ("usd", 100.0)]).unwrap();
        assert_eq!(usd.amount_in("RUB", &custom), Some(70_000.0));
        assert_eq!(usd.amount_in("EUR", &custom), None);
        let custom = custom.with_rate("EUR", 110.0).unwrap();
        assert_eq!(custom.convert(110.0, "RUB", "EUR"), Some(1.0));
        assert!(matches!(
            Rates::from_pairs([("USD", 0.0)]),
            Err(RatesError::BadRate { .. })
        ));
        assert!(matches!(
            Rates::from_pairs([("US D", 1.0)]),
            Err(RatesError::BadCode(_))
        ));
        assert!(Rates::from_pairs([("USD", f64::NAN)]).is_err());
    }

    #[test]
    fn budgets_display_compactly() {
        let show = |min, max, cur: &str| b(min, max, cur, Fixed).unwrap().to_string();
        assert_eq!(show(15_000.0, Some(20_000.0), "RUB"), "15 000–20 000 ₽");
        assert_eq!(show(35.0, Some(50.0), "USD"), "$35–50");
        assert_eq!(show(1200.0, None, "EUR"), "€1200");
        assert_eq!(show(0.05, None, "USD"), "$0.05");
        assert_eq!(show(1_000_000.0, None, "KZT"), "1 000 000 ₸");
        assert_eq!(show(100.0, None, "usdt"), "100 USDT");
    }
}
